"""The reference rows of the needed-token recall: the two simplest ways to shorten a context.

A chain that keeps fewer needed tokens than one of these loses to a one-line rule, and eval says
so. Both act on the messages before the cut, as read, and are scored like a chain's output.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..compressors._edit import result_text, with_text
from ..model import Message
from ..rounds import last_real_user_index

__all__ = ["Baseline", "BASELINES", "TAIL_MESSAGES", "HEAD_TAIL_CHARS", "keep_tail", "head_tail"]

#: Messages kept by the tail baseline.
TAIL_MESSAGES = 20
#: Characters kept from each end of a tool result by the head/tail baseline.
HEAD_TAIL_CHARS = 500
_CUT = "\n[...]\n"


def keep_tail(messages: Sequence[Message]) -> tuple[Message, ...]:
    """The system and developer messages, the last real user request and the last :data:`TAIL_MESSAGES`
    messages, in their order (a tool result whose call is older stays, as the rule keeps it)."""
    tail_start = max(len(messages) - TAIL_MESSAGES, 0)
    request = last_real_user_index(messages)
    return tuple(m for i, m in enumerate(messages)
                 if i >= tail_start or i == request or m.role in ("system", "developer"))


def head_tail(messages: Sequence[Message]) -> tuple[Message, ...]:
    """Every tool result longer than twice :data:`HEAD_TAIL_CHARS` cut to its first and last
    :data:`HEAD_TAIL_CHARS` characters (``[...]`` between them); the rest as it is."""
    out = []
    for m in messages:
        text = result_text(m) if m.role == "tool" else None
        if text is not None and len(text) > 2 * HEAD_TAIL_CHARS:
            m = with_text(m, text[:HEAD_TAIL_CHARS] + _CUT + text[-HEAD_TAIL_CHARS:])
        out.append(m)
    return tuple(out)


@dataclass(frozen=True)
class Baseline:
    """A reference row: its name in the report, what it does, and the rule."""

    name: str
    description: str
    apply: Callable[[Sequence[Message]], tuple[Message, ...]]


BASELINES: tuple[Baseline, ...] = (
    Baseline("last-20", f"the last {TAIL_MESSAGES} messages + system + last request", keep_tail),
    Baseline("head-tail-500", f"every tool result cut to its first and last {HEAD_TAIL_CHARS} characters", head_tail),
)
