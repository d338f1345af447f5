"""Running a chain of compressors over one transcript and preparing — without writing anything — the
compacted transcript, the dumps, the offloaded originals and the token report."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .. import summarizers
from ..compressors.base import CompressionResult, Compressor, Context, Settings, Status
from .. import forked
from ..dump import DumpContext, iter_dumps, safe_name
from ..dump.ahead import DumpsAhead
from ..errors import UsageError
from ..formats import Rendered, read_file, serialize, writable
from ..formats.chat import message_to_dict
from .invariants import violations
from ..model import Message, SourceFile, Transcript
from .report import compact_report
from ..summarizers.base import Summarizer
from ..counting.tokens import TokenCounter
from ..counting.windows import resolve_window
from .bad_lines import kept_note, without_cut_off_line
from .options import CompactOptions

__all__ = ["Stage", "CompactionRun", "Status", "compact_file", "compact_source", "locate"]


@dataclass(frozen=True)
class Stage:
    """One compressor of the chain, its settings, what it did, and the messages it started from."""

    compressor: Compressor
    settings: Settings
    result: CompressionResult
    before: tuple[Message, ...]


@dataclass(frozen=True)
class CompactionRun:
    """The outcome: ``status`` is compacted, nothing to do or failed (the input is never touched)."""

    status: Status
    message: str
    source: SourceFile
    transcript: Transcript
    messages: tuple[Message, ...]
    stages: tuple[Stage, ...]
    output: Rendered | None
    output_format: str
    blobs: tuple[tuple[str, dict[str, Any]], ...]
    report: dict[str, Any]
    dump_context: DumpContext
    counter: TokenCounter

    @property
    def calls(self) -> int:
        """How many summariser calls the run made (one dump each)."""
        return sum(len(s.result.calls) for s in self.stages)

    @property
    def below_trigger(self) -> bool:
        """Nothing to do because a compressor's trigger did not fire (``--now`` compacts anyway)."""
        return self.status == Status.NOTHING_TO_DO and any(s.result.status == Status.BELOW_TRIGGER
                                                            for s in self.stages)

    def dumps(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(file name, document)`` of every dump, built one at a time as they are written (redacted)."""
        for s in self.stages:
            yield from iter_dumps(s.result, before=s.before, settings=s.settings, counter=self.counter,
                                  ctx=self.dump_context)


def compact_file(path: str | Path, options: CompactOptions, *, summarizer: Summarizer | None = None,
                 dumps_ahead: bool = False) -> CompactionRun:
    """Run the chain over one transcript of ``path``; ``summarizer`` overrides the one the options name."""
    source = read_file(path, replace(options.read, keep_raw=True))
    return compact_source(source, options, summarizer=summarizer, dumps_ahead=dumps_ahead)


def compact_source(source: SourceFile, options: CompactOptions, *, summarizer: Summarizer | None = None,
                   dumps_ahead: bool = False) -> CompactionRun:
    """Run the chain over one transcript of a file already read (with its raw records kept); ``dumps_ahead``:
    the dumps will be written, and their redaction may be made meanwhile (:mod:`tcompact.dump.ahead`)."""
    source, left_out = without_cut_off_line(source, options.into_session)
    original = source.transcript(options.transcript)
    fmt = options.to or (source.format if source.format in writable() else "chat")
    counter = TokenCounter.for_model(options.model or original.model, encoding=options.encoding)
    recorded = (original.provider_usage or {}).get("model_context_window")
    window = resolve_window(context_window=options.context_window, model=options.model, file_model=original.model,
                            recorded=recorded if isinstance(recorded, int) else None).tokens
    if summarizer is None and options.uses_summarizer:
        summarizer = summarizers.build(options.summarizer_settings, counter=counter, progress=options.progress)
    ahead = None
    if dumps_ahead and summarizer is not None and forked.enabled():  # the dumps' redaction, made meanwhile
        counter.total(original.messages)  # (counted first, as the chain does: counting takes both cores)
        ahead = DumpsAhead(original.messages)
    ctx = Context(counter=counter, window=window, summarizer=summarizer, force=options.now,
                  preserve=options.preserve, offload_dir=options.offload_dir, locator=lambda m: locate(source, m),
                  transient_retries=options.run.retries, concurrency=options.run.concurrency,
                  **({"dumped": ahead.texts} if ahead is not None else {}))
    stages = _run_chain(options.compressors, options.settings, original.messages, ctx)
    run = _finish(source, original, stages, ctx, options, fmt=fmt, summarizer=summarizer, ahead=ahead)
    run.report["notes"][:0] = [*left_out, *kept_note(source, run.output_format)] if run.output is not None else []
    return run


def _run_chain(chain: Sequence[Compressor], settings: Sequence[Settings], messages: Sequence[Message],
               ctx: Context) -> list[Stage]:
    stages: list[Stage] = []
    current = tuple(messages)
    for compressor, s in zip(chain, settings, strict=True):
        result = compressor.compress(current, s, ctx)
        stages.append(Stage(compressor, s, result, current))
        if result.failed:
            break
        current = result.messages
    return stages


def _finish(source: SourceFile, original: Transcript, stages: list[Stage], ctx: Context, options: CompactOptions,
            *, fmt: str, summarizer: Summarizer | None, ahead: DumpsAhead | None = None) -> CompactionRun:
    final = stages[-1].result.messages if not stages[-1].result.failed else original.messages
    failed = next((s for s in stages if s.result.failed), None)
    applied = failed is None and any(s.result.applied for s in stages)
    status = Status.FAILED if failed else Status.COMPACTED if applied else Status.NOTHING_TO_DO
    message = (f"{failed.compressor.name}: {failed.result.reason}" if failed else
               "; ".join(f"{s.compressor.name}: {s.result.reason}" for s in stages))
    if status == Status.NOTHING_TO_DO and any(s.result.status == Status.BELOW_TRIGGER for s in stages):
        message += "; --now compacts anyway"
    session = _session(source, original)
    info = {"path": source.path, "format": source.format, "sha256": _sha256(source), "transcript": original.id}
    dctx = DumpContext(session=session, source=info, summarizer=getattr(summarizer, "name", "none"),
                       preserve=ctx.preserve, ahead=ahead)
    output = None
    if applied:
        new = replace(original, messages=tuple(final))
        output = serialize(new, fmt, source=source, pre_tokens=stages[0].result.tokens_before)
        if output.losses:
            raise UsageError(f"{fmt} cannot represent the compacted transcript: {output.losses[0]}",
                             hint="write it with --to chat")
    blobs = tuple(_blob(source, b) for s in stages if s.result.applied for b in s.result.blobs)
    report = compact_report(source=info, stages=stages, status=status.value, window=ctx.window, counter=ctx.counter,
                            summarizer=getattr(summarizer, "name", None), output_format=fmt)
    report["reason"] = message
    report["invariants"] = violations(original.messages, final, stages) if applied else []
    report["notes"] = list(output.notes) if output is not None else []  # what the output format leaves out
    if output is not None and output.written is not None:  # the figures of what the file holds
        report["after"].update(messages=len(output.written.messages), tokens=ctx.counter.total(output.written.messages))
    return CompactionRun(status=status, message=message, source=source, transcript=original, messages=tuple(final),
                         stages=tuple(stages), output=output, output_format=fmt, blobs=blobs, report=report,
                         dump_context=dctx, counter=ctx.counter)


def locate(source: SourceFile, m: Message) -> str:
    """Where a message's original stands, as markers name it: ``path:line``, or the file when the
    format records no lines (a JSON document)."""
    lines = m.meta.get("lines") or ([m.meta["line"]] if "line" in m.meta else [])
    return f"{source.path}:{lines[0]}" if lines else f"the original transcript {source.path}"


def _session(source: SourceFile, t: Transcript) -> str:
    ids = source.meta.get("session_ids") or ([source.meta["id"]] if "id" in source.meta else [])
    base = str(ids[0]) if ids else Path(source.path).stem
    return safe_name(base if t.kind == "main" else f"{base}-{t.id}")


def _sha256(source: SourceFile) -> str:
    digest = hashlib.sha256()
    for r in source.records:
        digest.update(r.raw or b"")
    return digest.hexdigest()


def _blob(source: SourceFile, blob: Any) -> tuple[str, dict[str, Any]]:
    m = blob.message
    raw = [source.records[i].raw.decode("utf-8", "surrogateescape") for i in m.source if source.records[i].raw]
    doc = {"offload_handle": blob.handle, "messages": [message_to_dict(m)],
           "source": {"path": source.path, "format": source.format, "records": list(m.source), "raw": raw}}
    return blob.path, doc
