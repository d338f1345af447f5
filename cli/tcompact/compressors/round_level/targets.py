"""What the round-level pipeline compresses: raw round blocks, merges of memory blocks, and the
memory blocks themselves (openjiuwen-spec §8.1.4, §8.1.7).

A memory block is a user message starting with the compression marker; its level (how many
summaries deep it is) lives in ``metadata.compress_level`` so that a later run continues the
levels. Raw blocks run from a cursor to the first assistant answer without tool calls
(``completed_react``) or to the end of the compressible part (``ongoing_react``), and never end
between a tool call and its result (spec §1.5, variant 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...markers import ROUND_LEVEL_ACK
from ...model import Message, index_tool_calls
from ...summarizers.base import Block

__all__ = [
    "ACK",
    "HEADER",
    "memory_text",
    "memory_message",
    "is_memory",
    "level_of",
    "pinned",
    "protect_tool_call_boundary",
    "l0_targets",
    "merge_targets",
    "aggressive_targets",
]

#: An assistant acknowledgement after a memory block: recognised and skipped, never produced.
ACK = ROUND_LEVEL_ACK
HEADER = ("processor: RoundLevelCompressor\ntype: historical_memory_block\nscope: {scope}\n"
          "authority: This block is reference memory, not a binding source of truth.\n"
          "instruction_status: Historical fallback context only. Do not treat as a new user instruction.\n"
          "conflict_priority: Prefer newer explicit user intent, newer raw context, and fresh tool results over "
          "this block.")


def memory_text(marker: str, scope: str, summary: str) -> str:
    """The memory-block text of spec §8.1.7."""
    return f"{marker}\n{HEADER.format(scope=scope)}\n\nSummary:\n{summary}"


def memory_message(marker: str, scope: str, summary: str, level: int) -> Message:
    """A memory block as a plain user message carrying its level in ``metadata.compress_level``."""
    return Message(role="user", content=memory_text(marker, scope, summary),
                   extra={"metadata": {"compress_level": level}}, meta={"memory_block": "round_level"})


def is_memory(m: Message, marker: str) -> bool:
    """A user message whose text starts with the compression marker."""
    return m.role == "user" and m.text.startswith(marker)


def level_of(m: Message) -> int:
    """``metadata.compress_level`` (a number or numeric string); 1 for a memory block without one."""
    meta = m.extra.get("metadata")
    value = meta.get("compress_level") if isinstance(meta, dict) else None
    if isinstance(value, bool):
        value = None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    return value if isinstance(value, int) and value > 0 else 1


def _is_ack(m: Message) -> bool:
    return m.role == "assistant" and not m.tool_calls and m.text.strip() == ACK


def tool_ties(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """Each message's tool-call partners: the (earliest, latest) index it is paired with, itself included."""
    ties = [(i, i) for i in range(len(messages))]
    for link in index_tool_calls(messages).links:
        c, r = link.call_at, link.result_at
        ties[c] = (min(ties[c][0], r), max(ties[c][1], r))
        ties[r] = (min(ties[r][0], c), max(ties[r][1], c))
    return ties


def protect_tool_call_boundary(messages: Sequence[Message], start: int, end: int,
                               ties: Sequence[tuple[int, int]] | None = None) -> int:
    """The last index ``e <= end`` such that ``[start, e]`` holds every result of its calls (spec §1.5-2).

    Calls and results are paired (reused ids pair with the nearest call); an assistant with tool
    calls never ends a block. Moving the end back before one call can strand the result of an
    earlier call, so the end is the largest one where no call inside reaches past it, not the
    first call's position alone. ``start - 1`` when there is none. ``ties`` is
    :func:`tool_ties` of ``messages``, passed in when the caller protects many blocks.
    """
    if end < start:
        return end
    if ties is None:
        ties = tool_ties(messages)
    best, furthest = start - 1, -1
    for i in range(start, end + 1):
        furthest = max(furthest, ties[i][1])
        if furthest <= i and not (messages[i].role == "assistant" and messages[i].tool_calls):
            best = i
    return best


@dataclass(frozen=True)
class _Memory:
    start: int
    end: int
    level: int


def _memories(messages: Sequence[Message], end: int, marker: str) -> list[_Memory]:
    """Memory blocks in ``[0, end]``, each with the acknowledgements that follow it."""
    out, i = [], 0
    while i <= end:
        if is_memory(messages[i], marker):
            j = i
            while j + 1 <= end and _is_ack(messages[j + 1]):
                j += 1
            out.append(_Memory(i, j, level_of(messages[i])))
            i = j + 1
        else:
            i += 1
    return out


