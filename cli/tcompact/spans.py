"""Spans (preserved prefix, compressible body, protected tail) and legal cut points.

A compressor replaces the body of a span by a summary. The cut between body and tail must never
separate an assistant tool call from its result, or the compacted transcript holds an orphan
that providers reject. The builders follow openjiuwen-spec §3-5 and the tail extension of
§1.5 (variant 1); :func:`legal_cut_points` gives every index where a cut is safe.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .model import Message, index_tool_calls
from .rounds import last_real_user_index

__all__ = [
    "Span",
    "adjust_keep_recent_for_tool_boundaries",
    "current_round_span",
    "dialogue_span",
    "round_level_span",
    "legal_cut_points",
]


@dataclass(frozen=True, slots=True)
class Span:
    """Index ranges over a message list: ``prefix`` kept, ``body`` compressed, ``tail`` kept raw."""

    prefix: range
    body: range
    tail: range

    @classmethod
    def from_cuts(cls, n: int, body_start: int, tail_start: int) -> Span:
        """The span whose body is ``[body_start, tail_start)`` of ``n`` messages."""
        return cls(range(0, body_start), range(body_start, tail_start), range(tail_start, n))

    @property
    def empty(self) -> bool:
        """True when there is nothing to compress."""
        return len(self.body) == 0


def adjust_keep_recent_for_tool_boundaries(messages: Sequence[Message], keep: int) -> int:
    """Grow a protected tail of ``keep`` messages until no tool result in it answers a call before it.

    Returns the number of tail messages to protect (spec §1.5, variant 1); it only grows. Results
    are paired with the nearest earlier call of their id (see :func:`index_tool_calls`), where
    upstream takes the earliest message with a matching id and so over-grows on reused ids.
    """
    n = len(messages)
    if keep <= 0 or n == 0:
        return max(keep, 0)
    call_of_result: dict[int, int] = {}
    for link in index_tool_calls(messages).links:
        call_of_result[link.result_at] = min(link.call_at, call_of_result.get(link.result_at, n))
    start = max(n - keep, 0)
    while True:
        earliest = min((c for r, c in call_of_result.items() if r >= start), default=start)
        if earliest >= start:
            return n - start
        start = earliest


def current_round_span(messages: Sequence[Message], *, keep_recent: int = 0) -> Span:
    """CurrentRoundCompressor: compress the work after the last real user message (spec §3)."""
    n = len(messages)
    split = max(n - adjust_keep_recent_for_tool_boundaries(messages, keep_recent), 0)
    user = last_real_user_index(messages)
    if user is None:  # nothing to do; upstream leaves messages[:split] in no part, we keep them in the prefix
        return Span.from_cuts(n, split, split)
    # Deviation: upstream starts the body right after the request even when a call made before the
    # request is answered after it; we start at the first cut that keeps such a pair in the prefix.
    start = next(c for c in legal_cut_points(messages) if c >= user + 1)
    if split <= start:
        return Span.from_cuts(n, start, start)
    return Span.from_cuts(n, start, split)


def dialogue_span(messages: Sequence[Message]) -> Span:
    """DialogueCompressor: compress everything before the last real user message (spec §4)."""
    n = len(messages)
    user = last_real_user_index(messages)
    if user is None:
        return Span(range(0), range(0), range(0, n))
    split = max(n - adjust_keep_recent_for_tool_boundaries(messages, n - user), 0)
    return Span.from_cuts(n, 0, split)


def round_level_span(messages: Sequence[Message], *, keep_recent: int) -> Span:
    """All but the newest ``keep_recent`` messages, the tail grown to keep tool pairs (spec §5's split;
    the round-level pipeline keeps ``keep_recent_messages``, 0 by default, where spec §5's forked
    compressor keeps 4)."""
    n = len(messages)
    split = max(n - adjust_keep_recent_for_tool_boundaries(messages, keep_recent), 0)
    return Span.from_cuts(n, 0, split)


def legal_cut_points(messages: Sequence[Message]) -> list[int]:
    """Every index ``i`` (0..n) where cutting between messages ``i-1`` and ``i`` keeps each tool
    call together with all of its results."""
    n = len(messages)
    blocked = [0] * (n + 2)  # difference array over cut positions
    for link in index_tool_calls(messages).links:
        blocked[link.call_at + 1] += 1  # cuts call_at+1 .. result_at separate the pair
        blocked[link.result_at + 1] -= 1
    cuts: list[int] = []
    depth = 0
    for i in range(n + 1):
        depth += blocked[i]
        if depth == 0:
            cuts.append(i)
    return cuts
