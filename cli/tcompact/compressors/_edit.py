"""Helpers for compressors that rewrite tool results in place (truncate, micro, offload)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..model import Message, index_tool_calls

__all__ = ["result_text", "with_text", "tool_names", "call_preview"]


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
