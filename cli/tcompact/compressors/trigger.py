"""When a summarising compressor acts: the trigger of openjiuwen-spec §2.2, with its outcomes named.

A compressor acts at ``int(window × trigger_ratio)`` tokens when the body of its span holds at least
``int(window × min_target_ratio)`` (``--now`` skips both checks, a span must still hold something).
The trigger belongs to the compressors; how the summariser is then called — retries, overflow,
fitting to its window — is the summarisers' (:mod:`tcompact.summarizers.calls`).
"""

from __future__ import annotations

from enum import Enum

from ..counting.windows import ratio_threshold
from .base import Trigger

__all__ = ["Outcome", "decide", "refusal", "trigger_figures", "trigger_reason"]


class Outcome(Enum):
    """What the trigger decided; the value begins the reason a compressor left alone gives."""

    ACTS = "acts"
    NO_SPAN = "no compressible span"
    BELOW_THRESHOLD = "below the threshold"
    BELOW_MINIMUM = "the compressible part is below the minimum target"


def trigger_figures(total: int, body_tokens: int, *, window: int, trigger_ratio: float, min_target_ratio: float,
                    force: bool) -> Trigger:
    """The figures of the spec §2.2 trigger: act at ``int(window × trigger_ratio)`` tokens when the body holds
    at least ``int(window × min_target_ratio)``."""
    return Trigger(context_window=window, total_tokens_before=total, trigger_ratio=trigger_ratio,
                   threshold=ratio_threshold(window, trigger_ratio), body_tokens=body_tokens,
                   min_target_tokens=int(window * min_target_ratio), forced=force)


def decide(trigger: Trigger, *, empty: bool) -> Outcome:
    """What a compressor with these trigger figures does (``empty``: its span's body holds nothing)."""
    if empty:
        return Outcome.NO_SPAN
    if trigger.forced:
        return Outcome.ACTS
    if trigger.total_tokens_before < trigger.threshold:
        return Outcome.BELOW_THRESHOLD
    minimum = trigger.min_target_tokens
    return Outcome.BELOW_MINIMUM if minimum is not None and trigger.body_tokens < minimum else Outcome.ACTS


def refusal(trigger: Trigger, *, empty: bool) -> str | None:
    """Why a compressor with these trigger figures should not run (the outcome with its figures), or None."""
    outcome = decide(trigger, empty=empty)
    if outcome is Outcome.BELOW_THRESHOLD:
        return f"{outcome.value} ({trigger.total_tokens_before:,} < {trigger.threshold:,} tokens)"
    if outcome is Outcome.BELOW_MINIMUM:
        return f"{outcome.value} ({trigger.body_tokens:,} < {trigger.min_target_tokens:,} tokens)"
    return None if outcome is Outcome.ACTS else outcome.value


def trigger_reason(total: int, body_tokens: int, *, window: int, trigger_ratio: float, min_target_ratio: float,
                   force: bool, empty: bool) -> str | None:
    """Why the compressor should not run, or None when it should (spec §2.2)."""
    figures = trigger_figures(total, body_tokens, window=window, trigger_ratio=trigger_ratio,
                              min_target_ratio=min_target_ratio, force=force)
    return refusal(figures, empty=empty)
