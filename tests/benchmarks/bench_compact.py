"""Benchmark: what ``tcompact compact`` costs next to ``tcompact inspect``, and how it scales.

What it measures
----------------
Every compressor listed by ``tcompact compressors --json`` (truncate, offload, micro,
current-round, dialogue, full at the time of writing) is run as

    tcompact compact FILE -c NAME --summarizer extractive --force -o RUN/out.jsonl --json

(offload also gets ``--set large_message_tokens=500``), each run in a fresh child process
whose wall time and own peak RSS (``os.wait4``) are recorded. ``--force`` makes the
compressors with a trigger (a context-window ratio or a token threshold) act on every input;
every run writes everything a real compaction writes — the transcript, the dumps (redacted),
the offload store and the report — into a scratch folder emptied before each run, so the
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

Reported per compressor: median seconds on the large file and the ratio to inspect's median
on the same file (goal <= 2x); median seconds at 1x/2x/4x/8x and the scaling exponent, the
least-squares slope of log(seconds) over log(file bytes) across those four sizes
(goal <= 1.1); peak RSS on the large file; and, from the ``--json`` report of the large
file, the compaction's status and the messages and tokens before and after (fields
``before`` and ``after``). Inspect gets the same timing columns for comparison.

The timing table also shows, for information only, the local exponent between the 8x file
and the large file ("exp 8x->L"). The 1x point includes the fixed start-up cost of the
interpreter, the imports and the encoding (about a second), which flattens the exponent
over 1x..8x; the ratio on the large file and the 8x->L exponent are far less affected.

Generated files go to ``tests/benchmarks/out/`` (git-ignored) and are removed afterwards
unless ``--keep`` is given. Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_compact.py [--size-mb 40] [--repeat 3] [--keep]

It always exits 0 when the measurements ran, whether or not the goals were met.
"""

from __future__ import annotations

import argparse
import math
import shutil
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

# bench_inspect lives next to this file, not in a package.
from bench_inspect import (
    DEFAULT_SOURCES,
    OUT_DIR,
    _copy_message,
    _dumps,
    build_session,
    inspect_command,
    load_base_messages,
    measure,
)

RATIO_GOAL = 2.0
EXPONENT_GOAL = 1.1
MULTIPLES = (1, 2, 4, 8)
EXTRA_SETTINGS = {"offload": ["--set", "large_message_tokens=500"]}
RUN_DIR = OUT_DIR / "compact_run"  # scratch outputs of one compaction, emptied before each run


# --------------------------------------------------------------------------- commands


def tcompact_base() -> list[str]:
    """The command that starts tcompact (the venv script, else ``python -m tcompact``).

    bench_inspect only exposes the full inspect command, so its subcommand part is cut off.
    """
    cmd = inspect_command(Path("FILE"))
    assert cmd[-3:] == ["inspect", "FILE", "--json"], cmd
    return cmd[:-3]


def compressor_names() -> list[str]:
    run = measure([*tcompact_base(), "compressors", "--json"], capture=True)
    return [c["name"] for c in orjson.loads(run.stdout)["compressors"]]


def command_for(name: str, path: Path) -> list[str]:
    if name == "inspect":
        return inspect_command(path)
    return [
        *tcompact_base(),
        "compact",
        str(path),
        "-c",
        name,
        "--summarizer",
        "extractive",
        "--force",
        "-o",
        str(RUN_DIR / "out.jsonl"),
        "--json",
        *EXTRA_SETTINGS.get(name, []),
    ]


# --------------------------------------------------------------------------- inputs


