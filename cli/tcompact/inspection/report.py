"""The report of one transcript (an entry of ``inspect --json``'s ``transcripts``), made from facts about its messages.

Everything ``inspect`` says of a transcript's messages — tokens by role and kind, the tools table,
rounds, the largest messages — is made from a few facts per message (:class:`MessageFacts`: its role
and counts, its calls and their tokens, the calls it answers, whether a user wrote it, its previews),
never from the messages themselves. A file that grew is then reported from the facts kept from its
last read and those of its new messages only (:mod:`tcompact.inspection.growing`), with the very code that
reports a file read whole: the same figures, by construction.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..model import Message, SourceFile, ToolCall, ToolIndex, Transcript, index_tool_calls
from ..rounds import is_real_user, split_starts
from ..counting.tokens import KINDS, MessageTokens, TokenCounter, encoding_for_model
from ..counting.windows import MIN_TARGET_RATIO, TRIGGER_RATIO, ratio_threshold, resolve_window

if TYPE_CHECKING:
    from .shapes import (FileReport, ProviderUsage, RoundRow, TokenSplit, ToolRow, TopMessage, TranscriptReport,
                                 Window)
    from . import InspectOptions

__all__ = ["MessageFacts", "facts_of", "plain", "from_plain", "transcript_report", "file_report", "counters",
           "usage_of", "stamps_of", "preview", "message_preview", "short_name"]

_PREVIEW = 80


@dataclass(frozen=True, slots=True)
class MessageFacts:
    """What the report takes from one message: its tokens (``total``, by content kind, the ``estimated``
    share), its calls without their arguments and their tokens, the calls it answers, whether a real
    user wrote it, its preview and — for a real user request — its request's preview."""

    role: str
    total: int
    by_kind: tuple[tuple[str, int], ...]
    estimated: int
    tool_calls: tuple[ToolCall, ...]
    call_tokens: tuple[int, ...]
    tool_call_ids: tuple[str, ...]
    is_error: bool
    real_user: bool
    preview: str
    request: str | None


def facts_of(m: Message, counter: TokenCounter, tokens: MessageTokens | None = None) -> MessageFacts:
    """The facts of a message, counted with ``counter`` (primed with its texts) unless its ``tokens`` are given."""
    t = tokens or counter.message(m, remember=False)
    real = is_real_user(m)
    return MessageFacts(m.role, t.total, tuple(t.by_kind.items()), t.estimated,
                        tuple(ToolCall(c.id, c.name, "", c.type) for c in m.tool_calls),
                        tuple(counter.call(c) for c in m.tool_calls), m.tool_call_ids, m.is_error, real,
                        message_preview(m), preview(m.text) if real else None)


def plain(f: MessageFacts) -> tuple[Any, ...]:
    """The facts as plain values (what :func:`from_plain` takes back)."""
    calls = tuple((c.id, c.name, c.type) for c in f.tool_calls) if f.tool_calls else ()
    return (f.role, f.total, f.by_kind, f.estimated, calls, f.call_tokens, f.tool_call_ids, f.is_error, f.real_user,
            f.preview, f.request)


def from_plain(v: Sequence[Any]) -> MessageFacts:
    """The facts :func:`plain` gave as plain values."""
    if v[4]:
        v = (*v[:4], tuple(ToolCall(i, n, "", k) for i, n, k in v[4]), *v[5:])
    return MessageFacts(*v)


def transcript_report(t: Transcript, facts: Sequence[MessageFacts], counter: TokenCounter, *, top: int,
                      context_window: int | None, model: str | None, usage: ProviderUsage | None,
                      span: Any = None) -> TranscriptReport:
    """The report of transcript ``t`` whose messages have these ``facts``. ``span`` makes its ``span``
    entry from (messages' counts, total, window) when a span layout was asked for."""
    tokens = _tokens(facts)
    tools = index_tool_calls(facts)  # type: ignore[arg-type]  (facts have what pairing reads of a message)
    window = _window(t, tokens["total"], context_window, model)
    return {
        "id": t.id,
        "kind": t.kind,
        "model": short_name(t.model) if t.model else t.model,
        "parent_tool_call": t.parent_tool_call,
        "encoding": counter.encoding_name,
        "approximate": counter.approximate,
        "messages": len(facts),
        "tool_calls": sum(len(f.tool_calls) for f in facts),
        "tokens": tokens,
        "tools": _tools(facts, tools),
        "orphans": {"tool_results": len(tools.orphan_results), "unanswered_calls": len(tools.unanswered)},
        "rounds": _rounds(facts),
        "top_messages": _top(facts, tools, top),
        "compactions": [
            {"index": c.index, "line": c.line, "kind": c.kind,
             "trigger": short_name(c.trigger) if c.trigger else c.trigger, "pre_tokens": c.pre_tokens}
            for c in t.compactions
        ],
        "provider_usage": usage,
        "window": window,
        "span": span(tokens["total"], window["context_window"]) if span is not None else None,
        "notes": [short_name(n, 300) for n in t.notes],
    }


