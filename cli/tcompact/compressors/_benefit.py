"""The benefit check of the summarising compressors: fewer tokens *and* not less information per token.

Upstream accepts a summary whenever the transcript gets smaller (spec §2.8), so a skeleton of
empty sections replacing a 686-token answer passes. Here a replacement must also keep its share of
the facts of what it replaces: the identifiers, paths, numbers and code spans of the user's and
the assistant's words and of the tool calls' short arguments (paths, commands, patterns — not the
contents a call writes), the error statements of the tool outputs, and the
user's sentences (secrets redacted first: no summary keeps them). It is accepted when the share of those facts it keeps is at least half the share
of the tokens it keeps — it must be at least half as dense in facts as the original: a summary
that keeps a third of the facts in a fifth of the tokens passes, a skeleton of headings does not —,
or when what it replaces holds too few facts (:data:`MIN_FACTS`) for a share to mean anything. A
replacement that is only a skeleton — headings, "(none)", "(omitted)", budget markers — is refused
whatever the figures. A replacement of an earlier compaction's summary must keep at least half of that
summary's own facts (:data:`EARLIER_KEPT`): compacting a compacted session again must not erode it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import orjson

from ..markers import is_summary_text
from ..model import Message
from ..redact import redact
from ..summarizers.extractive.text import split_sentences
from ..summarizers.extractive.tools import error_lines
from ..counting.tokens import TokenCounter

__all__ = ["Benefit", "benefit", "facts", "word_facts", "DENSITY"]

#: How dense in facts a replacement must be, relative to what it replaces.
DENSITY = 0.5
#: Below this many facts in what is replaced, only the tokens and the skeleton test decide.
MIN_FACTS = 8
#: The share of an earlier summary's facts a summary replacing it must keep (superseded ones may go).
EARLIER_KEPT = 0.5
_EMPTY_LINE = re.compile(r"(?i)^(?:\d{1,2}\.\s+.{1,90}|#+\s.*|\(?(?:none|omitted|n/a)\)?\.?|-\s*\(?(?:none|omitted|n/a)\)?\.?|"
                         r"-\s*\(\+?\d+[^)]*\)|</?[\w_-]+>|[^:\n]{1,60}:)$")

#: A fact: a code span, then (outside code spans) a path or dotted/underscored name, a camelCase or PascalCase
#: identifier, a number of two digits or more.
_TICKED = re.compile(r"`[^`\n]{2,80}`")
_UNTICKED = re.compile(r"[\w@~-]*[/_.][\w./@~-]*\w|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*|\b\d[\d.,:]*\d\b")
_FACT_CHARS = 200_000  # of a text, the part read for facts
_ARGUMENT_CHARS = 300
_REDACTED = re.compile(r"\[REDACTED:[^\]]*\]")


@dataclass(frozen=True)
class Benefit:
    """The verdict: accepted or not, why, and the figures it rests on."""

    accepted: bool
    reason: str
    facts_kept: float | None
    tokens_kept: float


def _texts(messages: Iterable[Message], *, words: bool = True, outputs: bool = True) -> Iterable[tuple[str, str]]:
    """(role, text) of what carries facts: the user's and assistant's words, the values of tool call
    arguments (not their keys) — ``words`` —, the error statements of tool outputs — ``outputs``."""
    for m in messages:
        if m.role in ("tool", "function"):
            if outputs:
                yield "tool", "\n".join(error_lines(m.text))
        elif words:
            yield m.role, m.text
        for call in m.tool_calls if words else ():  # paths, commands, patterns — not the contents a call writes
            yield "call", "\n".join(v for v in _values(call.arguments) if len(v) <= _ARGUMENT_CHARS)


def _values(arguments: str) -> list[str]:
    """The string values of JSON arguments (all of them, nested too), or the raw text when not JSON."""
    try:
        value = orjson.loads(arguments) if arguments[:1] in "{[" else arguments
    except orjson.JSONDecodeError:
        return [arguments]
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return out


def _tokens(*texts: str) -> set[str]:
    """The facts of some texts (each read to :data:`_FACT_CHARS`): the code spans, then the other facts of
    the distinct words left, in one pass.

    No fact but a code span holds a blank or a backtick, and ``\\b`` sees a blank, a backtick and a text's
    edge alike, so the facts outside code spans are those of the text's words, each looked at once: a long
    session repeats its words (issue 26: 3.6 MB of text, 7,000 distinct words)."""
    found: set[str] = set()
    words: set[str] = set()
    for text in texts:
        text = text[:_FACT_CHARS]
        if "`" in text:
            found.update(span[1:-1] for span in _TICKED.findall(text))
            text = _TICKED.sub(" ", text).replace("`", " ")
        words.update(text.split())
    found.update(_UNTICKED.findall(" ".join(words)))
    return found


def facts(messages: Sequence[Message], *, words: tuple[set[str], set[str]] | None = None
          ) -> tuple[set[str], set[str]]:
    """The facts of some messages: their technical tokens, and the user's sentences. ``words``: their
    :func:`word_facts`, made beforehand (while the summariser answered): the outputs' facts are added to them.
    (The facts of texts are those of each text: a text's words never make a fact with another's.)"""
    if words is None:
        return _facts(_texts(messages))
    tokens, sentences = _facts(_texts(messages, words=False))
    return words[0] | tokens, words[1] | sentences


def word_facts(messages: Sequence[Message]) -> tuple[set[str], set[str]]:
    """The facts of some messages but their outputs' (those need the outputs' error lines, which the
    summariser finds)."""
    return _facts(_texts(messages, outputs=False))


def _facts(pairs: Iterable[tuple[str, str]]) -> tuple[set[str], set[str]]:
    """The facts of (role, text) pairs (each distinct text, and each distinct line of the user's, read once: a long
    session repeats its prompts, reminders and error lines)."""
    texts: set[str] = set()
    lines: set[str] = set()
    for role, text in dict.fromkeys(pairs):
        text = _REDACTED.sub(" ", redact(text))  # a secret is never kept, so it is no fact a summary could lose
        texts.add(text)
        if role == "user":
            lines.update(line.strip() for line in text[:50_000].splitlines())
    sentences = {s for line in lines for s in split_sentences(line) if len(s.split()) >= 4 and len(s) <= 300}
    return {t for t in _tokens(*texts) if len(t) >= 3}, sentences


def _found(text: str) -> set[str]:
    """The technical tokens of a text, with every tail of each path (a summary may make paths absolute)."""
    found = _tokens(text)
    for token in list(found):
        parts = token.split("/")
        found.update("/".join(parts[n:]) for n in range(1, len(parts)))
    return found


def _skeleton(text: str) -> bool:
    """Whether a summary says nothing: every line a heading, a tag, an empty marker or a budget note."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return all(_EMPTY_LINE.match(line) for line in lines)


