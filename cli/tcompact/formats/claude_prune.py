"""What a rewritten Claude Code history leaves out: thinking after the first change, and unanswered calls.

Anthropic's newest models bind each ``thinking`` and ``redacted_thinking`` block to everything
before it in the conversation: a request whose history changed earlier is refused ("bound to a
different conversation"); Anthropic's fix for a summary written on the client is to send the
kept turns without their thinking. So a compaction, fork or in-place rewrite of a Claude Code
session keeps the thinking of the turns before its first change — their history is what it was
— and leaves it out of every turn from that change on, the summary's turns included; text and
tool blocks stay. Claude Code since 2.1.69 stores thinking as an empty text plus its signature:
such a block is thinking like any other. A ``tool_use`` of the last reply that no result answers
(a session cut while a tool ran) is left out too, so the history never ends on an unanswered call.

A line left without content is not written: the lines under it hang from its parent instead, so
the ``parentUuid`` chain and the tool pairing stay whole.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..model import Message

__all__ = ["THINKING", "Pruning", "prune", "strip_line", "reparent"]

THINKING = frozenset({"thinking", "redacted_thinking"})


@dataclass(frozen=True)
class Pruning:
    """The history as written: ``first`` is the index of the first changed message (thinking goes from there
    on), ``calls`` the tool_use ids left out, ``written`` each message as written (None: left out)."""

    first: int
    calls: frozenset[str]
    written: tuple[Message | None, ...]
    thinking: int

    @property
    def messages(self) -> tuple[Message, ...]:
        return tuple(m for m in self.written if m is not None)

    def notes(self) -> tuple[str, ...]:
        """What the report says of it."""
        out = []
        if self.thinking:
            out.append(f"{self.thinking} thinking block(s) left out of the turns from the first change on: Anthropic's "
                       "newest models refuse a thinking block whose earlier history changed")
        if self.calls:
            out.append(f"{len(self.calls)} tool call(s) without a result left out, so that the history does not end "
                       f"on an unanswered call: {', '.join(sorted(self.calls))}")
        return tuple(out)


def prune(original: Sequence[Message], new: Sequence[Message]) -> Pruning:
    """The decisions for writing ``new`` over ``original`` (see the module docstring)."""
    calls = _unanswered_at_the_end(new)
    first = next((n for n, m in enumerate(new) if n >= len(original) or original[n] != m
                  or any(c.id in calls for c in m.tool_calls)), len(new))
    written: list[Message | None] = list(new[:first])
    thinking = 0
    for m in new[first:]:
        thinking += len(m.reasoning)
        kept = tuple(c for c in m.tool_calls if c.id not in calls)
        m = replace(m, reasoning=(), tool_calls=kept) if m.reasoning or len(kept) != len(m.tool_calls) else m
        written.append(None if _empty(m) else m)
    return Pruning(first, calls, tuple(written), thinking)


def _unanswered_at_the_end(messages: Sequence[Message]) -> frozenset[str]:
    """The calls of the last reply that makes any, when only results follow it and none answers them (a call
    left unanswered earlier, followed by the user's next turn, is the history's own)."""
    for n in range(len(messages) - 1, -1, -1):
        m = messages[n]
        if m.role in ("tool", "function"):
            continue
        if m.role != "assistant" or not m.tool_calls:
            return frozenset()
        answered = {cid for later in messages[n + 1:] for cid in later.tool_call_ids}
        return frozenset(c.id for c in m.tool_calls if c.type != "server" and c.id not in answered)
    return frozenset()


def _empty(m: Message) -> bool:
    """An assistant message with nothing left to send (the API refuses an empty one)."""
    if m.role != "assistant" or m.tool_calls:
        return False
    if isinstance(m.content, str):
        return not m.content.strip()
    return all(_blank(p) for p in m.content or ())


def _blank(block: Any) -> bool:
    return isinstance(block, Mapping) and block.get("type") == "text" and not str(block.get("text") or "").strip()


def strip_line(data: Mapping[str, Any], *, thinking: bool, calls: frozenset[str]) -> dict[str, Any] | None:
    """A copy of an assistant line without its thinking blocks (``thinking``) and the calls in ``calls``;
    None when nothing is left of its content. Any other line is copied as it is."""
    d = copy.deepcopy(dict(data))
    message = d.get("message")
    content = message.get("content") if isinstance(message, dict) and d.get("type") == "assistant" else None
    if isinstance(content, str):
        return d if content.strip() else None
    if not isinstance(content, list):
        return d
    kept = [b for b in content if not (isinstance(b, dict) and (
        (thinking and b.get("type") in THINKING) or (b.get("type") == "tool_use" and b.get("id") in calls)))]
    if all(_blank(b) for b in kept):
        return None
    message["content"] = kept
    return d


def reparent(d: Mapping[str, Any], gone: Mapping[str, Any]) -> dict[str, Any] | None:
    """``d`` with its ``parentUuid`` / ``logicalParentUuid`` pointing past the lines left out (``gone``: their
    uuid → their parentUuid) at the nearest one that stays; None when it names no line left out."""
    keys = [k for k in ("parentUuid", "logicalParentUuid") if isinstance(d.get(k), str) and d[k] in gone]
    if not keys:
        return None

    def up(uuid: Any) -> Any:
        seen = set()
        while isinstance(uuid, str) and uuid in gone and uuid not in seen:
            seen.add(uuid)
            uuid = gone[uuid]
        return uuid

    return {**d, **{k: up(d[k]) for k in keys}}
