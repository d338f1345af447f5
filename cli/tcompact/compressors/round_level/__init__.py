"""``round-level``: the four-stage RoundLevelCompressor pipeline (openjiuwen-spec §8.1).

The last-resort fallback for very long sessions: shrink the whole context under a hard target
with progressively more aggressive passes, stopping as soon as it is under target.

1. *recursive*: raw rounds → level-1 memory blocks (first-pass target), then adjacent blocks of
   the same level merged into the next level, again and again, while over target;
2. *aggressive keep-recent*: the remaining raw blocks (or every memory block) compressed hard
   (second-pass target), the newest ``keep_recent_messages`` kept raw;
3. *aggressive full-context*: the same with nothing kept raw (third-pass target);
   system and developer messages are never put in a block, and — our deviation, on by default
   (``keep_last_request``) — neither is the last real user request;
4. *hard truncate*: the serialised context cut to the target, no model.

Every summariser call fits ``compression_call_max_tokens`` (and the context window); a stage
that cannot fit a call is skipped and says why. Memory blocks carry ``metadata.compress_level``,
kept by every writer, so a second run continues the levels. A summariser failure aborts the
run with the transcript unchanged, as upstream does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field, model_validator

from ...errors import UsageError
from ...markers import ROUND_LEVEL_MARKER
from ...model import Message
from ...rounds import last_real_user_index
from ...spans import Span, round_level_span
from ...counting.windows import ratio_threshold
from ..trigger import refusal
from ..base import CallRecord, CompressionResult, Compressor, Context, Settings, Trigger, unchanged
from .budget import stage_budget
from .phase import Phase, PhaseResult, run_phase
from .targets import aggressive_targets, l0_targets, merge_targets
from .truncation import hard_truncate

__all__ = ["RoundLevel", "RoundLevelSettings"]


class RoundLevelSettings(Settings):
    """Trigger, target and per-stage budgets (defaults of spec §8.1.1, Java trigger)."""

    trigger_total_tokens: int = Field(230_000, gt=0, le=100_000_000, description="Act at this many tokens.")
    trigger_context_ratio: float | None = Field(None, gt=0, le=1, description="Act at this share of the context "
                                                "window instead (replaces trigger_total_tokens).")
    target_total_tokens: int = Field(160_000, gt=0, le=100_000_000, description="Stop once the context is at or "
                                     "under this.")
    keep_recent_messages: int = Field(0, ge=0, le=100_000, description="Newest messages kept raw in stages 1-2.")
    compression_call_max_tokens: int = Field(250_000, gt=0, le=100_000_000, description="Tokens one summariser "
                                             "call may take (capped by the context window).")
    first_pass_target_tokens: int = Field(30_000, gt=0, le=10_000_000, description="Summary budget per block, "
                                          "stage 1.")
    second_pass_target_tokens: int = Field(20_000, gt=0, le=10_000_000, description="Summary budget per block, "
                                           "stage 2.")
    third_pass_target_tokens: int = Field(10_000, gt=0, le=10_000_000, description="Summary budget per block, "
                                          "stage 3.")
    context_max_tokens: int | None = Field(20_000, gt=0, le=10_000_000, description="Cap on each of the "
                                           "[Reference Context] and [Protected Recent Context] sections that every "
                                           "call repeats (head/tail cut); null = uncapped, as upstream.")
    truncate_head_ratio: float = Field(0.2, gt=0, lt=1, description="Share of a cut text kept from its head.")
    truncated_marker: str = Field("...[TRUNCATED]...", min_length=1, description="Marks where text was cut.")
    compression_marker: str = Field(ROUND_LEVEL_MARKER, min_length=1, description="First line of a "
                                    "memory block.")
    keep_last_request: bool = Field(True, description="Keep the last real user request verbatim, outside every "
                                    "block (upstream compresses it with the in-flight turn).")

    @model_validator(mode="after")
    def _target_under_trigger(self) -> RoundLevelSettings:
        if self.trigger_context_ratio is None and self.target_total_tokens >= self.trigger_total_tokens:
            raise ValueError(f"target_total_tokens ({self.target_total_tokens}) must be below trigger_total_tokens "
                             f"({self.trigger_total_tokens})")
        return self


class RoundLevel(Compressor):
    """The four-stage round-level pipeline."""

    name = "round-level"
    description = ("four-stage pipeline: recursive round summaries and merges, aggressive passes, hard truncation; "
                   "stops once under target")
    settings_model = RoundLevelSettings
    uses_summarizer = True
    keep_recent_setting = "keep_recent_messages"
    may_cut_last_request = True  # by its hard truncation, the last stage

    def span(self, messages: Sequence[Message], settings: Settings) -> Span:
        """All but the newest ``keep_recent_messages`` (tool-aligned): what the first stages work on."""
        assert isinstance(settings, RoundLevelSettings)
        return round_level_span(messages, keep_recent=settings.keep_recent_messages)

    def acts(self, total: int, body_tokens: int, *, window: int, settings: Settings, empty: bool) -> bool:
        """At the threshold, whatever the body (the pipeline has no minimum body)."""
        assert isinstance(settings, RoundLevelSettings)
        return total >= _threshold(settings, window)

    def compress(self, messages: Sequence[Message], settings: Settings, ctx: Context) -> CompressionResult:
        assert isinstance(settings, RoundLevelSettings)
        before = ctx.counter.total(messages)
        trigger = self._trigger(messages, settings, ctx, before)
        why = refusal(trigger, empty=False)
        if why:
            return unchanged(self.name, messages, why, before, trigger=trigger, below_trigger=True)
        run = _Run(messages, settings, ctx)
        run.execute()
        figures = {"stages": run.stages, "stopped": run.stopped}
        if run.failed:
            return unchanged(self.name, messages, run.stopped, before, calls=tuple(run.calls), failed=True,
                             figures=figures, trigger=trigger)
        after = ctx.counter.total(run.messages)
        if after >= before:
            return unchanged(self.name, messages, f"no benefit ({after:,} ≥ {before:,} tokens); original kept",
                             before, calls=tuple(run.calls), figures=figures, trigger=trigger)
        return CompressionResult(processor=self.name, messages=run.messages, applied=True, reason=run.stopped,
                                 tokens_before=before, tokens_after=after, calls=tuple(run.calls), figures=figures,
                                 notes=tuple(f"{s['stage']}: {s['reason']}" for s in run.stages), trigger=trigger)

    def _trigger(self, messages: Sequence[Message], settings: RoundLevelSettings, ctx: Context, total: int) -> Trigger:
        """Its figures: an absolute threshold (or a share of the window), no minimum body."""
        body = self.span(messages, settings).body
        return Trigger(context_window=ctx.window, total_tokens_before=total,
                       trigger_ratio=settings.trigger_context_ratio, threshold=_threshold(settings, ctx.window),
                       body_tokens=sum(ctx.counter.message(messages[i]).total for i in body),
                       min_target_tokens=None, forced=ctx.force)


def _threshold(settings: RoundLevelSettings, window: int) -> int:
    if settings.trigger_context_ratio is None:
        return settings.trigger_total_tokens
    threshold = ratio_threshold(window, settings.trigger_context_ratio)
    if settings.target_total_tokens >= threshold:
        raise UsageError(f"round-level target_total_tokens ({settings.target_total_tokens:,}) must be below the "
                         f"trigger ({settings.trigger_context_ratio} × {window:,} = {threshold:,} tokens)",
                         hint="lower target_total_tokens or raise trigger_context_ratio")
    return threshold


class _Run:
    """One pass through the stages over a working copy of the messages."""

    def __init__(self, messages: Sequence[Message], settings: RoundLevelSettings, ctx: Context) -> None:
        self.messages = tuple(messages)
        self.settings, self.ctx = settings, ctx
        self.call_budget = min(settings.compression_call_max_tokens, ctx.window)
        self.calls: list[CallRecord] = []
        self.stages: list[dict[str, Any]] = []
        self.stopped = "still over the target after every stage"
        self.failed = False

    def under(self) -> bool:
        return self.ctx.counter.total(self.messages) <= self.settings.target_total_tokens

    def execute(self) -> None:
        s = self.settings
        steps = (
            ("recursive", self._recursive),
            ("aggressive_keep_recent", lambda: self._aggressive("aggressive_keep_recent",
                                                                s.second_pass_target_tokens, s.keep_recent_messages)),
            ("aggressive_full_context", lambda: self._aggressive("aggressive_full_context",
                                                                 s.third_pass_target_tokens, 0)),
            ("hard_truncate", self._truncate),
        )
        for name, step in steps:
            step()
            if self.failed:
                self.stopped = f"{name}: {self.stages[-1]['reason']}"
                return
            if self.under():
                self.stopped = f"under the target after {name}"
                return

    def _record(self, stage: str, before: int, result: PhaseResult | None, reason: str) -> None:
        calls = result.calls if result else ()
        self.calls.extend(calls)
        self.stages.append({"stage": stage, "tokens_before": before,
                            "tokens_after": self.ctx.counter.total(self.messages), "calls": len(calls),
                            "replaced": result.replaced if result else 0, "reason": reason})

    def _phase(self, targets: Sequence[Any], phase: Phase) -> PhaseResult:
        result = run_phase(self.messages, targets, phase, self.ctx, settings=self.settings,
                           call_budget=self.call_budget, keep=self._keep())
        if result.failed:
            self.failed = True
        else:
            self.messages = result.messages
        return result

    def _end(self, keep_recent: int) -> int:
        return len(self.messages) - keep_recent - 1

    def _keep(self) -> frozenset[int]:
        """The last real user request, when it is kept verbatim."""
        i = last_real_user_index(self.messages) if self.settings.keep_last_request else None
        return frozenset() if i is None else frozenset({i})

    def _recursive(self) -> None:
        s, before, results = self.settings, self.ctx.counter.total(self.messages), []
        phase = Phase("l0_to_l1", s.first_pass_target_tokens, s.keep_recent_messages, aggressive=False)
        targets = l0_targets(self.messages, self._end(s.keep_recent_messages), s.compression_marker, keep=self._keep())
        if targets:
            results.append(self._phase(targets, phase))
        while not self.failed and not self.under():
            merges = merge_targets(self.messages, self._end(s.keep_recent_messages), s.compression_marker,
                                   keep=self._keep())
            if not merges:
                break
            level = merges[0].current_level
            name = f"recursive_merge_l{level}_to_l{level + 1}"
            result = self._phase(merges, Phase(name, s.first_pass_target_tokens, s.keep_recent_messages, False))
            results.append(result)
            if result.replaced == 0:
                break
        self._record_many("recursive", before, results)

    def _record_many(self, stage: str, before: int, results: Sequence[PhaseResult]) -> None:
        for r in results:
            self.calls.extend(r.calls)
        reasons = "; ".join(r.reason for r in results) or "no targets"
        self.stages.append({"stage": stage, "tokens_before": before,
                            "tokens_after": self.ctx.counter.total(self.messages),
                            "calls": sum(len(r.calls) for r in results), "replaced": sum(r.replaced for r in results),
                            "reason": reasons})

    def _aggressive(self, stage: str, target: int, keep_recent: int) -> None:
        before = self.ctx.counter.total(self.messages)
        s, keep = self.settings, self._keep()
        targets = aggressive_targets(self.messages, self._end(keep_recent), s.compression_marker, keep=keep)
        if targets:
            target = stage_budget(self.messages, targets, stage_target=target, goal=s.target_total_tokens,
                                  counter=self.ctx.counter, marker=s.compression_marker, keep=keep)
        result = self._phase(targets, Phase(stage, target, keep_recent, aggressive=True))
        self._record(stage, before, result, result.reason)

    def _truncate(self) -> None:
        s, before = self.settings, self.ctx.counter.total(self.messages)
        self.messages = hard_truncate(self.messages, target=s.target_total_tokens, marker=s.compression_marker,
                                      truncated_marker=s.truncated_marker, head_ratio=s.truncate_head_ratio,
                                      counter=self.ctx.counter)
        self._record("hard_truncate", before, None, "the serialised context cut to the target")