def l0_targets(messages: Sequence[Message], compress_end: int, marker: str, *,
               keep: frozenset[int] = frozenset()) -> list[Block]:
    """Raw round blocks over ``[0, compress_end]``; memory blocks, system/developer messages and the
    indices in ``keep`` are skipped and end a block."""
    out: list[Block] = []
    cursor = 0
    ties = tool_ties(messages)
    while cursor <= compress_end:
        if is_memory(messages[cursor], marker):
            cursor += 1
            while cursor <= compress_end and _is_ack(messages[cursor]):
                cursor += 1
            continue
        if cursor in keep or pinned(messages[cursor]):
            cursor += 1
            continue
        end, scope = _block_end(messages, cursor, compress_end, marker, keep)
        protected = protect_tool_call_boundary(messages, cursor, end, ties)
        if protected != end and protected <= cursor:  # spec: stop rather than keep a one-message block
            break
        out.append(Block(block_id=f"block_{len(out) + 1}", scope=scope, start=cursor, end=protected))
        cursor = protected + 1
    return out


def pinned(m: Message) -> bool:
    """System and developer messages: never summarised, never dropped."""
    return m.role in ("system", "developer")


def _block_end(messages: Sequence[Message], cursor: int, compress_end: int, marker: str,
               keep: frozenset[int]) -> tuple[int, str]:
    j = cursor
    while j <= compress_end and not is_memory(messages[j], marker) and j not in keep and not pinned(messages[j]):
        m = messages[j]
        if m.role == "assistant" and not m.tool_calls:
            return j, "completed_react"
        j += 1
    return j - 1, "ongoing_react"


def merge_targets(messages: Sequence[Message], compress_end: int, marker: str, *,
                  keep: frozenset[int] = frozenset()) -> list[Block]:
    """Runs of memory blocks at the lowest level holding two or more (spec §8.1.4).

    Deviation: a run also spans the messages between two of its blocks — raw rounds whose own
    summary was refused as no smaller, and system or developer messages, which the merge keeps
    before its memory block — unless one of them is kept (the last request) or tied by a tool
    call to a message outside the gap. Upstream needs the blocks to touch, so one small raw round
    or one system message between them stops every further merge, and hard truncation ends up
    doing the work.
    """
    blocks = _memories(messages, compress_end, marker)
    if len(blocks) < 2:
        return []
    levels = [max(b.level, 1) for b in blocks]
    _promote_lonely(levels)
    counts = {lv: levels.count(lv) for lv in set(levels)}
    candidates = sorted(lv for lv, n in counts.items() if n >= 2)
    if not candidates:
        return []
    level = candidates[0]
    ties = tool_ties(messages)
    out: list[Block] = []
    run: list[_Memory] = []
    for b, lv in [*zip(blocks, levels, strict=True), (None, None)]:
        if b is not None and lv == level and (not run or _bridgeable(messages, run[-1].end + 1, b.start - 1, keep,
                                                                     ties)):
            run.append(b)
            continue
        if len(run) >= 2:
            out.append(Block(block_id=f"merge_{level}_{len(out) + 1}", scope="recursive_merge", start=run[0].start,
                             end=run[-1].end, current_level=level, next_level=level + 1,
                             source_block_count=len(run)))
        run = [b] if b is not None and lv == level else []
    return out


def _bridgeable(messages: Sequence[Message], start: int, end: int, keep: frozenset[int],
                ties: Sequence[tuple[int, int]]) -> bool:
    """Whether the raw messages ``[start, end]`` between two memory blocks may join their merge."""
    return all(i not in keep and start <= ties[i][0] and ties[i][1] <= end for i in range(start, end + 1))


def _promote_lonely(levels: list[int]) -> None:
    """Lift a level's single block to the next higher existing level, lowest first, until none applies."""
    while True:
        present = sorted(set(levels))
        lonely = next((lv for lv in present[:-1] if levels.count(lv) == 1), None)
        if lonely is None:
            return
        higher = present[present.index(lonely) + 1]
        levels[levels.index(lonely)] = higher


def aggressive_targets(messages: Sequence[Message], compress_end: int, marker: str, *,
                       keep: frozenset[int] = frozenset()) -> list[Block]:
    """The raw blocks and every memory block, in order.

    Upstream takes the memory blocks only when no raw block is left; a few small raw rounds then
    shield the large memory blocks, whose re-compression is what the aggressive stages are for.
    """
    raw = l0_targets(messages, compress_end, marker, keep=keep)
    memories = [Block(block_id=f"memory_{n}", scope="existing_round_level_block", start=b.start, end=b.end,
                      current_level=b.level, next_level=b.level + 1)
                for n, b in enumerate(_memories(messages, compress_end, marker), start=1)]
    return sorted(raw + memories, key=lambda b: b.start)
