"""Reading the bytes of a transcript file into records, with one clear error per bad line.

This is the only place that opens transcript files. It decides whether a file is JSON Lines or
one JSON document, parses each line (orjson, with the standard library as a fallback for the
lone-surrogate escapes some tools write), and turns every problem into an :class:`InputError`
naming ``file:line`` and what to do — or, with ``skip_bad_lines``, records the line as skipped
and keeps its bytes so that writing the file back loses nothing.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import InputError, NotATranscriptError
from ._digest import READ_BUFFER, Digesting

if TYPE_CHECKING:
    from ..model import Record

__all__ = ["ReadOptions", "ReadContext", "load_records", "load_bytes", "load_appended", "parse_json", "gc_paused",
           "too_deep", "blank", "MAX_LINE_BYTES", "MAX_DEPTH", "CUT_OFF", "SKIP_HINT", "BOM", "UNPARSED"]

MAX_LINE_BYTES = 256 * 1024 * 1024
#: Deepest nesting of a record tcompact reads: orjson writes at most 255 levels, and a message
#: sits a few levels down in the dumps and reports (real records nest about 10 deep).
MAX_DEPTH = 200
BOM = b"\xef\xbb\xbf"
_SPACE = b" \t\n\r\x0b\x0c"  # what bytes.strip() strips
SKIP_HINT = "fix or remove that line, or pass --skip-bad-lines to read on without it"
#: Why a last line without its newline that is no whole JSON value was skipped: a file being written.
CUT_OFF = "the last line is cut off (truncated JSON)"


@dataclass(frozen=True)
class ReadOptions:
    """How to read: format override, bad-line policy, Claude history depth, raw-byte keeping."""

    format: str | None = None
    skip_bad_lines: bool = False
    full_history: bool = False
    keep_raw: bool = True
    max_line_bytes: int = MAX_LINE_BYTES


@dataclass
class ReadContext:
    """What a format reader needs besides the records: where they came from and the skip policy."""

    path: str
    options: ReadOptions
    skipped: list[tuple[int, str]] = field(default_factory=list)
    document: bool = False
    #: A hashlib object fed every byte of the file as it is read (once, whatever the reader reads
    #: again after a seek back), or None: the digest of exactly the bytes the records came from.
    digest: Any = None
    #: When a list: the byte offset where each line ends is appended to it as the lines are read
    #: (set to None when a line too long to keep makes them unknown).
    line_ends: list[int] | None = None
    #: Whether the file was taken for JSON Lines by its first line alone (a record, or no JSON at all):
    #: then bytes appended to it can never make it one JSON document, and they can be read on their own.
    lines_by_first_line: bool = False
    #: Whether the last line read ends with a line break (a line without one may still be being written).
    ended: bool = True

    def reject(self, record: Record, what: str, *, where: str | None = None) -> None:
        """Report a record of the wrong shape: raise, or note it as skipped with --skip-bad-lines."""
        if where:
            what = f"{where}: {what}"
        if self.options.skip_bad_lines and not self.document:
            self.skipped.append((record.line, what))
            return
        hint = "fix the file, or pass --format if it is another format" if self.document else SKIP_HINT
        raise InputError(what, path=self.path, line=None if self.document else record.line, hint=hint)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside: reading a file builds millions of objects that live on,
    and every full collection would walk all of them again (a fifth of a cached inspect's time).
    The records hold no reference cycles; whatever else the block leaves is collected after it."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def parse_json(raw: bytes) -> Any:
    """Parse JSON bytes; fall back to the standard library for lone surrogate escapes.

    A lone surrogate (``"\\ud800"``, written by some tools) becomes U+FFFD in the parsed value, as
    the token counter reads it: no UTF-8 writer (reports, dumps, ``--json``) can hold one. The
    record's bytes are kept as they were, so an unchanged record is written back with its escape.
    NaN and Infinity are refused as they are not JSON; integers beyond 64 bits become floats,
    as orjson reads them.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as first:
        if "surrogate" not in first.msg:
            raise
        import json

        try:
            return _no_surrogates(json.loads(bytes(raw).decode("utf-8"), parse_constant=_refuse_constant,
                                             parse_int=_int64))
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise first from None


def _no_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate of its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_no_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_no_surrogates(k): _no_surrogates(v) for k, v in value.items()}
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _int64(text: str) -> int | float:
    value = int(text)
    return value if -(2**63) <= value < 2**64 else float(value)


