"""The items of a block summary and the running estimate that drops and shortens them to its budget.

Every item is tokenised once; the blocks writer (:mod:`.writer`) leaves the least important items
out first (highest tier, then lowest rank), then shortens the essential ones, with
:class:`_Estimate` keeping the total up to date.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ....redact import redact
from ....tokens import TokenCounter
from ..text import cut

_ITEM_CHARS = 400  # items other than the essential ones are cut to this many characters


@dataclass(slots=True)
class _Item:
    """One line of a section: its text, drop tier and rank (higher rank goes first within a tier)."""

    text: str
    tier: float
    rank: int = 0
    raw: bool = False
    variants: tuple[str, ...] = ()  # shorter forms of the same item, tried in order when over budget
    line: str = ""
    cost: int = 0
    keep: bool = True


def _prepare(item: _Item, limit: int | None, *, counter: TokenCounter) -> None:
    """Set an item's rendered line (cut to ``limit``, redacted) and its token cost."""
    text = item.text if limit is None else cut(item.text, limit)
    text = redact(text)
    item.line = text if item.raw else "- " + text
    item.cost = counter.count(item.line) + 1


def _render_lines(items: Sequence[_Item]) -> None:
    """Cut the non-essential items and render every line once (redacted)."""
    for item in items:
        limit = None if item.tier == 0.0 or item.raw else _ITEM_CHARS
        item.text = item.text if limit is None else cut(item.text, limit)
        item.line = redact(item.text) if item.raw else "- " + redact(item.text)


def _count_lines(items: Sequence[_Item], counter: TokenCounter) -> None:
    """Count the tokens of every rendered line (those not counted yet in one batch)."""
    counter.prime(item.line for item in items)
    for item in items:
        item.cost = counter.count(item.line) + 1


class _Estimate:
    """The running token estimate of the snapshot while items are dropped or shortened."""

    def __init__(self, sections: Sequence[tuple[str, Sequence[_Item]]], goal: int, *, base: int, marker: int,
                 counter: TokenCounter) -> None:
        self.owner = {id(item): n for n, (_, entries) in enumerate(sections) for item in entries}
        self.total = base + sum(item.cost for _, entries in sections for item in entries)
        self.goal = goal
        self.marker = marker
        self.counter = counter
        self.marked: set[int] = set()

    def fits(self) -> bool:
        """Whether the estimate is within the goal."""
        return self.total <= self.goal

    def drop(self, item: _Item) -> None:
        """Leave an item out; the first one left out of a section adds the section's marker."""
        item.keep = False
        self.total -= item.cost
        section = self.owner[id(item)]
        if section not in self.marked:
            self.marked.add(section)
            self.total += self.marker

    def shorten(self, item: _Item, limit: int | None) -> None:
        """Render an item again (cut to ``limit``) and update the estimate."""
        before = item.cost
        _prepare(item, limit, counter=self.counter)
        self.total += item.cost - before

    def use_variant(self, items: Sequence[_Item], level: int) -> None:
        """Switch items that have shorter forms to form ``level``."""
        for item in items:
            if level < len(item.variants):
                item.text = item.variants[level]
                self.shorten(item, None)


def _drop_until_fit(estimate: _Estimate, items: Sequence[_Item]) -> None:
    """Leave items out in the given order until the estimate fits."""
    for item in items:
        if estimate.fits():
            return
        estimate.drop(item)


def _shorten_until_fit(estimate: _Estimate, essential: Sequence[_Item], *, shorter: Sequence[_Item]) -> None:
    """Shorten what must stay, longest first, to ever smaller limits (shorter forms from 120 on)."""
    for limit in (800, 400, 200, 120, 60):
        if estimate.fits():
            return
        if limit == 120:
            estimate.use_variant(shorter, 0)
        for item in sorted(essential, key=lambda item: -item.cost):
            if estimate.fits():
                return
            if len(item.text) > limit and not item.variants:
                estimate.shorten(item, limit)
