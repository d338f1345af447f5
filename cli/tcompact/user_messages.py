"""The user's own words kept verbatim within a token budget: which messages, and how one is cut.

What users of every compactor miss most is their own words (LESSONS.md §2): Codex keeps 20 000
tokens of user messages, Claude asks for an "All user messages" section. ``full`` keeps them as
messages, the extractive summaries quote them; both choose them the same way, here: newest first
while they fit, the one that overflows cut to what is left — its head and its tail, at word
boundaries, around a marker saying how much was cut —, the older ones left out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .counting.tokens import TokenCounter

__all__ = ["DEFAULT_BUDGET", "CUT_MARK", "select", "cut_middle"]

#: Tokens of user messages kept verbatim unless a compressor says otherwise (Codex's figure).
DEFAULT_BUDGET = 20_000
#: Every cut marker holds this (the invariants accept a last request cut with it).
CUT_MARK = "was cut by tcompact"
_MARKER = "\n[… {n:,} tokens in the middle of this message: that part " + CUT_MARK + " {by} to fit the user-message budget …]\n"
_MIN_CUT = 64  # a message is cut to no less than this many tokens; below, it is left out
_HEAD = 0.6  # share of what is kept that comes from the head


def select(texts: Sequence[str], budget: int, *, cost: Callable[[str], int], counter: TokenCounter,
           by: str) -> list[str | None]:
    """For each text (oldest first): itself, its cut form, or None when the budget has no room left.

    Newest first: a text that fits is kept whole; the first that does not is cut to what is left
    (when that is at least :data:`_MIN_CUT` tokens); every older one is left out."""
    out: list[str | None] = [None] * len(texts)
    left = budget
    for n in range(len(texts) - 1, -1, -1):
        spent = cost(texts[n])
        if spent <= left:
            out[n] = texts[n]
            left -= spent
            continue
        if left >= _MIN_CUT:
            out[n] = cut_middle(texts[n], left - (spent - counter.count(texts[n])), counter, by=by)
        break
    return out


def cut_middle(text: str, budget: int, counter: TokenCounter, *, by: str) -> str:
    """The head and tail of ``text`` within ``budget`` tokens around a marker naming what was cut; the cuts
    fall on blanks where there is one near (never inside a word of a spaced script)."""
    total = counter.count(text)
    if total <= budget:
        return text
    room = max(budget - counter.count(_MARKER.format(n=total, by=by)), 8)
    chars = max(int(len(text) * room / max(total, 1)), 16)
    while True:
        head, tail = _head(text, int(chars * _HEAD)), _tail(text, chars - int(chars * _HEAD))
        kept = counter.count(head) + counter.count(tail)
        if kept <= room or chars <= 16:
            return head + _MARKER.format(n=max(total - kept, 0), by=by) + tail
        chars = int(chars * 0.9)


def _head(text: str, n: int) -> str:
    """At most ``n`` leading characters, ending before a blank when one is within 80 characters."""
    piece = text[:n]
    cut = max(piece.rfind(" "), piece.rfind("\n"))
    return piece[:cut].rstrip() if n - cut <= 80 and cut > 0 else piece


def _tail(text: str, n: int) -> str:
    """At most ``n`` trailing characters, starting after a blank when one is within 80 characters."""
    piece = text[len(text) - n:] if n > 0 else ""
    blanks = [i for i in (piece.find(" "), piece.find("\n")) if i >= 0]
    cut = min(blanks) if blanks else -1
    return piece[cut + 1:].lstrip() if 0 <= cut <= 80 else piece
