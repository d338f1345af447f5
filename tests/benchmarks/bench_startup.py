"""Benchmark: what each command costs before it does its work — imports and set-up — on tiny inputs.

For every command it runs, on a two-message session (and the dumps of its compaction), the whole
process ``--repeat`` times (median wall and CPU seconds, peak RSS), and once more under
``python -X importtime`` to add up the import time and list which of the heavy libraries the
command imported (typer, rich, pydantic, tiktoken, openai, plotly, importlib.metadata). The token
cache is filled first (a benchmark-private folder), so ``inspect`` here is the cached run.

Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_startup.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from _common import OUT_DIR, child_env, machine, measure, median_run, tcompact_base

WORK = OUT_DIR / "startup"
CACHE = WORK / "cache"
HEAVY = ("typer", "rich", "pydantic", "tiktoken", "openai", "plotly", "importlib.metadata", "platformdirs")


def commands(session: Path, dumps: Path, out: Path) -> dict[str, list[str]]:
    return {
        "--help": ["--help"],
        "--version": ["--version"],
        "inspect --json (cached)": ["inspect", str(session), "--json"],
        "inspect (tables, cached)": ["inspect", str(session)],
        "inspect --no-cache --json": ["inspect", str(session), "--json", "--no-cache"],
        "compact --dry-run --json": ["compact", str(session), "-c", "truncate", "--dry-run", "--json", "--now"],
        "compressors --json": ["compressors", "--json"],
        "replay --table --json": ["replay", str(dumps), "--table", "--json"],
        "replay --verify": ["replay", str(dumps), "--verify"],
        "convert --to chat": ["convert", str(session), "--to", "chat", "-o", str(out), "--force"],
    }


def import_profile(args: list[str], env: dict[str, str]) -> tuple[float, list[str]]:
    """Seconds spent importing (sum of the modules' own times) and the heavy libraries imported."""
    cmd = [sys.executable, "-X", "importtime", "-m", "tcompact", *args]
    err = subprocess.run(cmd, env=env, capture_output=True, text=True).stderr
    total, seen = 0, set()
    for line in err.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, _, name = (part.strip() for part in line[len("import time:"):].split("|"))
        total += int(own)
        for heavy in HEAVY:
            if name == heavy:
                seen.add(heavy)
    return total / 1e6, [h for h in HEAVY if h in seen]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per command; medians (default 7)")
    args = parser.parse_args(argv)
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    session = WORK / "session.jsonl"
    session.write_bytes(b'{"role":"user","content":"Fix the failing test"}\n'
                        b'{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function",'
                        b'"function":{"name":"run","arguments":"{}"}}]}\n'
                        b'{"role":"tool","tool_call_id":"c1","content":"' + b"FAILED test_x " * 400 + b'"}\n'
                        b'{"role":"user","content":"Thanks"}\n{"role":"assistant","content":"Done."}\n')
    env = child_env(CACHE)
    dumps = WORK / "out.dumps"
    subprocess.run([*tcompact_base(), "compact", str(session), "-c", "dialogue", "--now", "-o", str(WORK / "out.jsonl")],
                   env=env, check=True, capture_output=True)
    measure([*tcompact_base(), "inspect", str(session), "--json"], env=env)  # fills the cache
    print(f"{machine()}; median of {args.repeat} runs; python {sys.version.split()[0]}")
    print(f"{'command':<28} {'wall s':>7} {'cpu s':>7} {'peak MB':>8} {'imports s':>9}  heavy libraries imported")
    for label, cmd in commands(session, dumps, WORK / "converted.jsonl").items():
        r = median_run([measure([*tcompact_base(), *cmd], env=env) for _ in range(args.repeat)])
        imports, heavy = import_profile(cmd, env)
        print(f"{label:<28} {r.seconds:7.3f} {r.cpu:7.3f} {r.peak_mb:8.0f} {imports:9.3f}  {', '.join(heavy)}",
              flush=True)
    python = median_run([measure([sys.executable, "-c", "pass"], env=env) for _ in range(args.repeat)])
    print(f"{'(python -c pass)':<28} {python.seconds:7.3f} {python.cpu:7.3f} {python.peak_mb:8.0f}")
    shutil.rmtree(WORK, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.chdir(Path(__file__).resolve().parents[2])
    sys.exit(main())
