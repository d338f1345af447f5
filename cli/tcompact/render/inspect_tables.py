"""The tables of the detailed inspect view, one function each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from . import thousands, percent

if TYPE_CHECKING:
    from ..inspection.shapes import (CompactionRow, ProviderUsage, RoundRow, SpanReport, TokenSplit, ToolRow, TopMessage,
                                  TranscriptReport)

__all__ = [
    "kinds_table",
    "tools_table",
    "rounds_table",
    "top_table",
    "compactions_table",
    "usage_lines",
    "span_table",
    "transcripts_table",
]

_MAX_ROUNDS = 40
_KIND_LABELS = {
    "system": "system text",
    "user": "user text",
    "injected": "injected context",
    "assistant": "assistant text",
    "reasoning": "reasoning",
    "tool_arguments": "tool-call arguments",
    "tool_results": "tool results",
    "images": "images",
}


def kinds_table(out: Console, tokens: TokenSplit) -> None:
    total = tokens["total"]
    table = Table(title="Tokens by content kind", title_justify="left")
    table.add_column("kind")
    table.add_column("tokens", justify="right")
    table.add_column("share", justify="right")
    for kind, n in tokens["by_kind"].items():
        if n:
            table.add_row(_KIND_LABELS.get(kind, kind), thousands(n), percent(n, total))
    table.add_section()
    for role, n in tokens["by_role"].items():
        table.add_row(f"role {role}", thousands(n), percent(n, total))
    out.print(table)


def tools_table(out: Console, tools: Sequence[ToolRow]) -> None:
    table = Table(title="Tokens by tool", title_justify="left")
    for col in ("tool", "calls", "argument tokens", "result tokens", "errors"):
        table.add_column(col, justify="left" if col == "tool" else "right")
    for r in tools:
        table.add_row(
            r["name"],
            thousands(r["calls"]),
            thousands(r["argument_tokens"]),
            thousands(r["result_tokens"]),
            thousands(r["errors"]),
        )
    out.print(table)


def rounds_table(out: Console, rounds: Sequence[RoundRow]) -> None:
    table = Table(title="Rounds", title_justify="left")
    for col in ("#", "messages", "calls", "tokens"):
        table.add_column(col, justify="right", no_wrap=True, min_width=len(col))
    table.add_column("request", overflow="ellipsis", no_wrap=True, max_width=max(20, out.width - 40))
    shown = rounds if len(rounds) <= _MAX_ROUNDS else [*rounds[:10], *rounds[-(_MAX_ROUNDS - 10) :]]
    for r in shown:
        if len(rounds) > _MAX_ROUNDS and r is rounds[-(_MAX_ROUNDS - 10)]:
            table.add_row("…", "", "", "", f"{len(rounds) - _MAX_ROUNDS} more rounds")
        request = r["request"] if r["request"] is not None else "(before the first request)"
        table.add_row(
            str(r["number"]),
            f"{r['start']}–{r['end'] - 1}",
            thousands(r["tool_calls"]),
            thousands(r["tokens"]),
            request,
        )
    out.print(table)


def top_table(out: Console, top: Sequence[TopMessage]) -> None:
    table = Table(title="Largest messages", title_justify="left")
    for col, width in (("#", 3), ("tokens", 6), ("role", 9), ("tool", 12)):
        table.add_column(
            col,
            justify="right" if col in ("#", "tokens") else "left",
            no_wrap=True,
            overflow="ellipsis",
            min_width=width,
            max_width=16 if col == "tool" else None,
        )
    table.add_column("preview", overflow="ellipsis", no_wrap=True, max_width=max(20, out.width - 52))
    for m in top:
        table.add_row(str(m["index"]), thousands(m["tokens"]), m["role"], m["tool"] or "", m["preview"])
    out.print(table)


def compactions_table(out: Console, compactions: Sequence[CompactionRow]) -> None:
    table = Table(title="Compactions found in the file", title_justify="left")
    for col in ("line", "kind", "trigger", "tokens before", "at message"):
        table.add_column(col)
    for c in compactions:
        table.add_row(
            thousands(c["line"]),
            c["kind"],
            c["trigger"] or "—",
            thousands(c["pre_tokens"]),
            "—" if c["index"] is None else str(c["index"]),
        )
    out.print(table)


def usage_lines(out: Console, usage: ProviderUsage | None, counted: int) -> None:
    if not usage:
        out.print(Text("Provider usage: none recorded in the file"))
        return
    out.print(Text(_usage_head(usage)))
    context = _context_line(usage, counted)
    if context is not None:
        out.print(Text(context))


def _usage_head(usage: ProviderUsage) -> str:
    """The provider-reported usage of the file, as its format records it (its class words it)."""
    from ..formats.family import Format, find

    return (find(usage["source"]) or Format()).usage_head(usage, thousands)


def _context_line(usage: ProviderUsage, counted: int) -> str | None:
    """The context reported at the last request next to tcompact's count (None when none was reported)."""
    last = usage.get("last_context_tokens")
    stale = usage.get("predates_compaction")
    if last is not None and stale is not None:
        return (f"  context at the last request: {last:,} reported, before the compaction at line {stale:,}; "
                f"{counted:,} counted by tcompact now (the usage predates the compaction)")
    if last is not None:
        return (f"  context at the last request: {last:,} reported vs {counted:,} counted by tcompact "
                "(the provider also counts the system prompt and tool definitions)")
    return None


def span_table(out: Console, span: SpanReport) -> None:
    keep = "" if span["keep_recent"] is None else f", keep_recent {span['keep_recent']}"
    table = Table(title=f"Span layout of {span['compressor']}{keep}", title_justify="left")
    for col in ("part", "messages", "range", "tokens"):
        table.add_column(col, justify="left" if col == "part" else "right")
    for p, label in ((span["prefix"], "preserved prefix"), (span["body"], "compressible body"),
                     (span["tail"], "protected tail")):
        rng = f"{p['start']}–{p['end'] - 1}" if p["messages"] else "—"
        table.add_row(label, thousands(p["messages"]), rng, thousands(p["tokens"]))
    out.print(table)
    out.print(Text(f"  would compact now: {'yes' if span['would_compact'] else 'no'}"))


def transcripts_table(out: Console, ts: Sequence[TranscriptReport]) -> None:
    # the ids are what --transcript needs: never cut (a light box leaves them room at 80 columns);
    # the call that started a sub-agent folds
    table = Table(title="Transcripts in this file (--transcript ID shows one)", title_justify="left",
                  box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), show_edge=False, pad_edge=False)
    table.add_column("id", no_wrap=True, min_width=max(len(t["id"]) for t in ts))
    table.add_column("kind", no_wrap=True)
    for col in ("msgs", "calls", "tokens"):
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("started by", overflow="fold")
    for t in ts:
        table.add_row(
            Text(t["id"]),
            t["kind"],
            thousands(t["messages"]),
            thousands(t["tool_calls"]),
            thousands(t["tokens"]["total"]),
            Text(t["parent_tool_call"] or ""),
        )
    out.print(table)
