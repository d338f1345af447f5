"""Transcript formats: detection, reading and writing.

``read_file`` reads one file into a :class:`~tcompact.model.SourceFile`, detecting the format
from content (``ReadOptions.format`` overrides); ``find_files`` expands folders; ``serialize``
writes a transcript in a chosen format, reusing the original bytes of everything unchanged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError, NotATranscriptError, UsageError
from ..model import Record, SourceFile, Transcript
from . import chat, claude_code, codex, trajectories, writers
from ._merge import join_lines
from .writers import Rendered
from ._source import CUT_OFF, ReadContext, ReadOptions, gc_paused, load_bytes, load_records

__all__ = [
    "CUT_OFF",
    "FORMATS",
    "WRITABLE",
    "ReadOptions",
    "Rendered",
    "read_file",
    "read_records",
    "read_bytes",
    "find_files",
    "detect_records",
    "serialize",
    "join_lines",
]

#: Every format name, in the order ``--format`` lists them.
FORMATS = ("chat", "claude-code", "codex", "swe-agent", "tau-bench")
WRITABLE = ("chat", "claude-code", "codex")
_JSONL_READERS = {"chat": chat, "claude-code": claude_code, "codex": codex}
_SNIFF_RECORDS = 50
_TRANSCRIPT_SUFFIXES = (".jsonl", ".json", ".traj", ".ndjson")


def read_file(path: str | Path, options: ReadOptions | None = None, *, digest: Any = None) -> SourceFile:
    """Read one transcript file; raises InputError with file:line on bad input.

    ``digest`` (a hashlib object) is fed the bytes the records were read from, as they are read."""
    ctx = _context(str(path), options)
    ctx.digest = digest
    with gc_paused():
        return _source_file(*load_records(Path(path), ctx), ctx)


def read_records(path: str | Path, options: ReadOptions | None = None) -> list[Record]:
    """The records of a file, read as :func:`read_file` reads them, without building transcripts: what
    the usage of a file that holds no message needs (a Codex rollout of token counts only)."""
    ctx = _context(str(path), options)
    with gc_paused():
        return load_records(Path(path), ctx)[0]


def read_bytes(data: bytes, name: str, options: ReadOptions | None = None) -> SourceFile:
    """Read a transcript held in memory (``name`` stands for its path in errors), as :func:`read_file`."""
    ctx = _context(name, options)
    with gc_paused():
        return _source_file(*load_bytes(data, ctx), ctx)


def _context(path: str, options: ReadOptions | None) -> ReadContext:
    options = options or ReadOptions()
    if options.format is not None and options.format not in FORMATS:
        raise UsageError(f"unknown format {options.format!r}", hint=f"use one of: {', '.join(FORMATS)}")
    return ReadContext(path=path, options=options)


def _source_file(records: list[Record], document: bool, ctx: ReadContext) -> SourceFile:
    options = ctx.options
    if document:
        fmt, transcripts, unknown, meta = _read_document(records[0], ctx)
    else:
        fmt = options.format or detect_records(records, ctx.path)
        transcripts, unknown, meta = _read_jsonl(fmt, records, ctx)
    if not any(t.messages for t in transcripts):
        raise NotATranscriptError(f"no messages found in this {fmt} file", path=ctx.path,
                         hint="pass a transcript with at least one message, or --format to read it as another format")
    return SourceFile(
        path=ctx.path,
        format=fmt,
        records=tuple(records),
        transcripts=tuple(transcripts),
        skipped=tuple(sorted(ctx.skipped)),  # the parser's and the reader's, in file order
        unknown_types=unknown,
        meta={**meta, "document": document},
    )


def _read_jsonl(fmt: str, records: Sequence[Record], ctx: ReadContext) -> tuple[list[Transcript], dict, dict]:
    if fmt not in _JSONL_READERS:
        raise UsageError(f"{fmt} files are one JSON document, but {ctx.path} is JSON Lines",
                         hint="pass --format chat, claude-code or codex, or leave --format out")
    return _JSONL_READERS[fmt].read_records(records, ctx)


def _read_document(record: Record, ctx: ReadContext) -> tuple[str, list[Transcript], dict, dict]:
    value = record.data
    fmt = ctx.options.format
    if isinstance(value, dict) and "offload_handle" in value:  # what `compact -c offload` moved out
        raise NotATranscriptError("an original that `tcompact compact -c offload` moved out, not a transcript",
                                  path=ctx.path, hint="`tcompact restore` puts it back into its transcript")
    if isinstance(value, dict) and value.get("tool") == "tcompact" and "session_file" in value:  # compact --in-place
        raise NotATranscriptError("tcompact's note of an in-place backup, not a transcript", path=ctx.path,
                                  hint=f"`tcompact restore --session {value.get('session')}` puts the session back; "
                                       "`tcompact restore --list` lists the backups")
    if fmt is None:
        if trajectories.is_swe_agent(value):
            fmt = trajectories.SWE_AGENT
        elif trajectories.is_tau_bench(value):
            fmt = trajectories.TAU_BENCH
        elif _is_chat_document(value):
            fmt = chat.NAME
        else:
            raise NotATranscriptError(
                f"a JSON {'array' if isinstance(value, list) else 'object'} that is no transcript tcompact knows",
                path=ctx.path,
                hint="expected a chat message array, {\"messages\": [...]}, a SWE-agent .traj or tau-bench results",
            )
    if fmt == trajectories.SWE_AGENT and trajectories.is_swe_agent(value):
        return fmt, trajectories.read_swe_agent(record, ctx), {}, {}
    if fmt == trajectories.TAU_BENCH and trajectories.is_tau_bench(value):
        return fmt, trajectories.read_tau_bench(record, ctx), {}, {}
    if fmt == chat.NAME and _is_chat_document(value):
        return fmt, chat.read_document(record, ctx), {}, {}
    raise InputError(f"this JSON document is not a {fmt} file", path=ctx.path,
                     hint="leave --format out to detect the format")


def _is_chat_document(value: object) -> bool:
    items = value.get("messages") if isinstance(value, dict) else value
    return isinstance(items, list) and all(isinstance(m, dict) and "role" in m for m in items)


def detect_records(records: Sequence[Record], path: str) -> str:
    """The JSONL format most of the first records look like."""
    votes: Counter[str] = Counter()
    seen = 0
    for rec in records:
        if rec.data is None:
            continue
        seen += 1
        for name, module in _JSONL_READERS.items():
            if module.sniff(rec.data):
                votes[name] += 1
                break
        if seen >= _SNIFF_RECORDS:
            break
    if not votes:
        first = next((r for r in records if r.data is not None), None)
        if first is None:
            raise NotATranscriptError("no line of the file is a JSON record (all are blank or were skipped)",
                                      path=path, hint="check that this is a JSONL transcript")
        keys = ", ".join(sorted(first.data)[:8]) if first is not None else "none"
        raise NotATranscriptError(
            f"cannot tell the format (first record has keys: {keys})",
            path=path,
            line=first.line if first is not None else None,
            hint="pass --format chat, claude-code or codex",
        )
    return votes.most_common(1)[0][0]


def find_files(paths: Iterable[str | Path]) -> list[Path]:
    """Files named directly, plus every transcript-looking file below named folders (sorted)."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in _TRANSCRIPT_SUFFIXES)
            if not found:
                raise InputError("no transcript files in this folder", path=str(raw),
                                 hint=f"tcompact looks for {', '.join('*' + s for s in _TRANSCRIPT_SUFFIXES)}")
            out.extend(found)
        elif p.exists():
            out.append(p)
        else:
            raise InputError("no such file or folder", path=str(raw), hint="check the path")
    return out


def serialize(transcript: Transcript, fmt: str, *, source: SourceFile | None = None, now: str | None = None,
           pre_tokens: int | None = None) -> Rendered:
    """Write ``transcript`` as ``fmt``; over a same-format source, unchanged records keep their bytes.

    ``Rendered.losses`` lists messages the target cannot hold (the caller decides whether to go
    on); ``Rendered.notes`` lists file bookkeeping that does not carry over to another format.
    """
    if fmt not in WRITABLE:
        raise UsageError(f"cannot write {fmt} files", hint=f"write one of: {', '.join(WRITABLE)}")
    return writers.serialize(transcript, fmt, source=source, now=now, pre_tokens=pre_tokens)
