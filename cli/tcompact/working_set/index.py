"""The index of the names, paths and values the tools returned, chosen by relevance within a budget.

What an agent loses first in a compaction is the exact strings its tools showed it: the id a
listing gave, the path a search found, the function names of the module it is changing. A summary
rewrites them away; the tail does not reach back far enough. The index lists them verbatim, grouped
by the output they came from (the call, and where the whole output is), cheapest first to recall:
a *term* is a path, identifier or number of 8 or more characters that is not a plain word
(``attachedUserPromptTexts.add``, ``src/pages/AnalyticsPage.tsx``, ``019b7f04-0b04-…``).

Terms are ranked by what the session did with them after they appeared — named again by the
assistant (its text, its reasoning, its calls) or the user comes first —, then by shape (code
names and paths before bare numbers and hashes), by how many outputs showed them, and by recency;
the highest take the budget. Terms the kept context already shows are not repeated.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass

from ..model import Message, index_tool_calls
from ..summarizers.extractive.tools import classify
from ..terms import MIN_CHARS, tokens_of
from .files import strip_notes
from ..counting.tokens import TokenCounter

__all__ = ["IndexEntry", "Ranked", "terms", "rank_terms", "build_index", "render_index"]

_CODE = re.compile(r"[a-z][A-Z]|[A-Za-z]_[A-Za-z]|[A-Za-z]\.[A-Za-z]|/")
_HEXISH = re.compile(r"[0-9a-f-]{16,}|\d[\d.:-]*")
_SCAN_CHARS = 200_000  # of one output (a larger one is read at its head and tail)
_SCAN_TOTAL = 4_000_000  # characters of outputs read, newest first
_LABEL_CHARS = 120
_RUN = re.compile(f"[A-Za-z0-9_./~@+-]{{{MIN_CHARS},}}")  # the characters of a term that is not a URL


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """The terms of one tool output kept in the index: the call that produced it, where it is."""

    source: int  # message index of the output
    label: str
    where: str
    terms: tuple[str, ...]


def terms(text: str) -> set[str]:
    """The terms of a text (:func:`tcompact.terms.tokens_of`); a very long text is read at its head and tail."""
    if len(text) > _SCAN_CHARS:
        text = text[: _SCAN_CHARS // 2] + "\n" + text[-_SCAN_CHARS // 2:]
    return tokens_of(text)


def _parts(found: set[str]) -> set[str]:
    """Terms with their dotted and slashed pieces (a call naming ``this.metadata`` names ``metadata``)."""
    out = set(found)
    for term in found:
        for sep in ("/", "."):
            if sep in term:
                out.update(p for p in term.split(sep) if len(p) >= 3)
    return out


def _mentions(messages: Sequence[Message], start: int) -> dict[str, int]:
    """Per term (and its pieces): the last message from ``start`` on where the assistant or the user named it."""
    last: dict[str, int] = {}
    for i in range(start, len(messages)):
        m = messages[i]
        if m.role not in ("assistant", "user"):
            continue
        text = m.text + "\n" + "\n".join(r.text for r in m.reasoning) + "\n" + "\n".join(c.arguments
                                                                                         for c in m.tool_calls)
        for term in _parts(terms(text)):
            last[term] = i
    return last


def _named_at(term: str, mentioned: dict[str, int]) -> int:
    """The last message naming the term, or a tail of its path of two parts or more (``module_17/handler.py``
    names ``/srv/app/module_17/handler.py``); -1 when none does."""
    at = mentioned.get(term, -1)
    parts = term.split("/")
    for n in range(1, len(parts) - 1):
        at = max(at, mentioned.get("/".join(parts[n:]), -1))
    return at


def _rank(term: str, first: int, last: int, outputs: int, mentioned: dict[str, int]) -> tuple:
    named = _named_at(term, mentioned) > first
    code = bool(_CODE.search(term)) and not _HEXISH.fullmatch(term)
    return named, code, outputs > 1, last, -len(term), term  # then shorter first (more fit), then by name


def _label(messages: Sequence[Message], call_of: dict[int, int], index: int) -> str:
    """The call a tool result answers, short (``Read /path``, a command line)."""
    at = call_of.get(index)
    call = next((c for c in messages[at].tool_calls if set(messages[index].tool_call_ids) & {c.id}), None) \
        if at is not None else None
    if call is None:
        return messages[index].name or "tool"
    action = classify(at, call, round_=0, open_file=None)
    label = " ".join((action.label if action is not None else call.name).split())
    return label if len(label) <= _LABEL_CHARS else label[: _LABEL_CHARS - 1] + "…"


class _Shown:
    """Whether a term stands in a long text (the kept context, a megabyte or more), for thousands of terms: a
    term of letters, digits and ``_ . / ~ @ + -`` only stands in one of the text's runs of those characters, so
    it is looked for among the distinct runs (a fraction of the text); a URL is looked for in the whole text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.runs = "\n".join(set(_RUN.findall(text)))

    def __contains__(self, term: str) -> bool:
        return term in (self.runs if _RUN.fullmatch(term) else self.text)


