"""Benchmark: how long ``tcompact compact`` takes to stop after Ctrl-C (issue 23 item 20: up to 5.7 s).

Each case starts a whole ``tcompact compact`` process, sends it SIGINT at a moment of its work, and
times the wait from the signal to the process's end (it must say "interrupted, nothing written",
exit 130 and leave no file behind — checked here too):

- ``extractive full``: the default chain, offline, on a generated chat session of ~10 MB (400
  tool-heavy rounds), interrupted after 1, 2, 3 and 4 s — reading, counting, summarising, writing;
- ``openai full``: one summariser call in flight on the main thread (a loopback server that never
  answers);
- ``openai round-level``: two calls in flight on round-level's worker threads (``--concurrency 4``),
  which a normal exit would wait for.

Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_interrupt.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import OUT_DIR, child_env, machine, tcompact_base

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from generated_sessions import chat_bytes, tool_heavy_session  # noqa: E402
from openai_server import FakeOpenAI, delay  # noqa: E402

WORK = OUT_DIR / "interrupt"
MESSAGE = "Error: interrupted, nothing written — the input is untouched; run the same command again"


def _stop(cmd: list[str], folder: Path, *, ready) -> tuple[float, int, str]:
    """Start ``cmd`` in ``folder``, wait until ``ready(started_at)``, send SIGINT: (seconds to stop, exit, stderr)."""
    before = sorted(p.name for p in folder.iterdir())
    proc = subprocess.Popen(cmd, cwd=folder, env=child_env(WORK / "cache", OPENAI_API_KEY="sk-bench-0000"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    started = time.monotonic()
    while not ready(started) and proc.poll() is None:
        time.sleep(0.005)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate()
    seconds = time.monotonic() - sent
    left = sorted(p.name for p in folder.iterdir())
    if left != before:
        sys.exit(f"files left behind: {sorted(set(left) - set(before))}")
    return seconds, proc.returncode, err.decode().strip()


def _row(name: str, runs: list[tuple[float, int, str]]) -> str:
    codes = {code for _, code, _ in runs}
    said = all(err == MESSAGE for _, _, err in runs)
    times = [s for s, _, _ in runs]
    return (f"{name:<34} {statistics.median(times):7.3f} s median, {max(times):6.3f} s max   exit {sorted(codes)}  "
            f"{'says so' if said else 'SAID: ' + runs[-1][2][:80]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    shutil.rmtree(WORK, ignore_errors=True)
    (WORK / "run").mkdir(parents=True)
    session = WORK / "run" / "session.jsonl"
    session.write_bytes(chat_bytes(tool_heavy_session(rounds=400)))
    base = [*tcompact_base(), "compact", session.name, "--now", "-o", "out.jsonl"]
    print(f"tcompact compact, Ctrl-C — {machine()}; session {session.stat().st_size / 1e6:.1f} MB")
    for after in (1.0, 2.0, 3.0, 4.0):
        runs = [_stop(base, WORK / "run", ready=lambda t, a=after: time.monotonic() - t >= a)
                for _ in range(args.repeat)]
        print(_row(f"extractive full, at {after} s", runs))
    with FakeOpenAI() as server:
        server.respond_with(lambda request: delay(300))
        openai = ["--summarizer", "openai", "--model", "m", "--base-url", server.base_url]
        for name, extra, calls in (("openai full, 1 call in flight", [], 1),
                                   ("openai round-level, 2 in flight", ["-c", "round-level", "--concurrency", "4"], 2)):
            runs = []
            for _ in range(args.repeat):
                server.clear()
                server.respond_with(lambda request: delay(300))
                runs.append(_stop([*base, *extra, *openai], WORK / "run",
                                  ready=lambda t, n=calls: len(server.requests) >= n))
            print(_row(name, runs))


if __name__ == "__main__":
    main()
