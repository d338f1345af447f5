"""A stage's later calls told to the summariser as soon as they are grouped (issue 26): an answer depends on
its blocks alone, so the extractive summariser has a copy of the process answer them while the prompts are
built and the earlier calls answered here (:mod:`tcompact.summarizers.extractive.ahead`)."""

from __future__ import annotations

from collections.abc import Sequence

from ...forked import later_half
from ...model import Message
from ...summarizers.base import Block, SummaryRequest
from ..base import Context

__all__ = ["answer_later"]


def answer_later(messages: Sequence[Message], groups: Sequence[Sequence[Block]], target_tokens: int, ctx: Context
                 ) -> None:
    """The summariser told the later calls of the stage (about half the characters) as soon as they are known,
    before their prompts are built: an answer depends on the blocks alone, and the extractive summariser has a
    copy of the process answer them meanwhile (:meth:`~tcompact.summarizers.base.Summarizer.answer_ahead`)."""
    if len(groups) < 2 or ctx.summarizer is None:
        return
    sizes = [sum(len(m.text) for m in messages[g[0].start:g[-1].end + 1]) for g in groups]
    ctx.summarizer.answer_ahead([
        SummaryRequest(processor="round-level", contract="blocks", prompt="", messages=tuple(messages),
                       body=range(g[0].start, g[-1].end + 1), target_tokens=target_tokens, blocks=tuple(g))
        for g in groups[later_half(sizes):]])
