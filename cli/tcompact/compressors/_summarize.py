"""Calling a summariser the way openjiuwen-spec §2.2 and §2.10 describe, with our fixes.

* Trigger: total ≥ ``int(window × trigger_ratio)`` and body ≥ ``int(window × min_target_ratio)``.
* The summariser's own window: the request is fitted to the *summariser model's* context window,
  not the transcript's. When the backend knows that window (``--summarizer-window``, or what the
  server reports), the answer's budget is capped at a quarter of it and sent as ``max_tokens``
  (and stated in the prompt: ``{max_tokens}`` in prompts/*.md), and a body too big for the rest
  is shrunk *before* the first call (when no span fits, no call is made: the compressor fails). Our token counts are not the server's tokenizer's: a request
  fits when ``counted × TOKEN_RATIO + FIT_MARGIN + max_tokens ≤ window``.
* Retries: a context overflow shrinks the body and re-aligns the cut to a legal cut point, so a
  tool call never loses its result (upstream can orphan one). The size comes from the refusal
  when it says the server's window and the prompt's size in its tokens (llama.cpp, vLLM,
  OpenAI): the ratio of its count to ours replaces TOKEN_RATIO. A refusal without figures shrinks
  to 0.85, 0.65, then 0.5 of the first refused request (of the room in the summariser's window
  when that is known). Three overflow retries at most. Transient errors and empty replies are retried with the same request
  after 0.05 s, 0.1 s — or after the server's Retry-After (``Context.transient_retries`` times,
  default 2); authentication and bad requests stop at once.
* Refused replies (:mod:`tcompact.summarizers.validity`: empty, cut at the limit, the prompt
  echoed, a loop, no section; not checked for a backend that is ``trusted`` to follow the
  contract by construction, the extractive one) count as ``invalid_response`` and are retried at once within the
  same retry allowance, at temperature ``RESAMPLE_TEMPERATURE`` with the attempt's number as
  ``seed`` (a deterministic model would say the same again at 0; the seed keeps re-runs
  reproducible where the server honours it); when every attempt is refused the call fails.
Every call, failed or not, becomes a :class:`CallRecord` (one dump each).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ..model import Message
from ..spans import Span, legal_cut_points
from ..summarizers.base import (
    TRANSIENT_KINDS,
    ModelWindow,
    SummaryRequest,
    SummaryResponse,
    SummarizerError,
    model_window,
)
from ..summarizers.validity import snapshot_problem
from ..windows import ratio_threshold
from .base import CallRecord, Context, Trigger

__all__ = ["OVERFLOW_BUDGETS", "TOKEN_RATIO", "FIT_MARGIN", "RESAMPLE_TEMPERATURE", "TRIGGER_REASONS", "trigger_reason",
           "trigger_figures", "refusal",
           "Summary", "summarize", "shrink_span", "output_budget", "prompt_room", "learned", "state_budget",
           "refusal_hint"]

OVERFLOW_BUDGETS = (0.85, 0.65, 0.5)
#: The server's tokenizer may count up to this many tokens per token of ours (measured: 1.05-1.27 for SmolLM2).
TOKEN_RATIO = 1.15
#: Tokens of room kept for the chat template and a default system prompt the server may add.
FIT_MARGIN = 64
#: The answer's budget is at most this share of the summariser's window.
OUTPUT_SHARE = 0.25
RESAMPLE_TEMPERATURE = 0.7
_RETRIABLE = TRANSIENT_KINDS | {"empty_response", "invalid_response"}
_MAX_RETRY_AFTER = 60.0
BUDGET_SENTENCE = "Your whole answer must fit in {max_tokens} tokens: it is cut off there."

Check = Callable[[SummaryRequest, SummaryResponse], "str | None"]


#: How the reasons of a compressor left below its trigger begin (``--force`` acts anyway).
TRIGGER_REASONS = ("below the threshold", "the compressible part is below the minimum target")


def trigger_figures(total: int, body_tokens: int, *, window: int, trigger_ratio: float, min_target_ratio: float,
                    force: bool) -> Trigger:
    """The figures of the spec §2.2 trigger: act at ``int(window × trigger_ratio)`` tokens when the body holds
    at least ``int(window × min_target_ratio)``."""
    return Trigger(context_window=window, total_tokens_before=total, trigger_ratio=trigger_ratio,
                   threshold=ratio_threshold(window, trigger_ratio), body_tokens=body_tokens,
                   min_target_tokens=int(window * min_target_ratio), forced=force)


def refusal(trigger: Trigger, *, empty: bool) -> str | None:
    """Why a compressor with these trigger figures should not run, or None when it should."""
    if empty:
        return "no compressible span"
    if trigger.forced:
        return None
    total, threshold, minimum = trigger.total_tokens_before, trigger.threshold, trigger.min_target_tokens
    if total < threshold:
        return f"below the threshold ({total:,} < {threshold:,} tokens)"
    if minimum is not None and trigger.body_tokens < minimum:
        return (f"the compressible part is below the minimum target ({trigger.body_tokens:,} < {minimum:,} "
                "tokens)")
    return None


def trigger_reason(total: int, body_tokens: int, *, window: int, trigger_ratio: float, min_target_ratio: float,
                   force: bool, empty: bool) -> str | None:
    """Why the compressor should not run, or None when it should (spec §2.2)."""
    figures = trigger_figures(total, body_tokens, window=window, trigger_ratio=trigger_ratio,
                              min_target_ratio=min_target_ratio, force=force)
    return refusal(figures, empty=empty)


@dataclass(frozen=True)
class Summary:
    """What :func:`summarize` got: the response (None on failure), the span actually used, the calls."""

    response: SummaryResponse | None
    span: Span
    calls: tuple[CallRecord, ...]
    error: SummarizerError | None


def output_budget(target: int, window: ModelWindow | None) -> int:
    """``max_tokens`` for a summary budget of ``target``: at most a quarter of a known window."""
    return max(min(target, int(window.tokens * OUTPUT_SHARE)), 1) if window else target


def prompt_room(window: ModelWindow, max_tokens: int, ratio: float = TOKEN_RATIO) -> int:
    """Tokens (as we count them) a request may hold in ``window`` beside an answer of ``max_tokens``."""
    return max(int((window.tokens - max_tokens - FIT_MARGIN) / ratio), 0)


def learned(exc: SummarizerError, counted: int, window: ModelWindow | None, ratio: float
            ) -> tuple[ModelWindow | None, float]:
    """The window and token ratio after an overflow refusal that said the server's figures."""
    if exc.context_window:
        window = ModelWindow(exc.context_window, "overflow error")
    if exc.prompt_tokens and counted > 0:
        ratio = exc.prompt_tokens / counted * 1.03
    return window, ratio


