"""Calling a summariser the way openjiuwen-spec §2.10 describes, with our fixes: the summarisers' call,
retry and overflow policy (when a compressor calls is its trigger: :mod:`tcompact.compressors.trigger`).

* The request is fitted to the summariser model's own window before the first call
  (:mod:`.fitting`); when no span fits, no call is made and the call fails.
* A context overflow shrinks the body and re-aligns the cut to a legal cut point, so a tool call
  never loses its result (upstream can orphan one). The size comes from the refusal when it says
  the server's window and the prompt's size in its tokens (llama.cpp, vLLM, OpenAI): the ratio of
  its count to ours replaces TOKEN_RATIO. A refusal without figures shrinks to 0.85, 0.65, then 0.5
  of the first refused request (of the room in the summariser's window when that is known). Three
  overflow retries at most.
* Transient errors and empty replies are retried with the same request after 0.05 s, 0.1 s — or
  after the server's Retry-After (``transient_retries`` times, default 2); authentication and bad
  requests stop at once.
* Refused replies (:mod:`tcompact.summarizers.validity`: empty, cut at the limit, the prompt echoed,
  a loop, no section; not checked for a ``trusted`` backend, the extractive one) count as
  ``invalid_response`` and are retried at once within the same retry allowance, at temperature
  ``RESAMPLE_TEMPERATURE`` with the attempt's number as ``seed`` (a deterministic model would say
  the same again at 0; the seed keeps re-runs reproducible where the server honours it); when every
  attempt is refused the call fails.

Each failed attempt ends in a :class:`Step` (the next attempt, or none, and why); every attempt,
failed or not, becomes a :class:`CallRecord` (one dump each).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ..model import Message
from ..spans import Span
from .base import TRANSIENT_KINDS, ModelWindow, Summarizer, SummarizerError, SummaryRequest, SummaryResponse
from .fitting import OVERFLOW_BUDGETS, TOKEN_RATIO, learned, output_budget, prompt_room, shrink_span, state_budget
from .validity import snapshot_problem

__all__ = ["CallContext", "CallRecord", "Check", "RESAMPLE_TEMPERATURE", "Step", "Summary", "refusal_hint",
           "snapshot_check", "summarize"]

RESAMPLE_TEMPERATURE = 0.7
_RETRIABLE = TRANSIENT_KINDS | {"empty_response", "invalid_response"}
_MAX_RETRY_AFTER = 60.0

Check = Callable[[SummaryRequest, SummaryResponse], "str | None"]


class CallContext(Protocol):
    """What a call needs of its caller (:class:`tcompact.compressors.base.Context` is one)."""

    counter: Any
    summarizer: Summarizer | None
    transient_retries: int
    sleep: Callable[[float], None]
    clock: Callable[[], float]


@dataclass(frozen=True)
class CallRecord:
    """One summariser call: the request, the response or error, and what came of it."""

    request: SummaryRequest
    response: SummaryResponse | None
    error: SummarizerError | None
    attempt: int
    started: float
    span: Span
    retried: bool = False
    reason: str = ""


@dataclass(frozen=True)
class Summary:
    """What :func:`summarize` got: the response (None on failure), the span actually used, the calls."""

    response: SummaryResponse | None
    span: Span
    calls: tuple[CallRecord, ...]
    error: SummarizerError | None


@dataclass(frozen=True)
class Step:
    """What follows a failed attempt: another with ``span`` and ``request`` (``retry``), or none; and why."""

    retry: bool
    reason: str
    span: Span
    request: SummaryRequest


@dataclass(frozen=True)
class _Attempt:
    """One attempt: the request as sent, the reply (None when there was none) and the failure."""

    request: SummaryRequest
    response: SummaryResponse | None
    error: SummarizerError | None
    started: float


def snapshot_check(request: SummaryRequest, response: SummaryResponse) -> str | None:
    """The validity check of a state-snapshot reply (:func:`tcompact.summarizers.validity.snapshot_problem`)."""
    return snapshot_problem(response.text, contract=request.contract, prompt=request.prompt,
                            finish_reason=response.finish_reason, max_tokens=request.max_tokens)


def summarize(messages: Sequence[Message], span: Span, build: Callable[[Span], SummaryRequest], ctx: CallContext,
              *, fixed_tokens: Callable[[Span], int], shrink: bool = True, check: Check | None = snapshot_check,
              refit: Callable[[SummaryRequest, ModelWindow, float], SummaryRequest | None] | None = None,
              less: Callable[[SummaryRequest], SummaryRequest] | None = None,
              window: ModelWindow | None = None, meanwhile: Callable[[], object] | None = None) -> Summary:
    """Call the summariser on ``build(span)`` with the policy above.

    ``shrink=False`` is for requests already fitted to their budget (round-level, the pieces of a
    model summary): an overflow is final unless the refusal says the server's window and ``refit``
    can fit the request to it. ``less``: the request that asks for a shorter answer, sent once —
    instead of a resampled retry — after a reply cut at its limit. ``window``: the summariser's
    window as the caller learned it (default: what the backend says). ``meanwhile``: the caller's work
    that does not need the answer, done once the summariser is told the first request
    (:meth:`~tcompact.summarizers.base.Summarizer.answer_ahead`: the extractive one answers it in a copy of
    the process meanwhile).
    """
    assert ctx.summarizer is not None
    call = _Call(messages, build, ctx, fixed_tokens=fixed_tokens, shrink=shrink, check=check, refit=refit, less=less,
                 window=window or ctx.summarizer.context_window())
    if shrink:
        fitted = call.fit_up_front(span)
        if isinstance(fitted, SummarizerError):
            return Summary(None, span, (), fitted)
        span = fitted
    request = call.budgeted(build(span)) if shrink else build(span)
    if meanwhile is not None:
        ctx.summarizer.answer_ahead([call.sent(request)])
        meanwhile()
    while True:
        attempt = call.send(request)
        if attempt.error is None:
            call.record(attempt, span, retried=False, reason="ok")
            return Summary(attempt.response, span, tuple(call.calls), None)
        step = call.after(attempt.error, span, request)
        call.record(attempt, span, retried=step.retry, reason=step.reason)
        if not step.retry:
            return Summary(None, span, tuple(call.calls), attempt.error)
        span, request = step.span, step.request


class _Call:
    """One summarised call across its attempts: what it is built from, the window and ratio learned, the retries."""

    def __init__(self, messages: Sequence[Message], build: Callable[[Span], SummaryRequest], ctx: CallContext, *,
                 fixed_tokens: Callable[[Span], int], shrink: bool, check: Check | None, refit: Any, less: Any,
                 window: ModelWindow | None) -> None:
        assert ctx.summarizer is not None
        self.messages, self.build, self.ctx, self.summarizer = messages, build, ctx, ctx.summarizer
        self.fixed_tokens, self.shrink, self.check, self.refit, self.less = fixed_tokens, shrink, check, refit, less
        self.window, self.ratio = window, TOKEN_RATIO
        self.overflows = self.transient = 0
        self.refused: int | None = None  # tokens (ours) of the first request refused as too big
        self.resample = self.asked_less = False
        self.calls: list[CallRecord] = []

    def counted(self, span: Span) -> int:
        """Tokens (ours) of the request for ``span``: its fixed part and its body."""
        return self.fixed_tokens(span) + sum(self.ctx.counter.message(self.messages[i]).total for i in span.body)

    def budgeted(self, request: SummaryRequest) -> SummaryRequest:
        """The request with its answer's budget for the window known (sent as ``max_tokens``, stated in the prompt)."""
        budget = output_budget(request.target_tokens, self.window)
        return replace(request, max_tokens=budget, prompt=state_budget(request.prompt, budget))

    def send(self, request: SummaryRequest) -> _Attempt:
        if self.resample and (request.parameters.get("temperature") or 0) < RESAMPLE_TEMPERATURE:
            # a seed per attempt: each retry differs from the last, and a re-run gets the same answers back
            request = replace(request, parameters={**request.parameters, "temperature": RESAMPLE_TEMPERATURE,
                                                   "seed": len(self.calls)})
        request = self.sent(request)
        started = self.ctx.clock()
        try:
            response = self.summarizer.summarize(request)
        except SummarizerError as exc:
            return _Attempt(request, None, exc, started)
        problem = self.check(request, response) if self.check is not None and not self.summarizer.trusted else None
        if problem:
            return _Attempt(request, response, SummarizerError(
                "invalid_response", f"not a usable summary: {problem}", hint=refusal_hint(problem, request.processor)),
                started)
        return _Attempt(request, response, None, started)

    def sent(self, request: SummaryRequest) -> SummaryRequest:
        """The request as the backend gets it: the window known, the model and parameters it sends."""
        return self.summarizer.prepare(replace(request, window=self.window))

    def record(self, attempt: _Attempt, span: Span, *, retried: bool, reason: str) -> None:
        self.calls.append(CallRecord(attempt.request, attempt.response, attempt.error, len(self.calls) + 1,
                                     attempt.started, span, retried=retried, reason=reason))

    def after(self, exc: SummarizerError, span: Span, request: SummaryRequest) -> Step:
        """What follows the failure ``exc`` of the request for ``span``."""
        if exc.kind == "context_overflow":
            return self.after_overflow(exc, span, request)
        if self.less is not None and not self.asked_less and exc.kind == "invalid_response" and "cut at" in exc.what:
            self.asked_less, self.resample = True, False
            return Step(True, "reply cut at its limit: asked again for less", span, self.less(request))
        self.resample = exc.kind == "invalid_response"
        return Step(*self.again(exc), span, request)

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

    def fit_up_front(self, span: Span) -> Span | SummarizerError:
        """The span whose request fits the summariser's known window (the span itself when none is known)."""
        if self.window is None:
            return span
        room = prompt_room(self.window, output_budget(self.build(span).target_tokens, self.window), self.ratio)
        if self.counted(span) <= room:
            return span
        smaller = shrink_span(self.messages, span, budget=room, fixed=self.fixed_tokens(span), counter=self.ctx.counter)
        if smaller is not None and self.counted(smaller) <= room:
            return smaller
        return SummarizerError("context_overflow", f"the request ({self.counted(span):,} tokens as counted here) does "
                               f"not fit the summariser's context window of {self.window.tokens:,} tokens (from "
                               f"{self.window.source}) beside its answer, and no smaller span does",
                               hint="use a model with a larger context, or lower summary_max_tokens")

    def after_overflow(self, exc: SummarizerError, span: Span, request: SummaryRequest) -> Step:
        """What follows a context-overflow refusal: retry with a smaller span (or a refitted request), or stop."""
        stop = Step(False, "overflow retries exhausted", span, request)
        if self.overflows >= len(OVERFLOW_BUDGETS):
            return stop
        counter = self.ctx.counter
        size = self.counted(span) if self.shrink else \
            counter.count(request.system or "") + counter.count(request.prompt) + 8
        had = self.window
        self.refused = self.refused or size
        self.window, self.ratio = learned(exc, size, self.window, self.ratio)
        told = self.window is not None and (exc.context_window is not None or exc.prompt_tokens is not None)
        if not self.shrink:
            return self._refitted(request, stop, told=told)
        return self._shrunk(span, stop, told=told, had=had)

    def _refitted(self, request: SummaryRequest, stop: Step, *, told: bool) -> Step:
        fitted = self.refit(request, self.window, self.ratio) if self.refit is not None and told else None
        if fitted is None:
            return replace(stop, reason="context overflow on a request fitted to its budget")
        self.overflows += 1
        assert self.window is not None
        return Step(True, f"context overflow: refitted to the server's window of {self.window.tokens:,} tokens",
                    stop.span, fitted)

    def _shrunk(self, span: Span, stop: Step, *, told: bool, had: ModelWindow | None) -> Step:
        ratio = OVERFLOW_BUDGETS[self.overflows]
        self.overflows += 1
        target = self.build(span).target_tokens
        if told:
            assert self.window is not None
            budget = prompt_room(self.window, output_budget(target, self.window), self.ratio)
            reason = f"context overflow: body shrunk to fit the server's window of {self.window.tokens:,} tokens"
        elif had is not None:
            budget = max(int(prompt_room(had, output_budget(target, had), self.ratio) * ratio), 1)
            reason = f"context overflow: body shrunk to fit {ratio} of the summariser's window"
        else:
            assert self.refused is not None
            budget = max(int(self.refused * ratio), 1)
            reason = f"context overflow: body shrunk to fit {ratio} of the first refused request's {self.refused:,} tokens"
        smaller = shrink_span(self.messages, span, budget=budget, fixed=self.fixed_tokens(span), counter=self.ctx.counter)
        if smaller is None:
            return replace(stop, reason="no smaller span")
        if told and self.counted(smaller) > budget:  # the server said its figures: a request still too big is refused
            assert self.window is not None
            return replace(stop, reason=f"no span fits the server's window of {self.window.tokens:,} tokens (the "
                           f"smallest counts {self.counted(smaller):,} here, room for {budget:,})")
        return Step(True, reason, smaller, self.budgeted(self.build(smaller)))


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
