"""Converting a transcript file to another format (the library side of ``tcompact convert``)."""

from __future__ import annotations

from pathlib import Path

from .errors import UsageError
from .formats import ReadOptions, Rendered, read_file, serialize, writable

__all__ = ["convert_file"]


def convert_file(path: str | Path, to: str, *, read: ReadOptions | None = None, transcript: str | None = None,
                 lossy: bool = False, now: str | None = None) -> Rendered:
    """The converted bytes of one transcript of ``path``; refuses losses unless ``lossy``."""
    if to not in writable():
        raise UsageError(f"cannot convert to {to!r}", hint=f"use --to {', '.join(writable())}")
    source = read_file(path, read or ReadOptions())
    chosen = source.transcript(transcript)
    result = serialize(chosen, to, source=source, now=now)
    if result.losses and not lossy:
        listed = "; ".join(result.losses[:3]) + (f"; and {len(result.losses) - 3} more" if len(result.losses) > 3 else "")
        raise UsageError(f"{to} cannot represent {len(result.losses)} part(s) of this transcript: {listed}",
                         path=str(path), hint="pass --lossy to convert anyway without them, or convert to chat")
    notes = result.notes + tuple(f"dropped: {loss}" for loss in result.losses)
    skipped = tuple(f"skipped bad line {line}: {reason}" for line, reason in source.skipped)
    return Rendered(result.data, result.losses, skipped + notes)