def state_budget(prompt: str, max_tokens: int | None) -> str:
    """The prompt with its ``{max_tokens}`` filled in (a prompt without one gets the budget sentence)."""
    if max_tokens is None:
        return prompt.replace("{max_tokens}", "the limit")
    if "{max_tokens}" not in prompt:
        prompt = f"{prompt.rstrip()}\n\n{BUDGET_SENTENCE}"
    return prompt.replace("{max_tokens}", f"{max_tokens:,}")


def snapshot_check(request: SummaryRequest, response: SummaryResponse) -> str | None:
    """The validity check of a state-snapshot reply (:func:`tcompact.summarizers.validity.snapshot_problem`)."""
    return snapshot_problem(response.text, contract=request.contract, prompt=request.prompt,
                            finish_reason=response.finish_reason, max_tokens=request.max_tokens)


class _Attempts:
    """The state of one summarised call across its attempts: the window and ratio learned, the retries."""

    def __init__(self, ctx: Context, window: ModelWindow | None = None) -> None:
        self.ctx = ctx
        self.window = window or model_window(ctx.summarizer)
        self.ratio = TOKEN_RATIO
        self.overflows = 0
        self.refused: int | None = None  # tokens (ours) of the first request refused as too big
        self.transient = 0
        self.calls: list[CallRecord] = []

    def send(self, request: SummaryRequest, span: Span, *, resample: bool, check: Check | None
             ) -> tuple[SummaryResponse | None, SummarizerError | None, SummaryRequest, float]:
        assert self.ctx.summarizer is not None
        if resample and (request.parameters.get("temperature") or 0) < RESAMPLE_TEMPERATURE:
            # a seed per attempt: each retry differs from the last, and a re-run gets the same answers back
            request = replace(request, parameters={**request.parameters, "temperature": RESAMPLE_TEMPERATURE,
                                                   "seed": len(self.calls)})
        request = self.ctx.summarizer.prepare(replace(request, window=self.window))
        started = self.ctx.clock()
        try:
            response = self.ctx.summarizer.summarize(request)
        except SummarizerError as exc:
            return None, exc, request, started
        trusted = self.ctx.summarizer.trusted
        problem = check(request, response) if check is not None and not trusted else None
        if problem:
            return response, SummarizerError("invalid_response", f"not a usable summary: {problem}",
                                             hint=refusal_hint(problem, request.processor)), request, started
        return response, None, request, started

    def record(self, request: SummaryRequest, response: SummaryResponse | None, error: SummarizerError | None,
               started: float, span: Span, *, retried: bool, reason: str) -> None:
        self.calls.append(CallRecord(request, response, error, len(self.calls) + 1, started, span, retried=retried,
                                     reason=reason))

    def again(self, exc: SummarizerError) -> tuple[bool, str]:
        """Whether a failure that is not an overflow is retried, and why."""
        if exc.kind in _RETRIABLE and self.transient < self.ctx.transient_retries:
            self.transient += 1
            if exc.kind != "invalid_response":
                self.ctx.sleep(_delay(exc, self.transient))
            return True, "reply refused: retrying" if exc.kind == "invalid_response" else f"transient {exc.kind}: retrying"
        if exc.kind == "invalid_response":
            return False, "every reply refused"
        return False, "transient retries exhausted" if exc.kind in _RETRIABLE else f"{exc.kind} is not retried"