def _erosion(replaced: Sequence[Message], found: set[str]) -> float | None:
    """The share of an earlier summary's technical facts a replacement keeps, when it is below
    :data:`EARLIER_KEPT` (compacting again must not erode what the first compaction kept); else None."""
    earlier: set[str] = set()
    for m in replaced:
        if is_summary_text(m.text):
            earlier |= {t for t in _tokens(_REDACTED.sub(" ", redact(m.text))) if len(t) >= 3}
    if len(earlier) < MIN_FACTS:
        return None
    kept = len(earlier & found) / len(earlier)
    return kept if kept < EARLIER_KEPT else None


def benefit(replaced: Sequence[Message], replacement: Sequence[Message], *, summary: str, before: int, after: int,
            counter: TokenCounter, words: tuple[set[str], set[str]] | None = None) -> Benefit:
    """Whether ``replacement`` (holding ``summary``) is worth putting in the place of ``replaced`` (the whole
    list goes from ``before`` to ``after`` tokens); ``words``: the :func:`word_facts` of ``replaced``, when made."""
    if before > 0 and after >= before:
        return Benefit(False, f"no benefit ({after:,} ≥ {before:,} tokens); original kept", None, 1.0)
    if _skeleton(summary):
        return Benefit(False, "no benefit: the summary is only headings and empty sections; original kept", 0.0,
                       1.0)
    old_tokens = counter.total(replaced)
    tokens_kept = counter.total(replacement) / old_tokens if old_tokens else 0.0
    tokens, sentences = facts(replaced, words=words)
    if len(tokens) + len(sentences) < MIN_FACTS:
        return Benefit(True, "compacted", None, round(tokens_kept, 4))
    text = "\n".join(m.text + "\n" + "\n".join(c.arguments for c in m.tool_calls) for m in replacement)
    eroded = _erosion(replaced, _found(text))
    if eroded is not None:
        return Benefit(False, f"no benefit: the summary keeps {eroded:.0%} of the facts of an earlier summary it "
                              "replaces; original kept", round(eroded, 4), round(tokens_kept, 4))
    kept = (len(tokens & _found(text)) + sum(1 for s in sentences if s in text)) / (len(tokens) + len(sentences))
    if kept < tokens_kept * DENSITY:
        return Benefit(False, f"no benefit: the summary keeps {kept:.0%} of the facts of what it replaces in "
                              f"{tokens_kept:.0%} of its tokens; original kept", round(kept, 4), round(tokens_kept, 4))
    return Benefit(True, "compacted", round(kept, 4), round(tokens_kept, 4))
