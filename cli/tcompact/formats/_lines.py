"""The lines of a JSON Lines file as records, and the one error each bad line (or document) gets.

Every line is parsed once; a line that is no JSON object, nests too deep, is too long or is no
JSON at all is an :class:`~tcompact.errors.InputError` naming ``file:line`` and what to do — or,
with ``skip_bad_lines``, a record without data whose bytes are kept, so that writing the file back
loses nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from ..errors import InputError
from ._source import BOM, CUT_OFF, MAX_DEPTH, SKIP_HINT, UNPARSED, ReadContext, blank, parse_json, too_deep

if TYPE_CHECKING:
    from ..model import Record

__all__ = ["read_lines", "raise_parse_error", "describe_parse_error"]


def read_lines(fh: Any, ctx: ReadContext, *, head: list[tuple[bytes, Any]] | None = None, first_line: int = 1,
                start: int = 0) -> list[Record]:
    """The records of the lines of ``fh``; ``head`` holds the lines read already, with the value of
    any that was parsed (the file goes on after them); it is emptied as they are taken. The first
    line read is line ``first_line`` of the file and starts at byte ``start``."""
    from ..model import Record

    records: list[Record] = []
    limit, keep_raw = ctx.options.max_line_bytes, ctx.options.keep_raw
    ends, pos, line_no = ctx.line_ends, start, first_line - 1
    ahead = head if head is not None else []
    ahead.reverse()  # (popped from its end: emptied as they are taken)
    while True:
        raw, known = ahead.pop() if ahead else (fh.readline(limit + 1), UNPARSED)
        if not raw:
            break
        line_no += 1
        ctx.ended = raw.endswith(b"\n")
        if ends is not None:
            pos += len(raw)
            ends.append(pos)
        if len(raw) > limit and not raw.endswith(b"\n"):
            _too_long(fh, ctx, raw, line_no, records)
            ends = None  # its length is not known: no offsets after it
            continue
        body = raw[3:] if line_no == 1 and raw.startswith(BOM) else raw
        if blank(body):
            records.append(Record(line=line_no, data=None, raw=raw if keep_raw else None))
            continue
        try:
            value = parse_json(body) if known is UNPARSED else known
        except orjson.JSONDecodeError as error:
            _unparsable(ctx, error, body, raw, line_no, records)
            continue
        if not isinstance(value, dict) or too_deep(body, value):
            _bad_line(ctx, line_no, _not_a_record(value), records, raw, keep_raw)
            continue
        records.append(Record(line=line_no, data=value, raw=raw if keep_raw else None))
    return records


def _not_a_record(value: Any) -> str:
    """Why a line's JSON value is no record: not an object, or nested too deep."""
    if not isinstance(value, dict):
        return f"expected a JSON object, got {_json_kind(value)}"
    return f"JSON nested more than {MAX_DEPTH} levels deep"


def _too_long(fh: Any, ctx: ReadContext, raw: bytes, line_no: int, records: list[Record]) -> None:
    """A line longer than the limit: read past it, and no line's offset is known after it."""
    keep_raw = ctx.options.keep_raw
    raw = _rest_of_line(fh, raw, keep=keep_raw and ctx.options.skip_bad_lines)
    ctx.line_ends = None
    _bad_line(ctx, line_no, f"line is longer than {_size(ctx.options.max_line_bytes)}", records, raw, keep_raw)


def _unparsable(ctx: ReadContext, error: orjson.JSONDecodeError, body: bytes, raw: bytes, line_no: int,
                records: list[Record]) -> None:
    """A line that is no JSON: the error, or (skipping bad lines) a record without data, its bytes kept."""
    from ..model import Record

    exc = _on_its_line(error, body)
    last = not raw.endswith(b"\n")
    if not ctx.options.skip_bad_lines:
        raise_parse_error(exc, body, ctx, line=line_no, last=last)
    ctx.skipped.append((line_no, describe_parse_error(exc, body, last=last)))
    records.append(Record(line=line_no, data=None, raw=raw if ctx.options.keep_raw else None))


def _on_its_line(exc: orjson.JSONDecodeError, body: bytes) -> orjson.JSONDecodeError:
    """The error as of the line alone: orjson puts an end of data past the line's newline (line 2, column 1)."""
    if exc.lineno == 1:
        return exc
    try:
        orjson.loads(body.rstrip(b"\r\n"))
    except orjson.JSONDecodeError as again:
        return again
    return exc


def _rest_of_line(fh: Any, raw: bytes, *, keep: bool) -> bytes:
    """Read past an over-long line; its bytes are kept only when they will be written back."""
    parts = [raw]
    while True:
        chunk = fh.readline(1 << 20)
        if keep:
            parts.append(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return b"".join(parts)


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n >= 1024 * 1024 else f"{n} bytes"


def _bad_line(ctx: ReadContext, line: int, what: str, records: list[Record], raw: bytes, keep_raw: bool) -> None:
    if not ctx.options.skip_bad_lines:
        raise InputError(what, path=ctx.path, line=line, hint=SKIP_HINT)
    ctx.skipped.append((line, what))
    from ..model import Record

    records.append(Record(line=line, data=None, raw=raw if keep_raw else None))


def _json_kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "true/false", type(None): "null"}.get(
        type(value), "a number"
    )


def describe_parse_error(exc: orjson.JSONDecodeError, body: bytes, *, last: bool) -> str:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as bad:
        if last and bad.reason == "unexpected end of data":  # cut inside a character
            return CUT_OFF
        if _looks_binary(body):
            return "binary data, not JSON text"
        return f"bytes that are not UTF-8 (0x{body[bad.start]:02x} at byte {bad.start + 1})"
    if "depth limit" in exc.msg or "recursion" in exc.msg:
        return f"JSON nested more than {MAX_DEPTH} levels deep"
    if last and exc.msg.startswith(("unexpected end", "EOF")):
        return CUT_OFF
    return f"not valid JSON ({exc.msg} at column {exc.colno})"


def _looks_binary(body: bytes) -> bool:
    """NUL bytes, or many control bytes in the first KiB: not text in any encoding."""
    head = body[:1024]
    controls = sum(1 for b in head if b < 9 or 13 < b < 32)
    return b"\x00" in head or controls * 10 > len(head)


def raise_parse_error(exc: orjson.JSONDecodeError, body: bytes, ctx: ReadContext, *, line: int, last: bool) -> None:
    what = describe_parse_error(exc, body, last=last)
    if what.startswith("bytes that are not UTF-8"):
        hint = "re-encode the file as UTF-8 (e.g. iconv -f LATIN1 -t UTF-8)"
    elif what.startswith("binary"):
        hint = "this does not look like a transcript; pass a JSONL or JSON file"
    elif what.startswith("the last line"):  # a document is read whole: skipping lines cannot save it
        hint = "the file may still be being written; " + (
            "read it again once it is complete" if ctx.document else "pass --skip-bad-lines to read the complete lines")
    else:
        hint = SKIP_HINT if not ctx.document else "fix the JSON document"
    raise InputError(what, path=ctx.path, line=line, hint=hint)
