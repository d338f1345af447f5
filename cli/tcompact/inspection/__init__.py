"""Where a session's tokens go: the data behind ``tcompact inspect``.

Everything here is pure: files are read through :mod:`tcompact.formats`, counted through
:mod:`tcompact.counting.tokens`, and the result is a plain JSON-ready dict whose shape is the documented
``--json`` schema (README, "inspect --json"). The terminal view in :mod:`tcompact.render` draws
the same dict.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..errors import InputError, NotATranscriptError, TcompactError, UsageError
from ..counting.encodings import ENCODINGS
from ..formats import ReadOptions, find_files, read_file

if TYPE_CHECKING:  # (a report kept for the file's bytes is found without them)
    from .shapes import FileError, FileReport, InspectReport, PassedOver, SpanPart, SpanReport, Totals
    from ..model import Message, SourceFile
    from ..spans import Span
    from ..counting.tokens import MessageTokens

__all__ = ["InspectOptions", "Counted", "inspect_file", "inspect_paths", "inspect_counted", "inspect_source",
           "span_part", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class InspectOptions:
    """What to count with and what to show."""

    read: ReadOptions = field(default_factory=lambda: ReadOptions(keep_raw=False))
    encoding: str | None = None
    model: str | None = None
    context_window: int | None = None
    spans: str | None = None
    keep_recent: int | None = None
    top: int = 10

    def __post_init__(self) -> None:
        if self.encoding is not None and self.encoding not in ENCODINGS:
            raise UsageError(f"unknown encoding {self.encoding!r}", hint=f"use one of: {', '.join(ENCODINGS)}")
        if self.spans is not None:
            from ..compressors import span_names  # the compressors (and pydantic) only when a layout is asked for

            if self.spans not in span_names():
                raise UsageError(f"unknown span layout {self.spans!r}", hint=f"use one of: {', '.join(span_names())}")
        if self.keep_recent is not None and self.keep_recent < 0:
            raise UsageError("--keep-recent must be 0 or more")
        if self.keep_recent is not None:
            from ..compressors import get, span_names

            if self.spans is None:
                raise UsageError("--keep-recent sets the raw tail of a --spans layout, and no --spans was given",
                                 hint=f"add --spans with one of: {', '.join(span_names())}")

            get(self.spans).preview_settings(self.keep_recent)  # refused where the span keeps no recent messages
        if self.context_window is not None and self.context_window <= 0:
            raise UsageError("--context-window must be a positive number of tokens")
        if self.top < 0:
            raise UsageError("--top must be 0 or more")


@dataclass(frozen=True)
class Counted:
    """A transcript as inspection counted it, message by message: what a page of it draws beyond the report."""

    messages: tuple[Message, ...]
    counts: tuple[MessageTokens, ...]


def _once(files: list[Path]) -> list[Path]:
    """Each file once, where it first came (``inspect DIR DIR/a.jsonl`` names a.jsonl twice)."""
    seen: set[Path] = set()
    out = []
    for f in files:
        key = f.resolve()
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def inspect_paths(paths: Iterable[str | Path], options: InspectOptions | None = None,
                  on_file: Callable[[int, int, Path], None] | None = None) -> InspectReport:
    """Inspect files and folders; a file that cannot be read is listed under ``errors``."""
    return inspect_counted(paths, options, on_file, counted=False)[0]


def inspect_counted(paths: Iterable[str | Path], options: InspectOptions | None = None,
                    on_file: Callable[[int, int, Path], None] | None = None, *, counted: bool = True
                    ) -> tuple[InspectReport, dict[str, Counted] | None]:
    """:func:`inspect_paths`, and — with ``counted``, when it inspected one file — that file's transcripts
    as counted, by id (what an HTML page of it draws)."""
    options = options or InspectOptions()
    paths = list(paths)
    named = {Path(p) for p in paths if not Path(p).is_dir()}
    reports: list[FileReport] = []
    errors: list[FileError] = []
    passed_over: list[PassedOver] = []
    files = _found(paths, errors)
    one: dict[str, Counted] | None = None
    for n, path in enumerate(files):
        if on_file:
            on_file(n, len(files), path)
        try:
            report, one = _inspect_file(path, options, counted=counted and len(files) == 1)
            reports.append(report)
        except NotATranscriptError as exc:
            if path in named:
                _report_or_raise(exc, path, errors, alone=len(files) == 1)
            else:  # found in a folder: other JSON files (package.json, indexes) are not errors
                passed_over.append({"path": str(path), "reason": exc.what})
        except TcompactError as exc:
            _report_or_raise(exc, path, errors, alone=len(files) == 1)
    if on_file and files:
        on_file(len(files), len(files), files[-1])
    if not reports and not errors:
        first = passed_over[0]
        raise InputError(f"no transcripts found: {len(passed_over)} file(s) are not transcripts "
                         f"(first: {first['path']}: {first['reason']})",
                         hint="pass transcript files or folders that hold them")
    return {"tool": "tcompact", "version": __version__, "schema_version": SCHEMA_VERSION, "files": reports,
            "errors": errors, "not_transcripts": passed_over, "totals": _totals(reports),
            }, (one if len(reports) == 1 else None)  # a page of several files draws no message


def _found(paths: Sequence[str | Path], errors: list[FileError]) -> list[Path]:
    """The transcript files of ``paths``, each once: a missing path, or a folder without transcript files,
    is one error among the rest (the error itself when it is the only path)."""
    files: list[Path] = []
    for raw in paths:
        try:
            files += find_files([raw])
        except TcompactError as exc:
            _report_or_raise(exc, Path(raw), errors, alone=len(paths) == 1)
    return _once(files)


def _report_or_raise(exc: TcompactError, path: Path, errors: list[FileError], *, alone: bool) -> None:
    if alone:
        raise exc
    errors.append({"path": str(path), "error": str(exc)})


def inspect_file(path: str | Path, options: InspectOptions | None = None) -> FileReport:
    """The report of one file: the one kept for the same bytes, options and code when there is one
    (:mod:`tcompact.inspection.reportcache`), else made — from the state kept after an earlier read of the file
    when it only grew since (:mod:`tcompact.inspection.growing`) — and kept."""
    return _inspect_file(path, options or InspectOptions(), counted=False)[0]


def _inspect_file(path: str | Path, options: InspectOptions, *, counted: bool
                  ) -> tuple[FileReport, dict[str, Counted] | None]:
    """The report, and with ``counted`` the transcripts as counted (a kept report holds no messages:
    the file is then read and counted again, and its report kept anew)."""
    from . import growing, reportcache

    kept = growing.find(path, options) if not counted and options.spans is None else None
    if kept is not None:
        return growing.inspect_grown(path, options, kept), None
    where = reportcache.slot(path, options)
    if not counted and where is not None and (found := reportcache.get(where, path)) is not None:
        return found, None
    read = where.hasher() if where is not None else None
    report, by_id = _inspect_source(read_file(path, options.read, digest=read), options)
    if where is not None:
        reportcache.put(where, report, read)
    return report, by_id


def inspect_source(source: SourceFile, options: InspectOptions) -> FileReport:
    """The report of a file already read."""
    return _inspect_source(source, options)[0]


def _inspect_source(source: SourceFile, options: InspectOptions) -> tuple[FileReport, dict[str, Counted]]:
    from .report import counters, facts_of, file_report, stamps_of, transcript_report, usage_of
    from ..counting.tokens import texts_of

    counted = counters(source.transcripts, options)
    for counter in {id(c): c for _, c in counted}.values():  # one parallel pass over every text of the file
        counter.prime(text for t, c in counted if c is counter for text in texts_of(t.messages))
    counts = [[c.message(m, remember=False) for m in t.messages] for t, c in counted]
    facts = [[facts_of(m, c, n) for m, n in zip(t.messages, ns)] for (t, c), ns in zip(counted, counts)]
    transcripts = [transcript_report(t, f, c, top=options.top, context_window=options.context_window,
                                     model=options.model, usage=usage_of(t, stamps_of(source)),
                                     span=_span(t.messages, f, options))
                   for (t, c), f in zip(counted, facts)]
    by_id: dict[str, Counted] = {}
    for (t, _), n in zip(counted, counts):
        by_id.setdefault(t.id, Counted(t.messages, tuple(n)))
    return file_report(source.path, source.format, len(source.records), source.skipped, source.unknown_types,
                        transcripts), by_id


def _span(messages: Sequence[Message], facts: Sequence[Any], options: InspectOptions
          ) -> Callable[[int, int], SpanReport] | None:
    """What makes a transcript's ``span`` entry (from its total and window) when a layout was asked for."""
    if options.spans is None:
        return None
    from ..compressors import build_span, keep_recent_default

    spans = options.spans
    span = build_span(spans, messages, keep_recent=options.keep_recent)
    keep = options.keep_recent if options.keep_recent is not None else keep_recent_default(spans)
    totals = [f.total for f in facts]

    def made(total: int, window: int) -> SpanReport:
        body = span_part(span.body, totals)
        return {"compressor": spans, "keep_recent": keep, "prefix": span_part(span.prefix, totals), "body": body,
                "tail": span_part(span.tail, totals),
                "would_compact": _would_compact(spans, span, total, body["tokens"], window)}

    return made


