"""Writing chat JSON Lines: one OpenAI chat message per line.

Over a chat JSON Lines source, unchanged messages and every other record keep their bytes (an
episode's line is rewritten with its new messages, its other keys kept); a line is written with
:func:`dumps_line`, which the other writers use too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from ..model import Message, Record, Transcript
from ._merge import merge_records
from .chat import episode_id, message_to_dict

__all__ = ["dumps_line", "write"]


def dumps_line(d: Any) -> bytes:
    """One JSON line; falls back to the standard library for strings orjson refuses (lone surrogates),
    written as ``\\udXXX`` escapes: UTF-8 cannot hold them, and the line must read back."""
    try:
        return orjson.dumps(d) + b"\n"
    except TypeError:
        import json

        return json.dumps(d, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "backslashreplace") + b"\n"


def write(transcript: Transcript, original: Transcript | None, records: Sequence[Record] | None) -> list[bytes]:
    """Chat JSONL lines; over a chat-JSONL source, unchanged messages and other records keep their bytes."""
    def render(m: Message) -> list[bytes]:
        return [dumps_line(message_to_dict(m))]

    if original is None or not records:
        return [line for m in transcript.messages for line in render(m)]
    if original.kind == "episode":
        return _write_episode(transcript, original, records)
    return merge_records(records, original.messages, transcript.messages, render)


def _write_episode(transcript: Transcript, original: Transcript, records: Sequence[Record]) -> list[bytes]:
    """Every record as it was, the episode's own line holding the new messages (each unchanged
    message as its original item) and every other key of that line."""
    lines = [r.raw or b"" for r in records]
    if transcript.messages == original.messages:
        return lines
    at = next(i for i, r in enumerate(records) if r.data is not None and episode_id(r) == original.id)
    items = records[at].data["messages"]
    kept = {m.meta.get("item"): m for m in original.messages}

    def item(m: Message) -> Any:
        j = m.meta.get("item")
        return items[j] if j is not None and kept.get(j) == m else message_to_dict(m)

    skipped = [j for j in range(len(items)) if j not in kept]  # --skip-bad-lines items: kept where they were
    out = []
    for m in transcript.messages:
        while skipped and m.meta.get("item") is not None and skipped[0] < m.meta["item"]:
            out.append(items[skipped.pop(0)])
        out.append(item(m))
    out += [items[j] for j in skipped]
    eol = b"\r\n" if lines[at].endswith(b"\r\n") else b"\n" if lines[at].endswith(b"\n") else b""
    lines[at] = dumps_line({**records[at].data, "messages": out})[:-1] + eol
    return lines