def summarize(messages: Sequence[Message], span: Span, build: Callable[[Span], SummaryRequest], ctx: Context,
              *, fixed_tokens: Callable[[Span], int], shrink: bool = True, check: Check | None = snapshot_check,
              refit: Callable[[SummaryRequest, ModelWindow, float], SummaryRequest | None] | None = None,
              less: Callable[[SummaryRequest], SummaryRequest] | None = None,
              window: ModelWindow | None = None) -> Summary:
    """Call the summariser on ``build(span)`` with the policy above.

    ``shrink=False`` is for requests already fitted to their budget (round-level, the pieces of a
    model summary): an overflow is final unless the refusal says the server's window and ``refit``
    can fit the request to it. ``less``: the request that asks for a shorter answer, sent once —
    instead of a resampled retry — after a reply cut at its limit. ``window``: the summariser's
    window as the caller learned it (default: what the backend says).
    """
    state = _Attempts(ctx, window)
    asked_less = False
    counted = _counter(messages, ctx, fixed_tokens)
    if shrink:
        fitted = _fit_up_front(messages, span, build, state, counted, fixed_tokens)
        if isinstance(fitted, SummarizerError):
            return Summary(None, span, (), fitted)
        span = fitted
    request = _budgeted(build(span), state.window) if shrink else build(span)
    resample = False
    while True:
        response, exc, sent, started = state.send(request, span, resample=resample, check=check)
        if exc is None:
            state.record(sent, response, None, started, span, retried=False, reason="ok")
            return Summary(response, span, tuple(state.calls), None)
        if exc.kind == "context_overflow":
            step = _after_overflow(messages, span, request, exc, state, counted, build=build, shrink=shrink,
                                   refit=refit, fixed_tokens=fixed_tokens)
            retry, reason, next_span, next_request = step
        elif less is not None and not asked_less and exc.kind == "invalid_response" and "cut at" in exc.what:
            asked_less, resample = True, False
            retry, reason, next_span, next_request = True, "reply cut at its limit: asked again for less", span, \
                less(request)
        else:
            (retry, reason), next_span, next_request = state.again(exc), span, request
            resample = exc.kind == "invalid_response"
        state.record(sent, response, exc, started, span, retried=retry, reason=reason)
        if not retry:
            return Summary(None, span, tuple(state.calls), exc)
        span, request = next_span, next_request


def _counter(messages: Sequence[Message], ctx: Context, fixed_tokens: Callable[[Span], int]) -> Callable[[Span], int]:
    def counted(s: Span) -> int:
        return fixed_tokens(s) + sum(ctx.counter.message(messages[i]).total for i in s.body)

    return counted


def _budgeted(request: SummaryRequest, window: ModelWindow | None) -> SummaryRequest:
    budget = output_budget(request.target_tokens, window)
    return replace(request, max_tokens=budget, prompt=state_budget(request.prompt, budget))


