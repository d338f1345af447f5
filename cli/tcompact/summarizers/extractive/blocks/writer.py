"""The "blocks" contract: one summary per target of the round-level pipeline, as JSON.

The round-level compressor (openjiuwen-spec §8.1.4-8.1.5; prompts B) sends its targets as
:class:`~..base.Block` s — raw round blocks (``completed_react``, ``ongoing_react``) or runs of
earlier memory blocks to merge (``recursive_merge``, ``existing_round_level_block``,
``mixed_context``) — and expects ``{"blocks": [{"block_id", "summary"}]}`` with exactly one
summary per target, in order. Each summary follows the legacy output contract: the user's
requirements in their own words, then the final result of a finished block or the open work of
an unfinished one, then (budget permitting) work done, failed attempts and the artifact trail::

    User Requirements:
    - “…”

    Final Result:
    - …

A block's messages are split into parts (runs of raw messages, :mod:`.parts`; memory blocks,
:mod:`.memory`), the parts merged, and the lines fitted to ``target_tokens`` (per block) with the
same dropping and shortening as the state snapshots (:mod:`.budget`): artifact trail and work
done go first, then failed attempts, then final result / open work; the user's requirements are
only shortened, and dropped (oldest first, never the newest) as a last resort. Messages before a
block are background only: one pass over them gives every block the request it continues, the
text a terse first reply answers, the plan and the working directory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from ....model import Message
from ....redact import redact
from ....tokens import TokenCounter
from ...base import Block, SummaryRequest
from .background import backgrounds as find_backgrounds
from .budget import _count_lines, _drop_until_fit, _Estimate, _Item, _render_lines, _shorten_until_fit
from .memory import _is_ack, _is_memory, _memory_parts, _merge
from .parts import TIER_FINAL, _Background, _Part, _raw_part
from ..text import cut

_REQUEST_CHARS = 6000  # a requirement is never quoted longer than this
_FINAL_CHARS = 4000  # nor a final result
_LINE_CHARS = 300  # other lines
_DEFAULT_BUDGET = 2000  # what the lines are sized for when the request has no budget
_COMPLETED = {"completed_react": True, "ongoing_react": False}

REQUIREMENTS, FINAL, OPEN = "User Requirements", "Final Result", "Open Work"
WORK, FAILED, ARTIFACTS = "Work Done", "Failed Attempts — Do Not Retry", "Artifact Trail"


@dataclass(frozen=True, slots=True)
class _Segment:
    """Messages ``start..end`` (inclusive) of a block: raw messages, or one memory block."""

    start: int
    end: int
    memory: bool


def summarize_blocks(request: SummaryRequest, counter: TokenCounter) -> str:
    """The JSON answer to a "blocks" request: one ``{"block_id", "summary"}`` per block, in order."""
    messages = request.messages
    segments = [_segments(messages, block) for block in request.blocks]
    starts = sorted({s.start for found in segments for s in found if not s.memory})
    backgrounds = find_backgrounds(messages, starts)
    budget = request.target_tokens
    sized = budget if budget > 0 else _DEFAULT_BUDGET
    sections = [_sections(_merge(_parts(messages, block, found, backgrounds)), sized)
                for block, found in zip(request.blocks, segments)]
    lines = [item for block in sections for _, items, _ in block for item in items]
    _render_lines(lines)
    counter.prime(item.line for item in lines)  # the lines of all blocks in one batch
    out = [{"block_id": block.block_id, "summary": _summary(found, budget, counter=counter)}
           for block, found in zip(request.blocks, sections)]
    try:
        return orjson.dumps({"blocks": out}).decode()
    except TypeError:  # a lone surrogate (some tools write them): replaced, as the token counter does
        return orjson.dumps({"blocks": [{k: _valid(v) for k, v in entry.items()} for entry in out]}).decode()


def _valid(text: str) -> str:
    """A text with lone surrogates replaced by U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


# -- what a block holds -------------------------------------------------------------------------


def _segments(messages: Sequence[Message], block: Block) -> list[_Segment]:
    """The block's messages as runs of raw messages and single memory blocks (acknowledgements skipped)."""
    start, end = max(block.start, 0), min(block.end, len(messages) - 1)
    out: list[_Segment] = []
    run = None
    for i in range(start, end + 1):
        m = messages[i]
        if _is_memory(m) or _is_ack(m):
            if run is not None:
                out.append(_Segment(run, i - 1, False))
                run = None
            if not _is_ack(m):
                out.append(_Segment(i, i, True))
        elif run is None:
            run = i
    if run is not None:
        out.append(_Segment(run, end, False))
    return out


def _parts(messages: Sequence[Message], block: Block, segments: Sequence[_Segment],
           backgrounds: dict[int, _Background]) -> list[_Part]:
    """The parts of a block, oldest first; the scope decides whether a lone raw run is finished."""
    parts: list[_Part] = []
    for n, segment in enumerate(segments):
        if segment.memory:
            parts += _memory_parts(messages[segment.start].text)
        else:
            completed = _COMPLETED.get(block.scope) if n == len(segments) - 1 else None
            parts.append(_raw_part(messages, segment.start, segment.end, backgrounds[segment.start], completed))
    return parts or [_Part(ongoing=block.scope == "ongoing_react")]


# -- fitting and rendering ----------------------------------------------------------------------


