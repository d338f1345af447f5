"""Where a session's tokens go: the data behind ``tcompact inspect``.

Everything here is pure: files are read through :mod:`tcompact.formats`, counted through
:mod:`tcompact.tokens`, and the result is a plain JSON-ready dict whose shape is the documented
``--json`` schema (README, "inspect --json"). The terminal view in :mod:`tcompact.render` draws
the same dict.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__
from .errors import InputError, NotATranscriptError, TcompactError, UsageError
from .formats import ReadOptions, find_files, read_file
from .model import Message, SourceFile, ToolCall, ToolIndex, Transcript, index_tool_calls
from .rounds import split_rounds
from .spans import Span
from .tokens import ENCODINGS, KINDS, MessageTokens, TokenCounter, encoding_for_model, texts_of
from .windows import MIN_TARGET_RATIO, TRIGGER_RATIO, ratio_threshold, resolve_window

__all__ = ["InspectOptions", "Counted", "inspect_file", "inspect_paths", "inspect_counted", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1
_PREVIEW = 80


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
            from .compressors import span_names  # the compressors (and pydantic) only when a layout is asked for

            if self.spans not in span_names():
                raise UsageError(f"unknown span layout {self.spans!r}", hint=f"use one of: {', '.join(span_names())}")
        if self.keep_recent is not None and self.keep_recent < 0:
            raise UsageError("--keep-recent must be 0 or more")
        if self.keep_recent is not None:
            from .compressors import get, span_names

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
                  on_file: Callable[[int, int, Path], None] | None = None) -> dict[str, Any]:
    """Inspect files and folders; a file that cannot be read is listed under ``errors``."""
    return inspect_counted(paths, options, on_file, counted=False)[0]


def inspect_counted(paths: Iterable[str | Path], options: InspectOptions | None = None,
                    on_file: Callable[[int, int, Path], None] | None = None, *, counted: bool = True
                    ) -> tuple[dict[str, Any], dict[str, Counted] | None]:
    """:func:`inspect_paths`, and — with ``counted``, when it inspected one file — that file's transcripts
    as counted, by id (what an HTML page of it draws)."""
    options = options or InspectOptions()
    paths = list(paths)
    named = {Path(p) for p in paths if not Path(p).is_dir()}
    reports: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    passed_over: list[dict[str, Any]] = []
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


def _found(paths: Sequence[str | Path], errors: list[dict[str, Any]]) -> list[Path]:
    """The transcript files of ``paths``, each once: a missing path, or a folder without transcript files,
    is one error among the rest (the error itself when it is the only path)."""
    files: list[Path] = []
    for raw in paths:
        try:
            files += find_files([raw])
        except TcompactError as exc:
            _report_or_raise(exc, Path(raw), errors, alone=len(paths) == 1)
    return _once(files)


def _report_or_raise(exc: TcompactError, path: Path, errors: list[dict[str, Any]], *, alone: bool) -> None:
    if alone:
        raise exc
    errors.append({"path": str(path), "error": str(exc)})


def inspect_file(path: str | Path, options: InspectOptions | None = None) -> dict[str, Any]:
    """The report of one file: the one kept for the same bytes, options and code when there is one
    (:mod:`tcompact.reportcache`), else made and kept."""
    return _inspect_file(path, options or InspectOptions(), counted=False)[0]


def _inspect_file(path: str | Path, options: InspectOptions, *, counted: bool
                  ) -> tuple[dict[str, Any], dict[str, Counted] | None]:
    """The report, and with ``counted`` the transcripts as counted (a kept report holds no messages:
    the file is then read and counted again, and its report kept anew)."""
    from . import reportcache

    where = reportcache.slot(path, options)
    if not counted and where is not None and (kept := reportcache.get(where, path)) is not None:
        return kept, None
    read = where.hasher() if where is not None else None
    report, by_id = _inspect_source(read_file(path, options.read, digest=read), options)
    if where is not None:
        reportcache.put(where, report, read)
    return report, by_id


def inspect_source(source: SourceFile, options: InspectOptions) -> dict[str, Any]:
    """The report of a file already read."""
    return _inspect_source(source, options)[0]


def _inspect_source(source: SourceFile, options: InspectOptions) -> tuple[dict[str, Any], dict[str, Counted]]:
    counters: dict[tuple[str, bool], TokenCounter] = {}
    counted = []
    for t in source.transcripts:
        enc, approximate = _encoding(t, options)
        counter = counters.get((enc, approximate)) or counters.setdefault(
            (enc, approximate), TokenCounter(enc, approximate=approximate))
        counted.append((t, counter))
    for counter in counters.values():  # one parallel pass over every text of the file
        counter.prime(text for t, c in counted if c is counter for text in texts_of(t.messages))
    counts = [tuple(c.message(m) for m in t.messages) for t, c in counted]
    transcripts = [_transcript(t, c, list(n), options, usage=_usage(t, source)) for (t, c), n in zip(counted, counts)]
    by_id: dict[str, Counted] = {}
    for (t, _), n in zip(counted, counts):
        by_id.setdefault(t.id, Counted(t.messages, n))
    return {
        "path": source.path,
        "format": source.format,
        "records": len(source.records),
        "skipped_lines": [{"line": line, "reason": reason} for line, reason in source.skipped],
        "unknown_records": {_name(k): n for k, n in source.unknown_types.items()},
        "transcripts": transcripts,
    }, by_id


def _encoding(t: Transcript, options: InspectOptions) -> tuple[str, bool]:
    enc, approximate = encoding_for_model(options.model or t.model)
    if options.encoding is not None:
        return options.encoding, approximate or options.encoding != enc
    return enc, approximate


def _transcript(t: Transcript, counter: TokenCounter, counts: list[MessageTokens],
                options: InspectOptions, *, usage: dict[str, Any] | None) -> dict[str, Any]:
    total = sum(c.total for c in counts)
    tools = index_tool_calls(t.messages)
    window = _window(t, total, options)
    return {
        "id": t.id,
        "kind": t.kind,
        "model": _name(t.model) if t.model else t.model,
        "parent_tool_call": t.parent_tool_call,
        "encoding": counter.encoding_name,
        "approximate": counter.approximate,
        "messages": len(t.messages),
        "tool_calls": sum(len(m.tool_calls) for m in t.messages),
        "tokens": {
            "total": total,
            "estimated": sum(c.estimated for c in counts),
            "by_role": _by_role(t.messages, counts),
            "by_kind": {k: sum(c.by_kind.get(k, 0) for c in counts) for k in KINDS},
        },
        "tools": _tools(t.messages, counts, tools, counter),
        "orphans": {"tool_results": len(tools.orphan_results), "unanswered_calls": len(tools.unanswered)},
        "rounds": _rounds(t.messages, counts),
        "top_messages": _top(t.messages, counts, tools, options.top),
        "compactions": [
            {"index": c.index, "line": c.line, "kind": c.kind, "trigger": _name(c.trigger) if c.trigger else c.trigger,
             "pre_tokens": c.pre_tokens}
            for c in t.compactions
        ],
        "provider_usage": usage,
        "window": window,
        "span": _span(t.messages, counts, total, options, window["context_window"]),
        "notes": [_name(n, 300) for n in t.notes],
    }


def _by_role(messages: Sequence[Message], counts: Sequence[MessageTokens]) -> dict[str, int]:
    out: dict[str, int] = {}
    for m, c in zip(messages, counts):
        role = _name(m.role)
        out[role] = out.get(role, 0) + c.total
    return out


def _name(name: str, width: int = 80) -> str:
    """A role, tool or model name as the report shows it: cut to ``width`` characters (a name of megabytes,
    as a damaged file may hold, would otherwise fill every table it is shown in)."""
    return name if len(name) <= width else name[: width - 1] + "…"


def _tools(messages: Sequence[Message], counts: Sequence[MessageTokens], tools: ToolIndex,
           counter: TokenCounter) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}

    def row(name: str) -> dict[str, Any]:
        name = _name(name)
        return rows.setdefault(name, {"name": name, "calls": 0, "argument_tokens": 0, "result_tokens": 0,
                                      "results": 0, "errors": 0})

    for m in messages:
        for call in m.tool_calls:
            r = row(call.name)
            r["calls"] += 1
            r["argument_tokens"] += counter.call(call)
    answers = _answered_calls(tools)
    for i, (m, c) in enumerate(zip(messages, counts)):
        if not m.tool_call_ids:
            continue
        call = answers.get(i)
        r = row(call.name if call else "(no matching call)")
        r["results"] += 1
        r["result_tokens"] += c.total
        r["errors"] += int(m.is_error)
    return sorted(rows.values(), key=lambda r: (-(r["argument_tokens"] + r["result_tokens"]), r["name"]))


def _answered_calls(tools: ToolIndex) -> dict[int, ToolCall]:
    """The (first) call each result message answers, by the result's index."""
    answers: dict[int, ToolCall] = {}
    for link in tools.links:
        answers.setdefault(link.result_at, link.call)
    return answers


