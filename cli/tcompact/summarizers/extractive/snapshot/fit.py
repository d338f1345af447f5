"""Choosing the items that fit the summary's budget, and rendering the ``<state_snapshot>``.

Every item is one fact with a priority (0 is kept first) and its place in the session. Items are
taken by priority, the newest first within one, while they fit; an item that does not fit is
passed over and smaller ones still get their chance, so the budget is used, not abandoned at the
first large item. Each section then lists its items in the order they happened. A section says
how many of its items the budget left out only when some were ("+N more" only after some that
were kept), and "(none)" only when it never had any. The user's messages have a budget of their
own (they are chosen in :mod:`.users`); the whole snapshot stays within the summary's cap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ....redact import redact
from ....tokens import TokenCounter

__all__ = ["Item", "render", "fit"]

_DROPPED = "- (+{n} more left out for the budget)"
_ALL_DROPPED = "- ({n} left out for the budget)"  # nothing of the section shown: no "more"


@dataclass(slots=True)
class Item:
    """One fact: its section ``kind``, text, ``priority`` (0 first), ``order`` (message index) and round.

    ``block`` items are rendered as they are (several lines); others as one ``- `` bullet. ``own``
    items are paid from their own budget (the user's messages), within the summary's cap."""

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
        left_out = dropped.get(title, 0) + sum(1 for item in items if not item.keep)
        if left_out:
            parts.append((_DROPPED if kept else _ALL_DROPPED).format(n=left_out))
        elif not kept:
            parts.append("(none)")
        parts.append("")
    parts[-1] = "</state_snapshot>"
    return "\n".join(parts)


def fit(sections: Sequence[tuple[str, Sequence[Item]]], budget: int, *, counter: TokenCounter,
        dropped: dict[str, int] | None = None, cap: int | None = None) -> str:
    """The rendered snapshot: the ``own`` items (chosen already, always kept) and the others that fit
    ``budget`` tokens — and with a ``cap``, the whole within it: when it would not be, the least important
    items are left out, then the oldest ``own`` ones."""
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
    own = sum(item.cost for item in items if item.own)  # the user's messages, chosen first
    left = (budget if cap is None else min(budget, cap - own)) - skeleton
    marked = {title for title, n in (dropped or {}).items() if n}
    left -= marker * len(marked)
    for item in sorted((i for i in items if not i.own), key=lambda i: (i.priority, -i.order)):
        for text in item.shorter if item.cost > left else ():
            item.text = text
            item.cost = counter.count(item.line) + 1
            if item.cost <= left:
                break
        if item.cost <= left:
            item.keep = True
            left -= item.cost
        elif owner[id(item)] not in marked:  # the section will say that something was left out
            marked.add(owner[id(item)])
            left -= marker
    def over() -> int:  # past the budget (without the user's messages), or past the cap (with them)
        rest = _spent(sections, dropped, counter, own=False) - budget
        return rest if cap is None else max(rest, _spent(sections, dropped, counter) - cap)

    _give_up(sorted((i for i in items if i.keep and not i.own), key=lambda i: (-i.priority, i.order)), over)
    if cap is not None:  # the cap holds the user's messages too: past it, the oldest go
        _give_up(sorted((i for i in items if i.own), key=lambda i: i.order),
                 lambda: _spent(sections, dropped, counter) - cap)
    return render(sections, dropped=dropped)


def _give_up(optional: list[Item], over: Callable[[], int]) -> None:
    """Leave out items, in order, while the text is ``over`` its limit (the estimate was low: tokens merge
    across lines)."""
    excess = over()
    while excess > 0 and optional:
        item = optional.pop(0)
        item.keep = False
        excess -= item.cost
        if excess <= 0:
            excess = over()


def _spent(sections: Sequence[tuple[str, Sequence[Item]]], dropped: dict[str, int] | None,
           counter: TokenCounter, *, own: bool = True) -> int:
    """Tokens of the snapshot (without its own-budget items: what the summary's budget pays for)."""
    return counter.count(render([(title, [i for i in items if own or not i.own]) for title, items in sections],
                                dropped=dropped))
