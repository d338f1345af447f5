"""Fitting items to a token budget: the one engine of both summaries the extractive summariser writes.

A state snapshot (:mod:`.snapshot.fit`) and a round-level block summary (:mod:`.blocks.writer`) are
both headings over lines, each line one :class:`Item` with a priority (0 is kept first), its place,
and shorter forms to try before leaving it out. The engine counts every line once
(:func:`count_lines`), keeps a running :class:`Estimate` of the text while items are taken, left out
or shortened — a section that leaves something out pays once for the marker that says so — and
leaves items out in a given order until the text fits (:func:`drop_until_fit`, :func:`give_up`, the
latter for when the rendered text, counted again, came out over: tokens merge across lines). What
each summary keeps first is its own policy, decided in its module.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

from ...counting.tokens import TokenCounter

__all__ = ["Item", "Estimate", "count_lines", "drop_until_fit", "give_up", "by_priority", "sections_of"]


@dataclass(slots=True)
class Item:
    """One fact: its section ``kind``, text, ``priority`` (0 first), ``order`` (message index, or rank) and round.

    ``block`` items are rendered as they are (several lines); others as one ``- `` bullet. ``own``
    items are paid from their own budget (the user's messages), within the summary's cap. ``shown``
    is the rendered line when it is not the text itself (a block summary cuts and redacts it)."""

    kind: str
    text: str
    priority: float
    order: int = 0
    round: int = 0
    block: bool = False
    own: bool = False
    keep: bool = False
    cost: int = 0
    shorter: tuple[str, ...] = ()  # shorter forms of the text, tried in turn when the item does not fit
    shown: str | None = None

    @property
    def line(self) -> str:
        """The rendered text of the item."""
        if self.shown is not None:
            return self.shown
        return self.text if self.block else f"- {self.text}"


def count_lines(items: Iterable[Item], counter: TokenCounter) -> None:
    """Count the tokens of every item's line (and its line break), the new ones in one batch."""
    items = list(items)
    counter.prime(item.line for item in items)
    for item in items:
        item.cost = counter.count(item.line) + 1


class Estimate:
    """The running token estimate of a text while its items are taken, left out or shortened.

    ``owner`` maps each item (by ``id``) to its section; the first item a section leaves out adds the
    section's ``marker`` (the line that says something was left out) to the total."""

    def __init__(self, total: int, goal: int, *, marker: int, owner: dict[int, Hashable],
                 marked: Iterable[Hashable] = ()) -> None:
        self.total = total
        self.goal = goal
        self.marker = marker
        self.owner = owner
        self.marked = set(marked)

    @property
    def left(self) -> int:
        """What the goal still holds."""
        return self.goal - self.total

    def fits(self) -> bool:
        """Whether the estimate is within the goal."""
        return self.total <= self.goal

    def take(self, item: Item) -> None:
        """Keep an item that was not counted in the total."""
        item.keep = True
        self.total += item.cost

    def leave(self, item: Item) -> None:
        """Leave out an item that was not counted in the total: only its section's marker is paid."""
        item.keep = False
        section = self.owner[id(item)]
        if section not in self.marked:
            self.marked.add(section)
            self.total += self.marker

    def drop(self, item: Item) -> None:
        """Leave out an item that was counted in the total."""
        self.total -= item.cost
        self.leave(item)

    def reprice(self, item: Item, cost: int) -> None:
        """An item's line changed: its new ``cost`` replaces the old one in the total."""
        self.total += cost - item.cost
        item.cost = cost


def drop_until_fit(estimate: Estimate, items: Iterable[Item]) -> None:
    """Leave items out, in the given order, until the estimate fits."""
    for item in items:
        if estimate.fits():
            return
        estimate.drop(item)


def give_up(optional: list[Item], over: Callable[[], int], counter: TokenCounter) -> tuple[list[Item], int]:
    """Leave out items, in order, while the text is ``over`` its limit — an item with shorter forms takes its
    shortest first; those left out, and by how much the text is then over (zero or less)."""
    excess = over()
    given_up: list[Item] = []
    while excess > 0 and optional:
        item = optional.pop(0)
        if item.shorter and item.text != item.shorter[-1]:  # its shortest form before nothing
            item.text = item.shorter[-1]
            cost, item.cost = item.cost, counter.count(item.line) + 1
            excess -= cost - item.cost
            optional.append(item)
        else:
            item.keep = False
            given_up.append(item)
            excess -= item.cost
        if excess <= 0:
            excess = over()
    return given_up, excess


def by_priority(items: Iterable[Item]) -> list[Item]:
    """The items by priority, the newest (highest ``order``) first within one."""
    return sorted(items, key=lambda i: (i.priority, -i.order))



def sections_of(sections: Sequence[tuple[Hashable, Sequence[Item]]]) -> dict[int, Hashable]:
    """Each item's section (by ``id``), for :class:`Estimate`."""
    return {id(item): title for title, entries in sections for item in entries}

