"""Transcript formats: detection, reading and writing.

``read_file`` reads one file into a :class:`~tcompact.model.SourceFile`, detecting the format
from content (``ReadOptions.format`` overrides); ``find_files`` expands folders; ``serialize``
writes a transcript in a chosen format, reusing the original bytes of everything unchanged.
What differs by format is asked of the format's class in the registry (:mod:`.family`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError, NotATranscriptError, UsageError
from .family import document_order, find, line_formats, names, spoken, suffixes, writable

if TYPE_CHECKING:
    from ..model import Record, SourceFile, Transcript
    from ._source import CUT_OFF, ReadContext, ReadOptions
    from ._merge import join_lines
    from .steps import Steps
    from .writers import Rendered

__all__ = [
    "CUT_OFF",
    "FORMATS",
    "WRITABLE",
    "writable",
    "ReadOptions",
    "Rendered",
    "read_file",
    "read_records",
    "read_bytes",
    "read_steps",
    "find_files",
    "detect_records",
    "serialize",
    "join_lines",
]

_SNIFF_RECORDS = 50
#: Every format name and the formats tcompact writes, as the registry has them when this is imported.
FORMATS, WRITABLE = names(), writable()


def read_file(path: str | Path, options: ReadOptions | None = None, *, digest: Any = None) -> SourceFile:
    """Read one transcript file; raises InputError with file:line on bad input.

    ``digest`` (a hashlib object) is fed the bytes the records were read from, as they are read."""
    from ._source import gc_paused, load_records

    ctx = _context(str(path), options)
    ctx.digest = digest
    with gc_paused():
        return _source_file(*load_records(Path(path), ctx), ctx)


def read_steps(path: str | Path, options: ReadOptions | None = None, *, digest: Any = None) -> SourceFile | Steps:
    """Read one file as :func:`read_file` does, but a JSON Lines file as :class:`~tcompact.formats.steps.Steps`:
    to be finished, and to be kept for reading on from there once lines are appended to it."""
    from ._source import gc_paused, load_records

    ctx = _context(str(path), options)
    ctx.digest = digest
    ctx.line_ends = []
    with gc_paused():
        records, document = load_records(Path(path), ctx)
        if document:
            return _source_file(records, True, ctx)
        from . import steps

        return steps.begin(records, ctx)


def read_records(path: str | Path, options: ReadOptions | None = None) -> list[Record]:
    """The records of a file, read as :func:`read_file` reads them, without building transcripts: what
    the usage of a file that holds no message needs (a Codex rollout of token counts only)."""
    from ._source import gc_paused, load_records

    ctx = _context(str(path), options)
    with gc_paused():
        return load_records(Path(path), ctx)[0]


def read_bytes(data: bytes, name: str, options: ReadOptions | None = None) -> SourceFile:
    """Read a transcript held in memory (``name`` stands for its path in errors), as :func:`read_file`."""
    from ._source import gc_paused, load_bytes

    ctx = _context(name, options)
    with gc_paused():
        return _source_file(*load_bytes(data, ctx), ctx)


def _context(path: str, options: ReadOptions | None) -> ReadContext:
    from ._source import ReadContext, ReadOptions

    options = options or ReadOptions()
    if options.format is not None and find(options.format) is None:
        raise UsageError(f"unknown format {options.format!r}", hint=f"use one of: {', '.join(names())}")
    return ReadContext(path=path, options=options)


def _source_file(records: list[Record], document: bool, ctx: ReadContext) -> SourceFile:
    from ..model import SourceFile
    from . import steps

    if document:
        fmt, transcripts, unknown, meta = _read_document(records[0], ctx)
    else:
        read = steps.begin(records, ctx)
        fmt = read.format
        transcripts, unknown, meta = read.finish()
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


def _read_document(record: Record, ctx: ReadContext) -> tuple[str, list[Transcript], dict, dict]:
    value = record.data
    _refuse_our_notes(value, ctx)
    if ctx.options.format is None:
        form = next((f for f in document_order() if f.is_document(value)), None)
        if form is None:
            raise NotATranscriptError(
                f"a JSON {'array' if isinstance(value, list) else 'object'} that is no transcript tcompact knows",
                path=ctx.path,
                hint="expected a chat message array, {\"messages\": [...]}, a SWE-agent .traj or tau-bench results",
            )
    else:
        form = find(ctx.options.format)
    if form is not None and form.is_document(value):
        return form.name, form.read_document(record, ctx), {}, {}
    raise InputError(f"this JSON document is not a {ctx.options.format} file", path=ctx.path,
                     hint="leave --format out to detect the format")


def _refuse_our_notes(value: object, ctx: ReadContext) -> None:
    """What tcompact itself writes beside transcripts is named, not read."""
    if isinstance(value, dict) and "offload_handle" in value:  # what `compact -c offload` moved out
        raise NotATranscriptError("an original that `tcompact compact -c offload` moved out, not a transcript",
                                  path=ctx.path, hint="`tcompact restore` puts it back into its transcript")
    if isinstance(value, dict) and value.get("tool") == "tcompact" and "session_file" in value:  # compact --in-place
        raise NotATranscriptError("tcompact's note of an in-place backup, not a transcript", path=ctx.path,
                                  hint=f"`tcompact restore --session {value.get('session')}` puts the session back; "
                                       "`tcompact restore --list` lists the backups")


def _votes(records: Sequence[Record]) -> tuple[Counter[str], int]:
    """The formats the first records look like (one vote each, in the order first seen), and how many voted."""
    readers = line_formats()
    votes: Counter[str] = Counter()
    seen = 0
    for rec in records:
        if rec.data is None:
            continue
        seen += 1
        for form in readers:
            if form.sniff(rec.data):
                votes[form.name] += 1
                break
        if seen >= _SNIFF_RECORDS:
            break
    return votes, seen


def detected_for_good(records: Sequence[Record]) -> bool:
    """Whether lines appended to these records can no longer change the format :func:`detect_records` says:
    the leader is ahead of every other format by more than the votes still to come (or by as many,
    when it would win the tie, being first)."""
    votes, seen = _votes(records)
    if not votes:
        return False
    order = list(votes)
    leader = votes.most_common(1)[0][0]
    left = _SNIFF_RECORDS - seen
    return all(votes[leader] > votes.get(f, 0) + left or (
        votes[leader] == votes.get(f, 0) + left and (f not in votes or order.index(leader) < order.index(f)))
        for f in (form.name for form in line_formats()) if f != leader)


def detect_records(records: Sequence[Record], path: str) -> str:
    """The JSONL format most of the first records look like."""
    votes, _ = _votes(records)
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
            hint=f"pass --format {spoken(tuple(f.name for f in line_formats()))}",
        )
    return votes.most_common(1)[0][0]


def find_files(paths: Iterable[str | Path]) -> list[Path]:
    """Files named directly, plus every transcript-looking file below named folders (sorted)."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            known = suffixes()
            found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in known)
            if not found:
                raise InputError("no transcript files in this folder", path=str(raw),
                                 hint=f"tcompact looks for {', '.join('*' + s for s in known)}")
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
    form = find(fmt)
    if form is None or not form.writable:
        raise UsageError(f"cannot write {fmt} files", hint=f"write one of: {', '.join(writable())}")
    from . import writers  # (what only reads never imports the writers)

    return writers.serialize(transcript, fmt, source=source, now=now, pre_tokens=pre_tokens)


def __getattr__(name: str) -> Any:
    """``Rendered`` (the writers' result) and ``join_lines`` (what writing back joins), imported on first use:
    reading needs neither; ``ReadOptions``, ``ReadContext`` and ``CUT_OFF`` too (the command line names the
    formats before it reads a file)."""
    if name in ("ReadOptions", "ReadContext", "CUT_OFF"):
        from ._source import CUT_OFF, ReadContext, ReadOptions

        return {"ReadOptions": ReadOptions, "ReadContext": ReadContext, "CUT_OFF": CUT_OFF}[name]
    if name == "Rendered":
        from .writers import Rendered

        return Rendered
    if name == "join_lines":
        from ._merge import join_lines

        return join_lines
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
