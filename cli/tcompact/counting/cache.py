"""The persistent token-count cache: counts of texts already tokenised, shared by every tcompact process.

Users inspect the same, growing sessions again and again; tokenising is most of the work and
loading the tokenizer is most of the start-up. This cache keeps the count of every text counted
before, keyed by a hash of the encoding and the text, in the user's cache folder
(``platformdirs.user_cache_dir("tcompact")``; ``TCOMPACT_CACHE_DIR`` overrides it;
``TCOMPACT_NO_CACHE=1``, set by ``--no-cache``, turns it off), so a text is tokenised once per
machine and the tokenizer is not even loaded when every text is found.

The store is one fixed-size file, ``tokens-v1.bin`` (:mod:`tcompact.counting.table`): buckets of
32-byte slots; a full bucket gives up its least recently used slot (eviction), so the file never
grows past its size (16 MiB, 524,288 counts by default). It was
chosen over sqlite3 by measurement (``tests/benchmarks/bench_token_cache.py``, 200,000 counts
stored: a small session's lookups 2.5× faster, adding 20,000 counts 1.6× faster, 20,000 lookups
as fast) and because its bound and eviction come with the layout, where an sqlite file grows
until an eviction pass deletes rows (and does not shrink without VACUUM).

Several processes at once: reads take no lock (``os.pread``; a slot read while another process
writes it fails its CRC and is a miss), writes take an exclusive ``flock`` on ``tokens-v1.lock``
and write whole slots. A damaged file (bad header, wrong size) is replaced by an empty one under
the lock, silently: the cache can only make a run faster, never its figures different. Any
OS error turns the cache off for the rest of the process.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from .table import BUCKETS, LOCK, TABLE, WAYS, TokenCache

__all__ = ["CACHE_ENV", "ENDS", "GROWN_FROM", "NO_CACHE_ENV", "TokenCache", "cache_folder", "enabled", "grown_by", "keep_end",
           "shared_cache", "text_keys",
           "read_blob", "write_blob", "TABLE", "LOCK", "WAYS", "BUCKETS"]

CACHE_ENV = "TCOMPACT_CACHE_DIR"
NO_CACHE_ENV = "TCOMPACT_NO_CACHE"


def cache_folder() -> Path:
    """Where the cache lives: ``TCOMPACT_CACHE_DIR``, else the user's cache folder for tcompact."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("tcompact", appauthor=False))


def enabled() -> bool:
    """Whether caching is on: ``TCOMPACT_NO_CACHE`` unset, empty or 0."""
    return os.environ.get(NO_CACHE_ENV, "") in ("", "0")


_SHARED: dict[Path, TokenCache] = {}


def shared_cache() -> TokenCache | None:
    """The process's cache of the current folder, or None when caching is off (``TCOMPACT_NO_CACHE``)."""
    if not enabled():
        return None
    folder = cache_folder()
    cache = _SHARED.get(folder)
    if cache is None:
        cache = _SHARED[folder] = TokenCache(folder)
    return cache if cache.ready() else None


_HUGE = 1 << 22  # characters: a longer text is hashed in pieces, so no whole UTF-8 copy of it is made


def text_keys(salt: bytes, texts: Sequence[str]) -> list[bytes]:
    """The cache key of each text: 16 bytes of SHA-1 over ``salt`` (the encoding) and the text's UTF-8.

    SHA-1 is the fastest hash of the standard library here (a cache key needs no collision
    resistance against an attacker: the worst a crafted pair could do is share a count).
    """
    base = hashlib.sha1(salt, usedforsecurity=False)
    out = []
    for text in texts:
        h = base.copy()
        if len(text) <= _HUGE:
            h.update(text.encode("utf-8", "surrogatepass"))
        else:
            for start in range(0, len(text), _HUGE):
                h.update(text[start:start + _HUGE].encode("utf-8", "surrogatepass"))
        out.append(h.digest()[:16])
    return out


#: Bytes a file must have grown by since its last read for a copy of the process to build the tokenizer while it
#: is read on (:mod:`tcompact.counting.helper`): fewer hold few new texts, often all counted before.
GROWN_FROM = 1 << 18
ENDS = "resume-v1/ends"  # one file a path (``<sha256 of the resolved path>.end``), evicted with the states


def keep_end(path: str | Path, end: int) -> None:
    """Keep where the last read of ``path`` (resolved) stopped: :func:`grown_by` reads it before anything else."""
    try:
        write_blob(f"{ENDS}/{_path_key(path)}.end", end.to_bytes(8, "little"))
    except (OSError, RuntimeError, OverflowError):
        pass


def grown_by(path: str | Path, end: int | None = None) -> int:
    """Bytes ``path`` holds past ``end``, by default where its last read stopped (:func:`keep_end`: a hint, read
    before the state of that read is loaded, which says for sure); 0 when none was kept, the file is smaller or
    cannot be looked at."""
    try:
        if end is None:
            blob = read_blob(f"{ENDS}/{_path_key(path)}.end")
            end = int.from_bytes(blob, "little") if blob is not None and len(blob) == 8 else None
        size = os.stat(path).st_size
    except (OSError, RuntimeError):
        return 0
    return max(size - end, 0) if end is not None else 0


def _path_key(path: str | Path) -> str:
    return hashlib.sha256(os.fsencode(Path(path).resolve())).hexdigest()[:40]


def read_blob(name: str) -> bytes | None:
    """A derived file kept beside the counts (the decoded tokenizer tables), None when caching is
    off, the file is missing, or its content no longer matches the sha256 it was written with."""
    if not enabled():
        return None
    try:
        data = (cache_folder() / name).read_bytes()
    except OSError:
        return None
    body = data[32:]
    return body if len(data) > 32 and hashlib.sha256(body).digest() == data[:32] else None


def write_blob(name: str, data: bytes) -> None:
    """Keep a derived file (atomically: temporary file, then rename); failing to is no error.
    ``name`` may name a file in a subfolder of the cache folder (``reports-v1/KEY``)."""
    if not enabled():
        return
    target = cache_folder() / name
    tmp = target.parent / f".{target.name}.{os.getpid()}.tmp"
    try:
        cache_folder().mkdir(mode=0o700, parents=True, exist_ok=True)  # tcompact's own: its user's only
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp.write_bytes(hashlib.sha256(data).digest() + data)
        os.replace(tmp, target)
    except OSError:
        pass
    finally:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
