"""Calling a summariser the way openjiuwen-spec §2.2 and §2.10 describe, with our fixes.

* Trigger: total ≥ ``int(window × trigger_ratio)`` and body ≥ ``int(window × min_target_ratio)``.
* Retries: a context overflow shrinks the body (budgets 0.85, 0.65, 0.5 of the window) and
  re-aligns the cut to a legal cut point, so a tool call never loses its result (upstream can
  orphan one); transient errors and empty replies are retried twice with the same request after
  0.05 s, 0.1 s — or after the server's Retry-After (``Context.transient_retries`` times, default 2);
  authentication and bad requests stop at once.
Every call, failed or not, becomes a :class:`CallRecord` (one dump each).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..model import Message
from ..spans import Span, legal_cut_points
from ..summarizers.base import TRANSIENT_KINDS, SummaryRequest, SummaryResponse, SummarizerError
from ..windows import ratio_threshold
from .base import CallRecord, Context

__all__ = ["OVERFLOW_BUDGETS", "TRIGGER_REASONS", "trigger_reason", "Summary", "summarize", "shrink_span"]

OVERFLOW_BUDGETS = (0.85, 0.65, 0.5)
_RETRIABLE = TRANSIENT_KINDS | {"empty_response"}
_MAX_RETRY_AFTER = 60.0


#: How the reasons of a compressor left below its trigger begin (``--force`` acts anyway).
TRIGGER_REASONS = ("below the threshold", "the compressible part is below the minimum target")


def trigger_reason(total: int, body_tokens: int, *, window: int, trigger_ratio: float, min_target_ratio: float,
                   force: bool, empty: bool) -> str | None:
    """Why the compressor should not run, or None when it should (spec §2.2)."""
    if empty:
        return "no compressible span"
    if force:
        return None
    threshold = ratio_threshold(window, trigger_ratio)
    if total < threshold:
        return f"below the threshold ({total:,} < {threshold:,} tokens)"
    minimum = int(window * min_target_ratio)
    if body_tokens < minimum:
        return f"the compressible part is below the minimum target ({body_tokens:,} < {minimum:,} tokens)"
    return None


@dataclass(frozen=True)
class Summary:
    """What :func:`summarize` got: the response (None on failure), the span actually used, the calls."""

    response: SummaryResponse | None
    span: Span
    calls: tuple[CallRecord, ...]
    error: SummarizerError | None


def summarize(messages: Sequence[Message], span: Span, build: Callable[[Span], SummaryRequest], ctx: Context,
              *, fixed_tokens: Callable[[Span], int], shrink: bool = True) -> Summary:
    """Call the summariser on ``build(span)`` with the retry policy above (``shrink=False``: a
    context overflow is final, for requests already fitted to their budget)."""
    assert ctx.summarizer is not None
    calls: list[CallRecord] = []
    budgets = list(OVERFLOW_BUDGETS) if shrink else []
    transient = 0
    while True:
        request = build(span)
        started = ctx.clock()
        try:
            response = ctx.summarizer.summarize(request)
        except SummarizerError as exc:
            if exc.kind == "context_overflow" and not shrink:
                retry, reason, next_span = False, "context overflow on a request fitted to its budget", span
            else:
                retry, reason, next_span = _next_step(exc, messages, span, budgets, transient, ctx, fixed_tokens)
            calls.append(CallRecord(request, None, exc, len(calls) + 1, started, span, retried=retry, reason=reason))
            if not retry:
                return Summary(None, span, tuple(calls), exc)
            if exc.kind != "context_overflow":
                transient += 1
                ctx.sleep(_delay(exc, transient))
            span = next_span
            continue
        calls.append(CallRecord(request, response, None, len(calls) + 1, started, span, reason="ok"))
        return Summary(response, span, tuple(calls), None)


def _next_step(exc: SummarizerError, messages: Sequence[Message], span: Span, budgets: list[float],
               transient: int, ctx: Context, fixed_tokens: Callable[[Span], int]) -> tuple[bool, str, Span]:
    if exc.kind == "context_overflow":
        while budgets:
            ratio = budgets.pop(0)
            smaller = shrink_span(messages, span, budget=max(int(ctx.window * ratio), 1),
                                  fixed=fixed_tokens(span), counter=ctx.counter)
            if smaller is None:
                return False, "no smaller span", span
            return True, f"context overflow: body shrunk to fit {ratio} of the window", smaller
        return False, "overflow retries exhausted", span
    if exc.kind in _RETRIABLE and transient < ctx.transient_retries:
        return True, f"transient {exc.kind}: retrying", span
    if exc.kind in _RETRIABLE:
        return False, "transient retries exhausted", span
    return False, f"{exc.kind} is not retried", span


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