@dataclass(slots=True)
class _Seen:
    """Per term of the hidden outputs: the first and last output that showed it, and how many did."""

    first: dict[str, int]
    last: dict[str, int]
    outputs: dict[str, int]
    start: int  # the oldest output read


def _seen(messages: Sequence[Message], hidden: Container[int]) -> _Seen:
    """The terms of the hidden outputs, newest output first until :data:`_SCAN_TOTAL` characters were read
    (the working set is recent: a huge session's oldest outputs are not read)."""
    seen = _Seen({}, {}, {}, len(messages))
    read = 0
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role not in ("tool", "function") or i not in hidden:
            continue
        text = m.text
        read += min(len(text), _SCAN_CHARS)
        if read > _SCAN_TOTAL:
            break
        seen.start = i
        for term in terms(strip_notes(text)):
            seen.first[term] = i
            seen.last.setdefault(term, i)
            seen.outputs[term] = seen.outputs.get(term, 0) + 1
    return seen


@dataclass(frozen=True, slots=True)
class Ranked:
    """The terms of the hidden outputs, best first (:func:`rank_terms`), and what the index takes from the
    transcript besides them: made before the kept context is known (while the summariser answers)."""

    terms: list[str]
    seen: _Seen
    call_of: dict[int, int]


def rank_terms(messages: Sequence[Message], hidden: Container[int]) -> Ranked:
    """The terms of the outputs at ``hidden`` indices, ranked."""
    seen = _seen(messages, hidden)
    if not seen.first:
        return Ranked([], seen, {})
    mentioned = _mentions(messages, seen.start)
    ranked = sorted(seen.first, key=lambda t: _rank(t, seen.first[t], seen.last[t], seen.outputs[t], mentioned),
                    reverse=True)
    return Ranked(ranked, seen, {link.result_at: link.call_at for link in index_tool_calls(messages).links})


def build_index(messages: Sequence[Message], counter: TokenCounter, budget: int, *, hidden: Container[int],
                shown: str = "", locator: Callable[[Message], str] | None = None,
                ranked: Ranked | None = None) -> list[IndexEntry]:
    """The index of the outputs at ``hidden`` indices within ``budget`` tokens, terms in ``shown`` left out
    (``ranked``: their :func:`rank_terms`, made beforehand)."""
    if budget <= 0:
        return []
    ranked = rank_terms(messages, hidden) if ranked is None else ranked
    seen, call_of = ranked.seen, ranked.call_of
    if not seen.first:
        return []
    labels: dict[int, str] = {}
    chosen: dict[int, list[str]] = {}
    left = budget
    shows = _Shown(shown)
    for term in ranked.terms:
        if term in shows:
            continue
        source = seen.last[term]
        cost = counter.count(term) + 1
        if source not in chosen:
            labels.setdefault(source, _label(messages, call_of, source))
            cost += counter.count(labels[source]) + 12
        if cost > left:
            if left < 8:
                break
            continue
        chosen.setdefault(source, []).append(term)
        left -= cost
    return [IndexEntry(i, labels[i], locator(messages[i]) if locator else "",
                       tuple(sorted(chosen[i], key=lambda t: (seen.first[t], t)))) for i in sorted(chosen)]


def render_index(entries: Sequence[IndexEntry]) -> str:
    """The index as text: one line per output, its terms verbatim."""
    if not entries:
        return ""
    lines = ["Names, paths and values the tools returned (verbatim; the whole output is where each line says):"]
    for e in entries:
        where = f" [{e.where}]" if e.where else ""
        lines.append(f"- {e.label}{where}: " + ", ".join(e.terms))
    return "\n".join(lines)
