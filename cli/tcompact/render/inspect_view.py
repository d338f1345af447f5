"""The terminal view of ``tcompact inspect``: one file in detail, or one row per file."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from . import plural, thousands, console
from . import inspect_tables as tables

if TYPE_CHECKING:
    from ..inspection.shapes import FileReport, InspectReport, RoundRow, Totals, TranscriptReport, Window

__all__ = ["inspect_outcome", "inspect_report", "window_bar", "sparkline"]
_BAR = 40
_MAX_ROUNDS = 40
_SPARK = "▁▂▃▄▅▆▇█"
_SPARK_WIDTH = 60
_UNFOLDED = 10  # a file with more transcripts than this makes the listing say that --fold folds them


def inspect_outcome(report: InspectReport, *, transcript: str | None = None, fold: bool = False) -> None:
    """What ``inspect`` prints without ``--json``: the report (and a stored session's usage and cost)."""
    inspect_report(report, transcript=transcript, fold=fold)
    if "session" in report:
        from .sessions_view import session_lines

        session_lines(report["session"])


def inspect_report(report: InspectReport, *, transcript: str | None = None, fold: bool = False) -> None:
    """The terminal view of an inspect report; ``fold``: a file's sub-agents and episodes are not listed one
    by one (a file of 200 tau-bench episodes is one row)."""
    out = console()
    files = report["files"]
    if len(files) == 1 and not report["errors"]:
        _file_detail(out, files[0], transcript, fold=fold)
    elif transcript is not None:
        from ..errors import UsageError

        raise UsageError(
            "--transcript needs a single file",
            hint="pass the one file that holds that transcript",
        )
    else:
        _files_table(out, files, report["totals"], fold=fold)
    skipped = report["not_transcripts"]
    if skipped:
        listed = "; ".join(f"{x['path']} ({x['reason']})" for x in skipped[:5]) + (" …" if len(skipped) > 5 else "")
        out.print(Text(f"Passed over {len(skipped)} file(s) that hold no transcript: {listed}"))


def _files_table(out: Console, files: Sequence[FileReport], totals: Totals, *,
                 fold: bool) -> None:
    paths = [f["path"] for f in files]
    root = os.path.commonpath([os.path.dirname(p) or "." for p in paths]) if paths else ""
    title = f"Transcripts in {root}/" if root not in ("", ".") else "Transcripts"
    table = Table(title=title, title_justify="left")
    table.add_column("file", overflow="fold", ratio=1)
    table.add_column("format", no_wrap=True)
    for col in ("msgs", "calls", "tokens", "window"):
        table.add_column(col, justify="right", no_wrap=True)
    for f in files:
        name = os.path.relpath(f["path"], root) if root not in ("", ".") else f["path"]
        for row in _file_rows(f, name, fold=fold):
            table.add_row(*row)
    table.add_section()
    table.add_row(
        f"{totals['files']} files, {totals['transcripts']} transcripts",
        "",
        thousands(totals["messages"]),
        thousands(totals["tool_calls"]),
        thousands(totals["tokens"]),
        "",
    )
    out.print(table)
    if not fold and any(len(f["transcripts"]) > _UNFOLDED for f in files):
        out.print(Text("(--fold shows one row per file)"))


def _file_rows(f: FileReport, name: str, *, fold: bool) -> list[tuple[str, ...]]:
    """One row per context — a sub-agent or an episode has its own window, so its figures are its own —
    or, folded, one row of the file's sums (no window: they are several contexts)."""
    ts = f["transcripts"]
    main = next((t for t in ts if t["kind"] == "main"), ts[0])
    if fold and len(ts) > 1:
        kinds = sorted({t["kind"] for t in ts if t is not main})
        more = len(ts) - 1
        return [(f"{name} (+{more} {'/'.join(kinds)}{'s' if more > 1 else ''})", f["format"], thousands(sum(t["messages"] for t in ts)),
                 thousands(sum(t["tool_calls"] for t in ts)), thousands(sum(t["tokens"]["total"] for t in ts)), "—")]
    return [((name, f["format"]) if t is main else (f"  + {t['id']}", f"  {t['kind']}")) +
            (thousands(t["messages"]), thousands(t["tool_calls"]), thousands(t["tokens"]["total"]),
             f"{100 * t['window']['utilisation']:.1f}%") for t in [main, *(x for x in ts if x is not main)]]


def _file_detail(out: Console, f: FileReport, wanted: str | None, *, fold: bool) -> None:
    ts = f["transcripts"]
    if wanted is not None:
        chosen = [t for t in ts if t["id"] == wanted]
        if not chosen:
            from ..errors import UsageError

            raise UsageError(
                f"no transcript {wanted!r} in this file",
                path=f["path"],
                hint=f"choose one of: {', '.join(t['id'] for t in ts)}",
            )
        t = chosen[0]
    else:
        t = next((x for x in ts if x["kind"] == "main"), ts[0])
    _transcript_detail(out, f, t)
    if len(ts) > 1 and fold:
        kinds = "/".join(sorted({x["kind"] for x in ts if x is not t}))
        out.print(Text(f"{len(ts) - 1} more transcript(s) in this file ({kinds}); --transcript ID shows one"))
    elif len(ts) > 1:
        tables.transcripts_table(out, ts)
    if f["unknown_records"]:
        kinds = ", ".join(f"{k} ×{n}" for k, n in f["unknown_records"].items())
        out.print(Text(f"Kept {sum(f['unknown_records'].values())} record(s) of unknown type: {kinds}"))


def _transcript_detail(out: Console, f: FileReport, t: TranscriptReport) -> None:
    tokens = t["tokens"]
    approx = ", approximate" if t["approximate"] else ""
    est = f", {tokens['estimated']:,} estimated" if tokens["estimated"] else ""
    out.print(Text(f"{f['path']} · {f['format']} · {t['id']} ({t['kind']})", style="bold"))
    out.print(
        Text(
            f"{plural(t['messages'], 'message')} · {plural(t['tool_calls'], 'tool call')} · "
            f"{plural(tokens['total'], 'token')} "
            f"({t['encoding']}{approx}{est})" + (f" · model {t['model']}" if t["model"] else "")
        )
    )
    out.print()
    _window_lines(out, t["window"])
    _rounds_line(out, t["rounds"])
    tables.kinds_table(out, tokens)
    if t["tools"]:
        tables.tools_table(out, t["tools"])
    tables.rounds_table(out, t["rounds"])
    if t["top_messages"]:
        tables.top_table(out, t["top_messages"])
    if t["compactions"]:
        tables.compactions_table(out, t["compactions"])
    tables.usage_lines(out, t["provider_usage"], tokens["total"])
    if t["span"]:
        tables.span_table(out, t["span"])
    orphans = t["orphans"]
    if orphans["tool_results"] or orphans["unanswered_calls"]:
        out.print(
            Text(
                f"Tool pairing: {orphans['tool_results']} result(s) without a call, "
                f"{orphans['unanswered_calls']} call(s) without a result"
            )
        )
    for note in t["notes"]:
        out.print(Text(f"Note: {note}"))


def window_bar(utilisation: float, width: int = _BAR) -> str:
    """A bar of ``width`` cells: '█' used, '·' free, '┆' at the 0.1 and '│' at the 0.8 mark."""
    used = min(width, round(utilisation * width))
    cells = ["█" if i < used else "·" for i in range(width)]
    for ratio, mark in ((0.1, "┆"), (0.8, "│")):
        i = min(width - 1, int(ratio * width))
        if i >= used:
            cells[i] = mark
    return "".join(cells)


def sparkline(values: Sequence[int], width: int = _SPARK_WIDTH) -> str:
    """One cell per value (or per group of values, their sum, when more than ``width``): '▁'…'█' scaled to
    the largest cell, ' ' for zero."""
    if len(values) > width:
        size = -(-len(values) // width)
        values = [sum(values[i : i + size]) for i in range(0, len(values), size)]
    top = max(values, default=0)
    if top <= 0:
        return " " * len(values)
    return "".join(" " if v <= 0 else _SPARK[min(len(_SPARK) - 1, v * len(_SPARK) // top)] for v in values)


def _rounds_line(out: Console, rounds: Sequence[RoundRow]) -> None:
    if len(rounds) < 2:
        return
    tokens = [r["tokens"] for r in rounds]
    peak = max(range(len(rounds)), key=lambda i: (tokens[i], -i))
    size = -(-len(rounds) // _SPARK_WIDTH)
    group = f", {size} rounds a cell" if size > 1 else ""
    out.print(
        Text(
            f"Tokens per round {rounds[0]['number']}–{rounds[-1]['number']}{group}: {sparkline(tokens)} "
            f"(peak {tokens[peak]:,} in round {rounds[peak]['number']})"
        )
    )
    out.print()


def _window_lines(out: Console, w: Window) -> None:
    out.print(
        Text(
            f"Context window: {w['tokens']:,} of {w['context_window']:,} tokens "
            f"({100 * w['utilisation']:.1f}%; size: {w['source']})"
        )
    )
    state = "over the trigger" if w["over_trigger"] else "below the trigger"
    out.print(Text(f"  [{window_bar(w['utilisation'])}] {state}"))
    out.print(
        Text(
            f"  trigger {w['trigger_tokens']:,} ({w['trigger_ratio']}) · "
            f"minimum target {w['min_target_tokens']:,} ({w['min_target_ratio']})"
        )
    )
    out.print()
