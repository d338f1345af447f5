"""Whole-file inspect reports, kept by what they were made from: a second look at an unchanged file.

Counting is cached per text (:mod:`tcompact.counting.cache`), but a second ``inspect`` of a large file
would still read it all again — parse every line, build the transcript, hash and look up every
text — which is most of what a cached run costs. This cache keeps the finished report of a file
(the per-file object of ``inspect --json``) under a key that covers everything the report is a
function of, so that a report found is the report the run would make:

* the sha256 of the file's bytes — of the bytes the report was made from: the file is hashed
  before it is read and again as it is read, and a report is kept only when the two agree (a file
  written to while it was read keeps nothing);
* the inspect options (their repr: the read options, encoding, model, window, spans, top);
* the code: tcompact's version and the size and modification time of every file of the package
  (an edited checkout never reads a report an older one made), the encodings' fingerprints (rank
  files, split patterns, the tiktoken release), orjson's version and Python's.

The report's ``path`` is not in the key (copies of one file share a report); it is put back as the
file was named this time. Reports live in ``reports-v1/`` of the token cache folder, each written
atomically with its sha256 (:func:`tcompact.counting.cache.write_blob`; a damaged one is a miss), at
most :data:`MAX_REPORTS` of them and :data:`MAX_BYTES` in all: the least recently used go first
(a hit refreshes its report's modification time). ``--no-cache`` and ``TCOMPACT_NO_CACHE`` turn it
off with the token cache; deleting the folder is always safe.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..counting import cache as tokencache

if TYPE_CHECKING:
    from .shapes import FileReport

__all__ = ["FOLDER", "MAX_BYTES", "MAX_REPORTS", "Slot", "slot", "slot_of", "get", "put", "evict", "code_digest"]

FOLDER = "reports-v1"
MAX_REPORTS = 2000
MAX_BYTES = 128 << 20
_EVICT_EVERY = 32  # a process checks the bounds on its first write and every 32nd after it
_writes = 0


@dataclass(frozen=True)
class Slot:
    """Where the report of one file with one set of options is kept, and the digest it was keyed by."""

    name: str
    digest: bytes

    def hasher(self) -> Any:
        """A hash to feed the bytes as they are read (:func:`tcompact.formats.read_file`'s ``digest``)."""
        return hashlib.sha256()


def slot(path: str | Path, options: object) -> Slot | None:
    """The slot of ``path`` read with ``options`` (hashing the file), or None when caching is off or
    the file cannot be read (reading it will then say why)."""
    if not tokencache.enabled():
        return None
    from ..formats._digest import file_digest

    digest = file_digest(Path(path))
    return None if digest is None else slot_of(digest, options)


def slot_of(digest: bytes, options: object) -> Slot:
    """The slot of a file whose bytes have this sha256, read with ``options``."""
    key = hashlib.sha256(code_digest())
    key.update(repr(options).encode("utf-8", "backslashreplace"))
    key.update(digest)
    return Slot(f"{FOLDER}/{key.hexdigest()[:40]}.json", digest)


def get(where: Slot, path: str | Path) -> FileReport | None:
    """The kept report, its ``path`` that of this file; None when there is none (or it is damaged)."""
    import orjson

    blob = tokencache.read_blob(where.name)
    if blob is None:
        return None
    try:
        body = orjson.loads(blob)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(body, dict):
        return None
    try:
        os.utime(tokencache.cache_folder() / where.name)  # recently used: evicted last
    except OSError:
        pass
    return cast("FileReport", {"path": str(path), **body})


def put(where: Slot, report: FileReport, read: Any) -> None:
    """Keep ``report`` when ``read`` (the hash fed while reading) says it was made from the bytes the
    slot was keyed by; then keep the folder within its bounds."""
    global _writes
    if read is None or read.digest() != where.digest:
        return
    import orjson

    try:
        data = orjson.dumps({k: v for k, v in report.items() if k != "path"})
    except TypeError:  # nothing a report holds, but a report that cannot be kept is no error
        return
    tokencache.write_blob(where.name, data)
    _writes += 1
    if _writes % _EVICT_EVERY == 1:
        evict(tokencache.cache_folder() / FOLDER)


def evict(folder: Path, *, max_reports: int = MAX_REPORTS, max_bytes: int = MAX_BYTES, suffix: str = ".json") -> int:
    """Remove the least recently used reports (files ending in ``suffix``) until the folder holds at most
    ``max_reports`` of them and ``max_bytes`` bytes; how many were removed (another process removing them
    too is no error)."""
    try:
        with os.scandir(folder) as entries:
            found = [(st.st_mtime_ns, st.st_size, e.path) for e in entries
                     if e.name.endswith(suffix) and (st := _stat(e)) is not None]
    except OSError:
        return 0
    count, size = len(found), sum(s for _, s, _ in found)
    removed = 0
    for _, s, path in sorted(found):
        if count <= max_reports and size <= max_bytes:
            break
        try:
            os.unlink(path)
            removed += 1
        except OSError:
            pass
        count, size = count - 1, size - s
    return removed


def _stat(entry: os.DirEntry) -> os.stat_result | None:
    try:
        return entry.stat()
    except OSError:
        return None


def code_digest() -> bytes:
    """What a report (and a kept read state) depends on besides the file and the options: the code."""
    return _code()


@cache
def _code() -> bytes:
    """What a report depends on besides the file and the options: the code that made it."""
    import sys

    import orjson

    from .. import __version__
    from ..counting.encodings import ENCODINGS, fingerprint

    digest = hashlib.sha256("\0".join(("tcompact-report-v1", __version__, sys.version, orjson.__version__)).encode())
    for name in ENCODINGS:
        digest.update(fingerprint(name))
    for entry in _package_files(Path(__file__).parents[1]):
        digest.update(entry.encode("utf-8", "surrogateescape"))
    return digest.digest()


def _package_files(root: Path) -> list[str]:
    """``relative path, size, mtime`` of every file of the package (not its bytecode), sorted."""
    out, folders = [], [str(root)]
    skip = len(str(root)) + 1  # (the path below root: os.path.relpath was a tenth of a second look)
    while folders:
        with os.scandir(folders.pop()) as entries:
            for e in entries:
                if e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__":
                        folders.append(e.path)
                elif (st := _stat(e)) is not None:
                    out.append(f"{e.path[skip:]}\0{st.st_size}\0{st.st_mtime_ns}\n")
    return sorted(out)
