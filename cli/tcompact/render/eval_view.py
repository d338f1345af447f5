"""The terminal view of ``tcompact eval``: the chains side by side, per canary kind and per file."""

from __future__ import annotations

import re

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich import box
from rich.table import Table
from rich.text import Text

from . import console

if TYPE_CHECKING:
    from ..evaluation.shapes import CanaryResult, EvalReport, Survival

__all__ = ["eval_outcome", "eval_report", "chains_table", "KIND_LABELS", "house_table"]

#: Column headings of the canary kinds.
KIND_LABELS = {"error_line": "error line", "file_written": "file written", "command": "command",
               "user_constraint": "constraint", "user_preference": "preference", "decision": "decision",
               "early_fact": "early fact"}


def _share(counts: Survival) -> str:
    if not counts["planted"]:
        return "—"
    return f"{round(100 * counts['kept'] / counts['planted'])}%"


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def eval_outcome(report: EvalReport, *, json_out: bool) -> None:
    """What ``eval`` prints: the JSON document, or the tables."""
    if json_out:
        from . import print_json

        print_json(report)
        return
    eval_report(report)


def eval_report(report: EvalReport) -> None:
    """The canaries: one column per chain (metrics as rows) and, for several files, one row per file; the
    needed tokens (:mod:`.needed_view`); each as the report holds them."""
    out = console()
    files = report["files"]
    if "summary" in report:
        chains_table(out, {**report, "sessions": len(files), "canaries": sum(len(f["canaries"]) for f in files)})
        if len(files) > 1:
            out.print(_fitted(out, lambda narrow: _per_file(report, narrow)))
    if "needed" in report:
        from .needed_view import needed_report

        needed_report(out, report)


def chains_table(out: Any, doc: Mapping[str, Any]) -> None:
    """The header line and the chains side by side, from ``summary`` rows and the counts beside them
    (``sessions``, ``canaries``, ``per_kind``, ``seed``, ``kinds``, ``default_chain``): eval's report,
    or the totals of ``tcompact batch eval``."""
    out.print(Text(f"Canaries: {doc['canaries']:,} planted in {doc['sessions']:,} session(s), {doc['per_kind']} of "
                   f"each kind per session, seed {doc['seed']}; every chain compacted with --now"))
    out.print(_fitted(out, lambda narrow: _chains(doc, narrow)))
    out.print(Text("tokens: after / before, all sessions together; worst: the highest of one session; pairing: tool "
                   "calls or results left without their partner; last request: sessions whose last real request "
                   "is kept verbatim"))


def _fitted(out: Any, build) -> Table:
    """The table ``build(narrow)`` makes: as it is when it fits the terminal; else narrowed — each
    chain's name broken where it may be (:func:`_broken`) and the space between columns collapsed —
    so that a column narrows to its longest piece and no name is cut in the middle of a word."""
    table = build(False)
    natural = out.measure(table, options=out.options.update_width(10_000)).maximum
    return table if natural <= out.width else build(True)


def house_table(title: str, *, narrow: bool, **more: Any) -> Table:
    """The tables of eval's views: a title on the left, a rule under the headings, no outer box when narrow."""
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, show_edge=not narrow,
                 collapse_padding=narrow, **more)


def _broken(name: str) -> str:
    """A chain's heading on several lines: after each ``-`` and ``,``, and before each ``(``."""
    return re.sub(r"(?<=[-,])(?!\n)|\s+(?=\()", "\n", name).strip()


def _chains(doc: Mapping[str, Any], narrow: bool) -> Table:
    rows = doc["summary"]
    heading = _broken if narrow else str
    table = house_table("Kept verbatim, per chain", narrow=narrow)
    table.add_column("", no_wrap=True)
    for row in rows:
        name = row["chain"] + (" (default)" if row["chain"] == doc["default_chain"] else "")
        table.add_column(heading(name + (f" ({row['failed']} failed)" if row["failed"] else "")), justify="right",
                         overflow="fold")
    for kind in doc["kinds"]:
        table.add_row(KIND_LABELS.get(kind, kind), *(_share(r["survival"][kind]) for r in rows))
    table.add_row("all kinds", *(_share(r["overall"]) for r in rows), end_section=True)
    table.add_row("tokens", *(_ratio(r["ratio"]) for r in rows))
    table.add_row("worst", *(_ratio(r["worst_ratio"]) for r in rows))
    table.add_row("pairing", *(str(r["pairing_violations"]) for r in rows))
    table.add_row("last request", *(f"{r['last_request_kept']['kept']}/{r['last_request_kept']['of']}" for r in rows))
    return table


def _per_file(report: EvalReport, narrow: bool) -> Table:
    table = house_table("Per session: share kept and tokens after / before (sessions listed below)", narrow=narrow,
                   caption="\n".join(f"{n}: {f['path']}" for n, f in enumerate(report["files"], start=1)),
                   caption_justify="left")
    by_chain = [{r["chain"]: r for r in f["results"]} for f in report["files"]]
    cells = [[_cell(results[chain]) for results in by_chain] for chain in report["chains"]]
    table.add_column("#", justify="right", no_wrap=True)
    for chain, column in zip(report["chains"], cells):
        # as wide as its widest cell: a share and its ratio stay on one line
        table.add_column(_broken(chain) if narrow else chain, justify="right", overflow="fold",
                         min_width=max(map(len, column)))
    for n, row in enumerate(zip(*cells), start=1):
        table.add_row(str(n), *row)
    return table


def _cell(result: CanaryResult) -> str:
    if result["status"] == "failed":
        return "failed"
    kept = sum(c["kept"] for c in result["survival"].values())
    total = sum(c["planted"] for c in result["survival"].values())
    ratio = _ratio(result["ratio"])
    return f"{_share({'kept': kept, 'planted': total})} {ratio[1:] if ratio.startswith('0.') else ratio}"