def too_deep(raw: bytes, value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` (parsed from ``raw``) nests deeper than ``limit`` levels of arrays and objects."""
    if raw.count(b"[") + raw.count(b"{") <= limit:  # cheap: too few brackets to be that deep
        return False
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(v, dict):
            stack.extend((x, depth + 1) for x in v.values() if isinstance(x, dict | list))
        elif isinstance(v, list):
            stack.extend((x, depth + 1) for x in v if isinstance(x, dict | list))
    return False


def load_records(path: Path, ctx: ReadContext) -> tuple[list[Record], bool]:
    """Read a file into records; the flag says whether it was one JSON document (not JSONL)."""
    shown = ctx.path
    try:
        fh = path.open("rb", buffering=READ_BUFFER)
    except FileNotFoundError:
        raise InputError("no such file", path=shown, hint="check the path") from None
    except IsADirectoryError:
        raise InputError("is a folder", path=shown, hint="pass files, or a folder to inspect") from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=shown, hint="check the permissions") from None
    with fh:
        return _load(fh if ctx.digest is None else Digesting(fh, ctx.digest), ctx)


def load_bytes(data: bytes, ctx: ReadContext) -> tuple[list[Record], bool]:
    """Records of a transcript held in memory (``ctx.path`` names it in errors), as :func:`load_records`."""
    import io

    return _load(io.BytesIO(data), ctx)


def load_appended(data: bytes, ctx: ReadContext, *, first_line: int, start: int) -> list[Record]:
    """The records of bytes appended to a JSON Lines file whose first ``first_line - 1`` lines were read
    before, ``start`` bytes (line numbers and offsets go on from there)."""
    import io

    from ._lines import read_lines

    return read_lines(io.BytesIO(data), ctx, first_line=first_line, start=start)


def _load(fh: Any, ctx: ReadContext) -> tuple[list[Record], bool]:
    from ._lines import read_lines

    shown = ctx.path
    _check_encoding(fh.read(4), shown)
    fh.seek(0)
    head = _first_content_line(fh, ctx)
    if head is None:
        raise NotATranscriptError("the file is empty", path=shown, hint="pass a transcript with at least one record")
    shape, value = _first_line_shape(head[-1])
    ctx.lines_by_first_line = shape in ("record", "other")
    if shape not in ("array", "partial", "document"):  # JSON Lines: read on, the first record parsed once
        lines = [*((raw, UNPARSED) for raw in head[:-1]), (head[-1], value)]
        del head, value  # the lines are held by ``lines`` alone, which the reader empties
        return read_lines(fh, ctx, head=lines), False
    del head, value  # a document's first line may be all of it: let it go before reading the whole
    fh.seek(0)
    doc = _try_document(fh, ctx, strict=shape != "document")
    if doc is not None:
        return doc, True
    fh.seek(0)
    return read_lines(fh, ctx), False


def _check_encoding(head: bytes, shown: str) -> None:
    for bom, name in ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16")):
        if head.startswith(bom):
            raise InputError(
                f"the file is {name} text, tcompact reads UTF-8",
                path=shown,
                hint=f"convert it first: iconv -f {name} -t UTF-8 FILE > FILE.utf8.jsonl",
            )


def _first_content_line(fh: Any, ctx: ReadContext) -> list[bytes] | None:
    """The lines up to the first that is not blank, as read (that one last), or None when all are blank."""
    lines = []
    while line := fh.readline(ctx.options.max_line_bytes + 1):
        lines.append(line)
        if not blank(line.lstrip(BOM)):
            return lines
    return None


#: A line's value not parsed yet (``None`` is a value: JSON null).
UNPARSED = object()


def blank(line: bytes) -> bool:
    """``not line.strip()``, without copying the line."""
    return not line or line.isspace()


def _first_line_shape(line: bytes) -> tuple[str, Any]:
    """How the first line that is not blank starts — "array", "partial" (an object that goes on over
    more lines), "document" (one whole trajectory object), "record" (a JSONL record) or "other" — and
    its value when it was parsed to tell (the line is not copied: it may be the whole file)."""
    body = line.lstrip(BOM)
    start, end = len(body) - len(body.lstrip()), len(body)
    while end > start and body[end - 1] in _SPACE:  # as body.strip(), without the copy
        end -= 1
    first = body[start:start + 1]
    if first == b"[":
        return "array", UNPARSED
    if first != b"{":
        return "other", UNPARSED
    try:
        value = parse_json(memoryview(body)[start:end])
    except (orjson.JSONDecodeError, ValueError):
        return "partial", UNPARSED
    is_doc = isinstance(value, dict) and not ({"role", "type"} & value.keys())
    shape = "document" if is_doc and {"history", "messages", "traj", "trajectory"} & value.keys() else "record"
    return shape, value


def _try_document(fh: Any, ctx: ReadContext, *, strict: bool) -> list[Record] | None:
    """The whole file as one JSON value; None when it is not one and ``strict`` is off."""
    data = fh.read()
    body = data[len(BOM) :] if data.startswith(BOM) else data
    try:
        value = parse_json(body)
    except orjson.JSONDecodeError as exc:
        single_line = body.strip().count(b"\n") == 0
        if not strict or (single_line and body.lstrip()[:1] == b"{"):
            return None  # JSON Lines after all: the line reader reads (or reports) it
        ctx.document = True
        lines = body.count(b"\n") + (not body.endswith(b"\n"))  # orjson puts an end of data after the last newline
        from ._lines import raise_parse_error

        raise_parse_error(exc, body, ctx, line=min(exc.lineno, lines), last=not body.rstrip().endswith((b"}", b"]")))
    ctx.document = True
    from ..model import Record

    if too_deep(body, value):
        raise InputError(f"JSON nested more than {MAX_DEPTH} levels deep", path=ctx.path,
                         hint="this is no transcript tcompact can read; pass a transcript file")
    return [Record(line=1, data=value, raw=data if ctx.options.keep_raw else None)]
