"""A batch folder's record of its work: ``batch.json`` (what the batch is) and ``results.jsonl``.

``batch.json`` is written once, when the folder is claimed: the kind, the settings that decide
the results (and their id), the tcompact version and the root the compact outputs mirror. A run
over a folder claimed for another kind or other settings is refused, so one folder never mixes
results of two batches. ``results.jsonl`` gets one line per finished task, appended whole
(:class:`~tcompact.appending.AppendLog`); the index built from it holds, per path, only a short
key, the sha256 and where the line is — the lines themselves are read back one at a time when a
resumed task needs its figures — about 170 bytes a path.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson

from .. import __version__
from ..appending import AppendLog
from ..artifacts import make_folder, write_json
from ..errors import InputError, OutputError, UsageError

__all__ = ["RESULTS", "BATCH_FILE", "settings_id", "claim", "Results", "dumps_line", "path_key"]

RESULTS = "results.jsonl"
BATCH_FILE = "batch.json"
_SCHEMA = 1


def settings_id(kind: str, fingerprint: Mapping[str, Any]) -> str:
    """A short id of the kind, the version and the settings: equal ids give equal results."""
    doc = {"kind": kind, "version": __version__, "settings": fingerprint}
    return hashlib.sha256(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def claim(folder: Path, *, kind: str, fingerprint: Mapping[str, Any], root: str) -> tuple[str, str]:
    """Make ``folder`` this batch's, or check that it is: returns (settings id, the root to mirror)."""
    sid = settings_id(kind, fingerprint)
    record = folder / BATCH_FILE
    if record.is_file():
        try:
            doc = orjson.loads(record.read_bytes())
            theirs, their_root = f"{doc['kind']} {doc['settings_id']}", doc["root"]
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
            raise InputError("this is not a batch record tcompact can read", path=str(record),
                             hint="choose another --out folder") from None
        if theirs != f"{kind} {sid}":
            changed = _changes(doc.get("settings"), orjson.loads(orjson.dumps(fingerprint)))
            what = f"; changed: {', '.join(changed[:4])}" if doc["kind"] == kind and changed else ""
            raise UsageError(f"the folder holds the results of another batch ({doc['kind']}, settings {doc['settings_id']}"
                             f", tcompact {doc.get('version')}; this one is {kind}, settings {sid}{what})",
                             path=str(folder), hint="use another --out folder, or run with the same options again")
        return sid, str(their_root)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise OutputError("the output folder exists and is not a batch folder (it has no batch.json)",
                          path=str(folder), hint="choose a new or empty folder for --out")
    make_folder(folder)
    write_json(record, {"tool": "tcompact", "version": __version__, "schema_version": _SCHEMA, "kind": kind,
                        "settings_id": sid, "settings": fingerprint, "root": root})
    return sid, root


def _changes(old: Any, new: Any, where: str = "") -> list[str]:
    """The settings that differ, as ``key: old → new`` (dotted keys)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [c for k in dict.fromkeys([*old, *new]) for c in _changes(old.get(k), new.get(k), f"{where}{k}.")]
    return [] if old == new else [f"{where.rstrip('.')}: {orjson.dumps(old).decode()[:40]} → {orjson.dumps(new).decode()[:40]}"]


def path_key(path: str) -> bytes:
    """A 12-byte key of a path (collisions are as likely as a random 96-bit clash)."""
    return hashlib.blake2b(path.encode("utf-8", "surrogateescape"), digest_size=12).digest()


def dumps_line(line: Mapping[str, Any]) -> bytes:
    """A result line: compact JSON with sorted keys, so that equal results are equal bytes."""
    return orjson.dumps(line, option=orjson.OPT_SORT_KEYS)


class Results:
    """``results.jsonl`` of one batch: what is done (for these settings), appending, reading back."""

    def __init__(self, folder: Path, sid: str, *,
                 unfinished: Callable[[Mapping[str, Any]], bool] | None = None) -> None:
        self.path = folder / RESULTS
        self.sid = sid
        self._unfinished = unfinished  # an ok line's figures that --retry-failed redoes as if it had failed
        self._log = AppendLog(self.path)
        self.dropped = self._log.dropped  # bytes of a torn last line cut off
        self.unreadable = 0               # complete lines that are not result lines (edited by hand)
        self._index: dict[bytes, bytes] = {}  # path key → sha256 (32 bytes, or none) + offset (8) + redo (1)
        self._reader = open(self.path, "rb")  # closed in close()
        self._scan()

    def _scan(self) -> None:
        offset = 0
        for raw in self._reader:
            try:
                line = orjson.loads(raw)
                path, sha, sid = line["path"], line["sha256"], line["settings"]
                redo = self._redo(line)
            except (orjson.JSONDecodeError, KeyError, TypeError):
                self.unreadable += 1
            else:
                if sid == self.sid:
                    self._remember(path, sha, offset, redo)
            offset += len(raw)

    def _redo(self, line: Mapping[str, Any]) -> bool:
        """Whether --retry-failed runs this line's task again: it failed, or its kind calls it unfinished."""
        if line["status"] == "failed":
            return True
        return line["status"] == "ok" and self._unfinished is not None and self._unfinished(line["figures"])

    def _remember(self, path: str, sha: str | None, offset: int, redo: bool) -> None:
        packed = (bytes.fromhex(sha) if sha else b"") + offset.to_bytes(8, "little") + bytes([redo])
        self._index[path_key(path)] = packed  # one bytes object: about 170 bytes a path with its key

    def __len__(self) -> int:
        return len(self._index)

    def lookup(self, path: str) -> tuple[str | None, bool] | None:
        """(sha256, to redo under --retry-failed) of the path's recorded line, or None when there is none."""
        hit = self._index.get(path_key(path))
        return None if hit is None else (hit[:-9].hex() or None, bool(hit[-1]))

    def recorded(self, path: str) -> dict[str, Any]:
        """The path's recorded line, read back from the file."""
        self._reader.seek(int.from_bytes(self._index[path_key(path)][-9:-1], "little"))
        return orjson.loads(self._reader.readline())

    def append(self, line: Mapping[str, Any]) -> None:
        """Append a finished task's line; it replaces the path's earlier line in the index."""
        offset = self._log.append(dumps_line(line))
        self._remember(line["path"], line["sha256"], offset, self._redo(line))

    def sync(self) -> None:
        """Flush the appended lines to the disk."""
        self._log.sync()

    def close(self) -> None:
        """Sync and release the file."""
        self._log.close()
        self._reader.close()

