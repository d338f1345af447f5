"""Benchmark: how ``tcompact compact -c round-level`` scales, and what each pipeline stage does.

What it measures
----------------
A session of ``--copies`` distinct copies (default 4, ~1.07M tokens, ~4 MB) of every message
of the real transcripts in ``../shared/transcripts`` is built at run time with the helpers of
``bench_inspect.py`` / ``bench_compact.py`` (each copy has copy-specific text markers and
tool-call ids, so a per-text cache cannot skip work), plus its 2x, 4x and 8x multiples (8x is
~8.5M tokens, ~33 MB). The copies are one long session: only the first copy keeps the system
prompts (two, ~5k tokens), since the pipeline never puts a system message in a block — with a
system prompt in every copy, 8x would hold 156k tokens of them, nearly the whole 160k target, and
no summariser could get under it (``--system-every-copy`` builds that session, the one earlier
runs of this benchmark used). Each file is compacted as

    tcompact compact FILE -c round-level --summarizer extractive -o RUN/out.jsonl
             --dump-dir RUN/dumps --json

in a fresh child process (wall time and the child's own peak RSS from ``os.wait4``), with the
scratch folder RUN emptied before each run. No ``--now`` and no ``--set``: the defaults apply
(trigger 230 000 tokens, target 160 000), and every file is far above the trigger.

Reported per size: median wall seconds, peak MB, the tokens before and after, the summariser
calls and the blocks sent to it (the sum of ``len(request.blocks)`` over the dumps of the last
run, i.e. how many calls a one-call-per-block design would have made) and their ratio, and the
size of the dump folder. Per pipeline stage (``stages[0].pipeline`` of the ``--json`` report,
one entry per stage that ran; a stage that did not run because the context was already under
the target is shown as "not run"): calls, blocks sent, blocks replaced, tokens before and after.
The summarising phases inside a stage (the dumps' ``request.stage``: ``l0_to_l1`` and
``recursive_merge_lN_to_lN+1`` inside ``recursive``) get their own indented lines.

Then the scaling exponent: the least-squares slope of log(seconds) over log(file bytes) over
the four sizes (goal <= 1.1), and the same slope for the total calls. The 1x point includes the
fixed start-up cost (interpreter, imports, encoding; about a second), which flattens the time
exponent a little; the local 4x->8x exponent is shown for information.

``--profile`` re-runs the 8x file once (untimed) under cProfile with ``--concurrency 1`` (cProfile
only sees the main thread, and the summariser calls otherwise run on worker threads) and prints
tcompact's top entries by cumulative time and the top entries of anything by own time.

Generated files go to ``tests/benchmarks/out/`` (git-ignored) and are removed afterwards unless
``--keep`` is given (which also keeps the last run's scratch folder). Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_round_level.py [--copies 4] [--repeat 3] [--keep] [--profile]

It always exits 0 when the measurements ran, whether or not the goal was met.
"""

from __future__ import annotations

import argparse
import io
import pstats
import shutil
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

# Helpers of the neighbouring benchmarks (not a package): building inputs, running children.
from bench_compact import (
    EXPONENT_GOAL,
    MULTIPLES,
    RUN_DIR,
    check_compacted,
    slope,
    tcompact_base,
    timed,
    write_copies,
)
from _common import DEFAULT_SOURCES, OUT_DIR, load_base_messages, measure

COMPRESSOR = "round-level"
#: The pipeline's stages in order (README, "The round-level pipeline"); the report lists only those that ran.
STAGES = ("recursive", "aggressive_keep_recent", "aggressive_full_context", "hard_truncate")
DUMPS = RUN_DIR / "dumps"
PROFILE_TOP = 30  # entries of tcompact's own code by cumulative time
PROFILE_TOP_SELF = 15  # entries of anything by own (total) time


# --------------------------------------------------------------------------- commands


def compact_command(path: Path, *extra: str) -> list[str]:
    return [
        *tcompact_base(),
        "compact",
        str(path),
        "-c",
        COMPRESSOR,
        "--summarizer",
        "extractive",
        "-o",
        str(RUN_DIR / "out.jsonl"),
        "--dump-dir",
        str(DUMPS),
        "--json",
        *extra,
    ]


