"""Benchmark: what ``tcompact compact`` costs next to ``tcompact inspect``, and how it scales.

What it measures
----------------
Every compressor listed by ``tcompact compressors --json`` (truncate, offload, micro, mask,
current-round, dialogue, round-level, full and working-set, the default chain, at the time of
writing) is run as

    tcompact compact FILE -c NAME --summarizer extractive --now -o RUN/out.jsonl --json --no-cache

(offload also gets ``--set large_message_tokens=500``), each run in a fresh child process
whose wall time and own peak RSS (``os.wait4``) are recorded. ``--now`` (``--force`` before
issue 23; it now only allows overwriting outputs) makes the compressors with a trigger (a
context-window ratio or a token threshold) act on every input; every run writes everything a
real compaction writes — the transcript, the dumps (redacted), the offload store and the report
— into a scratch folder emptied before each run, so the
numbers are reading, counting, compressing (the offline extractive summariser for the
summarising compressors), re-counting and writing. ``tcompact inspect FILE --json`` is run the
same way as the reference.

Inputs, built at run time from the real transcripts in ``../shared/transcripts`` with the
helpers of ``bench_inspect.py`` (every copy gets copy-specific text markers and tool-call ids,
so nothing can be skipped by a per-text cache):

(a) the large session, ~40 MB by default (``--size-mb``), exactly as ``bench_inspect.py``
    builds it;
(b) a mid-size session of ``--mid-copies`` copies (default 2, ~2 MB) and its 1x, 2x, 4x and
    8x multiples (2, 4, 8, 16 copies, all copies distinct).

Reported per compressor: median seconds on the large file and its ratio to inspect on the same
file (goal <= 2x): each run of a compressor on the large file follows a run of inspect on it, and the
ratio is the median of each run's ratio to the inspect run just before it — on a shared host whose
speed drifts by up to 2x within minutes, the medians of two commands measured minutes apart compared
the neighbours more than the code; median seconds at 1x/2x/4x/8x and the scaling exponent, the
least-squares slope of log(seconds) over log(file bytes) across those four sizes
(goal <= 1.1); peak RSS on the large file; and, from the ``--json`` report of the large
file, the compaction's status and the messages and tokens before and after (fields
``before`` and ``after``). Inspect gets the same timing columns for comparison.

The timing table also shows, for information only, the local exponent between the 8x file
and the large file ("exp 8x->L"). The 1x point includes the fixed start-up cost of the
interpreter, the imports and the encoding (about a second), which flattens the exponent
over 1x..8x; the ratio on the large file and the 8x->L exponent are far less affected.

Every command runs with ``--no-cache``: compaction and inspect both count every text, as the goal
was set before the persistent token cache existed. ``--warm`` runs them with the cache filled by
an untimed run instead (what a user who inspects and then compacts a session sees); the ratios
are then far higher, since a cached inspect hardly counts anything.

Generated files go to ``tests/benchmarks/out/`` (git-ignored) and are removed afterwards
unless ``--keep`` is given. ``bench_inspect.py`` runs this benchmark too, so that one run prints
every goal. Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_compact.py [--size-mb 40] [--repeat 3] [--warm] [--keep]

It always exits 0 when the measurements ran, whether or not the goals were met.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

# the helpers live next to this file, not in a package
from _common import (
    DEFAULT_SOURCES,
    OUT_DIR,
    build_session,
    child_env,
    inspect_command,
    load_base_messages,
    machine,
    measure,
    slope,
    tcompact_base,
    write_copies,
)

RATIO_GOAL = 2.0
EXPONENT_GOAL = 1.1
MULTIPLES = (1, 2, 4, 8)
EXTRA_SETTINGS = {"offload": ["--set", "large_message_tokens=500"]}
RUN_DIR = OUT_DIR / "compact_run"  # scratch outputs of one compaction, emptied before each run
CACHE_DIR = OUT_DIR / "compact_cache"  # the token cache of --warm runs


# --------------------------------------------------------------------------- commands


def compressor_names() -> list[str]:
    run = measure([*tcompact_base(), "compressors", "--json"], capture=True)
    return [c["name"] for c in orjson.loads(run.stdout)["compressors"]]


def command_for(name: str, path: Path, *, warm: bool = False) -> list[str]:
    cache = [] if warm else ["--no-cache"]
    if name == "inspect":
        return inspect_command(path, *cache)
    return [*tcompact_base(), "compact", str(path), "-c", name, "--summarizer", "extractive", "--now",
            "-o", str(RUN_DIR / "out.jsonl"), "--json", *cache, *EXTRA_SETTINGS.get(name, [])]


# --------------------------------------------------------------------------- measuring


@dataclass
class Result:
    seconds: float
    cpu: float
    peak_mb: float
    report: dict[str, Any] = field(default_factory=dict)
    paired: tuple[float, float] | None = None  # median ratios (wall, cpu) to the inspect run just before each run


def timed(cmd: list[str], times: int, label: str, *, warm: bool = False, beside: list[str] | None = None) -> Result:
    """Median wall and CPU seconds and peak MB of ``times`` runs, plus the last run's JSON report. ``beside``: a
    reference command (inspect) run before each run, untimed in the result: each run's ratio to the reference
    run just before it is kept (``Result.paired``), so that a machine whose speed drifts between the runs of one
    command and those of another (neighbours on a shared host) does not decide the ratio."""
    env = child_env(CACHE_DIR)
    if warm:
        shutil.rmtree(RUN_DIR, ignore_errors=True)
        RUN_DIR.mkdir(parents=True)
        measure(cmd, env=env)  # untimed: fills the cache with this command's texts
    runs, paired = [], []
    for i in range(times):
        ref = measure(beside, capture=True, env=env) if beside is not None else None
        shutil.rmtree(RUN_DIR, ignore_errors=True)
        RUN_DIR.mkdir(parents=True)
        r = measure(cmd, capture=True, env=env)
        runs.append(r)
        if ref is not None:
            paired.append((r.seconds / ref.seconds, r.cpu / ref.cpu))
        beside_note = f"; inspect just before {ref.seconds:.2f} s, ratio {paired[-1][0]:.2f}x" if ref else ""
        print(f"  {label} run {i + 1}/{times}: {r.seconds:.2f} s (cpu {r.cpu:.2f}), peak {r.peak_mb:.0f} MB"
              f"{beside_note}", flush=True)
    report = orjson.loads(runs[-1].stdout)
    return Result(statistics.median(r.seconds for r in runs), statistics.median(r.cpu for r in runs),
                  statistics.median(r.peak_mb for r in runs), report,
                  (statistics.median(w for w, _ in paired), statistics.median(c for _, c in paired)) if paired else None)


def check_compacted(name: str, report: dict[str, Any], where: str) -> None:
    if name != "inspect" and report.get("status") != "compacted":
        print(f"  WARNING: {name} on {where} ended with status {report.get('status')!r}; its time is not a compaction")


@dataclass
class Compaction:
    """What one benchmark run measured."""

    names: list[str]
    large_mb: float
    lines: int
    copies: int
    sizes: dict[int, int]
    large_bytes: int
    mid_copies: int
    repeat: int
    warm: bool
    on_large: dict[str, Result]
    on_scaled: dict[str, dict[int, Result]]

    def ratio(self, name: str) -> float:
        """Wall seconds on the large file over inspect's: the median of each run's ratio to the inspect run just
        before it (the ratio of the two medians for inspect itself, and when there were no such pairs)."""
        paired = self.on_large[name].paired
        return paired[0] if paired else self.on_large[name].seconds / self.on_large["inspect"].seconds

    def cpu_ratio(self, name: str) -> float:
        paired = self.on_large[name].paired
        return paired[1] if paired else self.on_large[name].cpu / self.on_large["inspect"].cpu

    def exponent(self, name: str) -> float:
        return slope([float(self.sizes[m]) for m in MULTIPLES], [self.on_scaled[name][m].seconds for m in MULTIPLES])

    def cpu_exponent(self, name: str) -> float:
        return slope([float(self.sizes[m]) for m in MULTIPLES], [self.on_scaled[name][m].cpu for m in MULTIPLES])


def run_compaction(*, size_mb: float, mid_copies: int, repeat: int, names: list[str] | None, sources: Path,
                   keep: bool, warm: bool = False) -> Compaction:
    """Build the sessions, time inspect and every compressor on them, remove the sessions (unless ``keep``)."""
    names = names or compressor_names()
    large = OUT_DIR / "bench_compact_large.jsonl"
    scaled = {m: OUT_DIR / f"bench_compact_x{m}.jsonl" for m in MULTIPLES}
    sizes: dict[int, int] = {}
    shutil.rmtree(CACHE_DIR, ignore_errors=True)
    try:
        print(f"building ~{size_mb:g} MB session from {sources}")
        t0 = time.perf_counter()
        large_bytes, lines, copies = build_session(large, sources, int(size_mb * 2**20))
        print(f"  wrote {large} ({large_bytes / 2**20:.1f} MB, {lines} messages, {copies} copies) in "
              f"{time.perf_counter() - t0:.1f} s")
        base = load_base_messages(sources, quiet=True)
        for m, path in scaled.items():
            sizes[m] = write_copies(path, base, m * mid_copies)
            print(f"  wrote {path} ({sizes[m] / 2**20:.1f} MB, {m * mid_copies} copies)")
        del base
        measure(command_for("inspect", large), env=child_env(CACHE_DIR))  # untimed: warms the page cache
        print(f"measuring (median of {repeat}; {'warm cache' if warm else '--no-cache'}; {machine()})")
        on_large: dict[str, Result] = {}
        on_scaled: dict[str, dict[int, Result]] = {}
        for name in ["inspect", *names]:
            on_large[name] = timed(command_for(name, large, warm=warm), repeat, f"{name} large", warm=warm,
                                   beside=None if name == "inspect" else command_for("inspect", large, warm=warm))
            check_compacted(name, on_large[name].report, "the large file")
            on_scaled[name] = {}
            for m, path in scaled.items():
                r = timed(command_for(name, path, warm=warm), repeat, f"{name} {m}x", warm=warm)
                check_compacted(name, r.report, f"{m}x")
                on_scaled[name][m] = r
    finally:
        shutil.rmtree(RUN_DIR, ignore_errors=True)
        shutil.rmtree(CACHE_DIR, ignore_errors=True)
        if not keep:
            for path in [large, *scaled.values()]:
                path.unlink(missing_ok=True)
            print(f"  removed the generated sessions from {OUT_DIR}")
    return Compaction(names, large_bytes / 2**20, lines, copies, sizes, large_bytes, mid_copies, repeat, warm,
                      on_large, on_scaled)


def table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def fmt(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    print(fmt(headers))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(fmt(r))


def print_compaction(c: Compaction) -> None:
    def goal(ok: bool) -> str:
        return "met" if ok else "MISSED"

    rows = []
    for name in ["inspect", *c.names]:
        r = c.on_large[name]
        ref = name == "inspect"
        rows.append([name, f"{r.seconds:.2f}", f"{c.ratio(name):.2f}x", f"{c.cpu_ratio(name):.2f}x",
                     "(ref)" if ref else goal(c.ratio(name) <= RATIO_GOAL),
                     *(f"{c.on_scaled[name][m].seconds:.2f}" for m in MULTIPLES), f"{c.exponent(name):.2f}",
                     "(ref)" if ref else goal(c.exponent(name) <= EXPONENT_GOAL), f"{c.cpu_exponent(name):.2f}",
                     f"{r.peak_mb:.0f}"])
    print(f"\nlarge file: {c.large_mb:.1f} MB ({c.lines} messages, {c.copies} copies); 1x = "
          f"{c.sizes[1] / 2**20:.1f} MB ({c.mid_copies} copies), 8x = {c.sizes[8] / 2**20:.1f} MB; median of "
          f"{c.repeat}; {'warm cache' if c.warm else '--no-cache'}\n")
    table(["command", "s@large", "/inspect", "cpu/insp", f"<={RATIO_GOAL:g}x", *(f"s@{m}x" for m in MULTIPLES),
           "exponent", f"<={EXPONENT_GOAL:g}", "cpu exp", "peakMB"], rows)
    results = []
    for name in c.names:
        rep = c.on_large[name].report
        before, after = rep.get("before", {}), rep.get("after", {})
        results.append([name, str(rep.get("status")), f"{before.get('messages', 0):,}", f"{after.get('messages', 0):,}",
                        f"{before.get('tokens', 0):,}", f"{after.get('tokens', 0):,}"])
    print("\ncompaction of the large file (from the --json report of its last run)")
    table(["compressor", "status", "msgs before", "msgs after", "tokens before", "tokens after"], results)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=40.0, help="size of the large session in MB (default 40)")
    parser.add_argument("--mid-copies", type=int, default=2, help="copies in the 1x session (default 2, ~2 MB)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; medians are reported (default 3)")
    parser.add_argument("--compressors", default=None, help="comma-separated subset (default: all)")
    parser.add_argument("--warm", action="store_true", help="run with the token cache, filled by an untimed run")
    parser.add_argument("--sources", type=Path, default=DEFAULT_SOURCES, help="folder of real transcripts")
    parser.add_argument("--keep", action="store_true", help=f"keep the generated sessions in {OUT_DIR}")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.mid_copies < 1:
        parser.error("--repeat and --mid-copies must be 1 or more")
    if not args.sources.is_dir():
        parser.error(f"no transcript folder at {args.sources}")
    names = None
    if args.compressors:
        available = compressor_names()
        names = [n.strip() for n in args.compressors.split(",") if n.strip()]
        unknown = [n for n in names if n not in available]
        if unknown:
            parser.error(f"unknown compressor(s) {', '.join(unknown)}; available: {', '.join(available)}")
    result = run_compaction(size_mb=args.size_mb, mid_copies=args.mid_copies, repeat=args.repeat, names=names,
                            sources=args.sources, keep=args.keep, warm=args.warm)
    print_compaction(result)
    print(f"\n{machine()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
