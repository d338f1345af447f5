"""``full``: a handoff-style full compaction (openjiuwen-spec §8.5, Codex's compact in LESSONS.md).

Everything after the system prompt becomes: the real user messages, verbatim, chosen newest first
within a token budget (the one that overflows keeps its head and tail around a marker,
:mod:`tcompact.user_messages`), one checkpoint summary, and the re-injected state. Users' own words
survive a compaction this way, which is what they miss most when summaries paraphrase them. The
benefit check is the information one of :mod:`._benefit`.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from ..markers import CONTINUATION
from ..model import Message
from ..redact import redact
from ..rounds import is_real_user
from ..spans import Span, adjust_keep_recent_for_tool_boundaries
from ..summarizers.base import SummaryRequest
from ..summarizers.contracts import extract_snapshot, prompt_text
from ..tokens import TokenCounter
from ..user_messages import select
from ._benefit import benefit
from ._edit import with_text
from ._summarize import summarize, trigger_reason
from .base import CompressionResult, Compressor, Context, Settings, unchanged
from .prefix import PrefixCompressor, PrefixSettings, pinned, preserve_appendix, reinjection_chars, summary_budget
from .reinjection import recovered_context

__all__ = ["Full", "FullSettings", "SUMMARY_INTRO"]

SUMMARY_INTRO = (f"{CONTINUATION} that ran out of context. The summary below covers the earlier portion of the "
                 "conversation.")


class FullSettings(PrefixSettings):
    """Prefix settings plus the budget of verbatim user messages and an optional raw tail."""

    user_messages_max_tokens: int = Field(20000, ge=0, le=1_000_000,
                                          description="Tokens of real user messages kept verbatim, newest first.")
    keep_recent_messages: int = Field(0, ge=0, le=100_000, description="Newest messages kept raw after the summary.")


class Full(Compressor):
    """One checkpoint summary + the user's messages verbatim + re-injected state."""

    name = "full"
    description = "full compaction: one handoff summary + the real user messages verbatim within a budget + state"
    settings_model = FullSettings
    uses_summarizer = True
    keep_recent_setting = "keep_recent_messages"
    builders = ("plan", "skills", "todo", "read_file")
    acts = PrefixCompressor.acts  # the same trigger ratios

    def span(self, messages: Sequence[Message], settings: Settings) -> Span:
        """Everything after the leading system prompt, but the newest ``keep_recent_messages``."""
        assert isinstance(settings, FullSettings)
        start = next((i for i, m in enumerate(messages) if m.role not in ("system", "developer")), len(messages))
        keep = adjust_keep_recent_for_tool_boundaries(messages, settings.keep_recent_messages)
        return Span.from_cuts(len(messages), start, max(start, len(messages) - keep))

    def compress(self, messages: Sequence[Message], settings: Settings, ctx: Context) -> CompressionResult:
        assert isinstance(settings, FullSettings)
        counter = ctx.counter
        before = counter.total(messages)
        span = self.span(messages, settings)
        body_tokens = sum(counter.message(messages[i]).total for i in span.body)
        why = trigger_reason(before, body_tokens, window=ctx.window, trigger_ratio=settings.trigger_context_ratio,
                             min_target_ratio=settings.min_target_context_ratio, force=ctx.force, empty=span.empty)
        if why or ctx.summarizer is None:
            return unchanged(self.name, messages, why or "no summariser", before, span=span, failed=not why)
        prompt = preserve_appendix(prompt_text("full"), ctx.preserve)
        target = summary_budget(settings, body_tokens)

        def build(s: Span) -> SummaryRequest:
            return SummaryRequest(processor=self.name, contract="full", prompt=prompt,
                                  messages=tuple(messages[: s.tail.start]), body=s.body, target_tokens=target)

        def fixed(s: Span) -> int:
            return sum(counter.message(messages[i]).total for i in s.prefix) + counter.count(prompt) + 4

        got = summarize(messages, span, build, ctx, fixed_tokens=fixed)
        summary = redact(extract_snapshot(got.response.text)) if got.response else ""
        if not summary:
            reason = f"summariser failed: {got.error}" if got.error else "the summariser returned an empty summary"
            return unchanged(self.name, messages, reason, before, span=got.span, calls=got.calls, failed=True)
        return self._assemble(messages, got.span, summary, before=before, calls=got.calls, settings=settings,
                              counter=counter, target=target)

    def _assemble(self, messages: Sequence[Message], span: Span, summary: str, *, before: int, calls: tuple,
                  settings: FullSettings, counter: TokenCounter, target: int) -> CompressionResult:
        users = kept_user_messages([messages[i] for i in span.body], settings.user_messages_max_tokens, counter)
        notice = "\n\nRecent messages are preserved verbatim." if len(span.tail) else ""
        handoff = Message(role="user", content=f"{SUMMARY_INTRO}\n\n{summary}{notice}", meta={"memory_block": "full"})
        head, tail = list(messages[: span.body.start]) + pinned(messages, span.body), list(messages[span.tail.start:])
        extra = recovered_context(messages, head + users + [handoff] + tail, self.builders,
                                  max_chars=reinjection_chars(target))
        replacement = users + [handoff] + ([extra] if extra else [])
        new = tuple(head + replacement + tail)
        after = counter.total(new)
        replaced = [messages[i] for i in span.body if messages[i].role not in ("system", "developer")]
        verdict = benefit(replaced, replacement, summary=summary, before=before, after=after, counter=counter)
        figures = {"facts_kept": verdict.facts_kept, "tokens_kept": verdict.tokens_kept}
        if not verdict.accepted:
            return unchanged(self.name, messages, verdict.reason, before, span=span, calls=calls,
                             figures={**figures, "rejected_tokens_after": after})
        return CompressionResult(processor=self.name, messages=new, applied=True, reason="compacted",
                                 tokens_before=before, tokens_after=after, span=span, calls=calls, figures=figures,
                                 notes=(f"{len(span.body)} messages replaced by {len(users)} user message(s) "
                                        "and one summary",))


def kept_user_messages(body: Sequence[Message], budget: int, counter: TokenCounter) -> list[Message]:
    """Real user messages of ``body`` chosen newest first within ``budget`` tokens, in their order; the one
    that overflows keeps its head and tail around a marker (:func:`tcompact.user_messages.select`)."""
    users = [m for m in body if is_real_user(m)]
    texts = [m.text for m in users]
    framing = {text: counter.message(m).total - counter.count(text) for m, text in zip(users, texts, strict=True)}
    chosen = select(texts, budget, counter=counter, by="full", cost=lambda text: counter.count(text) + framing[text])
    return [m if text == whole else with_text(m, text) for m, whole, text in zip(users, texts, chosen, strict=True)
            if text is not None]