def stage_of(phase: str | None) -> str:
    """The pipeline stage a dump's ``request.stage`` (a phase name) belongs to."""
    if phase == "l0_to_l1" or (phase or "").startswith("recursive_merge_"):
        return "recursive"
    return phase or "(none)"


# --------------------------------------------------------------------------- one size


@dataclass
class SizeResult:
    multiple: int
    copies: int
    file_bytes: int
    seconds: float
    peak_mb: float
    report: dict[str, Any]
    dump_files: int = 0
    dump_bytes: int = 0
    phase_calls: Counter[str] = field(default_factory=Counter)  # phase name -> calls (dumps)
    phase_blocks: Counter[str] = field(default_factory=Counter)  # phase name -> blocks sent
    phase_order: list[str] = field(default_factory=list)

    @property
    def pipeline(self) -> list[dict[str, Any]]:
        stages = self.report.get("stages") or [{}]
        return stages[0].get("pipeline") or []

    @property
    def calls(self) -> int:
        return int((self.report.get("summarizer") or {}).get("calls") or 0)

    @property
    def blocks(self) -> int:
        return sum(self.phase_blocks.values())

    def stage_calls(self, stage: str) -> int:
        return sum(n for p, n in self.phase_calls.items() if stage_of(p) == stage)

    def stage_blocks(self, stage: str) -> int:
        return sum(n for p, n in self.phase_blocks.items() if stage_of(p) == stage)


def read_dumps(result: SizeResult) -> None:
    """Calls and blocks per phase from the dumps of the last run (order of first appearance by file name,
    which starts with the epoch milliseconds)."""
    for path in sorted(DUMPS.glob("*.json")) if DUMPS.is_dir() else ():
        data = path.read_bytes()
        result.dump_files += 1
        result.dump_bytes += len(data)
        request = orjson.loads(data).get("request") or {}
        phase = request.get("stage") or "(none)"
        if phase not in result.phase_order:
            result.phase_order.append(phase)
        result.phase_calls[phase] += 1
        result.phase_blocks[phase] += len(request.get("blocks") or ())


def check(result: SizeResult, label: str) -> None:
    check_compacted(COMPRESSOR, result.report, label)
    pipeline_calls = sum(int(s.get("calls") or 0) for s in result.pipeline)
    if not (result.calls == pipeline_calls == result.dump_files):
        print(
            f"  WARNING: {label}: summarizer.calls {result.calls}, pipeline calls {pipeline_calls} and "
            f"{result.dump_files} dump file(s) disagree"
        )


# --------------------------------------------------------------------------- printing