def _tokens(facts: Sequence[MessageFacts]) -> TokenSplit:
    """The transcript's tokens: in all, estimated, by role and by content kind."""
    total = estimated = 0
    by_role: dict[str, int] = {}
    by_kind = dict.fromkeys(KINDS, 0)
    for f in facts:
        total += f.total
        estimated += f.estimated
        role = short_name(f.role)
        by_role[role] = by_role.get(role, 0) + f.total
        for kind, n in f.by_kind:
            if kind in by_kind:
                by_kind[kind] += n
    return {"total": total, "estimated": estimated, "by_role": by_role, "by_kind": by_kind}


def short_name(name: str, width: int = 80) -> str:
    """A role, tool or model name as the report shows it: cut to ``width`` characters (a name of megabytes,
    as a damaged file may hold, would otherwise fill every table it is shown in)."""
    return name if len(name) <= width else name[: width - 1] + "…"


def _tools(facts: Sequence[MessageFacts], tools: ToolIndex) -> list[ToolRow]:
    rows: dict[str, ToolRow] = {}

    def row(name: str) -> ToolRow:
        name = short_name(name)
        return rows.setdefault(name, {"name": name, "calls": 0, "argument_tokens": 0, "result_tokens": 0,
                                      "results": 0, "errors": 0})

    for f in facts:
        for call, tokens in zip(f.tool_calls, f.call_tokens):
            r = row(call.name)
            r["calls"] += 1
            r["argument_tokens"] += tokens
    answers = _answered_calls(tools)
    for i, f in enumerate(facts):
        if not f.tool_call_ids:
            continue
        call = answers.get(i)
        r = row(call.name if call else "(no matching call)")
        r["results"] += 1
        r["result_tokens"] += f.total
        r["errors"] += int(f.is_error)
    return sorted(rows.values(), key=lambda r: (-(r["argument_tokens"] + r["result_tokens"]), r["name"]))


def _answered_calls(tools: ToolIndex) -> dict[int, ToolCall]:
    """The (first) call each result message answers, by the result's index."""
    answers: dict[int, ToolCall] = {}
    for link in tools.links:
        answers.setdefault(link.result_at, link.call)
    return answers


def _rounds(facts: Sequence[MessageFacts]) -> list[RoundRow]:
    out: list[RoundRow] = []
    for r in split_starts([i for i, f in enumerate(facts) if f.real_user], len(facts)):
        part = facts[r.start:r.end]
        out.append({
            "number": r.number,
            "start": r.start,
            "end": r.end,
            "request": facts[r.request].request if r.request is not None else None,
            "messages": r.end - r.start,
            "tokens": sum(f.total for f in part),
            "tool_calls": sum(len(f.tool_calls) for f in part),
        })
    return out


def _top(facts: Sequence[MessageFacts], tools: ToolIndex, n: int) -> list[TopMessage]:
    answers = _answered_calls(tools)
    order = heapq.nsmallest(n, range(len(facts)), key=lambda i: (-facts[i].total, i))  # sorted(…)[:n]
    out: list[TopMessage] = []
    for i in order:
        f = facts[i]
        tool = ", ".join(dict.fromkeys(c.name for c in f.tool_calls)) or (answers[i].name if i in answers else None)
        out.append({"index": i, "role": short_name(f.role), "tool": short_name(tool) if tool else None,
                    "tokens": f.total, "preview": f.preview})
    return out


