"""Choosing the items that fit the summary's budget, and rendering the ``<state_snapshot>``.

Every item is one fact with a priority (0 is kept first) and its place in the session. Items are
taken by priority, the newest first within one, while they fit; an item that does not fit is
passed over and smaller ones still get their chance, so the budget is used, not abandoned at the
first large item. Each section then lists its items in the order they happened. A section says
how many of its items the budget left out only when some were, and "(none)" only when it never
had any. The user's messages have a budget of their own (they are chosen in :mod:`.users`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ....redact import redact
from ....tokens import TokenCounter

__all__ = ["Item", "render", "fit"]

_DROPPED = "- (+{n} more left out for the budget)"


@dataclass(slots=True)
class Item:
    """One fact: its section ``kind``, text, ``priority`` (0 first), ``order`` (message index) and round.

    ``block`` items are rendered as they are (several lines); others as one ``- `` bullet. ``own``
    items are paid from their own budget (the user's messages), not the summary's."""

    kind: str
    text: str
    priority: int
    order: int = 0
    round: int = 0
    block: bool = False
    own: bool = False
    keep: bool = False
    cost: int = 0
    shorter: tuple[str, ...] = ()  # shorter forms of the text, tried in turn when the item does not fit

    @property
    def line(self) -> str:
        """The rendered text of the item."""
        return self.text if self.block else f"- {self.text}"


def render(sections: Sequence[tuple[str, Sequence[Item]]], *, dropped: dict[str, int] | None = None) -> str:
    """The snapshot: numbered headings, kept items in session order, drop markers, "(none)"."""
    dropped = dropped or {}
    parts = ["<state_snapshot>"]
    for n, (title, items) in enumerate(sections, start=1):
        parts.append(f"{n}. {title}")
        kept = sorted((item for item in items if item.keep), key=lambda item: (item.order, item.priority))
        parts.extend(item.line for item in kept)
        left_out = dropped.get(title, 0) + sum(1 for item in items if not item.keep and not item.own)
        if left_out:
            parts.append(_DROPPED.format(n=left_out))
        elif not kept:
            parts.append("(none)")
        parts.append("")
    parts[-1] = "</state_snapshot>"
    return "\n".join(parts)


def fit(sections: Sequence[tuple[str, Sequence[Item]]], budget: int, *, counter: TokenCounter,
        dropped: dict[str, int] | None = None) -> str:
    """The rendered snapshot with the items that fit ``budget`` tokens (own-budget items always kept)."""
    items = [item for _, entries in sections for item in entries]
    owner = {id(item): title for title, entries in sections for item in entries}
    for item in items:
        item.text = redact(item.text)
    counter.prime(item.line for item in items)
    for item in items:
        item.cost = counter.count(item.line) + 1
        item.keep = item.own
    marker = counter.count(_DROPPED.format(n=99)) + 1
    skeleton = counter.count(render([(title, []) for title, _ in sections]))
    left = budget - skeleton  # own-budget items (the user's messages) are paid from their own budget
    marked = {title for title, n in (dropped or {}).items() if n}
    left -= marker * len(marked)
    most = budget // 2  # an item with a shorter form never takes more than half of the budget
    for item in sorted((i for i in items if not i.own), key=lambda i: (i.priority, -i.order)):
        for text in item.shorter if item.cost > min(left, most) else ():
            item.text = text
            item.cost = counter.count(item.line) + 1
            if item.cost <= min(left, most):
                break
        if item.cost <= left:
            item.keep = True
            left -= item.cost
        elif owner[id(item)] not in marked:  # the section will say that something was left out
            marked.add(owner[id(item)])
            left -= marker
    _within(sections, items, budget, dropped=dropped, counter=counter)
    return render(sections, dropped=dropped)


def _within(sections: Sequence[tuple[str, Sequence[Item]]], items: Sequence[Item], budget: int, *,
            dropped: dict[str, int] | None, counter: TokenCounter) -> None:
    """When the rendered snapshot is over the budget (the estimate was low: tokens merge across lines), give
    up the least important kept items — an item with shorter forms takes its shortest first —, then take back
    left-out ones that fit what that freed, and give up again if the estimate was low once more."""
    over = _spent(sections, dropped, counter) - budget
    if over <= 0:
        return
    given_up, over = _give_up(sections, items, over, budget, dropped=dropped, counter=counter)
    slack = -over
    for item in sorted((i for i in items if not i.keep and not i.own and i not in given_up),
                       key=lambda i: (i.priority, -i.order)):
        if item.cost <= slack:
            item.keep = True
            slack -= item.cost
    over = _spent(sections, dropped, counter) - budget
    if over > 0:
        _give_up(sections, items, over, budget, dropped=dropped, counter=counter)


def _give_up(sections: Sequence[tuple[str, Sequence[Item]]], items: Sequence[Item], over: int, budget: int, *,
             dropped: dict[str, int] | None, counter: TokenCounter) -> tuple[list[Item], int]:
    """Least important kept items given up (or shortened) until the snapshot fits; those given up, and by how
    much the snapshot is then over the budget (zero or less)."""
    optional = sorted((i for i in items if i.keep and not i.own), key=lambda i: (-i.priority, i.order))
    given_up = []
    while over > 0 and optional:
        item = optional.pop(0)
        if item.shorter and item.text != item.shorter[-1]:  # its shortest form before nothing
            item.text = item.shorter[-1]
            cost, item.cost = item.cost, counter.count(item.line) + 1
            over -= cost - item.cost
            optional.append(item)
        else:
            item.keep = False
            given_up.append(item)
            over -= item.cost
        if over <= 0:
            over = _spent(sections, dropped, counter) - budget
    return given_up, over


def _spent(sections: Sequence[tuple[str, Sequence[Item]]], dropped: dict[str, int] | None,
           counter: TokenCounter) -> int:
    """Tokens of the snapshot without its own-budget items (what the summary's budget pays for)."""
    return counter.count(render([(title, [i for i in items if not i.own]) for title, items in sections],
                                dropped=dropped))
