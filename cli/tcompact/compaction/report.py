"""The token report of a compaction: a plain JSON-ready dict with a documented, stable shape.

Before and after totals, one entry per compressor of the chain (tokens and messages before and
after, whether it acted and why, summariser calls with their outcome and usage, the span), and the
summariser totals. The terminal table in :mod:`tcompact.render` draws the same dict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

from .. import __version__
from ..counting.tokens import TokenCounter

__all__ = ["REPORT_SCHEMA_VERSION", "compact_report", "CompactReport", "StageReport", "CallRow", "Size", "StageSpan",
           "SummarizerTotals"]

REPORT_SCHEMA_VERSION = 1
_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


class Size(TypedDict):
    messages: int
    tokens: int


class StageSpan(TypedDict):
    """Where a compressor cut the transcript: ``[start, stop)`` of each part."""

    prefix: list[int]
    body: list[int]
    tail: list[int]


class CallRow(TypedDict):
    """One summariser call of a stage: its attempt number, outcome and latency."""

    number: int
    status: str
    error_kind: str | None
    reason: str | None
    latency_s: float | None


class StageReport(TypedDict):
    """One compressor of the chain: its settings, whether it acted and why, its figures and calls."""

    processor: str
    settings: dict[str, Any]
    applied: bool
    failed: bool
    reason: str | None
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    span: StageSpan | None
    calls: list[CallRow]
    offloaded: int
    notes: list[str]
    pipeline: Any


class SummarizerTotals(TypedDict):
    name: str | None
    calls: int
    failed_calls: int
    usage: dict[str, int] | None


class CompactReport(TypedDict):
    """The report (README, "compact report schema"); the run adds ``reason``, ``invariants`` and ``notes``
    (:mod:`tcompact.compaction.chain`), the written report ``outputs`` (:mod:`tcompact.compaction.writing`)."""

    tool: str
    version: str
    schema_version: int
    status: str
    source: dict[str, Any]
    output_format: str
    encoding: str
    approximate: bool
    context_window: int
    before: Size
    after: Size
    stages: list[StageReport]
    summarizer: SummarizerTotals
    reason: NotRequired[str | None]
    invariants: NotRequired[list[str]]
    notes: NotRequired[list[str]]
    outputs: NotRequired[Any]


def compact_report(*, source: Mapping[str, Any], stages: Sequence[Any], status: str, window: int,
                   counter: TokenCounter, summarizer: str | None, output_format: str) -> CompactReport:
    """The report dict (README, "compact report schema")."""
    first, last = stages[0], stages[-1]
    after_messages = last.result.messages if status == "compacted" else first.before
    calls = [c for s in stages for c in s.result.calls]
    return {
        "tool": "tcompact",
        "version": __version__,
        "schema_version": REPORT_SCHEMA_VERSION,
        "status": status,
        "source": dict(source),
        "output_format": output_format,
        "encoding": counter.encoding_name,
        "approximate": counter.approximate,
        "context_window": window,
        "before": {"messages": len(first.before), "tokens": first.result.tokens_before},
        "after": {"messages": len(after_messages),
                  "tokens": last.result.tokens_after if status == "compacted" else first.result.tokens_before},
        "stages": [_stage(s) for s in stages],
        "summarizer": {"name": summarizer, "calls": len(calls), "failed_calls": sum(1 for c in calls if c.error),
                       "usage": _usage(c.response.usage for c in calls if c.response and c.response.usage)},
    }


def _stage(stage: Any) -> StageReport:
    r = stage.result
    span = r.span
    return {
        "processor": r.processor,
        "settings": stage.settings.model_dump(mode="json"),
        "applied": r.applied,
        "failed": r.failed,
        "reason": r.reason,
        "messages_before": len(stage.before),
        "messages_after": len(r.messages),
        "tokens_before": r.tokens_before,
        "tokens_after": r.tokens_after,
        "span": None if span is None else {"prefix": [span.prefix.start, span.prefix.stop],
                                           "body": [span.body.start, span.body.stop],
                                           "tail": [span.tail.start, span.tail.stop]},
        "calls": [{"number": c.attempt, "status": "failed" if c.error else "ok",
                   "error_kind": c.error.kind if c.error else None, "reason": c.reason,
                   "latency_s": round(c.response.latency_s, 6) if c.response else None} for c in r.calls],
        "offloaded": len(r.blobs),
        "notes": list(r.notes),
        "pipeline": r.figures.get("stages"),
    }


def _usage(usages: Any) -> dict[str, int] | None:
    total: dict[str, int] = {}
    seen = False
    for u in usages:
        seen = True
        for key in _USAGE_KEYS:
            if isinstance(u.get(key), int):
                total[key] = total.get(key, 0) + u[key]
    return total if seen else None
