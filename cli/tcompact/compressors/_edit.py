"""Helpers for compressors that rewrite messages in place: tool results (truncate, micro,
offload) and an over-budget user request (full, round-level's hard truncation)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..model import Message, index_tool_calls
from ..counting.tokens import TokenCounter

__all__ = ["result_text", "with_text", "tool_names", "call_preview", "cut_head", "CUT_MARK"]

#: Every head cut ends with this (the invariants accept a last request cut this way).
CUT_MARK = "was cut by tcompact"
_CUT = "\n[... the rest of this message ({n:,} tokens) " + CUT_MARK + " {by} to {why} ...]"


def result_text(m: Message) -> str | None:
    """The text of a tool result, or None when it has no text to rewrite."""
    if isinstance(m.content, str):
        return m.content
    if isinstance(m.content, tuple) and any(isinstance(p.get("text"), str) for p in m.content):
        return m.text
    return None


def with_text(m: Message, text: str) -> Message:
    """The message with its text replaced; non-text parts (images) are kept after the text."""
    if isinstance(m.content, tuple):
        others = tuple(p for p in m.content if not isinstance(p.get("text"), str))
        return replace(m, content=({"type": "text", "text": text}, *others))
    return replace(m, content=text)


def tool_names(messages: Sequence[Message]) -> dict[int, tuple[str, str]]:
    """For each tool result index: (tool name, a short preview of the call it answers)."""
    out: dict[int, tuple[str, str]] = {}
    for link in index_tool_calls(messages).links:
        out.setdefault(link.result_at, (link.call.name, call_preview(link.call.name, link.call.arguments)))
    return out


def call_preview(name: str, arguments: str, width: int = 120) -> str:
    """``name(arguments)`` on one line, cut to ``width`` characters."""
    flat = " ".join(f"{name}({arguments})".split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def cut_head(m: Message, budget: int, counter: TokenCounter, *, by: str, why: str) -> Message:
    """The head of a message's text that fits ``budget`` tokens with the marker saying what was cut
    (the marker's ~40 tokens included); the head ends at a blank when one is near, as the user-message
    cuts of :mod:`tcompact.user_messages` do."""
    text = m.text
    total = counter.count(text)
    keep = max(0, int(len(text) * (budget - 40) / max(total, 1)))
    while keep > 0 and counter.count(text[:keep]) > budget - 40:
        keep = int(keep * 0.9)
    head = text[:keep]
    blank = max(head.rfind(" "), head.rfind("\n"))
    if 0 < blank and keep - blank <= 80 and keep < len(text):  # end at a blank, never inside a word
        head = head[:blank].rstrip()
    return replace(m, content=head + _CUT.format(n=counter.count(text[len(head):]), by=by, why=why),
                   source=m.source)
