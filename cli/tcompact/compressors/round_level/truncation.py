"""Stage 4 of the round-level pipeline: hard truncation, no model (openjiuwen-spec §8.1.6).

The context (system messages kept aside) is serialised, and the largest head/tail cut of it that
fits the target — found by binary search — becomes one memory block, of the level after the
deepest memory block it cuts (1 when there is none), carried in ``metadata.compress_level`` as
every memory block's is. Deviation, on purpose: the
last real user request is kept after the block — verbatim when it fits in half the budget, else
its head cut to that with a marker saying so (:data:`REQUEST_FLOOR` tokens when the system messages
fill the whole target) — because losing the current request is what
users complain about most (LESSONS.md §1-2); upstream keeps it only inside the cut text.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...model import Message
from ...rounds import last_real_user_index
from ...counting.tokens import TokenCounter
from .._edit import cut_head
from .prompting import head_tail, serialize
from .targets import is_memory, level_of, memory_message

__all__ = ["hard_truncate"]

_SCOPE = "truncated_full_context"
#: Tokens of the last request kept when the system messages alone fill the target: the output is
#: over the target then anyway, and without its request it would be of no use.
REQUEST_FLOOR = 512


def hard_truncate(messages: Sequence[Message], *, target: int, marker: str, truncated_marker: str,
                  head_ratio: float, counter: TokenCounter) -> tuple[Message, ...]:
    """The context cut to at most ``target`` tokens (system messages and, if it fits, the last request kept)."""
    pinned = [m for m in messages if m.role in ("system", "developer")]
    rest = [m for m in messages if m.role not in ("system", "developer")]
    allowed = target - counter.total(pinned)
    found = _last_request(rest, allowed, counter)
    request = None
    if found is not None:
        original, request = found
        allowed -= counter.message(request).total
        rest = [m for m in rest if m is not original]
    level = 1 + max((level_of(m) for m in rest if is_memory(m, marker)), default=0)
    block = _fit(rest, allowed, marker=marker, truncated_marker=truncated_marker, head_ratio=head_ratio,
                 counter=counter, level=level)
    return tuple(pinned + [block] + ([request] if request is not None else []))


def _last_request(messages: Sequence[Message], allowed: int, counter: TokenCounter) -> tuple[Message, Message] | None:
    """The last real request and what stays of it: itself, or its head within half of ``allowed``
    (:data:`REQUEST_FLOOR` when nothing is allowed); None when it only fits in the cut text."""
    i = last_real_user_index(messages)
    if i is None:
        return None
    request = messages[i]
    if allowed <= 0:  # the system messages fill the target: it cannot be met, keep what the user asked
        room = REQUEST_FLOOR
    elif allowed // 2 > 64:
        room = allowed // 2
    else:  # a tiny target: the request stays in the cut text only
        return None
    if counter.message(request).total <= room:
        return request, request
    return request, cut_head(request, room - 8, counter, by="round-level", why="fit the target")


def _fit(messages: Sequence[Message], allowed: int, *, marker: str, truncated_marker: str, head_ratio: float,
         counter: TokenCounter, level: int) -> Message:
    compact = Message(role="user", content=f"{marker}\n{truncated_marker}",
                      extra={"metadata": {"compress_level": level}}, meta={"memory_block": "round_level"})
    text = "\n".join(serialize(i, m, marker=marker) for i, m in enumerate(messages))
    if allowed <= 0 or not text:
        return compact

    def block(keep: int) -> Message:
        return memory_message(marker, _SCOPE, head_tail(text, keep, head_ratio=head_ratio, marker=truncated_marker),
                              level)

    total = counter.count(text)
    low, high, best = 0, min(len(text), int(len(text) * allowed / max(total, 1) * 1.25) + 1), None
    while low <= high:
        mid = (low + high) // 2
        candidate = block(mid)
        if counter.message(candidate).total <= allowed:
            best, low = candidate, mid + 1
        else:
            high = mid - 1
    if best is not None:
        return best
    minimal = memory_message(marker, _SCOPE, truncated_marker, level)
    return minimal if counter.message(minimal).total <= allowed else compact
