"""Mutation operators for the fuzz suite: pure functions ``(bytes, random.Random) -> bytes``.

Each takes the bytes of a transcript file (JSON Lines or one JSON document) and a seeded
``random.Random`` and returns mutated bytes; the same seed always gives the same bytes. The
structural operators (ids, types, huge strings, nesting, NaN) parse one record — a JSONL line,
or the whole document — change one node of it and write it back; a file with nothing to change
comes back as it was.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import orjson

__all__ = ["OPERATORS", "mutate", "lines_of"]

ID_KEYS = ("uuid", "parentUuid", "tool_call_id", "call_id", "id", "tool_use_id", "leafUuid", "sessionId")
_NESTING = 10_000  # far beyond orjson's 1024 levels


def lines_of(data: bytes) -> list[bytes]:
    """The lines of ``data``, each with its own line ending (the last may have none)."""
    return data.splitlines(keepends=True)


def _join(lines: list[bytes]) -> bytes:
    return b"".join(x if x.endswith(b"\n") else x + b"\n" for x in lines[:-1]) + (lines[-1] if lines else b"")


# -- byte and line level ------------------------------------------------------------------------

def truncate(data: bytes, rng: random.Random) -> bytes:
    """Cut the file at a random byte (as a writer killed midway leaves it)."""
    return data[: rng.randrange(1, len(data))] if len(data) > 1 else data


def drop_line(data: bytes, rng: random.Random) -> bytes:
    """Remove one to three lines."""
    lines = lines_of(data)
    for _ in range(rng.randint(1, 3)):
        if len(lines) > 1:
            del lines[rng.randrange(len(lines))]
    return _join(lines)


def shuffle_lines(data: bytes, rng: random.Random) -> bytes:
    """Shuffle all lines, or a window of them."""
    lines = [x if x.endswith(b"\n") else x + b"\n" for x in lines_of(data)]
    if rng.random() < 0.5 or len(lines) < 4:
        rng.shuffle(lines)
    else:
        i = rng.randrange(len(lines) - 2)
        window = lines[i : i + rng.randint(2, 6)]
        rng.shuffle(window)
        lines[i : i + len(window)] = window
    return b"".join(lines)


def duplicate_line(data: bytes, rng: random.Random) -> bytes:
    """Repeat a line, right after itself or somewhere else."""
    lines = [x if x.endswith(b"\n") else x + b"\n" for x in lines_of(data)]
    if not lines:
        return data
    i = rng.randrange(len(lines))
    lines.insert(i + 1 if rng.random() < 0.5 else rng.randrange(len(lines) + 1), lines[i])
    return b"".join(lines)


def invalid_utf8(data: bytes, rng: random.Random) -> bytes:
    """Put bytes that are not UTF-8 somewhere: inside a string value, or anywhere."""
    bad = rng.choice([b"\xff", b"\xc3\x28", b"\xe9", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80\x80"])
    quotes = [i for i in range(len(data)) if data[i : i + 1] == b'"'][:5000]
    at = rng.choice(quotes) + 1 if quotes and rng.random() < 0.8 else rng.randrange(len(data) + 1)
    return data[:at] + bad + data[at:]


def bom(data: bytes, rng: random.Random) -> bytes:
    """A UTF-8 byte order mark in front (sometimes twice, or in front of a later line)."""
    roll = rng.random()
    if roll < 0.6:
        return b"\xef\xbb\xbf" + data
    if roll < 0.8:
        return b"\xef\xbb\xbf\xef\xbb\xbf" + data
    lines = lines_of(data)
    if not lines:
        return b"\xef\xbb\xbf"
    i = rng.randrange(len(lines))
    lines[i] = b"\xef\xbb\xbf" + lines[i]
    return b"".join(lines)


def crlf(data: bytes, rng: random.Random) -> bytes:
    """Windows line endings, everywhere or on some lines."""
    if rng.random() < 0.7:
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    return b"".join(x[:-1] + b"\r\n" if x.endswith(b"\n") and rng.random() < 0.5 else x for x in lines_of(data))


def empty(data: bytes, rng: random.Random) -> bytes:
    """No bytes at all."""
    return b""


def whitespace_only(data: bytes, rng: random.Random) -> bytes:
    """Only blank lines, spaces and tabs."""
    return bytes(rng.choice(b" \t\n\r") for _ in range(rng.randint(1, 64))) + b"\n"


# -- structural: one record is parsed, one node of it changed, and written back ------------------

def _nodes(value: Any, limit: int = 4000) -> list[tuple]:
    """Paths to the nodes of a JSON value (depth first, at most ``limit``, at most 100 levels down)."""
    out: list[tuple] = []
    stack: list[tuple[tuple, Any]] = [((), value)]
    while stack and len(out) < limit:
        path, v = stack.pop()
        out.append(path)
        if len(path) >= 100:
            continue
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        stack.extend(reversed([((*path, k), x) for k, x in items]))
    return out


def _get(value: Any, path: tuple) -> Any:
    for p in path:
        value = value[p]
    return value


def _set(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    _get(value, path[:-1])[path[-1]] = new
    return value


def _records(data: bytes) -> tuple[list[bytes], list[tuple[int, Any]], bool]:
    """(lines, [(line index, parsed value)], whether the file is one JSON document)."""
    try:
        return [data], [(0, orjson.loads(data))], True
    except orjson.JSONDecodeError:
        pass
    lines = lines_of(data)
    parsed = []
    for i, line in enumerate(lines):
        try:
            parsed.append((i, orjson.loads(line)))
        except orjson.JSONDecodeError:
            continue
    return lines, parsed, False


def _edit(data: bytes, rng: random.Random, change: Callable[[Any, random.Random], tuple[Any, dict] | None]) -> bytes:
    """Apply ``change`` (value -> (new value, placeholders) or None) to one random record."""
    lines, parsed, document = _records(data)
    rng.shuffle(parsed)
    for i, value in parsed[:20]:
        changed = change(value, rng)
        if changed is None:
            continue
        new, raw = changed
        try:
            text = json.dumps(new, allow_nan=True)  # ASCII: a lone surrogate stays an escape
        except (RecursionError, ValueError):  # a record nested too deep by an earlier mutation
            continue
        for token, literal in raw.items():  # text no serialiser writes (deep nesting)
            text = text.replace(json.dumps(token), literal)
        ending = b"\n" if lines[i].endswith(b"\n") or document else b""
        lines[i] = text.encode() + ending
        return b"".join(lines)
    return data


def _id_paths(value: Any) -> list[tuple]:
    return [p for p in _nodes(value) if p and p[-1] in ID_KEYS]


def duplicate_id(data: bytes, rng: random.Random) -> bytes:
    """Give a record's id field the value of another id of the file (or of itself, elsewhere)."""
    lines, parsed, _ = _records(data)
    pool = [_get(v, p) for _, v in parsed for p in _id_paths(v)]
    if not pool:
        return data

    def change(value: Any, rng: random.Random):
        paths = _id_paths(value)
        if not paths:
            return None
        return _set(value, rng.choice(paths), rng.choice(pool)), {}

    return _edit(data, rng, change)


