"""Benchmark: how long the live hooks and the status line take, each a whole new process as the agent runs it.

What it measures (each figure the median of ``--repeat`` whole-process runs; wall and CPU seconds,
the CPU figure being the one to quote on a shared machine):

* ``tcompact hook pre-compact`` on every session of ``../shared/transcripts`` (a copy of the file);
* ``tcompact hook session-start`` (source ``compact``) on each: reading the transcript, the state
  snapshot, the working set — the hook's whole cold start; the goal is under 0.5 s;
* ``tcompact hook prompt-submit`` with nothing pending: what Claude Code pays on every prompt;
* ``tcompact statusline`` on the largest session: the first refresh (no count cached: the whole
  file read) and the next ones (the cached count, nothing new to read); the goal is 100 ms.

The state folder is a temporary folder, never the user's. Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_hooks.py [--repeat 7] [--sources ../shared/transcripts]

It exits 0 when the measurements ran, whether or not the goals were met.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import tempfile
from pathlib import Path

from _common import DEFAULT_SOURCES, Run, child_env, machine, measure

GOALS = {"session-start": 0.5, "statusline": 0.1}


def _command(args: list[str], payload: Path) -> list[str]:
    """``python -m tcompact ARGS < payload`` as one process (the shell execs Python)."""
    return ["sh", "-c", f"exec {shlex.quote(sys.executable)} -m tcompact {shlex.join(args)} < {shlex.quote(str(payload))}"]


def _median(runs: list[Run]) -> tuple[float, float]:
    return statistics.median(r.seconds for r in runs), statistics.median(r.cpu for r in runs)


def _timed(args: list[str], payload: Path, env: dict[str, str], repeat: int, *, before=None) -> tuple[float, float]:
    runs = []
    for _ in range(repeat + 1):  # the first run warms the file cache and is not counted
        if before is not None:
            before()
        runs.append(measure(_command(args, payload), env=env))
    return _median(runs[1:])


def _row(name: str, figures: tuple[float, float], goal: float | None = None) -> None:
    wall, cpu = figures
    verdict = "" if goal is None else f"  goal < {goal:g} s: {'met' if cpu < goal else 'MISSED'} (by CPU)"
    print(f"{name:<58} wall {wall:6.3f} s   cpu {cpu:6.3f} s{verdict}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--sources", type=Path, default=DEFAULT_SOURCES)
    opts = parser.parse_args()
    files = sorted(p for p in opts.sources.glob("*.jsonl") if p.name.startswith(("claude_", "codex_")))
    if not files:
        print(f"no sessions in {opts.sources}", file=sys.stderr)
        return 2
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = child_env(XDG_STATE_HOME=str(work / "state"))
        for path in files:
            agent = "codex" if path.name.startswith("codex_") else "claude"
            payload = work / f"{path.stem}.json"
            payload.write_text(json.dumps({"session_id": path.stem, "transcript_path": str(path), "source": "compact",
                                           "trigger": "manual"}))
            size = f"{path.stat().st_size / 1e6:.2f} MB"
            _row(f"pre-compact   {path.name[:34]} ({size})",
                 _timed(["hook", "pre-compact", "--agent", agent], payload, env, opts.repeat))
            _row(f"session-start {path.name[:34]} ({size})",
                 _timed(["hook", "session-start", "--agent", agent], payload, env, opts.repeat), GOALS["session-start"])
        nothing = work / "prompt.json"
        nothing.write_text(json.dumps({"session_id": "none", "prompt": "go on"}))
        _row("prompt-submit, nothing pending", _timed(["hook", "prompt-submit"], nothing, env, opts.repeat))
        largest = max(files, key=lambda p: p.stat().st_size)
        line = work / "statusline.json"
        line.write_text(json.dumps({"session_id": "bench", "transcript_path": str(largest),
                                    "model": {"id": "claude-sonnet-4-5", "display_name": "Sonnet 4.5"},
                                    "cost": {"total_cost_usd": 1.5}}))
        cache = work / "state" / "tcompact" / "statusline"

        def forget() -> None:
            for p in cache.glob("*.json"):
                p.unlink()
        _row(f"statusline, first refresh ({largest.stat().st_size / 1e6:.2f} MB read)",
             _timed(["statusline"], line, env, opts.repeat, before=forget), GOALS["statusline"])
        _row("statusline, next refresh (count cached)", _timed(["statusline"], line, env, opts.repeat),
             GOALS["statusline"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
