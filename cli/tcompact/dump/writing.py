"""Building the dumps of a compressor run, one document at a time (redacted, hashed)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

from .. import __version__
from ..compressors.base import CallRecord, CompressionResult, Settings
from ..model import Message
from ..redact import redact_value
from ..spans import Span
from ..counting.tokens import TokenCounter
from .ahead import DumpsAhead
from .values import SCHEMA_VERSION, content_hashes, digest, dump_name, message_dict, safe_name

__all__ = ["DumpContext", "build_dumps", "iter_dumps"]


@dataclass(frozen=True)
class DumpContext:
    """What a dump records besides the call and its compressor's result: the session, the source, the summariser."""

    session: str
    source: Mapping[str, Any]
    summarizer: str
    preserve: str | None = None
    ahead: DumpsAhead | None = field(default=None, compare=False, repr=False)


def build_dumps(result: CompressionResult, *, before: Sequence[Message], settings: Settings, counter: TokenCounter,
                ctx: DumpContext) -> list[tuple[str, dict[str, Any]]]:
    """``(file name, document)`` for each summariser call of a compressor run."""
    return list(iter_dumps(result, before=before, settings=settings, counter=counter, ctx=ctx))


def iter_dumps(result: CompressionResult, *, before: Sequence[Message], settings: Settings, counter: TokenCounter,
               ctx: DumpContext) -> Iterator[tuple[str, dict[str, Any]]]:
    """:func:`build_dumps` one document at a time, so a writer holds one at once."""
    used: set[str] = set()
    cache = _Redacted()  # the same texts appear in every dump of a run, and several times in each
    attempts = [_attempt(c) for c in result.calls]
    run_id = f"{int(result.calls[0].started * 1000)}-{safe_name(result.processor)}-{safe_name(ctx.session)}" \
        if result.calls else ""
    shared: dict[str, Any] | None = None
    leaf = ctx.ahead.leaf() if ctx.ahead is not None and result.calls else None  # what was redacted meanwhile
    for n, call in enumerate(result.calls, start=1):
        doc = _document(call, result, number=n, before=before, with_context=shared is None, settings=settings,
                        counter=counter, ctx=ctx, attempts=attempts)
        doc = {**doc, "run": {"id": run_id, "call": n, "calls": len(result.calls)}}
        before_sha = None  # the run's context is hashed once, for the shared record and this dump's hashes
        if shared is None:
            doc, before_sha = _first(doc, cache, ctx.ahead, before, leaf)
            shared = {"in_call": n, "messages_sha256": before_sha, "total_tokens": result.tokens_before}
        else:
            doc = redact_value(doc, cache, leaf=leaf)
            doc["context_before"] = shared
        doc["redactions"] = cache.changed
        doc["hashes"] = content_hashes(doc, context_before=before_sha)
        name = dump_name(int(call.started * 1000), result.processor, ctx.session)
        if name in used:  # calls started in the same millisecond (concurrent round-level calls)
            name = f"{name[:-5]}-{n}.json"
        used.add(name)
        yield name, doc


def _first(doc: dict[str, Any], cache: dict[str, str], ahead: DumpsAhead | None, before: Sequence[Message],
           leaf: Callable[[str], str] | None) -> tuple[dict[str, Any], str]:
    """The first dump redacted, and the digest of its context: the context's strings first, from the
    redaction made ahead when there is one (:mod:`.ahead`), so that the rest finds them done."""
    made = ahead.redaction(before) if ahead is not None else None
    if made is None:
        doc = redact_value(doc, cache, leaf=leaf)
        return doc, digest(doc["context_before"]["messages"])
    changed, sha = made
    context = redact_value(doc["context_before"], cache, leaf=lambda text: changed.get(text, text))
    doc = redact_value({**doc, "context_before": None}, cache, leaf=leaf)
    doc["context_before"] = context
    return doc, sha


class _Redacted(dict):
    """The redaction of each text of a run's dumps, and how many of them redaction changed (counted as they
    are added: counting them again for each dump made a run of many calls quadratic)."""

    changed = 0

    def __setitem__(self, raw: str, clean: str) -> None:
        if raw not in self and raw != clean:
            self.changed += 1
        super().__setitem__(raw, clean)


