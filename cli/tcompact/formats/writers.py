"""Writing transcripts in the formats tcompact writes (each format's class says how: :mod:`.family`).

Over a source file of the same format, an unchanged transcript gives back the file byte for
byte (chat: every unchanged line keeps its bytes) and a changed one is written in place or as a
compaction (:mod:`tcompact.formats.write_back`). Into another format, the lines are generated
(``Format.write``: :mod:`~tcompact.formats.claude_write`, :mod:`~tcompact.formats.codex_write`).
What the target cannot hold is reported, never dropped silently:
``losses`` are messages it cannot express (the caller refuses unless told to go on), ``notes``
are file bookkeeping that has no place in the target.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from ..errors import UsageError
from ..model import Message, SourceFile, Transcript
from ._merge import join_lines
from .family import get

__all__ = ["Rendered", "serialize"]

_NAMESPACE = uuid.UUID("6f1d3c2a-9b1e-4c55-8a8e-2f4f7d0c9e11")


@dataclass(frozen=True)
class Rendered:
    """The bytes of a written transcript, what the target could not hold, and what stayed behind."""

    data: bytes
    losses: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    #: the transcript as the file holds it, when that is less than what was given (encrypted
    #: reasoning, which no writer can carry into another format); None when it is all of it
    written: Transcript | None = None


def serialize(transcript: Transcript, fmt: str, *, source: SourceFile | None = None, now: str | None = None,
           pre_tokens: int | None = None) -> Rendered:
    """Write ``transcript`` as ``fmt`` (see the module docstring); ``pre_tokens`` is the size of the
    context before a compaction, recorded in a Claude Code compact boundary."""
    when = now or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    form = get(fmt)
    if source is not None and source.format == fmt and not source.meta.get("document"):
        original = source.transcript(transcript.id)
        _need_raw(source)  # chat too: without the bytes of its lines, an unchanged file would come out empty
        return form.write_back(source, original, transcript, now=when, pre_tokens=pre_tokens)
    session = str(uuid.uuid5(_NAMESPACE, f"{source.path if source else ''}/{transcript.id}"))
    unsigned = not form.writes_reasoning
    notes = tuple(_notes(transcript, source)) + _unwritten_reasoning(transcript, unsigned)
    written = _without_encrypted(transcript, text_too=unsigned)
    lines, losses = form.write(transcript, now=when, session=session)
    return Rendered(join_lines(lines), tuple(losses), notes, written)


def _without_encrypted(t: Transcript, *, text_too: bool = False) -> Transcript | None:
    """The transcript without its encrypted reasoning (None when it has none): the generated lines
    of every format carry readable reasoning only (``text_too``: none at all)."""
    def dropped(m: Message) -> bool:
        return any(r.encrypted_chars or (text_too and r.text) for r in m.reasoning)

    if not any(dropped(m) for m in t.messages):
        return None
    messages = tuple(
        replace(m, reasoning=tuple(replace(r, encrypted_chars=0) for r in m.reasoning
                                   if r.text and not text_too)) if dropped(m) else m
        for m in t.messages)
    return replace(t, messages=messages)


def _unwritten_reasoning(t: Transcript, unsigned: bool) -> tuple[str, ...]:
    readable = sum(1 for m in t.messages for r in m.reasoning if r.text) if unsigned else 0
    return (f"{readable} reasoning item(s) are not written: a Claude Code thinking block needs a signature only the "
            "model's provider can make",) if readable else ()


def _need_raw(source: SourceFile) -> None:
    if any(r.raw is None for r in source.records):
        raise UsageError("this file was read without its raw bytes", path=source.path,
                         hint="read it with ReadOptions(keep_raw=True) to write it back")


def _notes(transcript: Transcript, source: SourceFile | None) -> list[str]:
    """File bookkeeping that a conversion leaves behind."""
    if source is None:
        return []
    notes = []
    others = [t for t in source.transcripts if t.id != transcript.id]
    if others:
        ids = ", ".join(t.id for t in others[:5]) + (" …" if len(others) > 5 else "")
        notes.append(f"{len(others)} other transcript(s) in the file not included ({ids}); pass --transcript ID")
    used = {i for t in source.transcripts for m in t.messages for i in m.source}
    episodes = {m.meta.get("line") for t in source.transcripts if t.kind == "episode" for m in t.messages}
    left = [] if source.meta.get("document") else [
        r.data for i, r in enumerate(source.records) if i not in used and r.data is not None and r.line not in episodes]
    earlier = sum(1 for d in left if d.get("type") in ("user", "assistant") and isinstance(d.get("message"), dict))
    if earlier:
        notes.append(f"{earlier} message line(s) outside the active context (before a compaction, or on an "
                     "abandoned branch) stay behind; pass --full-history to include what precedes a compaction")
    kinds = Counter(_record_kind(d) for d in left if not (d.get("type") in ("user", "assistant")
                                                          and isinstance(d.get("message"), dict)))
    if kinds:
        listed = ", ".join(f"{k} ×{n}" for k, n in kinds.most_common())
        notes.append(f"{sum(kinds.values())} record(s) that are not messages stay behind: {listed}")
    encrypted = sum(1 for m in transcript.messages for r in m.reasoning if r.encrypted_chars)
    if encrypted:
        notes.append(f"{encrypted} encrypted reasoning item(s) are opaque and cannot be carried over")
    return notes


def _record_kind(data: Mapping[str, Any]) -> str:
    kind = str(data.get("type") or "record")
    payload = data.get("payload")
    if isinstance(payload, dict) and isinstance(payload.get("type"), str):
        return f"{kind}/{payload['type']}"
    return kind
