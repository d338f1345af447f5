"""The registry of transcript formats: one class per format, in one explicit tuple.

Every caller that depends on the format asks it here, through the functions below (which read
:data:`REGISTRY` when called) — detection (in registry order), reading,
writing, provider usage, planting for ``tcompact eval``, the help texts and the views — instead of
comparing names. Adding a format is one module with its :class:`Format` class and one entry in
:data:`REGISTRY`. The classes are light (their readers and writers are imported on first use), so
the command line names the formats without importing a reader.
"""

from __future__ import annotations

from ...errors import UsageError
from ...registry import by_name
from .base import Format
from .chat import Chat
from .claude_code import ClaudeCode
from .codex import Codex
from .trajectories import SweAgent, TauBench

__all__ = ["REGISTRY", "Format", "get", "find", "names", "writable", "line_formats", "document_order", "spoken",
           "suffixes"]

#: Every format, in the order ``--format`` lists them and detection asks them.
REGISTRY: tuple[Format, ...] = (Chat(), ClaudeCode(), Codex(), SweAgent(), TauBench())
by_name(REGISTRY, "formats")  # a name given twice fails at import

#: The JSON suffixes any format's files may have; a format's own come after them (``Format.suffixes``).
_JSON_SUFFIXES = (".jsonl", ".json")


def names() -> tuple[str, ...]:
    """Every format name, in registry order."""
    return tuple(f.name for f in REGISTRY)


def writable() -> tuple[str, ...]:
    """The names of the formats tcompact writes."""
    return tuple(f.name for f in REGISTRY if f.writable)


def line_formats() -> tuple[Format, ...]:
    """The formats read as JSON Lines, in the order detection asks them."""
    return tuple(f for f in REGISTRY if f.lines)


def document_order() -> tuple[Format, ...]:
    """The formats in the order a JSON document is matched with them: the loosest shapes last."""
    return tuple(sorted(REGISTRY, key=lambda f: f.general))


def suffixes() -> tuple[str, ...]:
    """The suffixes of the files a folder is searched for: the JSON ones, then the formats' own, in the order
    the formats are matched with a document (the loosest shapes last)."""
    own = [s for f in document_order() for s in f.suffixes]
    return tuple(dict.fromkeys((*_JSON_SUFFIXES, *own)))


def find(name: str) -> Format | None:
    """The format called ``name``, or None."""
    return next((f for f in REGISTRY if f.name == name), None)


def get(name: str) -> Format:
    """The format called ``name``; an unknown name is an error listing the known ones."""
    found = find(name)
    if found is None:
        raise UsageError(f"unknown format {name!r}", hint=f"use one of: {', '.join(names())}")
    return found


def spoken(items: tuple[str, ...]) -> str:
    """Names as a sentence lists them: ``chat, claude-code or codex``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"
