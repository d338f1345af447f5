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

from ....redact import redact
from ....counting.tokens import TokenCounter
from ..fitting import Estimate, Item, by_priority, count_lines, give_up, sections_of

__all__ = ["render", "fit"]

_DROPPED = "- (+{n} more left out for the budget)"
_ALL_DROPPED = "- ({n} left out for the budget)"  # nothing of the section shown: no "more"


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
    for item in items:
        item.text = redact(item.text)
        item.keep = item.own
    count_lines(items, counter)
    marker = counter.count(_DROPPED.format(n=99)) + 1
    skeleton = counter.count(render([(title, []) for title, _ in sections]))
    own = sum(item.cost for item in items if item.own)  # the user's messages, chosen first
    left = (budget if cap is None else min(budget, cap - own)) - skeleton
    marked = {title for title, n in (dropped or {}).items() if n}
    _take(items, Estimate(marker * len(marked), left, marker=marker, owner=sections_of(sections), marked=marked),
          most=budget // 2, counter=counter)

    def over() -> int:  # past the budget (without the own items), or past the cap (with them)
        rest = _spent(sections, dropped, counter, own=False) - budget
        return rest if cap is None else max(rest, _spent(sections, dropped, counter) - cap)

    _within(items, over, counter)
    if cap is not None:  # the cap holds the own items too (the user's messages): past it, the oldest go
        give_up(sorted((i for i in items if i.own), key=lambda i: i.order),
                 lambda: _spent(sections, dropped, counter) - cap, counter)
    return render(sections, dropped=dropped)


def _take(items: Sequence[Item], estimate: Estimate, *, most: int, counter: TokenCounter) -> None:
    """The first pass: items by priority, the newest first within one, kept while they fit the ``estimate``; one
    with shorter forms takes the first that fits (and never more than ``most``); a section that leaves one out
    pays for its marker."""
    for item in by_priority(i for i in items if not i.own):
        left = estimate.left
        for text in item.shorter if item.cost > min(left, most) else ():
            item.text = text
            item.cost = counter.count(item.line) + 1
            if item.cost <= min(left, most):
                break
        if item.cost <= left:
            estimate.take(item)
        else:
            estimate.leave(item)


def _within(items: Sequence[Item], over: Callable[[], int], counter: TokenCounter) -> None:
    """When the rendered snapshot is ``over`` its limit (the estimate was low: tokens merge across lines), give
    up the least important kept items — an item with shorter forms takes its shortest first —, then take back
    left-out ones that fit what that freed, and give up again if the estimate was low once more."""
    def kept() -> list[Item]:
        return sorted((i for i in items if i.keep and not i.own), key=lambda i: (-i.priority, i.order))

    given_up, excess = give_up(kept(), over, counter)
    if not given_up and excess >= 0:
        return
    slack = -excess
    for item in by_priority(i for i in items if not i.keep and not i.own and i not in given_up):
        if item.cost <= slack:
            item.keep = True
            slack -= item.cost
    give_up(kept(), over, counter)


def _spent(sections: Sequence[tuple[str, Sequence[Item]]], dropped: dict[str, int] | None,
           counter: TokenCounter, *, own: bool = True) -> int:
    """Tokens of the snapshot (without its own-budget items: what the summary's budget pays for)."""
    return counter.count(render([(title, [i for i in items if own or not i.own]) for title, items in sections],
                                dropped=dropped))
