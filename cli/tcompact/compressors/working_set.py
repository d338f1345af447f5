"""``working-set``: the compaction that keeps what the agent goes on to use (the default chain).

Measured by what real agents used after a cut (needed-token recall, issue 22), a handoff summary
alone keeps about a fifth of it: the file just read and about to be edited, the ids and paths a
listing returned. This is ``full`` — the user's messages verbatim within their budget, one handoff
summary — with three changes, the hybrid the JetBrains study (arXiv 2508.21433) found best:

* a **raw tail sized in tokens** (``keep_recent_tokens``), not messages, in which the outputs older
  than the newest ``keep_recent_turns`` turns are **masked** (:mod:`.mask`): recent steps stay as
  they were, older steps keep their calls and reasoning, and only what is older still is summarised;
* the **working set** re-injected after the summary (:mod:`tcompact.working_set`): the files being
  worked on by relevance to the open task, with their text as it now is, and an index of the exact
  names, paths and values the hidden outputs held, with where each output is — within
  ``working_set_ratio`` of the tokens replaced (at most ``working_set_max_tokens``);
* the summary's budget never below an earlier summary in the part it replaces (the budget floor of
  :func:`~tcompact.compressors.prefix.summary_budget`), so compacting again does not erode it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field

from ..model import Message
from ..spans import Span, adjust_keep_recent_for_tool_boundaries
from ..counting.tokens import TokenCounter
from ..working_set import rank_terms, working_files, working_set
from .base import Context, Settings
from .full import Full, FullSettings, kept_user_messages
from ._edit import call_preview
from .mask import masked_text, mask_outputs, old_calls, old_results
from .prefix import pinned
from .reinjection import recovered_context

__all__ = ["WorkingSetCompressor", "WorkingSetSettings"]


class WorkingSetSettings(FullSettings):
    """Full's settings plus the tail in tokens, its masking and the working set's budget."""

    keep_recent_tokens: int = Field(8000, ge=0, le=1_000_000, description="Tokens of the newest messages kept "
                                    "after the summary (old outputs in them counted as masked).")
    keep_recent_share: float = Field(0.1, ge=0, le=1, description="The tail takes at most this share of the "
                                     "transcript's tokens (a small session is not kept raw whole).")
    keep_recent_turns: int = Field(5, ge=0, le=100_000, description="In that tail, outputs of older turns "
                                   "(assistant messages with tool calls) are masked.")
    working_set_ratio: float = Field(0.15, ge=0, le=1, description="Tokens of the re-injected working set (files "
                                     "being worked on, index of names the tools returned), as a share of the "
                                     "tokens replaced.")
    working_set_max_tokens: int = Field(12000, ge=0, le=1_000_000, description="The working set's tokens at most.")


class WorkingSetCompressor(Full):
    """Full's handoff with a token-sized, masked raw tail and the working set re-injected."""

    name = "working-set"
    description = ("keep the working set: full's handoff + a raw tail sized in tokens with old outputs masked + "
                   "the files being worked on and an index of what the tools returned")
    settings_model = WorkingSetSettings
    builders = ("plan", "skills", "todo")
    works_meanwhile = True

    def span(self, messages: Sequence[Message], settings: Settings) -> Span:
        """The layout with the default token counter (``compress`` uses the run's)."""
        return self.layout(messages, settings, TokenCounter())

    def layout(self, messages: Sequence[Message], settings: Settings, counter: TokenCounter) -> Span:
        """Everything after the leading system prompt but a tail of ``keep_recent_tokens`` (old outputs in it
        counted as their placeholders), grown so no tool call loses its result."""
        assert isinstance(settings, WorkingSetSettings)
        start = next((i for i, m in enumerate(messages) if m.role not in ("system", "developer")), len(messages))
        old = old_calls(messages, settings.keep_recent_turns, start=start)  # previews of the tail's alone
        room = min(settings.keep_recent_tokens, int(counter.total(messages) * settings.keep_recent_share))
        used, cut = 0, len(messages)
        for i in range(len(messages) - 1, start - 1, -1):
            m = messages[i]
            cost = counter.count(masked_text(m.text, call_preview(old[i].name, old[i].arguments),
                                             "the original transcript")) if i in old else counter.message(m).total
            if used + cost > room:
                break
            used, cut = used + cost, i
        keep = max(adjust_keep_recent_for_tool_boundaries(messages, len(messages) - cut),
                   adjust_keep_recent_for_tool_boundaries(messages, settings.keep_recent_messages))
        return Span.from_cuts(len(messages), start, max(start, len(messages) - keep))

    def kept_tail(self, messages: Sequence[Message], span: Span, settings: Settings, ctx: Context) -> list[Message]:
        """The tail with the outputs of older turns masked."""
        assert isinstance(settings, WorkingSetSettings)
        old = old_results(messages, settings.keep_recent_turns, start=span.tail.start)
        out, _ = mask_outputs(messages, old, counter=ctx.counter, locator=ctx.locator)
        return out[span.tail.start:]

    def ahead_of_answer(self, messages: Sequence[Message], span: Span, settings: Settings,
                        ctx: Context) -> dict[str, Any]:
        """The files of the working set and the ranking of its index's terms: the kept messages but the summary
        are known already (the user's messages kept verbatim, the tail), and so what the reader no longer sees
        and the budget."""
        assert isinstance(settings, WorkingSetSettings)
        kept = (list(messages[: span.body.start]) + pinned(messages, span.body)
                + kept_user_messages([messages[i] for i in span.body], settings.user_messages_max_tokens, ctx.counter)
                + self.kept_tail(messages, span, settings, ctx))
        hidden, budget = self._hidden(messages, kept), self._budget(messages, span, settings, ctx)
        return {**super().ahead_of_answer(messages, span, settings, ctx),
                "files": (hidden, budget, working_files(messages, ctx.counter, budget, hidden=hidden)),
                "ranked": (hidden, rank_terms(messages, hidden))}

    def reinjected(self, messages: Sequence[Message], kept: Sequence[Message], span: Span, settings: Settings, *,
                   ctx: Context, target: int, ready: dict[str, Any] | None = None) -> Message | None:
        """Todo list, plan and skills as ``full`` has them, then the working set within its budget."""
        assert isinstance(settings, WorkingSetSettings)
        budget, hidden = self._budget(messages, span, settings, ctx), self._hidden(messages, kept)
        made, ranked = (ready or {}).get("files"), (ready or {}).get("ranked")
        files = made[2] if made is not None and made[:2] == (hidden, budget) else None
        shown = "\n".join(m.text for m in kept)
        found = working_set(messages, ctx.counter, budget, hidden=hidden, shown=shown, locator=ctx.locator,
                            files=files, ranked=ranked[1] if ranked is not None and ranked[0] == hidden else None)
        return recovered_context(messages, kept, self.builders, sections={"working_set": found.text})

    @staticmethod
    def _budget(messages: Sequence[Message], span: Span, settings: WorkingSetSettings, ctx: Context) -> int:
        replaced = sum(ctx.counter.message(messages[i]).total for i in span.body)
        return min(settings.working_set_max_tokens, int(replaced * settings.working_set_ratio))

    @staticmethod
    def _hidden(messages: Sequence[Message], kept: Sequence[Message]) -> frozenset[int]:
        """The indices of the messages the reader no longer sees."""
        visible = {id(m) for m in kept}
        return frozenset(i for i, m in enumerate(messages) if id(m) not in visible)
