"""Is a model's reply a usable summary? The checks every summarised compaction runs on a reply.

A small or overloaded model answers with things that must never replace a transcript: nothing,
the instruction prompt said back, one sentence over and over until the token limit, free text
with none of the sections the prompt asked for, or a reply cut off at ``max_tokens``. Each check
returns the reason a reply is refused (one line, said in the dump and the error), or None; the
first that applies, in this order:

* **empty** — no text once the snapshot is extracted (or nothing but empty blocks);
* **echo** — at least half of the reply's 8-word sequences are the instruction prompt's;
* **loop** — one sentence or line of 16+ characters makes up 40 % or more of the text, 4 or more
  times; or the text ends in 4+ copies of one piece (up to 200 characters, with a letter in it)
  that make up 30 % or more of it and 100+ characters; or a text of 800+ characters compresses
  (zlib) to under 12 % of its size;
* **cut** — ``finish_reason`` is ``length`` and the snapshot block was not closed before the cut
  (a reply whose ``</state_snapshot>`` came before the limit is complete and kept);
* **no section** — a state snapshot with no line that starts with a section title of the
  templates (``1. Active Task``, ``## Files and Code Sections``, ``**Resume**:`` …; the titles
  of every template count, a model may mix them up) — when the prompt asked for them (a custom
  ``replay --prompt`` that names none of its contract's titles is not held to them).

Deterministic and pure: :mod:`tcompact.summarizers.calls` retries a refused reply (see there)
and ``replay --verify`` refuses the same replies again.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Iterable
from functools import cache, lru_cache

from .contracts import SECTIONS, extract_snapshot, placeholders

__all__ = ["snapshot_problem", "text_problem", "cut_problem", "ECHO_SHARE", "LOOP_SHARE"]

ECHO_SHARE = 0.5
ECHO_WORDS = 8
LOOP_SHARE = 0.4
LOOP_REPEATS = 4
LOOP_UNIT_CHARS = 16
LOOP_RATIO = 0.12
LOOP_MIN_CHARS = 800
TAIL_SHARE = 0.3
TAIL_MIN_CHARS = 100

_UNITS = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"\w+")
_TAIL = re.compile(r"(.{2,200}?)\1{3,}\s*$", re.DOTALL)
_TAGS = re.compile(r"</?(?:state_snapshot|summary|coverage_check|analysis)>", re.IGNORECASE)
_ANALYSIS_ONLY = re.compile(r"<analysis>\s*[^<\s]", re.IGNORECASE)
_CLOSED = re.compile(r"<(state_snapshot|summary)>.*?</\1>", re.IGNORECASE | re.DOTALL)


def snapshot_problem(raw: str, *, contract: str, prompt: str, finish_reason: str | None,
                     max_tokens: int | None) -> str | None:
    """Why a state-snapshot reply (contracts current, dialogue, round, full) is not usable, or None."""
    if placeholders(raw, prompt):
        return "the reply holds only the prompt's own placeholder text, no summary"
    summary = "" if not _TAGS.sub("", raw).strip() else extract_snapshot(raw, prompt)
    if not summary and _ANALYSIS_ONLY.search(raw):
        return "the reply holds only its analysis, no summary block"
    problem = text_problem(summary, instructions=(prompt,))  # first: a longer budget would not mend these
    if problem:
        return problem
    if finish_reason == "length" and not _CLOSED.search(raw):
        return cut_problem(max_tokens)
    titles = SECTIONS.get(contract, ())
    if titles and any(t in prompt for t in titles) and not _headings().search(summary):
        return f"no section heading of the summary template (such as '1. {titles[0]}')"
    return None


@cache
def _headings() -> re.Pattern[str]:
    titles = sorted({t for names in SECTIONS.values() for t in names}, key=len, reverse=True)
    return re.compile(r"^[ \t]*(?:[#>*\-]+[ \t]*)?(?:\d+[.)][ \t]*)?(?:\*\*)?(?:"
                      + "|".join(re.escape(t) for t in titles) + r")\b", re.IGNORECASE | re.MULTILINE)


def cut_problem(max_tokens: int | None) -> str:
    """The reason for a reply the model was stopped in (``finish_reason`` ``length``)."""
    limit = f"the limit of {max_tokens:,} tokens" if max_tokens else "the server's output limit"
    return f"the reply was cut at {limit} (finish_reason length): the summary is incomplete"


def text_problem(text: str, *, instructions: Iterable[str]) -> str | None:
    """Why a summary text is no summary — empty, the instructions echoed, a loop — or None."""
    if not text.strip():
        return "the reply is empty"
    share = _echo_share(text, instructions)
    if share >= ECHO_SHARE:
        return f"the reply repeats the instruction prompt ({share:.0%} of it is the prompt's own text)"
    return _loop(text)


def _echo_share(text: str, instructions: Iterable[str]) -> float:
    grams = _grams(text)
    if len(grams) < ECHO_WORDS:
        return 0.0
    known = _known_grams(tuple(instructions))
    return sum(map(known.__contains__, grams)) / len(grams)


@lru_cache(maxsize=64)
def _known_grams(instructions: tuple[str, ...]) -> frozenset[tuple[str, ...]]:
    """The 8-word sequences of the instructions (a compressor checks every summary against the same ones)."""
    if len(instructions) == 1:
        return _prompt_grams(instructions[0])
    return frozenset().union(*map(_prompt_grams, instructions))


@cache
def _prompt_grams(prompt: str) -> frozenset[tuple[str, ...]]:
    return frozenset(_grams(prompt))


def _grams(text: str) -> list[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return list(zip(*(words[i:] for i in range(ECHO_WORDS))))  # every run of ECHO_WORDS words, in order


def _loop(text: str) -> str | None:
    units = Counter(u for u in (" ".join(p.split()).lower() for p in _UNITS.split(text))
                    if len(u) >= LOOP_UNIT_CHARS)
    if units:
        unit, n = units.most_common(1)[0]
        if n >= LOOP_REPEATS and n * len(unit) >= LOOP_SHARE * len(" ".join(text.split())):
            shown = unit if len(unit) <= 60 else unit[:59] + "…"
            return f"a loop: the reply repeats '{shown}' {n} times"
    tail = _tail_repeat(text[-4000:])
    if tail and re.search(r"[^\W\d_]", tail.group(1)) and len(tail.group(0).rstrip()) >= max(
            TAIL_MIN_CHARS, TAIL_SHARE * len(text.rstrip())):
        piece = " ".join(tail.group(1).split())
        shown = piece if len(piece) <= 60 else piece[:59] + "…"
        return f"a loop: the reply ends repeating '{shown}' {len(tail.group(0).rstrip()) // len(tail.group(1))} times"
    if len(text) >= LOOP_MIN_CHARS:
        data = text.encode("utf-8", "surrogatepass")
        ratio = len(zlib.compress(data, 9)) / len(data)
        if ratio < LOOP_RATIO:
            return f"a loop: the reply repeats itself (it compresses to {ratio:.0%} of its size)"
    return None


def _tail_repeat(text: str) -> re.Match[str] | None:
    """``_TAIL.search(text)``, without the search where no match can be (it costs 12 ms on 4,000
    characters, and compressors check every summary they write).

    A match ends in four copies of a piece of 2-200 characters followed by whitespace only
    (``\\s*$``), so the copies end at some ``j`` no earlier than the text without its trailing
    whitespace; where no such ``j`` and length ``p`` have ``text[j-4p:j-p] == text[j-3p:j]`` the
    search cannot match, and it only runs where they do (a ``p`` is tried only where ``text[j-1]`` recurs
    ``p`` characters back, found by ``str.rfind``).
    """
    n = len(text)
    stripped = len(text.rstrip())  # str.rstrip() and \s share one definition of whitespace
    for j in range(max(stripped, 8), n + 1):
        # only the lengths 2 <= p <= min(200, j // 4) at which the character before j recurs p back can match
        last, low = text[j - 1], j - 1 - min(200, j // 4)
        i = text.rfind(last, low, j - 2)
        while i >= 0:
            p = j - 1 - i
            if text[j - 4 * p:j - p] == text[j - 3 * p:j]:
                return _TAIL.search(text)
            i = text.rfind(last, low, i)
    return None