def span_part(r: range, totals: Sequence[int]) -> SpanPart:
    """A part of a span (messages ``r``) as the reports show it, its tokens from each message's ``totals``."""
    return {"start": r.start, "end": r.stop, "messages": len(r), "tokens": sum(totals[r.start:r.stop])}


def _would_compact(name: str, span: Span, total: int, body_tokens: int, window: int) -> bool:
    """Whether the compressor, with its default settings, would act (its own trigger: spec §2.2's
    0.8 / 0.1 ratios, round-level's trigger_total_tokens)."""
    from ..compressors import get

    compressor = get(name)
    return compressor.acts(total, body_tokens, window=window, settings=compressor.preview_settings(),
                           empty=span.empty)


def _totals(reports: Sequence[FileReport]) -> Totals:
    ts = [t for r in reports for t in r["transcripts"]]
    return {
        "files": len(reports),
        "transcripts": len(ts),
        "messages": sum(t["messages"] for t in ts),
        "tool_calls": sum(t["tool_calls"] for t in ts),
        "tokens": sum(t["tokens"]["total"] for t in ts),
        "skipped_lines": sum(len(r["skipped_lines"]) for r in reports),
    }


def __getattr__(name: str) -> Any:
    """``preview`` and ``message_preview``, which the report's module makes, imported on first use."""
    if name in ("preview", "message_preview"):
        from . import report as inspect_report

        return getattr(inspect_report, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
