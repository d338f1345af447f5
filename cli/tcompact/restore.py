"""Putting offloaded originals back: the library side of ``tcompact restore``.

``offload`` rewrites tool results in place and stores each original with the exact bytes of the
line(s) it came from. Restoring swaps those lines back, so a chat or Claude Code file comes back
byte for byte (a Codex file too, when nothing else changed it). An original read from one JSON
document (SWE-agent, tau-bench, a chat array or ``{"messages": …}``) has no line of its own: the
compacted file is chat JSONL then, and the stored message goes back as its chat line, so the result
is the file ``tcompact convert --to chat`` makes of the input.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from .errors import InputError
from .formats import ReadOptions, join_lines, read_file
from .formats.chat_write import dumps_line
from .markers import OFFLOAD_PATTERN

__all__ = ["restore_file", "MARKER"]

MARKER = OFFLOAD_PATTERN


def restore_file(path: str | Path, *, store: str | Path | None = None, read: ReadOptions | None = None
                 ) -> tuple[bytes, int, tuple[tuple[int, str], ...]]:
    """The restored file bytes, how many offloaded messages were put back, and the lines skipped as
    malformed (``read.skip_bad_lines``), which are written back as they are."""
    source = read_file(path, read or ReadOptions())
    replaced: dict[int, bytes] = {}
    for t in source.transcripts:
        for m in t.messages:
            for handle, marker_path in MARKER.findall(m.text):
                doc = _blob(handle, marker_path, store, source.path)
                lines = _lines(doc, handle, source.format, source.path)
                for k, i in enumerate(m.source):
                    if k < len(lines):
                        replaced[i] = lines[k]
    if not replaced:
        raise InputError("no offload markers in this transcript", path=str(path),
                         hint="pass a file written by `tcompact compact -c offload`")
    lines = [replaced.get(i, r.raw or b"") for i, r in enumerate(source.records)]
    return join_lines(lines), len(replaced), source.skipped


def _lines(doc: dict, handle: str, fmt: str, shown: str) -> list[bytes]:
    """The line(s) that take the marker's place: the original bytes when the compacted file is in
    the original's format, else (an original read from one JSON document — a SWE-agent or
    tau-bench file, a chat array — which has no line of its own) the stored message as a chat line."""
    src = doc["source"]
    if src.get("raw") and src.get("format") == fmt:
        return [line.encode("utf-8", "surrogateescape") for line in src["raw"]]
    messages = doc.get("messages")
    if fmt == "chat" and isinstance(messages, list) and len(messages) == 1 and isinstance(messages[0], dict):
        return [dumps_line(messages[0])]
    raise InputError(f"the offloaded original {handle} ({src.get('format')}) cannot be put back into a {fmt} file",
                     path=shown, hint="restore the file the compaction wrote, in the format it wrote")


def _blob(handle: str, marker_path: str, store: str | Path | None, shown: str) -> dict:
    blob = Path(store) / f"{handle}.json" if store is not None else Path(marker_path.strip())
    try:
        doc = orjson.loads(blob.read_bytes())
    except FileNotFoundError:
        raise InputError(f"the offloaded original {handle} is missing ({blob})", path=shown,
                         hint="pass --store with the folder the compaction wrote") from None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise InputError(f"cannot read the offloaded original {blob}: {exc}", path=shown,
                         hint="the offload store is damaged") from None
    src = doc.get("source") if isinstance(doc, dict) else None
    if not isinstance(src, dict) or doc.get("offload_handle") != handle or not isinstance(src.get("raw"), list):
        raise InputError(f"{blob} is not the offload record of {handle}", path=shown,
                         hint="pass --store with the folder the compaction wrote")
    return doc