def preview(text: str, width: int = _PREVIEW) -> str:
    """One line of at most ``width`` characters."""
    size = 8 * width
    while True:  # flatten a head of the text long enough to show: a text of megabytes is never split whole
        flat = " ".join(text[:size].split())  # the head's flattening is a prefix of the whole text's
        if len(flat) > width or size >= len(text):
            break
        size *= 4
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def message_preview(m: Message) -> str:
    """A one-line preview: the text, else the tool calls, else the reasoning."""
    text = m.text
    if text and not text.isspace():  # as text.strip(), without copying a huge text
        return preview(text)
    if m.tool_calls:
        return preview("; ".join(f"{c.name}({c.arguments})" for c in m.tool_calls))
    for r in m.reasoning:
        if r.text:
            return preview(r.text)
        if r.encrypted_chars:
            return f"[encrypted {r.kind}: {r.encrypted_chars} chars]"
    return f"[{len(m.images)} image(s)]" if m.images else ""


def _window(t: Transcript, total: int, context_window: int | None, model: str | None) -> Window:
    recorded = (t.provider_usage or {}).get("model_context_window")
    w = resolve_window(context_window=context_window, model=model, file_model=t.model,
                       recorded=recorded if isinstance(recorded, int) else None)
    trigger = ratio_threshold(w.tokens, TRIGGER_RATIO)
    return {
        "context_window": w.tokens,
        "source": w.source,
        "tokens": total,
        "utilisation": round(total / w.tokens, 4),
        "trigger_ratio": TRIGGER_RATIO,
        "trigger_tokens": trigger,
        "over_trigger": total >= trigger,
        "min_target_ratio": MIN_TARGET_RATIO,
        "min_target_tokens": int(w.tokens * MIN_TARGET_RATIO),
    }


def counters(transcripts: Sequence[Transcript], options: InspectOptions) -> list[tuple[Transcript, TokenCounter]]:
    """Each transcript with the counter of its encoding (one counter an encoding)."""
    counters: dict[tuple[str, bool], TokenCounter] = {}
    counted = []
    for t in transcripts:
        enc, approximate = _encoding(t, options)
        counter = counters.get((enc, approximate)) or counters.setdefault(
            (enc, approximate), TokenCounter(enc, approximate=approximate))
        counted.append((t, counter))
    return counted


def file_report(path: str, fmt: str, records: int, skipped: Sequence[tuple[int, str]], unknown: Mapping[str, int],
                 transcripts: list[TranscriptReport]) -> FileReport:
    """The report of a file (an entry of ``inspect --json``'s ``files``) around its transcripts' reports."""
    return {
        "path": path,
        "format": fmt,
        "records": records,
        "skipped_lines": [{"line": line, "reason": reason} for line, reason in skipped],
        "unknown_records": {short_name(k): n for k, n in unknown.items()},
        "transcripts": transcripts,
    }


def _encoding(t: Transcript, options: InspectOptions) -> tuple[str, bool]:
    """The encoding a transcript is counted with, and whether its counts are approximate."""
    enc, approximate = encoding_for_model(options.model or t.model)
    if options.encoding is not None:
        return options.encoding, approximate or options.encoding != enc
    return enc, approximate


def stamps_of(source: SourceFile) -> Callable[[set[int]], dict[int, Any]]:
    """The "timestamp" of the records on some lines of a file read whole."""
    return lambda lines: {r.line: r.data.get("timestamp") for r in source.records
                          if r.line in lines and isinstance(r.data, dict)}


def usage_of(t: Transcript, stamps: Callable[[set[int]], dict[int, Any]]) -> ProviderUsage | None:
    """The provider usage, and ``predates_compaction``: the line of the newest compaction made after
    the last request that reported usage (its figures are then the context before that compaction)."""
    if not t.provider_usage:
        return None
    usage = {"last_line": None, **t.provider_usage}
    at = usage["last_line"]
    lines = {c.line for c in t.compactions if c.line is not None}
    after = None
    if at is not None and lines:
        stamps_at = stamps({*lines, at})

        def later(line: int) -> bool:  # by time where both lines say when they were written, else by place
            mine, theirs = stamps_at.get(line), stamps_at.get(at)
            return mine > theirs if isinstance(mine, str) and isinstance(theirs, str) else line > at

        after = max((line for line in lines if later(line)), default=None)
    return {**usage, "predates_compaction": after}
