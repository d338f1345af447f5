"""The per-block summary budget of an aggressive stage: what gets the context under the target.

Upstream asks every target of the aggressive stages for ``second_pass_target_tokens`` (20 000)
or ``third_pass_target_tokens`` (10 000). After stage 1 the targets are mostly memory blocks
of a few hundred tokens each, far under that: a summariser that keeps what fits its budget
gives each one back as it was, every replacement is refused as no smaller, and hard
truncation ends up doing the work. Deviation: when the stage's budget cannot bring the context
to the target, the budget asked for is the largest one that can — the one budget ``B`` per
block for which the blocks, each replaced by a memory block of ``B`` tokens (its header
included) or left as it is when smaller, fit what the target leaves beside the messages
outside every block — and never under :data:`MIN_BLOCK_TOKENS`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...model import Message
from ...summarizers.base import Block
from ...counting.tokens import TokenCounter
from .targets import memory_message, pinned

__all__ = ["MIN_BLOCK_TOKENS", "stage_budget"]

#: The smallest summary an aggressive stage asks a block for: less leaves no usable summary.
MIN_BLOCK_TOKENS = 64


def stage_budget(messages: Sequence[Message], targets: Sequence[Block], *, stage_target: int, goal: int,
                 counter: TokenCounter, marker: str, keep: frozenset[int]) -> int:
    """The summary budget per block: ``stage_target`` when it reaches ``goal`` tokens, else the largest that
    does (at least :data:`MIN_BLOCK_TOKENS`, at most ``stage_target``)."""
    sizes = [_replaced(messages, b, counter, keep) for b in targets]
    headers = [counter.message(memory_message(marker, b.scope, "", b.next_level)).total for b in targets]
    room = goal - (counter.total(messages) - sum(sizes))

    def after(budget: int) -> int:
        return sum(min(size, header + budget) for size, header in zip(sizes, headers, strict=True))

    if after(stage_target) <= room:
        return stage_target
    low, high = MIN_BLOCK_TOKENS, stage_target
    if after(low) > room:
        return low
    while low < high:  # the largest budget whose result fits the room
        mid = (low + high + 1) // 2
        if after(mid) <= room:
            low = mid
        else:
            high = mid - 1
    return low


def _replaced(messages: Sequence[Message], block: Block, counter: TokenCounter, keep: frozenset[int]) -> int:
    """Tokens a block's memory block replaces (its system and kept messages stay)."""
    return sum(counter.message(messages[i]).total for i in range(block.start, block.end + 1)
               if not pinned(messages[i]) and i not in keep)
