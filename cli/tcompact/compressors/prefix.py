"""The forked "prefix-compact" family (openjiuwen-spec §2-4): one summary replaces a span's body.

Flow: trigger check (§2.2) → span → request (prefix + body as a conversation, the prompt as the
last user message, the protected tail hidden; §2.4) → summariser with retries (§2.10) →
``<state_snapshot>`` extraction (§2.6) → memory-block wrapper, exact text (§2.7) → state
re-injection (§6) → benefit check (§2.8): the new list must have fewer tokens — and, our addition
(:mod:`._benefit`), be at least half as dense in facts as what it replaces, and be no skeleton —,
else the original stays. The summary's budget is ``summary_ratio`` of the tokens it replaces (at
least 512 tokens or half of what it replaces, at most ``summary_max_tokens``), the re-injected
state about a quarter of that again. Deliberate fixes: an empty summary is rejected; overflow
shrinks stay tool-aligned.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import Field

from ..markers import is_summary_text
from ..model import Message
from ..redact import redact
from ..spans import Span
from ..summarizers.base import SummaryRequest
from ..summarizers.calls import summarize
from ..summarizers.contracts import extract_snapshot, prompt_text
from ..counting.tokens import TokenCounter
from ..counting.windows import MIN_TARGET_RATIO, TRIGGER_RATIO
from ._benefit import benefit, word_facts
from ._model import model_summary, writes_with_model
from .base import CompressionResult, Compressor, Context, Settings, Trigger, unchanged
from .trigger import refusal, trigger_figures, trigger_reason
from .reinjection import recovered_context

__all__ = ["PrefixSettings", "PrefixCompressor", "wrap_memory", "preserve_appendix", "pinned", "summary_budget",
           "reinjection_chars", "earlier_summaries"]


class PrefixSettings(Settings):
    """Trigger ratios of the context window and the summary budget."""

    trigger_context_ratio: float = Field(TRIGGER_RATIO, gt=0, lt=1, description="Compact when the transcript reaches this "
                                         "share of the context window.")
    min_target_context_ratio: float = Field(MIN_TARGET_RATIO, ge=0, lt=1, description="Only when the part to compress is at "
                                            "least this share of the window.")
    summary_max_tokens: int = Field(8000, ge=32, le=200_000, description="Token budget of the summary (sent as "
                                    "max_tokens; at most a quarter of a known summariser window).")
    summary_ratio: float = Field(0.13, gt=0, le=1, description="The summary's budget as a share of the tokens it "
                                 "replaces (at least 512, at most summary_max_tokens); the user's messages quoted "
                                 "in it have a budget of their own, within summary_max_tokens.")


#: The smallest summary budget: a state snapshot's headings alone take about 150 tokens.
MIN_SUMMARY_TOKENS = 512


def summary_budget(settings: PrefixSettings, body_tokens: int, *, earlier: int = 0) -> int:
    """Tokens the summary may take: ``summary_ratio`` of what it replaces, at least :data:`MIN_SUMMARY_TOKENS`
    (or half of what it replaces, when that is less), at most ``summary_max_tokens`` — and never less than the
    ``earlier`` summaries it replaces take, plus room for what is new (the floor that keeps a compacted
    session from eroding when it is compacted again)."""
    floor = min(MIN_SUMMARY_TOKENS, body_tokens // 2)
    budget = min(settings.summary_max_tokens, max(floor, int(body_tokens * settings.summary_ratio), 64))
    return max(budget, min(body_tokens, earlier + MIN_SUMMARY_TOKENS // 2)) if earlier else budget


def earlier_summaries(messages: Sequence[Message], body: range, counter: TokenCounter) -> int:
    """Tokens of the earlier compactions' summaries in a body (memory blocks, compact summaries; not the
    re-injected state that followed them)."""
    return sum(counter.message(messages[i]).total for i in body if is_summary_text(messages[i].text))


def reinjection_chars(target: int) -> int:
    """Characters the re-injected state may take next to a summary of ``target`` tokens (about a quarter as
    many tokens again)."""
    return target


def pinned(messages: Sequence[Message], body: range) -> list[Message]:
    """System and developer messages inside a body: they are kept, never summarised away."""
    return [messages[i] for i in body if messages[i].role in ("system", "developer")]


def wrap_memory(tag: str, meaning: str, policy: str, summary: str) -> str:
    """The memory-block text of spec §2.7 (no trailing newline)."""
    return "\n".join([f"<{tag}>", "<meaning>", meaning, "</meaning>", "<conflict_policy>", policy,
                      "</conflict_policy>", "<summary>", summary, "</summary>", f"</{tag}>"])


def preserve_appendix(prompt: str, instruction: str | None) -> str:
    """The prompt with the user preservation instruction appended (spec §2.5), or as it is."""
    if not instruction or not instruction.strip():
        return prompt
    return prompt.rstrip() + "\n\n" + prompt_text("preserve").replace("{instruction}", instruction.strip())


class PrefixCompressor(Compressor):
    """Subclasses choose the span, the contract and the re-injection builders; the summary takes the body's
    place as one memory block (the wrapper texts ``tag``, ``meaning``, ``policy``) unless a subclass
    builds its own :meth:`replacement` (``full``)."""

    uses_summarizer = True
    contract: ClassVar[str]
    tag: ClassVar[str]
    meaning: ClassVar[str]
    policy: ClassVar[str]
    builders: ClassVar[tuple[str, ...]]
    #: Whether :meth:`ahead_of_answer` has work to do while the summariser answers (in a copy of the process:
    #: the benefit check's facts alone are not worth one, their outputs' error lines being the summariser's).
    works_meanwhile: ClassVar[bool] = False

    def span(self, messages: Sequence[Message], settings: Settings) -> Span:
        """The prefix / body / tail split."""
        raise NotImplementedError

    def acts(self, total: int, body_tokens: int, *, window: int, settings: Settings, empty: bool) -> bool:
        assert isinstance(settings, PrefixSettings)
        return trigger_reason(total, body_tokens, window=window, trigger_ratio=settings.trigger_context_ratio,
                              min_target_ratio=settings.min_target_context_ratio, force=False, empty=empty) is None

    def replacement(self, messages: Sequence[Message], span: Span, summary: str, settings: Settings,
                    counter: TokenCounter) -> tuple[list[Message], str]:
        """The messages that take the body's place (the re-injected state follows them), and the note saying so."""
        memory = Message(role="user", content=wrap_memory(self.tag, self.meaning, self.policy, summary),
                         meta={"memory_block": self.tag})
        return [memory], f"{len(span.body)} messages summarised into one {self.tag}"

    def compress(self, messages: Sequence[Message], settings: Settings, ctx: Context) -> CompressionResult:
        assert isinstance(settings, PrefixSettings)
        counter = ctx.counter
        before = counter.total(messages)
        span = self.layout(messages, settings, counter)
        body_tokens = sum(counter.message(messages[i]).total for i in span.body)
        trigger = trigger_figures(before, body_tokens, window=ctx.window, trigger_ratio=settings.trigger_context_ratio,
                                  min_target_ratio=settings.min_target_context_ratio, force=ctx.force)
        why = refusal(trigger, empty=span.empty)
        if why:
            return unchanged(self.name, messages, why, before, span=span, trigger=trigger, below_trigger=not span.empty)
        if ctx.summarizer is None:
            return unchanged(self.name, messages, "no summariser", before, span=span, failed=True, trigger=trigger)
        prompt = preserve_appendix(prompt_text(self.contract), ctx.preserve)
        target = summary_budget(settings, body_tokens, earlier=earlier_summaries(messages, span.body, counter))

        def build(s: Span) -> SummaryRequest:
            return SummaryRequest(processor=self.name, contract=self.contract, prompt=prompt,
                                  messages=tuple(messages[: s.tail.start]), body=s.body, target_tokens=target,
                                  cap_tokens=settings.summary_max_tokens)

        def fixed(s: Span) -> int:
            return sum(counter.message(messages[i]).total for i in s.prefix) + counter.count(prompt) + 4

        if writes_with_model(ctx.summarizer):
            return self._with_model(messages, span, ctx, build(span), settings=settings, before=before, target=target,
                                    trigger=trigger)
        ready: dict[str, Any] = {}  # what needs no summary, made while the summariser answers
        meanwhile = (lambda: ready.update(self.ahead_of_answer(messages, span, settings, ctx))) \
            if self.works_meanwhile else None
        got = summarize(messages, span, build, ctx, fixed_tokens=fixed, meanwhile=meanwhile)
        if got.response is None:
            return unchanged(self.name, messages, f"summariser failed: {got.error}", before, span=got.span,
                             calls=got.calls, failed=True, trigger=trigger)
        summary = redact(extract_snapshot(got.response.text, got.calls[-1].request.prompt))
        if not summary:
            return unchanged(self.name, messages, "the summariser returned an empty summary", before, span=got.span,
                             calls=got.calls, failed=True, trigger=trigger)
        return self._assemble(messages, got.span, summary, before=before, calls=got.calls, settings=settings,
                              ctx=ctx, target=target, trigger=trigger, ready=ready if got.span == span else {})

    def ahead_of_answer(self, messages: Sequence[Message], span: Span, settings: Settings,
                        ctx: Context) -> dict[str, Any]:
        """What :meth:`compress` needs besides the summary, made while the summariser answers (the extractive
        one in a copy of the process) when :attr:`works_meanwhile`: here, the benefit check's facts of the
        replaced messages but their outputs'."""
        return {"facts": word_facts(_replaced(messages, span))}

    def layout(self, messages: Sequence[Message], settings: Settings, counter: TokenCounter) -> Span:
        """The span ``compress`` uses (the working-set compaction sizes its tail with ``counter``)."""
        return self.span(messages, settings)

    def kept_tail(self, messages: Sequence[Message], span: Span, settings: Settings, ctx: Context) -> list[Message]:
        """The messages of the protected tail as they are kept (the working-set compaction masks old outputs)."""
        return list(messages[span.tail.start:])

    def reinjected(self, messages: Sequence[Message], kept: Sequence[Message], span: Span, settings: Settings, *,
                   ctx: Context, target: int, ready: dict[str, Any] | None = None) -> Message | None:
        """The ``<recovered_context>`` message that follows the summary (None when it has nothing)."""
        return recovered_context(messages, kept, self.builders, max_chars=reinjection_chars(target))

    def _with_model(self, messages: Sequence[Message], span: Span, ctx: Context, request: SummaryRequest, *,
                    settings: Settings, before: int, target: int, trigger: Trigger) -> CompressionResult:
        """A model's narrative beside the extractive facts, in calls that fit its window (:mod:`._model`)."""
        got = model_summary(messages, span, ctx, facts_request=request)
        if got.text is None:
            return unchanged(self.name, messages, f"summariser failed: {got.error}", before, span=span,
                             calls=got.calls, failed=True, trigger=trigger, notes=got.notes)
        return self._assemble(messages, span, redact(got.text), before=before, calls=got.calls, settings=settings,
                              ctx=ctx, target=target, trigger=trigger, notes=got.notes)

    def _assemble(self, messages: Sequence[Message], span: Span, summary: str, *, before: int, calls: tuple,
                  settings: Settings, ctx: Context, target: int, trigger: Trigger,
                  notes: tuple[str, ...] = (), ready: dict[str, Any] | None = None) -> CompressionResult:
        counter = ctx.counter
        lead, note = self.replacement(messages, span, summary, settings, counter)
        head, tail = list(messages[: span.body.start]) + pinned(messages, span.body), self.kept_tail(
            messages, span, settings, ctx)
        extra = self.reinjected(messages, head + lead + tail, span, settings, ctx=ctx, target=target, ready=ready)
        replacement = lead + ([extra] if extra else [])
        new = tuple(head + replacement + tail)
        after = counter.total(new)
        verdict = benefit(_replaced(messages, span), replacement, summary=summary, before=before, after=after,
                          counter=counter, words=(ready or {}).get("facts"))
        figures = {"facts_kept": verdict.facts_kept, "tokens_kept": verdict.tokens_kept}
        if not verdict.accepted:
            return unchanged(self.name, messages, verdict.reason, before, span=span, calls=calls, trigger=trigger,
                             figures={**figures, "rejected_tokens_after": after}, notes=notes)
        return CompressionResult(processor=self.name, messages=new, applied=True, reason="compacted",
                                 tokens_before=before, tokens_after=after, span=span, calls=calls, figures=figures,
                                 notes=(note, *notes), trigger=trigger)


def _replaced(messages: Sequence[Message], span: Span) -> list[Message]:
    """The messages the summary takes the place of (the system and developer ones stay)."""
    return [messages[i] for i in span.body if messages[i].role not in ("system", "developer")]
