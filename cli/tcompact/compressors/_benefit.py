"""The benefit check of the summarising compressors: fewer tokens *and* not less information per token.

Upstream accepts a summary whenever the transcript gets smaller (spec §2.8), so a skeleton of
empty sections replacing a 686-token answer passes. Here a replacement must also keep its share of
the facts of what it replaces: the identifiers, paths, numbers and code spans of the user's and
the assistant's words and of the tool calls, the error statements of the tool outputs, and the
user's sentences (secrets redacted first: no summary keeps them). It is accepted when the share of those facts it keeps is at least half the share
of the tokens it keeps — it must be at least half as dense in facts as the original: a summary
that keeps a third of the facts in a fifth of the tokens passes, a skeleton of headings does not —,
or when what it replaces holds no such fact at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..model import Message
from ..redact import redact
from ..summarizers.extractive.tools import error_lines
from ..tokens import TokenCounter

__all__ = ["Benefit", "benefit", "facts", "DENSITY"]

#: How dense in facts a replacement must be, relative to what it replaces.
DENSITY = 0.5

_FACT = re.compile(r"`[^`\n]{2,80}`|[\w@~-]*[/_.][\w./@~-]*\w|\b[a-z]+[A-Z]\w*|\b\d[\d.,:]*\d\b")
_SENTENCE = re.compile(r"[^.!?\n]{20,300}[.!?]?")


@dataclass(frozen=True)
class Benefit:
    """The verdict: accepted or not, why, and the figures it rests on."""

    accepted: bool
    reason: str
    facts_kept: float | None
    tokens_kept: float


def _texts(messages: Iterable[Message]) -> Iterable[tuple[str, str]]:
    """(role, text) of what carries facts: the user's and assistant's words, tool calls, output errors."""
    for m in messages:
        if m.role in ("tool", "function"):
            yield "tool", "\n".join(error_lines(m.text))
        else:
            yield m.role, m.text
        for call in m.tool_calls:
            yield "call", call.arguments


def _tokens(text: str) -> set[str]:
    return {token.strip("`") for token in _FACT.findall(text[:200_000])}


def facts(messages: Iterable[Message]) -> tuple[set[str], set[str]]:
    """The facts of some messages: their technical tokens, and the user's sentences."""
    tokens: set[str] = set()
    sentences: set[str] = set()
    for role, text in _texts(messages):
        text = redact(text)  # a secret is never kept, so it is no fact a summary could lose
        tokens |= _tokens(text)
        if role == "user":
            sentences.update(s.strip() for s in _SENTENCE.findall(text[:50_000]) if len(s.split()) >= 4)
    return {t for t in tokens if len(t) >= 3}, sentences


def _found(text: str) -> set[str]:
    """The technical tokens of a text, with every tail of each path (a summary may make paths absolute)."""
    found = _tokens(text)
    for token in list(found):
        parts = token.split("/")
        found.update("/".join(parts[n:]) for n in range(1, len(parts)))
    return found


def benefit(replaced: Sequence[Message], replacement: Sequence[Message], *, before: int, after: int,
            counter: TokenCounter) -> Benefit:
    """Whether ``replacement`` is worth putting in the place of ``replaced`` (the whole list goes from
    ``before`` to ``after`` tokens)."""
    if before > 0 and after >= before:
        return Benefit(False, f"no benefit ({after:,} ≥ {before:,} tokens); original kept", None, 1.0)
    old_tokens = counter.total(replaced)
    tokens_kept = counter.total(replacement) / old_tokens if old_tokens else 0.0
    tokens, sentences = facts(replaced)
    if not tokens and not sentences:
        return Benefit(True, "compacted", None, round(tokens_kept, 4))
    text = "\n".join(m.text + "\n" + "\n".join(c.arguments for c in m.tool_calls) for m in replacement)
    kept = (len(tokens & _found(text)) + sum(1 for s in sentences if s in text)) / (len(tokens) + len(sentences))
    if kept < tokens_kept * DENSITY:
        return Benefit(False, f"no benefit: the summary keeps {kept:.0%} of the facts of what it replaces in "
                              f"{tokens_kept:.0%} of its tokens; original kept", round(kept, 4), round(tokens_kept, 4))
    return Benefit(True, "compacted", round(kept, 4), round(tokens_kept, 4))
