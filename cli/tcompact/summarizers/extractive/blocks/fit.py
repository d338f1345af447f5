"""Fitting a block summary to its budget: the blocks' policy over the shared engine (:mod:`..fitting`).

Every line is counted once; the least important lines go first (highest tier — the item's
``priority`` —, then lowest rank — its ``order``), then what must stay is shortened, with an
:class:`~..fitting.Estimate` keeping the total up to date. Artifact trail, work done and failed
attempts are dropped first; then final result and open work lines are shortened and dropped,
except the key lines of the newest part, which go only after the requirements have been shortened;
the requirements go last of all. The rendered text is counted again, and the fit retried with a
lower goal when tokens merged across lines made it come out over.
"""

from __future__ import annotations

from collections.abc import Sequence

from ....redact import redact
from ....counting.join import joined_count, rstripped
from ....counting.tokens import TokenCounter
from ..fitting import Estimate, Item, count_lines, drop_until_fit, sections_of
from ..text import cut
from .parts import TIER_FINAL

__all__ = ["Section", "render_lines", "render", "fit"]

ITEM_CHARS = 400  # items other than the essential ones are cut to this many characters
#: (title, items, always shown) of one section of a block summary
Section = tuple[str, list[Item], bool]


def render_lines(items: Sequence[Item]) -> None:
    """Cut the non-essential items and render every line once (redacted)."""
    for item in items:
        if item.priority != 0.0 and not item.block:
            item.text = cut(item.text, ITEM_CHARS)
        item.shown = redact(item.text) if item.block else "- " + redact(item.text)


def render(sections: Sequence[Section], *, skeleton: bool = False) -> str:
    """The summary: each shown section's heading, its kept lines and a marker of what was left out."""
    return "\n".join(_rendered(sections, skeleton=skeleton)).rstrip()


def _rendered(sections: Sequence[Section], *, skeleton: bool = False) -> list[str]:
    """The lines of :func:`render`, before they are joined."""
    out: list[str] = []
    for title, items, always in sections:
        kept = [item.line for item in items if item.keep] if not skeleton else []
        dropped = sum(1 for item in items if not item.keep) if not skeleton else 0
        if not kept and not always and not (skeleton and items):
            continue
        out.append(f"{title}:")
        out += kept
        if dropped:
            out.append(f"- (+{dropped} omitted for budget)")
        elif not kept:
            out.append("- (none)")
        out.append("")
    return out


def fit(sections: list[Section], budget: int, *, counter: TokenCounter) -> str:
    """The rendered summary with lines dropped and then shortened until it fits ``budget`` tokens."""
    everything = [item for _, items, _ in sections for item in items]
    count_lines(everything, counter)
    base = counter.count(render(sections, skeleton=True))
    marker = counter.count("- (+99 omitted for budget)") + 1 - counter.count("- (none)")
    goal = budget
    text = ""
    for _ in range(4):  # the estimate can be off (tokens merge across lines): retry with a lower goal
        estimate = Estimate(base + sum(item.cost for item in everything), goal, marker=marker,
                            owner=sections_of([(title, items) for title, items, _ in sections]))
        _fit_lines(everything, estimate, counter=counter)
        text, total = _counted(sections, counter)
        if total <= budget:
            return text
        goal -= (total - goal) + max(8, budget // 50)
        for item in everything:
            item.keep = True
    return _hard_cut(text, budget, counter)


def _counted(sections: Sequence[Section], counter: TokenCounter) -> tuple[str, int]:
    """The rendered summary (redacted) and its tokens, counted from its lines' counts when redaction left
    it as it was (its lines were counted: only the joins are tokenised)."""
    lines = _rendered(sections)
    text = "\n".join(lines).rstrip()
    redacted = redact(text)
    if redacted != text:
        return redacted, counter.count(redacted)
    tokens = joined_count(counter, rstripped([p for line in lines for p in ("\n", line)][1:]))
    counter.learn(((text, tokens),))
    return text, tokens


def _fit_lines(everything: Sequence[Item], estimate: Estimate, *, counter: TokenCounter) -> None:
    """Decide which lines stay so the estimate fits its goal (the order: the module's docstring)."""
    def least_first(items):
        return sorted(items, key=lambda item: (-item.priority, -item.order))

    drop_until_fit(estimate, least_first(item for item in everything if item.priority >= 2.0))
    middle = [item for item in everything if 0.0 < item.priority < 2.0]
    for limit in (800, 400, 200, 120):
        for item in sorted(middle, key=lambda item: -item.cost):
            if estimate.fits():
                return
            if len(item.text) > limit:
                _shorten(estimate, item, limit, counter)
    essential = [item for item in everything if item.priority == 0.0]
    shorter = [item for item in essential if item.shorter]
    key = [item for item in middle if item.priority <= TIER_FINAL]
    drop_until_fit(estimate, least_first(item for item in middle if item.priority > TIER_FINAL))
    _shorten_until_fit(estimate, essential, shorter=shorter, counter=counter)
    drop_until_fit(estimate, sorted(key, key=lambda item: -item.order))
    drop_until_fit(estimate, sorted((item for item in essential if not item.shorter), key=lambda item: -item.order))
    for level in (1, 2):
        if estimate.fits():
            return
        _use_shorter(estimate, shorter, level, counter)


def _shorten(estimate: Estimate, item: Item, limit: int | None, counter: TokenCounter) -> None:
    """Render an item again (cut to ``limit``, redacted) and update the estimate."""
    text = item.text if limit is None else cut(item.text, limit)
    item.shown = redact(text) if item.block else "- " + redact(text)
    estimate.reprice(item, counter.count(item.line) + 1)


def _use_shorter(estimate: Estimate, items: Sequence[Item], level: int, counter: TokenCounter) -> None:
    """Switch items that have shorter forms to form ``level``."""
    for item in items:
        if level < len(item.shorter):
            item.text = item.shorter[level]
            _shorten(estimate, item, None, counter)


def _shorten_until_fit(estimate: Estimate, essential: Sequence[Item], *, shorter: Sequence[Item],
                       counter: TokenCounter) -> None:
    """Shorten what must stay, longest first, to ever smaller limits (shorter forms from 120 on)."""
    for limit in (800, 400, 200, 120, 60):
        if estimate.fits():
            return
        if limit == 120:
            _use_shorter(estimate, shorter, 0, counter)
        for item in sorted(essential, key=lambda item: -item.cost):
            if estimate.fits():
                return
            if len(item.text) > limit and not item.shorter:
                _shorten(estimate, item, limit, counter)


def _hard_cut(text: str, budget: int, counter: TokenCounter) -> str:
    """Last resort for a budget too small for the headings and the newest requirement: cut the text."""
    while text and counter.count(text) > budget:
        text = text[:len(text) * 9 // 10].rstrip()
    return text