def remove_id(data: bytes, rng: random.Random) -> bytes:
    """Remove an id field (uuid, parentUuid, tool_call_id, call_id, id, ...)."""
    def change(value: Any, rng: random.Random):
        paths = _id_paths(value)
        if not paths:
            return None
        path = rng.choice(paths)
        del _get(value, path[:-1])[path[-1]]
        return value, {}

    return _edit(data, rng, change)


_ODD = [None, True, False, 0, -1, 1.5, 2**63, -(2**70), "", "x", [], [1, "a", None], {}, {"a": {"b": []}},
        "\u0000", "\ud800", "😀" * 3, "<system-reminder>", "null"]


def wrong_type(data: bytes, rng: random.Random) -> bytes:
    """Give a node a value of another JSON type (or an odd value of the same one)."""
    def change(value: Any, rng: random.Random):
        nodes = _nodes(value)
        for _ in range(3):  # a few nodes of one record
            path = rng.choice(nodes)
            old = _get(value, path)
            choices = [v for v in _ODD if type(v) is not type(old)] or _ODD
            value = _set(value, path, rng.choice(choices))
            nodes = _nodes(value)
        return value, {}

    return _edit(data, rng, change)


def huge_string(data: bytes, rng: random.Random) -> bytes:
    """Replace a string value by one of 2–5 MB (one word repeated, or varied text)."""
    size = rng.randint(2, 5) * 1024 * 1024

    def change(value: Any, rng: random.Random):
        strings = [p for p in _nodes(value) if isinstance(_get(value, p), str)]
        if not strings:
            return None
        unit = rng.choice(["a", "word ", "línea ✓\n", "0123456789abcdef", "漢字"])
        return _set(value, rng.choice(strings), unit * (size // len(unit.encode()))), {}

    return _edit(data, rng, change)


def deep_nesting(data: bytes, rng: random.Random) -> bytes:
    """Replace a node by lists/objects nested 10 000 deep (or, sometimes, just under orjson's limit)."""
    depth = _NESTING if rng.random() < 0.6 else rng.choice([200, 300, 600, 1000])

    def change(value: Any, rng: random.Random):
        token = "__deep_nesting__"
        if rng.random() < 0.5:
            literal = "[" * depth + "1" + "]" * depth
        else:
            literal = '{"a":' * depth + "null" + "}" * depth
        return _set(value, rng.choice(_nodes(value)), token), {token: literal}

    return _edit(data, rng, change)


def nan_infinity(data: bytes, rng: random.Random) -> bytes:
    """Put NaN, Infinity or -Infinity literals where numbers or other values were."""
    def change(value: Any, rng: random.Random):
        nodes = _nodes(value)
        numbers = [p for p in nodes if isinstance(_get(value, p), int | float) and not isinstance(_get(value, p), bool)]
        path = rng.choice(numbers if numbers and rng.random() < 0.7 else nodes)
        return _set(value, path, rng.choice([float("nan"), float("inf"), float("-inf")])), {}

    return _edit(data, rng, change)


OPERATORS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "truncate": truncate,
    "drop_line": drop_line,
    "shuffle_lines": shuffle_lines,
    "duplicate_line": duplicate_line,
    "duplicate_id": duplicate_id,
    "remove_id": remove_id,
    "wrong_type": wrong_type,
    "huge_string": huge_string,
    "invalid_utf8": invalid_utf8,
    "deep_nesting": deep_nesting,
    "nan_infinity": nan_infinity,
    "bom": bom,
    "crlf": crlf,
    "empty": empty,
    "whitespace_only": whitespace_only,
}


def mutate(data: bytes, operator: str, seed: int) -> bytes:
    """``OPERATORS[operator]`` over ``data`` with ``random.Random(seed)``; "a+b" applies both in turn."""
    rng = random.Random(seed)
    for name in operator.split("+"):
        data = OPERATORS[name](data, rng)
    return data
