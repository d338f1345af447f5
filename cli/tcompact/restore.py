"""Putting offloaded originals back: the library side of ``tcompact restore``.

``offload`` rewrites tool results in place and stores each original with the exact bytes of the
line(s) it came from. Restoring swaps those lines back, so a chat or Claude Code file comes back
byte for byte (a Codex file too, when nothing else changed it).
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from .errors import InputError
from .formats import ReadOptions, join_lines, read_file

__all__ = ["restore_file", "MARKER"]

MARKER = re.compile(r"\[\[OFFLOAD: handle=([0-9A-Za-z_-]+), type=\w+(?:, path=([^\]\n]+))?\]\]")


def restore_file(path: str | Path, *, store: str | Path | None = None, read: ReadOptions | None = None) -> tuple[bytes, int]:
    """The restored file bytes and how many offloaded messages were put back."""
    source = read_file(path, read or ReadOptions())
    replaced: dict[int, bytes] = {}
    for t in source.transcripts:
        for m in t.messages:
            for handle, marker_path in MARKER.findall(m.text):
                raw = _raw(handle, marker_path, store, source.path)
                for k, i in enumerate(m.source):
                    if k < len(raw):
                        replaced[i] = raw[k]
    if not replaced:
        raise InputError("no offload markers in this transcript", path=str(path),
                         hint="pass a file written by `tcompact compact -c offload`")
    lines = [replaced.get(i, r.raw or b"") for i, r in enumerate(source.records)]
    return join_lines(lines), len(replaced)


def _raw(handle: str, marker_path: str, store: str | Path | None, shown: str) -> list[bytes]:
    blob = Path(store) / f"{handle}.json" if store is not None else Path(marker_path.strip())
    try:
        doc = orjson.loads(blob.read_bytes())
    except FileNotFoundError:
        raise InputError(f"the offloaded original {handle} is missing ({blob})", path=shown,
                         hint="pass --store with the folder the compaction wrote") from None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise InputError(f"cannot read the offloaded original {blob}: {exc}", path=shown,
                         hint="the offload store is damaged") from None
    raw = (doc.get("source") or {}).get("raw") if isinstance(doc, dict) else None
    if doc.get("offload_handle") != handle or not isinstance(raw, list):
        raise InputError(f"{blob} is not the offload record of {handle}", path=shown,
                         hint="pass --store with the folder the compaction wrote")
    return [line.encode("utf-8", "surrogateescape") for line in raw]