def write_copies(path: Path, base: list[dict[str, Any]], copies: int, *, system_once: bool = False) -> int:
    """A session of ``copies`` distinct copies of ``base`` (copy numbers 0..copies-1); returns bytes.

    Like ``bench_inspect.build_session`` but by copy count instead of a byte target, so the
    multiples are exact multiples of the mid-size session. ``system_once`` keeps the system and
    developer messages of the first copy only, as in one long session.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with open(path, "wb") as f:
        for n in range(copies):
            for d in base:
                if system_once and n and d.get("role") in ("system", "developer"):
                    continue
                line = _dumps(_copy_message(d, n))
                f.write(line)
                written += len(line)
    return written


# --------------------------------------------------------------------------- measuring


@dataclass
class Result:
    seconds: float
    peak_mb: float
    report: dict[str, Any] = field(default_factory=dict)


def timed(cmd: list[str], times: int, label: str) -> Result:
    """Median seconds and peak MB of ``times`` runs, plus the last run's JSON report.

    ``bench_inspect.repeat`` discards the child's stdout; here it is kept (to a temporary file,
    which costs nothing measurable) so every run's report can be checked.
    """
    runs = []
    for i in range(times):
        shutil.rmtree(RUN_DIR, ignore_errors=True)
        RUN_DIR.mkdir(parents=True)
        r = measure(cmd, capture=True)
        runs.append(r)
        print(f"  {label} run {i + 1}/{times}: {r.seconds:.2f} s, peak {r.peak_mb:.0f} MB", flush=True)
    report = orjson.loads(runs[-1].stdout)
    return Result(statistics.median(r.seconds for r in runs), statistics.median(r.peak_mb for r in runs), report)


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log(y) over log(x)."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


def check_compacted(name: str, report: dict[str, Any], where: str) -> None:
    if name != "inspect" and report.get("status") != "compacted":
        print(f"  WARNING: {name} on {where} ended with status {report.get('status')!r}; its time is not a compaction")


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--size-mb", type=float, default=40.0, help="target size of the large session in MB (default 40)"
    )
    parser.add_argument(
        "--mid-copies",
        type=int,
        default=2,
        help="copies of the transcripts in the mid-size (1x) session (default 2, ~2 MB)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; medians are reported (default 3)")
    parser.add_argument(
        "--compressors",
        default=None,
        help="comma-separated subset of compressors (default: all from `tcompact compressors --json`)",
    )
    parser.add_argument(
        "--sources", type=Path, default=DEFAULT_SOURCES, help=f"folder of real transcripts (default {DEFAULT_SOURCES})"
    )
    parser.add_argument("--keep", action="store_true", help=f"keep the generated sessions in {OUT_DIR}")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be 1 or more")
    if args.mid_copies < 1:
        parser.error("--mid-copies must be 1 or more")
    if not args.sources.is_dir():
        parser.error(f"no transcript folder at {args.sources}")

    available = compressor_names()
    if args.compressors:
        names = [n.strip() for n in args.compressors.split(",") if n.strip()]
        unknown = [n for n in names if n not in available]
        if unknown:
            parser.error(f"unknown compressor(s) {', '.join(unknown)}; available: {', '.join(available)}")
    else:
        names = available
    commands = ["inspect", *names]

    large = OUT_DIR / "bench_compact_large.jsonl"
    scaled = {m: OUT_DIR / f"bench_compact_x{m}.jsonl" for m in MULTIPLES}
    generated = [large, *scaled.values()]
    sizes: dict[int, int] = {}
    try:
        print(f"building ~{args.size_mb:g} MB session from {args.sources}")
        t0 = time.perf_counter()
        large_bytes, lines, copies = build_session(large, args.sources, int(args.size_mb * 2**20))
        large_mb = large_bytes / 2**20
        print(
            f"  wrote {large} ({large_mb:.1f} MB, {lines} messages, {copies} copies) in "
            f"{time.perf_counter() - t0:.1f} s"
        )
        base = load_base_messages(args.sources)
        for m, path in scaled.items():
            sizes[m] = write_copies(path, base, m * args.mid_copies)
            print(
                f"  wrote {path} ({sizes[m] / 2**20:.1f} MB, {m * args.mid_copies * len(base)} messages, "
                f"{m * args.mid_copies} copies)"
            )
        del base

        measure(command_for("inspect", large))  # untimed: warms the page cache

        print(f"measuring (median of {args.repeat})")
        on_large: dict[str, Result] = {}
        on_scaled: dict[str, dict[int, Result]] = {}
        for name in commands:
            on_large[name] = timed(command_for(name, large), args.repeat, f"{name} {large_mb:.0f} MB")
            check_compacted(name, on_large[name].report, "the large file")
            on_scaled[name] = {}
            for m, path in scaled.items():
                r = timed(command_for(name, path), args.repeat, f"{name} {m}x")
                check_compacted(name, r.report, f"{m}x")
                on_scaled[name][m] = r
    finally:
        shutil.rmtree(RUN_DIR, ignore_errors=True)
        if not args.keep:
            for path in generated:
                path.unlink(missing_ok=True)
            print(f"  removed the generated sessions from {OUT_DIR}")

    def goal(ok: bool) -> str:
        return "met" if ok else "MISSED"

    ref = on_large["inspect"].seconds
    xs = [float(sizes[m]) for m in MULTIPLES]
    timing_rows = []
    for name in commands:
        r = on_large[name]
        ratio = r.seconds / ref
        exp = slope(xs, [on_scaled[name][m].seconds for m in MULTIPLES])
        is_ref = name == "inspect"
        timing_rows.append(
            [
                name,
                f"{r.seconds:.2f}",
                f"{ratio:.2f}x",
                "(ref)" if is_ref else goal(ratio <= RATIO_GOAL),
                *(f"{on_scaled[name][m].seconds:.2f}" for m in MULTIPLES),
                f"{exp:.2f}",
                "(ref)" if is_ref else goal(exp <= EXPONENT_GOAL),
                f"{slope([xs[-1], float(large_bytes)], [on_scaled[name][MULTIPLES[-1]].seconds, r.seconds]):.2f}",
                f"{r.peak_mb:.0f}",
                f"{on_scaled[name][MULTIPLES[-1]].peak_mb:.0f}",
            ]
        )
    mid_mb = sizes[1] / 2**20
    headers = [
        "command",
        f"s@{large_mb:.0f}MB",
        "/inspect",
        f"<={RATIO_GOAL:g}x",
        *(f"s@{m}x" for m in MULTIPLES),
        "exponent",
        f"<={EXPONENT_GOAL:g}",
        "exp 8x->L",
        f"peakMB@{large_mb:.0f}MB",
        f"peakMB@{MULTIPLES[-1]}x",
    ]

    result_rows = []
    for name in names:
        rep = on_large[name].report
        before, after = rep.get("before", {}), rep.get("after", {})
        result_rows.append(
            [
                name,
                str(rep.get("status")),
                f"{before.get('messages', 0):,}",
                f"{after.get('messages', 0):,}",
                f"{before.get('tokens', 0):,}",
                f"{after.get('tokens', 0):,}",
                f"{after.get('tokens', 0) / before['tokens']:.1%}" if before.get("tokens") else "-",
            ]
        )
    result_headers = ["compressor", "status", "msgs before", "msgs after", "tokens before", "tokens after", "kept"]

    def table(headers: list[str], rows: list[list[str]]) -> None:
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

        def fmt(cells: list[str]) -> str:
            return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

        print(fmt(headers))
        print("  ".join("-" * w for w in widths))
        for r in rows:
            print(fmt(r))

    print()
    print(
        f"large file: {large_mb:.1f} MB ({lines} messages, {copies} copies); "
        f"1x = {mid_mb:.1f} MB ({args.mid_copies} copies), 8x = {sizes[8] / 2**20:.1f} MB; "
        f"median of {args.repeat}"
    )
    print()
    table(headers, timing_rows)
    print()
    print(f"compaction of the {large_mb:.0f} MB file (from the --json report of its last run)")
    table(result_headers, result_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
