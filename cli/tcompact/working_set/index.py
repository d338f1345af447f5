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
from ..terms import tokens_of
from ..tokens import TokenCounter

__all__ = ["IndexEntry", "terms", "build_index", "render_index"]

_CODE = re.compile(r"[a-z][A-Z]|[A-Za-z]_[A-Za-z]|[A-Za-z]\.[A-Za-z]|/")
_HEXISH = re.compile(r"[0-9a-f-]{16,}|\d[\d.:-]*")
_SCAN_CHARS = 200_000  # of one output (a larger one is read at its head and tail)
_LABEL_CHARS = 120


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


def _mentions(messages: Sequence[Message]) -> dict[str, int]:
    """Per term (and its pieces): the last message where the assistant or the user named it."""
    last: dict[str, int] = {}
    for i, m in enumerate(messages):
        if m.role not in ("assistant", "user"):
            continue
        text = m.text + "\n" + "\n".join(r.text for r in m.reasoning) + "\n" + "\n".join(c.arguments
                                                                                         for c in m.tool_calls)
        for term in _parts(terms(text)):
            last[term] = i
    return last


def _rank(term: str, first: int, last: int, outputs: int, mentioned: dict[str, int]) -> tuple:
    named = mentioned.get(term, -1) > first
    code = bool(_CODE.search(term)) and not _HEXISH.fullmatch(term)
    return named, code, outputs > 1, last


def _labels(messages: Sequence[Message]) -> dict[int, str]:
    """Per tool result: the call it answers, short (``Read /path``, a command line)."""
    out: dict[int, str] = {}
    for link in index_tool_calls(messages).links:
        action = classify(link.call_at, link.call, round_=0, open_file=None)
        label = action.label if action is not None else link.call.name
        label = " ".join(label.split())
        out.setdefault(link.result_at, label if len(label) <= _LABEL_CHARS else label[: _LABEL_CHARS - 1] + "…")
    return out


def build_index(messages: Sequence[Message], counter: TokenCounter, budget: int, *, hidden: Container[int],
                shown: str = "", locator: Callable[[Message], str] | None = None) -> list[IndexEntry]:
    """The index of the outputs at ``hidden`` indices within ``budget`` tokens, terms in ``shown`` left out."""
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    seen_in: dict[str, int] = {}
    for i, m in enumerate(messages):
        if m.role in ("tool", "function") and i in hidden:
            for term in terms(m.text):
                first.setdefault(term, i)
                last[term] = i
                seen_in[term] = seen_in.get(term, 0) + 1
    if not first or budget <= 0:
        return []
    mentioned = _mentions(messages)
    ranked = sorted(first, key=lambda t: _rank(t, first[t], last[t], seen_in[t], mentioned), reverse=True)
    labels = _labels(messages)
    chosen: dict[int, list[str]] = {}
    left = budget
    for term in ranked:
        if term in shown:
            continue
        source = last[term]
        cost = counter.count(term) + 1
        if source not in chosen:
            cost += counter.count(labels.get(source, "")) + 12
        if cost > left:
            if left < 8:
                break
            continue
        chosen.setdefault(source, []).append(term)
        left -= cost
    return [IndexEntry(i, labels.get(i, messages[i].name or "tool"), locator(messages[i]) if locator else "",
                       tuple(sorted(chosen[i], key=lambda t: (first[t], t)))) for i in sorted(chosen)]


def render_index(entries: Sequence[IndexEntry]) -> str:
    """The index as text: one line per output, its terms verbatim."""
    if not entries:
        return ""
    lines = ["Names, paths and values the tools returned (verbatim; the whole output is where each line says):"]
    for e in entries:
        where = f" [{e.where}]" if e.where else ""
        lines.append(f"- {e.label}{where}: " + ", ".join(e.terms))
    return "\n".join(lines)
