"""The user's messages in a snapshot: verbatim, within their own budget, each with what came of it.

Each real user message of the summarised part is quoted whole — one line in quotes, several lines
between ``<user_message>`` tags —
newest first while their own budget lasts (:data:`~tcompact.user_messages.DEFAULT_BUDGET` tokens at
most, within the summary's cap), the one that
overflows cut head and tail around a marker, older ones left out and counted — followed by how
its round ended. A constraint the user stated in a message that could not be quoted whole is
listed on its own, so no instruction is lost with the text around it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ....counting.tokens import TokenCounter
from ....user_messages import DEFAULT_BUDGET, select
from ..scan import Requests, Said, Scan
from ..text import CONSTRAINT_CUES, USER_SPLIT, clean, cut, one_line, promise, prose_lines, quote, word_count
from ..fitting import Item

__all__ = ["user_items", "constraint_items", "outcome", "active_items"]

_OUTCOME_CHARS = 120  # of the answer that ended a request's round


def outcome(said: Said, rnd: int) -> str:
    """What came of a round: answered or still in progress, with the first line of its last text."""
    last = said.round_text.get(rnd)
    if last is None:
        return "no answer in this part"
    text, tools = last
    said = promise(text) if not tools else ""
    if said:
        return f"promised, not done: {quote(cut(one_line(said), _OUTCOME_CHARS))}"
    first = next((ln for ln in prose_lines(text) if word_count(ln) >= 3), None) or clean(text)
    return f"{'answered' if not tools else 'in progress'}: {quote(cut(one_line(first), _OUTCOME_CHARS))}"


def _chosen(user: Requests, counter: TokenCounter, budget: int) -> list[str | None]:
    texts = [text for _, _, text in user.requests]
    return select(texts, budget, cost=lambda t: counter.count(t) + 12, counter=counter, by="extractive")


def user_items(x: Scan, counter: TokenCounter, *, with_outcome: bool = True,
               budget: int = DEFAULT_BUDGET) -> tuple[list[Item], int]:
    """The body's real user messages as items (own ``budget``), and how many the budget left out."""
    out = []
    chosen = _chosen(x.user, counter, budget)
    for (index, rnd, _), text in zip(x.user.requests, chosen, strict=True):
        if text is None:
            continue
        if "\n" in text.strip() or "”" in text:  # several lines: a block, the text between the tags as it is
            body = f'<user_message round="{rnd}">\n{text}\n</user_message>'
        else:
            body = f"- [round {rnd}] “{text.strip()}”"
        if with_outcome:
            body += f"\n  → {outcome(x.said, rnd)}"
        out.append(Item("user", body, 0, order=index, round=rnd, block=True, own=True))
    return out, sum(1 for text in chosen if text is None)


def constraint_items(x: Scan, counter: TokenCounter, *, quoted: bool = True,
                     budget: int = DEFAULT_BUDGET) -> list[Item]:
    """Constraint sentences of user messages that are not quoted whole (``quoted`` False: of every message
    of the body, for a contract whose messages are kept outside the summary)."""
    chosen = _chosen(x.user, counter, budget) if quoted else [None] * len(x.user.requests)
    seen: set[str] = set()
    out = []
    for (index, rnd, text), kept in zip(x.user.requests, chosen, strict=True):
        if kept == text:
            continue
        for part in USER_SPLIT.split(text[:200_000]):
            part = part.strip(" -*•")
            if 3 <= word_count(part) <= 80 and CONSTRAINT_CUES.search(part) and part.lower() not in seen \
                    and (kept is None or part not in kept):
                seen.add(part.lower())
                out.append(Item("constraint", quote(one_line(part)), 1, order=index, round=rnd))
    return out


def active_items(x: Scan, requests: Sequence[Item], *, kept_above: bool) -> list[Item]:
    """Where the latest request is, what a terse one replies to, the original task, and its status."""
    if x.user.last is None:
        return []
    index, text = x.user.last
    out = []
    if index < x.start or (kept_above and not any(item.order == index for item in requests)):
        out.append(Item("active", "The latest request is the last user message before this summary; it is "
                                  "kept verbatim there.", 0, order=index))
    elif not any(item.order == index for item in requests):
        out.append(Item("active", f"Latest request: {quote(text)}", 0, order=index))
    from ..text import reply_context

    if len(text) < 40 and x.user.previous_text:
        out.append(Item("active", f"It replies to the assistant's previous message: "
                                  f"{reply_context(text, x.user.previous_text)}", 0, order=index))
    first = next(((i, t) for i, t in x.user.substantive if i != index), None)
    if first is not None and len(text) < 80 and not any(item.order == first[0] for item in requests) \
            and not x.earlier.checkpoints:  # an earlier summary states the original task; the first request here is not it
        limit = 200 if kept_above else 600  # a reminder of a message kept above, else the task itself
        out.append(Item("active", f"Original task: {quote(cut(one_line(first[1]), limit))}", 0, order=first[0]))
    promised = x.promised()
    state = "answered" if x.answered() else ("not answered: the last reply promises work it has not done"
                                             if promised else "not answered yet; the work is in progress")
    out.append(Item("active", f"Status: {state}.", 0, order=x.stop))
    return out