def table(headers: list[str], rows: list[list[str]], *, left: tuple[int, ...] = (0, 1)) -> None:
    """Columns in ``left`` (negative: from the end) left-aligned, the others right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lefts = {i % len(headers) for i in left}

    def fmt(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i in lefts else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    print(fmt(headers))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(fmt(r).rstrip())


def ratio(blocks: int, calls: int) -> str:
    return f"{blocks / calls:.1f}" if calls else "-"


def size_rows(results: list[SizeResult]) -> list[list[str]]:
    rows = []
    for r in results:
        before, after = r.report.get("before", {}), r.report.get("after", {})
        rows.append(
            [
                f"{r.multiple}x",
                str(r.report.get("status")),
                f"{r.file_bytes / 2**20:.1f}",
                f"{before.get('messages', 0):,}",
                f"{before.get('tokens', 0):,}",
                f"{after.get('tokens', 0):,}",
                f"{after.get('messages', 0):,}",
                f"{r.seconds:.2f}",
                f"{r.peak_mb:.0f}",
                f"{r.calls}",
                f"{r.blocks}",
                ratio(r.blocks, r.calls),
                f"{r.dump_bytes / 2**20:.0f}",
            ]
        )
    return rows


SIZE_HEADERS = [
    "size",
    "status",
    "MB",
    "msgs",
    "tokens before",
    "tokens after",
    "msgs after",
    "seconds",
    "peak MB",
    "calls",
    "blocks",
    "blocks/call",
    "dumps MB",
]


def stage_rows(results: list[SizeResult]) -> list[list[str]]:
    rows = []
    for r in results:
        by_name = {s.get("stage"): s for s in r.pipeline}
        names = [*STAGES, *(n for n in by_name if n not in STAGES)]
        for name in names:
            s = by_name.get(name)
            if s is None:
                rows.append([f"{r.multiple}x", name, "-", "-", "-", "-", "-", "not run"])
                continue
            calls = int(s.get("calls") or 0)
            blocks = r.stage_blocks(name)
            rows.append(
                [
                    f"{r.multiple}x",
                    name,
                    f"{calls}",
                    f"{blocks}",
                    f"{s.get('replaced', 0)}",
                    f"{s.get('tokens_before', 0):,}",
                    f"{s.get('tokens_after', 0):,}",
                    str(s.get("reason", "")),
                ]
            )
            for phase in r.phase_order:
                if stage_of(phase) == name and phase != name:
                    rows.append(
                        [
                            "",
                            f"  {phase}",
                            f"{r.phase_calls[phase]}",
                            f"{r.phase_blocks[phase]}",
                            "",
                            "",
                            "",
                            f"blocks/call {ratio(r.phase_blocks[phase], r.phase_calls[phase])}",
                        ]
                    )
        stray = [p for p in r.phase_order if stage_of(p) not in names]
        for phase in stray:  # a dump whose phase matches no stage of the report
            rows.append(
                [
                    f"{r.multiple}x",
                    f"? {phase}",
                    f"{r.phase_calls[phase]}",
                    f"{r.phase_blocks[phase]}",
                    "",
                    "",
                    "",
                    "dumps only",
                ]
            )
    return rows


STAGE_HEADERS = ["size", "stage / phase", "calls", "blocks sent", "replaced", "tokens before", "tokens after", "reason"]


# --------------------------------------------------------------------------- profile


def profile(path: Path) -> None:
    """One untimed run of ``path`` under cProfile (single-threaded), top entries by cumulative time."""
    shutil.rmtree(RUN_DIR, ignore_errors=True)
    RUN_DIR.mkdir(parents=True)
    out = RUN_DIR / "profile.out"
    cmd = compact_command(path, "--concurrency", "1")
    cmd = [sys.executable, "-m", "cProfile", "-o", str(out), "-m", "tcompact", *cmd[len(tcompact_base()) :]]
    run = measure(cmd)
    print(f"\ncProfile of {path.name} (--concurrency 1): {run.seconds:.2f} s under the profiler")
    for title, key, restriction in (
        (f"top {PROFILE_TOP} of tcompact's code by cumulative time", "cumulative", ("/tcompact/", PROFILE_TOP)),
        (f"top {PROFILE_TOP_SELF} of anything by own time", "tottime", (PROFILE_TOP_SELF,)),
    ):
        buf = io.StringIO()
        pstats.Stats(str(out), stream=buf).sort_stats(key).print_stats(*restriction)
        text = buf.getvalue()
        print(f"\n{title}")
        print(text[text.find("   ncalls") :].rstrip() if "   ncalls" in text else text)


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--copies", type=int, default=4, help="copies of the transcripts in the 1x session (default 4, ~1M tokens)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per size; medians are reported (default 3)")
    parser.add_argument(
        "--sources", type=Path, default=DEFAULT_SOURCES, help=f"folder of real transcripts (default {DEFAULT_SOURCES})"
    )
    parser.add_argument(
        "--profile", action="store_true", help="also run the largest file once under cProfile and print the top entries"
    )
    parser.add_argument(
        "--system-every-copy", action="store_true",
        help="keep the system prompts in every copy (the session of earlier runs of this benchmark)"
    )
    parser.add_argument(
        "--keep", action="store_true", help=f"keep the generated sessions and the last run's outputs in {OUT_DIR}"
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be 1 or more")
    if args.copies < 1:
        parser.error("--copies must be 1 or more")
    if not args.sources.is_dir():
        parser.error(f"no transcript folder at {args.sources}")

    files = {m: OUT_DIR / f"bench_round_level_x{m}.jsonl" for m in MULTIPLES}
    results: list[SizeResult] = []
    try:
        print(f"building {args.copies}-copy session and its multiples from {args.sources}")
        t0 = time.perf_counter()
        base = load_base_messages(args.sources)
        sizes = {}
        pinned = 0 if args.system_every_copy else sum(1 for d in base if d.get("role") in ("system", "developer"))
        for m, path in files.items():
            sizes[m] = write_copies(path, base, m * args.copies, system_once=not args.system_every_copy)
            print(
                f"  wrote {path} ({sizes[m] / 2**20:.1f} MB, {m * args.copies * (len(base) - pinned) + pinned} messages, "
                f"{m * args.copies} copies)"
            )
        del base
        print(f"  built in {time.perf_counter() - t0:.1f} s")

        measure([*tcompact_base(), "inspect", str(files[MULTIPLES[-1]]), "--json"])  # untimed: warms the page cache

        print(f"measuring (median of {args.repeat})")
        for m, path in files.items():
            label = f"{COMPRESSOR} {m}x"
            r = timed(compact_command(path), args.repeat, label)
            result = SizeResult(m, m * args.copies, sizes[m], r.seconds, r.peak_mb, r.report)
            read_dumps(result)
            check(result, label)
            results.append(result)
        if args.profile:
            profile(files[MULTIPLES[-1]])
    finally:
        if not args.keep:
            shutil.rmtree(RUN_DIR, ignore_errors=True)
            for path in files.values():
                path.unlink(missing_ok=True)
            print(f"  removed the generated sessions and outputs from {OUT_DIR}")

    xs = [float(r.file_bytes) for r in results]
    exp = slope(xs, [r.seconds for r in results])
    local = slope(xs[-2:], [r.seconds for r in results[-2:]])
    calls = [r.calls for r in results]
    calls_exp = (
        f"{slope(xs, [float(c) for c in calls]):.2f}" if all(c > 0 for c in calls) else "- (a size made no call)"
    )
    blocks = [r.blocks for r in results]
    blocks_exp = f"{slope(xs, [float(b) for b in blocks]):.2f}" if all(b > 0 for b in blocks) else "-"
    peak_exp = slope(xs, [r.peak_mb for r in results])
    dumps_exp = (
        f"{slope(xs, [float(r.dump_bytes) for r in results]):.2f}" if all(r.dump_bytes for r in results) else "-"
    )

    first = results[0].report.get("before", {}).get("tokens", 0)
    print()
    print(
        f"1x = {args.copies} copies, {results[0].file_bytes / 2**20:.1f} MB, {first:,} tokens; "
        f"8x = {results[-1].file_bytes / 2**20:.1f} MB; median of {args.repeat}; "
        f"blocks = sum of len(request.blocks) over the dumps (one-call-per-block calls)"
    )
    print()
    table(SIZE_HEADERS, size_rows(results))
    print()
    print("per pipeline stage (calls and replaced from the report; blocks sent from the dumps)")
    table(STAGE_HEADERS, stage_rows(results), left=(0, 1, -1))
    print()
    met = "met" if exp <= EXPONENT_GOAL else "MISSED"
    print(
        f"time exponent (log seconds over log bytes, {len(results)} sizes): {exp:.2f}  "
        f"goal <= {EXPONENT_GOAL:g}: {met}   (4x->8x local: {local:.2f})"
    )
    print(
        f"calls exponent: {calls_exp}   blocks exponent: {blocks_exp}   "
        f"calls {' / '.join(map(str, calls))} vs blocks {' / '.join(map(str, blocks))}"
    )
    print(f"peak MB exponent: {peak_exp:.2f}   dumps MB exponent: {dumps_exp}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
