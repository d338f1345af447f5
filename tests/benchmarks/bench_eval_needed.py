"""Benchmark: ``tcompact eval --metric needed`` on the shared sessions — its time, and the table it gives.

What it measures
----------------
1. For every session of ``../shared/transcripts``, ``tcompact eval FILE --metric needed`` with every
   compressor alone, the default chain and ``truncate,dialogue`` (``--chain`` replaces them) as a
   child process: first with a token cache folder holding only the tokenizer tables (every text
   counted), then again with the cache that run filled; wall and CPU seconds, peak RSS, the cut
   points and the needed tokens. Beside it, ``tcompact eval FILE`` (the canaries) with the same
   chains, first run, for scale: a cut compacts a prefix of the session once per chain, the
   canaries the whole planted copy once per chain.
2. The whole folder in one run: the pooled table (kept, recoverable, size per chain and baseline)
   and the per-session counts, printed from its ``--json``.

Repeated ``--repeat`` times (default 3); medians are printed with the load average, since the
machine's cores are shared. Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_eval_needed.py [--repeat 3] [--chain CHAIN ...] [--sources DIR]

It exits 0 when the measurements ran.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import orjson
from _common import DEFAULT_SOURCES, child_env, machine, measure, median_run, seeded_cache, tcompact_base, \
    transcript_files

CHAINS = ["truncate", "offload", "micro", "current-round", "dialogue", "round-level", "full", "truncate,dialogue"]


def _eval(path: Path, chains: list[str], *extra: str) -> list[str]:
    return [*tcompact_base(), "eval", str(path), "--json", *(a for c in chains for a in ("-c", c)), *extra]


def _per_session(files: list[Path], chains: list[str], repeat: int, work: Path) -> None:
    seed = work / "seed"
    measure([*tcompact_base(), "inspect", str(files[0]), "--json"], env=child_env(seed))  # the tokenizer tables
    print(f"{'session':44} {'cuts':>4} {'needed':>6} {'first s':>8} {'cpu':>6} {'cached s':>8} {'cpu':>6} "
          f"{'MB':>5} {'canaries s':>10}")
    for path in files:
        first, cached, canaries = [], [], []
        for n in range(repeat):
            cache = seeded_cache(seed, work / f"cache-{n}")
            first.append(measure(_eval(path, chains, "--metric", "needed"), capture=True, env=child_env(cache)))
            cached.append(measure(_eval(path, chains, "--metric", "needed"), env=child_env(cache)))
            canaries.append(measure(_eval(path, chains), env=child_env(seeded_cache(seed, work / f"c-{n}"))))
        a, b, c = median_run(first), median_run(cached), median_run(canaries)
        cuts = orjson.loads(a.stdout)["files"][0]["needed"]["cuts"]
        print(f"{path.name[:44]:44} {len(cuts):>4} {sum(len(x['needed']) for x in cuts):>6} {a.seconds:>8.2f} "
              f"{a.cpu:>6.2f} {b.seconds:>8.2f} {b.cpu:>6.2f} {a.peak_mb:>5.0f} {c.seconds:>10.2f}")


def _table(sources: Path, chains: list[str], work: Path) -> None:
    run = measure(_eval(sources, chains, "--metric", "needed"), capture=True, env=child_env(work / "all"))
    doc = orjson.loads(run.stdout)
    needed = doc["needed"]
    print(f"\nWhole folder in one run: {run.seconds:.2f} s wall, {run.cpu:.2f} s CPU; {needed['sessions']} sessions, "
          f"{needed['cuts']} cuts, {needed['needed']} needed tokens")
    print(f"{'chain':25} {'kept':>6} {'recov.':>6} {'size':>6}  per session kept(+recoverable)/needed")
    for row in needed["summary"]:
        cells = []
        for f in doc["files"]:
            r = next(r for r in f["needed"]["results"] if r["chain"] == row["chain"])
            cells.append(f"{r['kept']}" + (f"+{r['recoverable']}" if r["recoverable"] else "") + f"/{r['needed']}")
        name = row["chain"] + (" (baseline)" if row["reference"] else "")
        print(f"{name:25} {row['kept_share'] * 100:>5.0f}% {row['recoverable_share'] * 100:>5.0f}% "
              f"{row['ratio']:>6.2f}  {'  '.join(cells)}")
    print("sessions: " + ", ".join(f.get("path", "").rsplit("/", 1)[-1] for f in doc["files"]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chain", action="append", dest="chains")
    parser.add_argument("--sources", type=Path, default=DEFAULT_SOURCES)
    args = parser.parse_args()
    if not args.sources.is_dir():
        sys.exit(f"no sessions at {args.sources}")
    chains = args.chains or CHAINS
    print(f"tcompact eval --metric needed; {machine()}; chains: {' '.join(chains)}")
    with tempfile.TemporaryDirectory() as tmp:
        _per_session(transcript_files(args.sources), chains, args.repeat, Path(tmp))
        _table(args.sources, chains, Path(tmp))
    print(f"after: {machine()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
