"""The terminal view of ``tcompact eval --metric needed``: per chain and baseline the share of needed tokens
kept and recoverable and the size, a plain sentence for each chain a baseline beats, and per session the
counts (sessions as columns, as many as fit the terminal in each table)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from .eval_view import house_table

if TYPE_CHECKING:
    from ..evaluation.shapes import EvalReport, FileEntry, NeededRow

__all__ = ["needed_report", "needed_tables"]


def _share(share: float | None) -> str:
    return "—" if share is None else f"{round(100 * share)}%"


def needed_report(out: Any, report: EvalReport) -> None:
    """The tables of a report's ``needed`` part and, for several files, the counts per session."""
    needed_tables(out, {**report["needed"], "default_chain": report["default_chain"]})
    files = report["files"]
    if len(files) > 1:
        per_table = max(1, (out.width - 26) // 9)  # session columns that fit beside the names
        for start in range(0, len(files), per_table):
            out.print(_per_file(files, offset=start, chunk=files[start:start + per_table]))
        out.print(Text("\n".join(f"{n}: {f['path']} (cuts before messages "
                                 f"{', '.join(str(c['at']) for c in f['needed']['cuts']) or 'none'})"
                                 for n, f in enumerate(files, start=1))))


def needed_tables(out: Any, doc: Mapping[str, Any]) -> None:
    """The header line, the chains and baselines, what a baseline beats and the legend, from the totals
    (``sessions``, ``cuts``, ``needed``, ``cuts_per_session``, ``calls_ahead``, ``summary``,
    ``baselines``, ``default_chain``): eval's report, or the totals of ``tcompact batch eval``."""
    out.print(Text(f"Needed tokens: {doc['needed']:,} at {doc['cuts']:,} cut point(s) in {doc['sessions']:,} "
                   f"session(s) (at most {doc['cuts_per_session']} a session, uses within the next "
                   f"{doc['calls_ahead']} calls); every chain compacted with --now"))
    rows = doc["summary"]
    grid = house_table("Needed tokens kept, per chain (baselines below the line)", narrow=False)
    for heading in ("", "kept", "recoverable", "size"):
        grid.add_column(heading, justify="right" if heading else "left", no_wrap=True)
    for n, row in enumerate(rows):
        last_chain = not row["reference"] and (n + 1 == len(rows) or rows[n + 1]["reference"])
        grid.add_row(_name(row, doc["default_chain"]), _share(row["kept_share"]), _share(row["recoverable_share"]),
                     "—" if row["ratio"] is None else f"{row['ratio']:.2f}", end_section=last_chain)
    out.print(grid)
    for line in _losses(rows, doc["default_chain"]):
        out.print(Text(line))
    names = "; ".join(f"{b['name']}: {b['description']}" for b in doc["baselines"])
    out.print(Text("kept: standing verbatim in what the model sees after compaction; recoverable: not kept, but in "
                   "an original the context names (an offloaded message, a path:line); size: tokens after / before, "
                   f"all cuts together; {names}"))


def _name(row: NeededRow, default: str) -> str:
    failed = f" ({row['failed']} failed)" if row["failed"] else ""
    return row["chain"] + (" (default)" if row["chain"] == default else "") + failed


def _losses(rows: Sequence[NeededRow], default: str) -> list[str]:
    """One sentence per chain a baseline beats on the share kept."""
    shares = {r["chain"]: r["kept_share"] for r in rows}
    out = []
    for r in rows:
        if r["loses_to"]:
            against = " and ".join(f"{b} ({_share(shares[b])})" for b in r["loses_to"])
            out.append(f"{_name(r, default)} keeps fewer needed tokens ({_share(r['kept_share'])}) than the "
                       f"baseline{'s' if len(r['loses_to']) > 1 else ''} {against}.")
    return out


def _per_file(files: Sequence[FileEntry], *, offset: int, chunk: Sequence[FileEntry]) -> Table:
    """Sessions as columns (numbered as listed below), the needed tokens and each chain's kept ones as rows."""
    grid = house_table("Per session: needed tokens, and how many each chain keeps (+ recoverable; sessions listed "
                       "below)", narrow=False)
    grid.add_column("", no_wrap=True)
    for n in range(offset + 1, offset + len(chunk) + 1):
        grid.add_column(str(n), justify="right", no_wrap=True)
    grid.add_row("needed", *(str(sum(len(c["needed"]) for c in f["needed"]["cuts"])) for f in chunk), end_section=True)
    for name in [r["chain"] for r in files[0]["needed"]["results"]]:
        cells = []
        for f in chunk:
            r = next(r for r in f["needed"]["results"] if r["chain"] == name)
            more = f"+{r['recoverable']}" if r["recoverable"] else ""
            cells.append("failed" if r["failed"] and r["failed"] == r["cuts"] else f"{r['kept']}{more}")
        grid.add_row(name, *cells)
    return grid