def _fit_up_front(messages: Sequence[Message], span: Span, build: Callable[[Span], SummaryRequest],
                  state: _Attempts, counted: Callable[[Span], int], fixed_tokens: Callable[[Span], int]
                  ) -> Span | SummarizerError:
    """The span whose request fits the summariser's known window (the span itself when none is known)."""
    if state.window is None:
        return span
    room = prompt_room(state.window, output_budget(build(span).target_tokens, state.window), state.ratio)
    if counted(span) <= room:
        return span
    smaller = shrink_span(messages, span, budget=room, fixed=fixed_tokens(span), counter=state.ctx.counter)
    if smaller is not None and counted(smaller) <= room:
        return smaller
    return SummarizerError("context_overflow", f"the request ({counted(span):,} tokens as counted here) does not fit "
                           f"the summariser's context window of {state.window.tokens:,} tokens (from "
                           f"{state.window.source}) beside its answer, and no smaller span does",
                           hint="use a model with a larger context, or lower summary_max_tokens")


def _after_overflow(messages: Sequence[Message], span: Span, request: SummaryRequest, exc: SummarizerError,
                    state: _Attempts, counted: Callable[[Span], int], *, build: Callable[[Span], SummaryRequest],
                    shrink: bool, refit, fixed_tokens: Callable[[Span], int]
                    ) -> tuple[bool, str, Span, SummaryRequest]:
    """What follows a context-overflow refusal: retry with a smaller span (or a refitted request), or stop."""
    if state.overflows >= len(OVERFLOW_BUDGETS):
        return False, "overflow retries exhausted", span, request
    size = counted(span) if shrink else state.ctx.counter.count(request.system or "") + \
        state.ctx.counter.count(request.prompt) + 8
    had = state.window
    state.refused = state.refused or size
    state.window, state.ratio = learned(exc, size, state.window, state.ratio)
    told = state.window is not None and (exc.context_window is not None or exc.prompt_tokens is not None)
    if not shrink:
        fitted = refit(request, state.window, state.ratio) if refit is not None and told else None
        if fitted is None:
            return False, "context overflow on a request fitted to its budget", span, request
        state.overflows += 1
        return True, f"context overflow: refitted to the server's window of {state.window.tokens:,} tokens", span, \
            fitted
    ratio = OVERFLOW_BUDGETS[state.overflows]
    state.overflows += 1
    target = build(span).target_tokens
    if told:
        budget = prompt_room(state.window, output_budget(target, state.window), state.ratio)
        reason = f"context overflow: body shrunk to fit the server's window of {state.window.tokens:,} tokens"
    elif had is not None:
        budget = max(int(prompt_room(had, output_budget(target, had), state.ratio) * ratio), 1)
        reason = f"context overflow: body shrunk to fit {ratio} of the summariser's window"
    else:
        budget = max(int(state.refused * ratio), 1)
        reason = f"context overflow: body shrunk to fit {ratio} of the first refused request's {state.refused:,} tokens"
    smaller = shrink_span(messages, span, budget=budget, fixed=fixed_tokens(span), counter=state.ctx.counter)
    if smaller is None:
        return False, "no smaller span", span, request
    if told and counted(smaller) > budget:  # the server said its figures: a request still too big would be refused
        return False, f"no span fits the server's window of {state.window.tokens:,} tokens (the smallest counts " \
            f"{counted(smaller):,} here, room for {budget:,})", span, request
    return True, reason, smaller, _budgeted(build(smaller), state.window)


def refusal_hint(problem: str, processor: str) -> str:
    """What to do about a refused reply."""
    if "cut at" in problem:
        return (f"raise summary_max_tokens (--set {processor}.summary_max_tokens=N) or use a model that writes "
                "shorter")
    return "use a larger model: this one does not follow the summary prompt"


def _delay(exc: SummarizerError, n: int) -> float:
    if exc.retry_after is not None and exc.retry_after >= 0:
        return min(exc.retry_after, _MAX_RETRY_AFTER)
    return 0.05 * 2 ** (n - 1)


def shrink_span(messages: Sequence[Message], span: Span, *, budget: int, fixed: int, counter) -> Span | None:
    """A span whose body is a prefix of the old body that fits ``budget - fixed`` tokens.

    At least one message moves to the tail; the new cut is moved back to a legal cut point so
    that no tool call is separated from its result. None when no smaller body is possible.
    """
    body = list(span.body)
    room = budget - fixed
    if room <= 0 or len(body) <= 1:
        return None
    fit, used = 0, 0
    for i in body:
        used += counter.message(messages[i]).total
        if used > room:
            break
        fit += 1
    fit = min(max(fit, 1), len(body) - 1)
    cut = span.body.start + fit
    legal = [c for c in legal_cut_points(messages) if span.body.start < c <= cut]
    if not legal:
        return None
    return Span.from_cuts(len(messages), span.body.start, legal[-1])