def _document(call: CallRecord, result: CompressionResult, *, number: int, before: Sequence[Message],
              with_context: bool, settings: Settings, counter: TokenCounter, ctx: DumpContext,
              attempts: list[dict[str, Any]]) -> dict[str, Any]:
    final = call is result.calls[-1]
    accepted = result.applied and final and call.error is None
    after_tokens = result.tokens_after if accepted else result.figures.get("rejected_tokens_after")
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "tcompact", "version": __version__},
        "processor": {"name": result.processor, "settings": settings.model_dump(mode="json")},
        "session_id": ctx.session,
        "source": dict(ctx.source),
        "encoding": {"name": counter.encoding_name, "approximate": counter.approximate},
        "call": {"number": number, "attempt": call.attempt, "of": len(result.calls),
                 "status": "failed" if call.error else "ok",
                 "retried": call.retried, "reason": call.reason},
        "trigger": asdict(result.trigger) if result.trigger is not None else None,
        "span": _span(call.span),
        "request": _request(call, ctx),
        "response": _response(call),
        "error": _error(call),
        "attempts": attempts,
        "context_before": {"messages": [message_dict(m) for m in before], "total_tokens": result.tokens_before}
        if with_context else None,
        "context_after": ({"messages": [message_dict(m) for m in result.messages], "total_tokens_after": result.tokens_after}
                          if accepted else None),
        "benefit": _benefit(result.tokens_before, after_tokens, accepted, result.reason if final else call.reason),
        "timestamp": call.started,
        "created_at": datetime.fromtimestamp(call.started, timezone.utc).isoformat(timespec="milliseconds"),
    }


def _request(call: CallRecord, ctx: DumpContext) -> dict[str, Any]:
    """What was asked of the summariser: the backend, model and parameters, the fitting, the prompt and
    the messages sent."""
    req = call.request
    return {"summarizer": ctx.summarizer, "model": req.model, "parameters": dict(req.parameters),
            "max_tokens": req.max_tokens, "summarizer_window": asdict(req.window) if req.window else None,
            "mode": req.mode,
            "contract": req.contract, "prompt": req.prompt, "target_tokens": req.target_tokens,
            "exclude_recent_messages": len(call.span.tail), "messages_sent": req.wire_messages(),
            "stage": req.stage, "blocks": [asdict(b) for b in req.blocks], "preserve": ctx.preserve}


def _response(call: CallRecord) -> dict[str, Any] | None:
    """The answer, when there was one: its text, the summary extracted from it, usage and timings."""
    r = call.response
    if r is None:
        return None
    return {"raw_content": r.text, "extracted_summary": _extracted(r.text, call.request.prompt),
            "usage": dict(r.usage) if r.usage else None, "model": r.model,
            "latency_s": round(r.latency_s, 6), "finish_reason": r.finish_reason,
            "timings": dict(r.timings) if r.timings else None}


def _error(call: CallRecord) -> dict[str, Any] | None:
    """The call's error, when it failed: its kind, message and the server's figures."""
    e = call.error
    if e is None:
        return None
    return {"kind": e.kind, "message": e.what, "status": e.status, "retry_after": e.retry_after,
            "context_window": e.context_window, "prompt_tokens": e.prompt_tokens}


def _attempt(call: CallRecord) -> dict[str, Any]:
    return {"number": call.attempt, "status": "failed" if call.error else "ok",
            "error_kind": call.error.kind if call.error else None,
            "latency_s": round(call.response.latency_s, 6) if call.response else None, "reason": call.reason}


def _span(span: Span) -> dict[str, Any]:
    def part(r: range) -> dict[str, int]:
        return {"start": r.start, "end": r.stop, "count": len(r)}

    return {"prefix": part(span.prefix), "body": part(span.body), "tail": part(span.tail),
            "preserved_prefix_count": len(span.prefix), "messages_to_compress_count": len(span.body),
            "protected_tail_count": len(span.tail)}


def _benefit(before: int, after: int | None, accepted: bool, reason: str) -> dict[str, Any]:
    reduction = max(before - after, 0) if after is not None else None
    ratio = round(reduction / before, 4) if reduction is not None and before else 0.0
    return {"tokens_before": before, "tokens_after": after, "reduction": reduction, "reduction_ratio": ratio,
            "accepted": accepted, "reason": reason}


def _extracted(text: str, prompt: str) -> str:
    from ..summarizers.contracts import extract_snapshot

    return extract_snapshot(text, prompt)