def _rounds(messages: Sequence[Message], counts: Sequence[MessageTokens]) -> list[dict[str, Any]]:
    out = []
    for r in split_rounds(messages):
        out.append({
            "number": r.number,
            "start": r.start,
            "end": r.end,
            "request": preview(messages[r.request].text) if r.request is not None else None,
            "messages": r.end - r.start,
            "tokens": sum(c.total for c in counts[r.start:r.end]),
            "tool_calls": sum(len(m.tool_calls) for m in messages[r.start:r.end]),
        })
    return out


def _top(messages: Sequence[Message], counts: Sequence[MessageTokens], tools: ToolIndex, n: int) -> list[dict[str, Any]]:
    answers = _answered_calls(tools)
    order = sorted(range(len(messages)), key=lambda i: (-counts[i].total, i))[:n]
    out = []
    for i in order:
        m = messages[i]
        tool = ", ".join(dict.fromkeys(c.name for c in m.tool_calls)) or (answers[i].name if i in answers else None)
        out.append({"index": i, "role": _name(m.role), "tool": _name(tool) if tool else None, "tokens": counts[i].total,
                    "preview": message_preview(m)})
    return out


def preview(text: str, width: int = _PREVIEW) -> str:
    """One line of at most ``width`` characters."""
    size = 8 * width
    while True:  # flatten a head of the text long enough to show: a text of megabytes is never split whole
        flat = " ".join(text[:size].split())  # the head's flattening is a prefix of the whole text's
        if len(flat) > width or size >= len(text):
            break
        size *= 4
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def message_preview(m: Message) -> str:
    """A one-line preview: the text, else the tool calls, else the reasoning."""
    text = m.text
    if text and not text.isspace():  # as text.strip(), without copying a huge text
        return preview(text)
    if m.tool_calls:
        return preview("; ".join(f"{c.name}({c.arguments})" for c in m.tool_calls))
    for r in m.reasoning:
        if r.text:
            return preview(r.text)
        if r.encrypted_chars:
            return f"[encrypted {r.kind}: {r.encrypted_chars} chars]"
    return f"[{len(m.images)} image(s)]" if m.images else ""