def _summary(sections: list[tuple[str, list[_Item], bool]], budget: int, *, counter: TokenCounter) -> str:
    """The block summary of a part's sections (lines rendered), fitted to ``budget`` tokens (when positive)."""
    if budget <= 0:
        return redact(_render(sections))
    return _fit(sections, budget, counter=counter)


def _sections(part: _Part, budget: int) -> list[tuple[str, list[_Item], bool]]:
    """(title, items, always shown) of every section, lines cut to their share of the budget."""
    chars = budget * 4
    reqs = part.requirements
    limit = max(160, min(_REQUEST_CHARS, int(chars * 0.45 / max(len(reqs), 1))))
    requirements = []
    for pos, r in enumerate(reqs):
        newest = pos == len(reqs) - 1
        rank = (len(reqs) + 1) if r.continued else (0 if pos == 0 else len(reqs) - pos)
        variants = tuple("- " + r.render(n) for n in (600, 300, 120)) if newest else ()
        requirements.append(_Item(text="- " + r.render(limit), tier=0.0, rank=rank, raw=True, variants=variants))
    used = sum(len(item.text) for item in requirements)
    final_chars = max(chars * 0.3, chars * 0.75 - used)
    final_limit = max(200, min(_FINAL_CHARS, int(final_chars / max(len(part.final), 1))))
    open_limit = max(200, min(600, int(chars * 0.1)))
    finished = not part.ongoing
    return [
        (REQUIREMENTS, requirements, True),
        (FINAL, prose_lines(part.final, final_limit), finished or bool(part.final)),
        (OPEN, prose_lines(part.open, open_limit), part.ongoing),
        (WORK, prose_lines(part.work, _LINE_CHARS), False),
        (FAILED, prose_lines(part.failed, _LINE_CHARS), False),
        (ARTIFACTS, prose_lines(part.artifacts, _LINE_CHARS), False),
    ]


def prose_lines(lines: Sequence[tuple[str, float]], limit: int) -> list[_Item]:
    """Items of section lines, cut to ``limit`` characters; later lines of a tier go first."""
    return [_Item(text="- " + cut(" ".join(text.split()) if "\n" in text else text, limit), tier=tier, rank=n,
                  raw=True) for n, (text, tier) in enumerate(lines)]


def _render(sections: Sequence[tuple[str, Sequence[_Item], bool]], *, skeleton: bool = False) -> str:
    """The summary: each shown section's heading, its kept lines and a marker of what was left out."""
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
    return "\n".join(out).rstrip()


def _fit(sections: list[tuple[str, list[_Item], bool]], budget: int, *, counter: TokenCounter) -> str:
    """The rendered summary with lines dropped and then shortened until it fits ``budget`` tokens."""
    everything = [item for _, items, _ in sections for item in items]
    _count_lines(everything, counter)
    base = counter.count(_render(sections, skeleton=True))
    marker = counter.count("- (+99 omitted for budget)") + 1 - counter.count("- (none)")
    plain = [(title, items) for title, items, _ in sections]
    goal = budget
    text = ""
    for _ in range(4):  # the estimate can be off (tokens merge across lines): retry with a lower goal
        _fit_lines(plain, goal, base=base, marker=marker, counter=counter)
        text = redact(_render(sections))
        total = counter.count(text)
        if total <= budget:
            return text
        goal -= (total - goal) + max(8, budget // 50)
        for item in everything:
            item.keep = True
    return _hard_cut(text, budget, counter)


def _fit_lines(sections: list[tuple[str, list[_Item]]], goal: int, *, base: int, marker: int,
               counter: TokenCounter) -> None:
    """Decide which lines stay so the estimate fits ``goal``.

    Artifact trail, work done and failed attempts are dropped first; then final result and open
    work lines are shortened and dropped, except the key lines of the newest part (its final
    answer; the open work's status and last action), which go only after the requirements have
    been shortened (the newest only through its shorter forms); the requirements go last of all.
    """
    estimate = _Estimate(sections, goal, base=base, marker=marker, counter=counter)
    everything = [item for _, items in sections for item in items]
    _drop_until_fit(estimate, sorted((item for item in everything if item.tier >= 2.0),
                                     key=lambda item: (-item.tier, -item.rank)))
    middle = [item for item in everything if 0.0 < item.tier < 2.0]
    for limit in (800, 400, 200, 120):
        for item in sorted(middle, key=lambda item: -item.cost):
            if estimate.fits():
                return
            if len(item.text) > limit:
                estimate.shorten(item, limit)
    essential = [item for item in everything if item.tier == 0.0]
    shorter = [item for item in essential if item.variants]
    key = [item for item in middle if item.tier <= TIER_FINAL]
    _drop_until_fit(estimate, sorted((item for item in middle if item.tier > TIER_FINAL),
                                     key=lambda item: (-item.tier, -item.rank)))
    _shorten_until_fit(estimate, essential, shorter=shorter)
    _drop_until_fit(estimate, sorted(key, key=lambda item: -item.rank))
    _drop_until_fit(estimate, sorted((item for item in essential if not item.variants), key=lambda item: -item.rank))
    for level in (1, 2):
        if estimate.fits():
            return
        estimate.use_variant(shorter, level)


def _hard_cut(text: str, budget: int, counter: TokenCounter) -> str:
    """Last resort for a budget too small for the headings and the newest requirement: cut the text."""
    while text and counter.count(text) > budget:
        text = text[:len(text) * 9 // 10].rstrip()
    return text
