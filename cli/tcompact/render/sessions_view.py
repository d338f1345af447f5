"""The terminal view of the sessions on this machine: one row per session, or per group, and totals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from . import stderr_console as console_err
from . import thousands, console

if TYPE_CHECKING:
    from ..sessions.shapes import (Cost, ModelGroup, SessionRow, SessionSkippedLine, SessionsReport, SummedTotals, ToolGroup,
                                   ToolTotals, UsageSums)

__all__ = ["sessions_table", "session_lines", "cost_text", "resume_lines", "warn_skipped_lines"]

_USAGE = (("input", "input"), ("output", "output"), ("cache w", "cache_write"), ("cache r", "cache_read"))
_GROUP_TITLES = {"project": "Sessions by project", "day": "Sessions by day of last activity",
                 "model": "Requests by model", "tool": "Tools across sessions"}


def cost_text(cost: Cost | None) -> str:
    """``$1.23``, ``unknown`` or ``$1.23 + unknown`` (some requests of a model without a price)."""
    if cost is None:
        return "—"
    if cost["usd"] is not None:
        return _usd(cost["usd"])
    if cost["priced_usd"]:
        return f"{_usd(cost['priced_usd'])} + unknown"
    return "unknown"


def _usd(value: float) -> str:
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:.4f}"


def _when(iso: str | None) -> str:
    return iso[:16].replace("T", " ") if iso else "—"


def _active(first: str | None, last: str | None) -> str:
    """``2026-01-02 14:21–15:43`` (one day), ``2026-01-02 14:21 – 01-03 09:10`` (across days)."""
    if not first or not last:
        return _when(first or last)
    if first[:10] == last[:10]:
        return f"{_when(first)}–{last[11:16]}"
    return f"{_when(first)} – {_when(last)[5:] if first[:4] == last[:4] else _when(last)}"


def _wide() -> Any:
    """The console, wide enough for the listing when the output is not a terminal (a pipe, a file)."""
    out = console()
    if not out.is_terminal:
        out.width = max(out.width, 200)
    return out


def sessions_table(doc: SessionsReport) -> None:
    """The listing: the sessions, or the groups, with a totals line, and the price table used."""
    out = _wide()
    if doc["group_by"] == "tool":
        _tools_table(out, doc["groups"], doc["totals"])
    elif doc["group_by"] == "model":
        _models_table(out, doc["groups"], doc["totals"], cost=doc["prices"] is not None)
    elif doc["groups"] is not None:
        _groups_table(out, doc, cost=doc["prices"] is not None)
    else:
        _rows_table(out, doc["sessions"], doc["totals"], cost=doc["prices"] is not None, tz=doc["timezone"])
    _footer(out, doc)


def _usage_cells(usage: UsageSums | None) -> list[str]:
    """The usage figures, or "—" for none (no usage recorded, or only requests another session counts)."""
    own = usage is not None and usage["requests"] > 0
    return [thousands(usage[k]) if own else "—" for _, k in _USAGE]


def _rows_table(out: Any, rows: Sequence[SessionRow], totals: SummedTotals, *, cost: bool,
                tz: str) -> None:
    table = Table(title=f"Sessions on this machine, newest first (times in {tz})", title_justify="left")
    for col in ("agent", "project", "session", "active", "models"):
        table.add_column(col, overflow="fold")
    for col in ("msgs", "calls", "tokens", "context") + tuple(c for c, _ in _USAGE) + (("cost",) if cost else ()):
        table.add_column(col, justify="right", no_wrap=True)
    for r in rows:
        ctx = r["context"]
        table.add_row(r["agent"], r["project"] or "—", r["id"][:8], _active(r["first_activity"], r["last_activity"]),
                      ", ".join(r["models"]) or "—", thousands(r["messages"]),
                      thousands(r["tool_calls"]), thousands(r["tokens"]), f"{100 * ctx['utilisation']:.0f}%" if ctx else "—",
                      *_usage_cells(r["usage"]), *([cost_text(r.get("cost"))] if cost else []))
    table.add_section()
    table.add_row(f"{totals['sessions']} sessions", "", "", "", "", thousands(totals["messages"]),
                  thousands(totals["tool_calls"]), thousands(totals["tokens"]), "", *_usage_cells(totals["usage"]),
                  *([cost_text(totals.get("cost"))] if cost else []))
    out.print(table)


def _groups_table(out: Any, doc: SessionsReport, *, cost: bool) -> None:
    table = Table(title=_GROUP_TITLES[doc["group_by"]], title_justify="left")
    table.add_column(doc["group_by"], overflow="fold")
    for col in ("sessions", "msgs", "calls", "tokens") + tuple(c for c, _ in _USAGE) + (("cost",) if cost else ()):
        table.add_column(col, justify="right", no_wrap=True)
    for g in [*doc["groups"], None, {**doc["totals"], "key": "total"}]:
        if g is None:
            table.add_section()
            continue
        table.add_row(g["key"], thousands(g["sessions"]), thousands(g["messages"]), thousands(g["tool_calls"]), thousands(g["tokens"]),
                      *_usage_cells(g["usage"]), *([cost_text(g.get("cost"))] if cost else []))
    out.print(table)


def _models_table(out: Any, groups: Sequence[ModelGroup], totals: SummedTotals, *, cost: bool) -> None:
    table = Table(title=_GROUP_TITLES["model"], title_justify="left")
    table.add_column("model", overflow="fold")
    for col in ("sessions", "requests") + tuple(c for c, _ in _USAGE) + (("cost",) if cost else ()):
        table.add_column(col, justify="right", no_wrap=True)
    for g in [*groups, None, {**totals, "key": "total"}]:
        if g is None:
            table.add_section()
            continue
        usage = g["usage"]
        table.add_row(g["key"], thousands(g["sessions"]), thousands(usage["requests"]) if usage else "—", *_usage_cells(usage),
                      *([cost_text(g.get("cost"))] if cost else []))
    out.print(table)


def _tools_table(out: Any, groups: Sequence[ToolGroup], totals: ToolTotals) -> None:
    table = Table(title=_GROUP_TITLES["tool"], title_justify="left")
    table.add_column("tool", overflow="fold")
    keys = ("sessions", "calls", "argument_tokens", "result_tokens", "errors")
    for col in keys:
        table.add_column(col.replace("_", " "), justify="right", no_wrap=True)
    for g in [*groups, None, {**totals, "key": "total"}]:
        if g is None:
            table.add_section()
            continue
        table.add_row(g["key"], *(thousands(g[k]) for k in keys))
    out.print(table)


def _footer(out: Any, doc: SessionsReport) -> None:
    prices = doc["prices"]
    if prices is not None:
        unpriced = sorted({m for r in doc["sessions"] for m in ((r.get("cost") or {}).get("unpriced_models") or ())})
        line = f"Cost: provider-reported usage priced with {prices['package']} {prices['version']} (offline table)"
        if unpriced:
            line += f"; no price for {', '.join(unpriced)} (shown as unknown)"
        out.print(Text(line))
    if any(r["usage"] is None for r in doc["sessions"]):
        out.print(Text("—: no provider usage recorded in the session"))
    copies = [r for r in doc["sessions"] if r["usage"] is not None and r["usage"].get("copied_requests")]
    if copies:
        out.print(Text(f"{sum(r['usage']['copied_requests'] for r in copies):,} request(s) held by "
                       f"{len(copies)} fork(s) or copies are counted in the session they were made in"))
    if doc["not_transcripts"]:
        out.print(Text(f"Passed over {len(doc['not_transcripts'])} file(s) that hold no transcript"))


def warn_skipped_lines(skipped: Sequence[SessionSkippedLine]) -> None:
    """On stderr, per file: the bad lines skipped (a warning), and a last line not finished yet (the
    session is being written: read without it)."""
    from . import warn_skipped_lines as warn_file
    from ..formats import CUT_OFF

    by_file: dict[str, list[tuple[int, str]]] = {}
    for x in skipped:
        by_file.setdefault(x["path"], []).append((x["line"], x["reason"]))
    for path, lines in by_file.items():
        warn_file(path, [(n, why) for n, why in lines if why != CUT_OFF])
        for n, _ in (x for x in lines if x[1] == CUT_OFF):
            console_err().print(Text(f"{path}: line {n:,} is not finished (the session is being written): "
                                     "read without it"))


def session_lines(row: SessionRow) -> None:
    """The session a detailed view belongs to, with its usage and cost, under the file detail."""
    out = console()
    usage = row["usage"]
    used = ", ".join(f"{label} {thousands(usage[k])}" for label, k in _USAGE) if usage and usage["requests"] else (
        "none of its own" if usage else "none recorded")
    if usage and usage["copied_requests"]:
        used += f" ({usage['copied_requests']:,} request(s) copied from the session it came from are counted there)"
    out.print(Text(f"Session {row['id']} ({row['agent']}, {row['project'] or 'project not recorded'}), "
                   f"{_active(row['first_activity'], row['last_activity'])}, "
                   f"{len(row['files'])} file(s)"))
    line = f"Provider usage of the session: {used}"
    if "cost" in row:
        line += f"; cost {cost_text(row['cost'])}"
    out.print(Text(line))


def resume_lines(fork: Mapping[str, Any]) -> None:
    """What a fork or an in-place compaction wrote, and the one command that resumes it."""
    out = console()
    if fork["mode"] == "fork":
        out.print(Text(f"Forked as a new {fork['agent']} session {fork['id']}: {fork['path']}"))
    else:
        out.print(Text(f"Replaced {fork['path']} in place; the original is kept as {fork['backup']} "
                       f"(`tcompact restore --session {fork['id']}` brings it back)"))
    out.print(Text("Resume it with:"))
    out.print(Text(f"  {fork['resume']}"))