def _usage(t: Transcript, source: SourceFile) -> dict[str, Any] | None:
    """The provider usage, and ``predates_compaction``: the line of the newest compaction made after
    the last request that reported usage (its figures are then the context before that compaction)."""
    if not t.provider_usage:
        return None
    usage = {"last_line": None, **t.provider_usage}
    at = usage["last_line"]
    lines = {c.line for c in t.compactions if c.line is not None}
    after = None
    if at is not None and lines:
        stamps = {r.line: r.data.get("timestamp") for r in source.records
                  if (r.line in lines or r.line == at) and isinstance(r.data, dict)}

        def later(line: int) -> bool:  # by time where both lines say when they were written, else by place
            mine, theirs = stamps.get(line), stamps.get(at)
            return mine > theirs if isinstance(mine, str) and isinstance(theirs, str) else line > at

        after = max((line for line in lines if later(line)), default=None)
    return {**usage, "predates_compaction": after}


def _window(t: Transcript, total: int, options: InspectOptions) -> dict[str, Any]:
    recorded = (t.provider_usage or {}).get("model_context_window")
    w = resolve_window(context_window=options.context_window, model=options.model, file_model=t.model,
                       recorded=recorded if isinstance(recorded, int) else None)
    trigger = ratio_threshold(w.tokens, TRIGGER_RATIO)
    return {
        "context_window": w.tokens,
        "source": w.source,
        "tokens": total,
        "utilisation": round(total / w.tokens, 4),
        "trigger_ratio": TRIGGER_RATIO,
        "trigger_tokens": trigger,
        "over_trigger": total >= trigger,
        "min_target_ratio": MIN_TARGET_RATIO,
        "min_target_tokens": int(w.tokens * MIN_TARGET_RATIO),
    }


def _span(messages: Sequence[Message], counts: Sequence[MessageTokens], total: int,
          options: InspectOptions, window: int) -> dict[str, Any] | None:
    if options.spans is None:
        return None
    from .compressors import build_span, keep_recent_default

    span = build_span(options.spans, messages, keep_recent=options.keep_recent)
    keep = options.keep_recent if options.keep_recent is not None else keep_recent_default(options.spans)

    def part(r: range) -> dict[str, Any]:
        return {"start": r.start, "end": r.stop, "messages": len(r), "tokens": sum(c.total for c in counts[r.start:r.stop])}

    body = part(span.body)
    return {
        "compressor": options.spans,
        "keep_recent": keep,
        "prefix": part(span.prefix),
        "body": body,
        "tail": part(span.tail),
        "would_compact": _would_compact(options.spans, span, total, body["tokens"], window),
    }


def _would_compact(name: str, span: Span, total: int, body_tokens: int, window: int) -> bool:
    """Whether the compressor, with its default settings, would act (its own trigger: spec §2.2's
    0.8 / 0.1 ratios, round-level's trigger_total_tokens)."""
    from .compressors import get

    compressor = get(name)
    return compressor.acts(total, body_tokens, window=window, settings=compressor.preview_settings(),
                           empty=span.empty)


def _totals(reports: Sequence[dict[str, Any]]) -> dict[str, Any]:
    ts = [t for r in reports for t in r["transcripts"]]
    return {
        "files": len(reports),
        "transcripts": len(ts),
        "messages": sum(t["messages"] for t in ts),
        "tool_calls": sum(t["tool_calls"] for t in ts),
        "tokens": sum(t["tokens"]["total"] for t in ts),
        "skipped_lines": sum(len(r["skipped_lines"]) for r in reports),
    }
