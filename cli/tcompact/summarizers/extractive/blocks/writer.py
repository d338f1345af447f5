"""The "blocks" contract: one summary per target of the round-level pipeline, as JSON.

The round-level compressor (openjiuwen-spec §8.1.4-8.1.5; prompts B) sends its targets as
:class:`~...base.Block` s — raw round blocks (``completed_react``, ``ongoing_react``) or runs of
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
engine as the state snapshots (:mod:`..fitting`, the blocks' order in :mod:`.fit`): artifact trail and
work done go first, then failed attempts, then final result / open work; the user's requirements are
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
from ....counting.tokens import TokenCounter
from ...base import Block, SummaryRequest
from .background import backgrounds as find_backgrounds
from ..fitting import Item
from .fit import Section, fit, render, render_lines
from .memory import is_ack, is_memory, memory_parts
from .merge import merge_parts
from .parts import Background, Part, raw_part
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
    sections = [_sections(merge_parts(_parts(messages, block, found, backgrounds)), sized)
                for block, found in zip(request.blocks, segments)]
    lines = [item for block in sections for _, items, _ in block for item in items]
    render_lines(lines)
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
        if is_memory(m) or is_ack(m):
            if run is not None:
                out.append(_Segment(run, i - 1, False))
                run = None
            if not is_ack(m):
                out.append(_Segment(i, i, True))
        elif run is None:
            run = i
    if run is not None:
        out.append(_Segment(run, end, False))
    return out


def _parts(messages: Sequence[Message], block: Block, segments: Sequence[_Segment],
           backgrounds: dict[int, Background]) -> list[Part]:
    """The parts of a block, oldest first; the scope decides whether a lone raw run is finished."""
    parts: list[Part] = []
    for n, segment in enumerate(segments):
        if segment.memory:
            parts += memory_parts(messages[segment.start].text)
        else:
            completed = _COMPLETED.get(block.scope) if n == len(segments) - 1 else None
            parts.append(raw_part(messages, segment.start, segment.end, backgrounds[segment.start], completed))
    return parts or [Part(ongoing=block.scope == "ongoing_react")]


# -- fitting and rendering ----------------------------------------------------------------------


def _summary(sections: list[Section], budget: int, *, counter: TokenCounter) -> str:
    """The block summary of a part's sections (lines rendered), fitted to ``budget`` tokens (when positive)."""
    if budget <= 0:
        return redact(render(sections))
    return fit(sections, budget, counter=counter)


def _sections(part: Part, budget: int) -> list[Section]:
    """(title, items, always shown) of every section, lines cut to their share of the budget."""
    chars = budget * 4
    reqs = part.requirements
    limit = max(160, min(_REQUEST_CHARS, int(chars * 0.45 / max(len(reqs), 1))))
    requirements = []
    for pos, r in enumerate(reqs):
        newest = pos == len(reqs) - 1
        rank = (len(reqs) + 1) if r.continued else (0 if pos == 0 else len(reqs) - pos)
        variants = tuple("- " + r.render(n) for n in (600, 300, 120)) if newest else ()
        requirements.append(Item("", "- " + r.render(limit), 0.0, order=rank, block=True, keep=True, shorter=variants))
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


def prose_lines(lines: Sequence[tuple[str, float]], limit: int) -> list[Item]:
    """Items of section lines, cut to ``limit`` characters; later lines of a tier go first."""
    return [Item("", "- " + cut(" ".join(text.split()) if "\n" in text else text, limit), tier, order=n, block=True,
                 keep=True) for n, (text, tier) in enumerate(lines)]
