"""Running a ``tcompact hook`` command so that it never breaks the agent.

Whatever happens — options it cannot read, a payload that is not JSON or lacks a field, a transcript
it cannot read, an exception, or more time than the limit (``--timeout``, default 5 s) — the hook
exits 0 and prints nothing, so the agent goes on as if there were no hook; what went wrong is one
line on stderr (``tcompact hook NAME: what — nothing injected``) and one in the log file of the state
folder. The work, reading stdin included, runs in a thread the caller waits for at most the limit.
The options are parsed here, without typer, so that the launcher (:mod:`tcompact.launch`) can run a
hook without importing the command line: the hook's whole run stays well under half a second.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from typing import IO, Any

from . import state
from .agents import AGENTS, RUNS, agent
from .events import HANDLERS, HookError, Options
from .handoff import MIN_BUDGET

__all__ = ["parse_options", "run_hook", "OPTIONS", "MAX_PAYLOAD"]

MAX_PAYLOAD = 16 << 20
#: Every option of ``tcompact hook`` (the typer command declares the same; tests/test_hooks_cli.py checks).
OPTIONS = ("--agent", "--budget", "--timeout")


def parse_options(argv: Sequence[str]) -> tuple[str, Options]:
    """``RUN [--agent A] [--budget N] [--timeout S]`` (also ``--opt=value``) → the run and its options."""
    if not argv or argv[0] not in RUNS:
        raise HookError(f"unknown hook {argv[0] if argv else ''!r}; choose one of: {', '.join(RUNS)}")
    values: dict[str, str] = {}
    rest = list(argv[1:])
    while rest:
        word = rest.pop(0)
        name, eq, value = word.partition("=")
        if name not in OPTIONS:
            raise HookError(f"unknown option {name!r}")
        if not eq:
            if not rest:
                raise HookError(f"{name} needs a value")
            value = rest.pop(0)
        values[name] = value
    return argv[0], _options(values)


def _options(values: Mapping[str, str]) -> Options:
    name = values.get("--agent", "claude")
    if name not in {a.name for a in AGENTS}:
        raise HookError(f"unknown --agent {name!r}; choose one of: {', '.join(a.name for a in AGENTS)}")
    try:
        budget = int(values.get("--budget", agent(name).budget))
        timeout = float(values.get("--timeout", Options.timeout))
    except ValueError as exc:
        raise HookError(f"bad option value ({exc})") from None
    if budget < MIN_BUDGET or not timeout > 0:
        raise HookError(f"--budget must be at least {MIN_BUDGET:,} bytes and --timeout above 0 seconds")
    return Options(agent=name, budget=budget, timeout=timeout)


def run_hook(argv: Sequence[str], *, stdin: IO[bytes], stdout: IO[str], stderr: IO[str],
             env: Mapping[str, str] | None = None) -> bool:
    """Run ``tcompact hook ARGV`` (its exit status is always 0); True when the work is still running after
    the time limit (the caller ends the process without waiting for it)."""
    env = os.environ if env is None else env
    started = time.perf_counter()
    name = argv[0] if argv else "?"
    try:
        run, opts = parse_options(argv)
    except HookError as exc:
        _report(name, "?", None, str(exc), stderr, env)
        return False
    box: dict[str, Any] = {}
    worker = threading.Thread(target=_work, args=(run, opts, stdin, env, box), daemon=True)
    worker.start()
    worker.join(opts.timeout)
    session = box.get("session")
    if worker.is_alive():
        _report(run, opts.agent, session, f"no answer within the time limit of {opts.timeout:g} s", stderr, env)
        return True
    if "error" in box:
        _report(run, opts.agent, session, box["error"], stderr, env)
        return False
    out, outcome = box["out"]
    if out:
        stdout.write(out + "\n")
        stdout.flush()
    if outcome:
        state.log(run, opts.agent, session, f"ok: {outcome} ({time.perf_counter() - started:.2f} s)", env=env)
    return False


def _work(run: str, opts: Options, stdin: IO[bytes], env: Mapping[str, str], box: dict[str, Any]) -> None:
    try:
        payload = _payload(stdin.read(MAX_PAYLOAD + 1))
        box["session"] = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
        box["out"] = HANDLERS[run](payload, opts, env)
    except HookError as exc:
        box["error"] = str(exc)
    except Exception as exc:  # noqa: BLE001 (a hook never breaks the agent: every failure is reported, exit 0)
        box["error"] = f"internal error ({type(exc).__name__}: {exc})"


def _payload(raw: bytes) -> dict[str, Any]:
    if len(raw) > MAX_PAYLOAD:
        raise HookError(f"the payload is larger than {MAX_PAYLOAD >> 20} MiB")
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        raise HookError(f"the payload is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise HookError("the payload is not a JSON object")
    return payload


def _report(run: str, agent: str, session: str | None, what: str, stderr: IO[str], env: Mapping[str, str]) -> None:
    line = " ".join(what.split())
    state.log(run, agent, session, f"failed: {line} — nothing injected", env=env)
    try:
        stderr.write(f"tcompact hook {run}: {line} — nothing injected (log: {state.log_path(env)})\n")
        stderr.flush()
    except (OSError, ValueError):
        pass
