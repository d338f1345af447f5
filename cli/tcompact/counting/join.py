"""The tokens of a text made of parts, from the counts of the parts: no need to tokenise it whole.

Round-level prompts are the transcript serialised again (one line a message, then the stage's
targets and contexts joined), counted per stage and per call; tokenising them was as much work as
counting the transcript itself. Their parts — the messages' texts — are counted already, so
:func:`joined_count` counts ``"".join(parts)`` exactly from those counts and tokenises only the
stretch around each join: from the last *split point* before it to the first one after it.

A split point is a place where tiktoken's pre-tokeniser (the split pattern of o200k_base and of
cl100k_base) always cuts, whatever comes before and after, so that the tokens of a text are the
tokens of its piece before the point followed by those of its piece after it:

* after a line break followed by a printable ASCII character other than ``/``: no alternative of
  either pattern matches a line break followed by anything but more line breaks, other whitespace
  or (o200k's punctuation run, ``[\\r\\n/]*``) a slash, and a whitespace run that ends in a line
  break is matched to that line break (``\\s*[\\r\\n]+`` comes before the one look-ahead,
  ``\\s+(?!\\S)``, and matches what cl100k's ``\\s++$`` matches at the end of a piece);
* after an ASCII punctuation character followed by a space: a punctuation run stops at a space, and
  a punctuation character joins a word (the optional first character of a letter run) only when a
  letter follows it.

Neither pattern looks behind, and a look-ahead at a position before a split point never reaches
past it (those positions are not whitespace), so the pieces on either side tokenise as they do
alone. ``tests/test_tokenjoin.py`` checks both encodings on texts built around such points and on
thousands of joins cut from real sessions (inside whitespace runs, numbers, words, emoji, CJK).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tokens import TokenCounter

__all__ = ["EdgeCounts", "joined_count", "joined_counts", "rstripped", "first_split", "last_split"]

#: The character before a split point, the one after it looked ahead at (the point is the match's end).
_SPLIT = re.compile(r"\n(?=[!-.0-~])|[!-/:-@\[-`{-~](?= )")
#: Everything up to the last split point (the greedy run backs off from the end, in C).
_LAST_SPLIT = re.compile(r"[\s\S]*(?:" + _SPLIT.pattern + ")")
_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_AFTER_BREAK = frozenset(chr(c) for c in range(0x21, 0x7F)) - {"/"}
_TAIL_WINDOW = 4096


def splits_between(left: str, right: str) -> bool:
    """Whether the point between the characters ``left`` and ``right`` is a split point."""
    return (left == "\n" and right in _AFTER_BREAK) or (left in _PUNCT and right == " ")


def first_split(text: str) -> int | None:
    """The first split point inside ``text`` (0 < point < len), or None."""
    m = _SPLIT.search(text)
    return m.end() if m else None


def last_split(text: str) -> int | None:
    """The last split point inside ``text``, or None (looked for in its tail first)."""
    start = max(0, len(text) - _TAIL_WINDOW)
    m = _LAST_SPLIT.match(text, start) or (_LAST_SPLIT.match(text) if start else None)
    return m.end() if m else None


def joined_count(counter: TokenCounter, parts: Sequence[str | tuple[str, int]]) -> int:
    """Tokens of the parts joined, exactly: a part's count where it is known (a ``(text, tokens)`` part,
    or one the counter has counted) less its edges to its first and last split points; the stretches
    across the joins tokenised on their own."""
    return joined_counts(counter, [parts])[0]


def joined_counts(counter: TokenCounter, many: Sequence[Sequence[str | tuple[str, int]]]) -> list[int]:
    """:func:`joined_count` of each list of parts, the stretches of them all tokenised in one batch."""
    plans = [_plan(counter, parts) for parts in many]
    counts = iter(counter.counts_in_memory([t for _, plus, minus in plans for t in (*plus, *minus)]))
    return [given + sum(next(counts) for _ in plus) - sum(next(counts) for _ in minus) for given, plus, minus in plans]


def _plan(counter: TokenCounter, parts: Sequence[str | tuple[str, int]]) -> tuple[int, list[str], list[str]]:
    """(the known counts of parts taken whole, the stretches to add, the edges to take off)."""
    plus: list[str] = []
    minus: list[str] = []
    given = 0
    open_: list[str] = []  # the text since the last split point, not counted yet
    last = ""
    for item in parts:
        part, known = item if isinstance(item, tuple) else (item, None)
        if not part:
            continue
        first = 0 if last and splits_between(last, part[0]) else first_split(part)
        last = part[-1]
        if first is None:
            open_.append(part)
            continue
        end = last_split(part) or first
        plus.append("".join(open_) + part[:first])
        if end > first:
            known = counter.known(part) if known is None else known
            if known is not None:  # the part's own count, less its edges
                given += known
                minus += (part[:first], part[end:])
            else:
                plus.append(part[first:end])
        open_ = [part[end:]]
    plus.append("".join(open_))
    return given, plus, minus


def rstripped(parts: list[str]) -> list[str]:
    """The parts of ``"".join(parts).rstrip()`` (the list itself, shortened)."""
    while parts and not parts[-1].rstrip():
        parts.pop()
    if parts and parts[-1] != parts[-1].rstrip():
        parts[-1] = parts[-1].rstrip()
    return parts


class EdgeCounts:
    """Exact counts of a text's heads (``text[:end]``) and tails (``text[start:]``), from the counts of
    its chunks: the text is cut at split points about every ``chunk`` characters and a chunk is counted
    the first time a head or tail covers it (a cut keeps a head and a tail: the middle of a long text is
    never counted); a head then costs its chunks' counts and the stretch after its last chunk bound.

    A head/tail cut of a long prompt is searched for by counting candidates (``fit_prompt`` of round-level):
    each was a tokenisation of up to the whole budget; with this, of a few thousand characters.
    """

    def __init__(self, counter: TokenCounter, text: str, *, chunk: int = 8192) -> None:
        bounds = [0]
        while len(text) - bounds[-1] > 2 * chunk:
            m = _SPLIT.search(text, bounds[-1] + chunk)
            if m is None:
                break
            bounds.append(m.end())
        bounds.append(len(text))
        self._counter, self._text, self._bounds = counter, text, bounds
        self._chunks: list[int | None] = [None] * (len(bounds) - 1)

    def head(self, end: int) -> int:
        """Tokens of ``text[:end]`` (0 <= end <= len)."""
        j = bisect.bisect_right(self._bounds, end) - 1
        return self._sum(0, j) + self._stretch(self._bounds[j], end)

    def tail(self, start: int) -> int:
        """Tokens of ``text[start:]`` (0 <= start <= len)."""
        j = bisect.bisect_left(self._bounds, start)
        return self._sum(j, len(self._chunks)) + self._stretch(start, self._bounds[j])

    def _sum(self, first: int, last: int) -> int:
        """Tokens of chunks ``first`` to ``last - 1``, those not counted yet counted in one batch."""
        chunks, bounds = self._chunks, self._bounds
        todo = [i for i in range(first, last) if chunks[i] is None]
        if todo:
            counts = self._counter.counts_in_memory([self._text[bounds[i]:bounds[i + 1]] for i in todo])
            for i, n in zip(todo, counts):
                chunks[i] = n
        return sum(chunks[first:last])  # type: ignore[arg-type]

    def _stretch(self, a: int, b: int) -> int:
        return self._counter.counts_in_memory([self._text[a:b]])[0] if b > a else 0
