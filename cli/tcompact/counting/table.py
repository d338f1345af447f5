"""The table of the token cache: one fixed-size file of counts, safe for several processes at once.

A header and ``buckets`` buckets of :data:`WAYS` 32-byte slots (key 16 bytes, count, last-used
hour, CRC-32 of key and count). A key lives in the bucket its first bytes name; a full bucket
gives up its least recently used slot. Reads take no lock (``os.pread``; a slot read while it is
written fails its CRC and is a miss); writes take an exclusive ``flock`` on the lock file beside
it and write whole slots; a damaged file is replaced by an empty one under that lock. The policy
around it (where it lives, when it is used) is :mod:`tcompact.counting.cache`'s.
"""

from __future__ import annotations

import os
import struct
import time
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["TokenCache", "TABLE", "LOCK", "WAYS", "BUCKETS"]

TABLE = "tokens-v1.bin"
LOCK = "tokens-v1.lock"
WAYS = 8
BUCKETS = 1 << 16
_SLOT = 32
_BUCKET = WAYS * _SLOT
_HEADER_SIZE = 4096
_MAGIC = b"TCTOKv1\0"
_HEADER = struct.Struct("<8sIIIQ")  # magic, buckets, ways, slot size, created (s); then its CRC-32
_RECORD = struct.Struct("<16sIII4x")  # key, count, last-used hour, check
_FIELDS = struct.Struct("<III")
_CHECK_SALT = 0x7C0FFEE5  # an all-zero slot must not pass its check
_STALE_HOURS = 24  # a hit refreshes its slot's last-used hour at most once a day
_LOCK_WAIT = 2.0  # seconds a writer waits for the lock before it gives up storing



def _check(key: bytes, count: int) -> int:
    return zlib.crc32(count.to_bytes(4, "little"), zlib.crc32(key)) ^ _CHECK_SALT


class TokenCache:
    """One cache folder's table of counts; every method is safe to call from several processes at once."""

    def __init__(self, folder: str | Path, *, buckets: int = BUCKETS, clock=time.time) -> None:
        if buckets < 1 or buckets & (buckets - 1):
            raise ValueError("buckets must be a power of two")
        self.folder = Path(folder)
        self.path = self.folder / TABLE
        self._buckets = buckets
        self._clock = clock
        self._fd: int | None = None
        self._ino: int | None = None
        self._writable = False
        self.usable = True  # False after an OS error: the process goes on without the cache
        self.rebuilt = 0  # how often this process found the file damaged and replaced it
        self.looked_up = self.found = self.added = 0  # keys asked for, found and written by this process

    def ready(self) -> bool:
        """Whether the table can be used (it is opened, made or repaired here on first use)."""
        return self._open() is not None

    # ------------------------------------------------------------------ reading

    def lookup(self, keys: Sequence[bytes]) -> list[int | None]:
        """The stored count of each key, None where there is none."""
        fd = self._open()
        if fd is None:
            return [None] * len(keys)
        mask, now = self._buckets - 1, self._hour()
        out: list[int | None] = []
        try:
            for key in keys:
                offset = _HEADER_SIZE + (int.from_bytes(key[:4], "little") & mask) * _BUCKET
                bucket = os.pread(fd, _BUCKET, offset)
                at = _find(bucket, key)
                if at < 0:
                    out.append(None)
                    continue
                count, used, check = _FIELDS.unpack_from(bucket, at + 16)
                if check != _check(key, count):
                    out.append(None)
                    continue
                out.append(count)
                if used + _STALE_HOURS < now and self._writable:  # keep it recently used for eviction
                    os.pwrite(fd, now.to_bytes(4, "little"), offset + at + 20)
        except OSError:
            self._give_up()
            out += [None] * (len(keys) - len(out))
        self.looked_up += len(keys)
        self.found += sum(n is not None for n in out)
        return out

    # ------------------------------------------------------------------ writing

    def store(self, items: Iterable[tuple[bytes, int]]) -> int:
        """Add counts (under the writers' lock); returns how many slots were written."""
        items = [(k, n) for k, n in items if 0 <= n < 2**32]
        if not items or self._open() is None or not self._writable:
            return 0
        try:
            with _Lock(self.folder / LOCK) as locked:
                if not locked:
                    return 0
                written = self._write(self._current(), items)
            self.added += written
            return written
        except OSError:
            self._give_up()
            return 0

    def _write(self, fd: int, items: list[tuple[bytes, int]]) -> int:
        mask, now, written = self._buckets - 1, self._hour(), 0
        for key, count in items:
            offset = _HEADER_SIZE + (int.from_bytes(key[:4], "little") & mask) * _BUCKET
            bucket = os.pread(fd, _BUCKET, offset)
            at = _find(bucket, key)
            if at >= 0 and _valid(bucket, at):
                continue
            slot = _victim(bucket)
            os.pwrite(fd, _RECORD.pack(key, count, now, _check(key, count)), offset + slot * _SLOT)
            written += 1
        return written

    # ------------------------------------------------------------------ the file

    def _hour(self) -> int:
        return int(self._clock() // 3600)

    def _size(self) -> int:
        return _HEADER_SIZE + self._buckets * _BUCKET

    def _open(self) -> int | None:
        """The table's descriptor, opening (and creating or repairing) it on first use."""
        if self._fd is not None or not self.usable:
            return self._fd
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # tcompact's own: its user's only
            fd = self._open_valid()
            if fd is None:
                with _Lock(self.folder / LOCK) as locked:
                    fd = self._open_valid() if not locked else self._repair()
            if fd is None:
                self.usable = False
                return None
        except OSError:
            self._give_up()
            return None
        self._fd, self._ino = fd, os.fstat(fd).st_ino
        return fd

    def _open_valid(self) -> int | None:
        """The table opened when it exists and is sound, else None."""
        try:
            fd = os.open(self.path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
            self._writable = True
        except PermissionError:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            self._writable = False
        except FileNotFoundError:
            return None
        if self._sound(fd):
            return fd
        os.close(fd)
        return None

    def _sound(self, fd: int) -> bool:
        if os.fstat(fd).st_size != self._size():
            return False
        head = os.pread(fd, _HEADER.size + 4, 0)
        if len(head) != _HEADER.size + 4:
            return False
        magic, buckets, ways, slot, _created = _HEADER.unpack_from(head)
        crc = int.from_bytes(head[_HEADER.size:], "little")
        return (magic, buckets, ways, slot) == (_MAGIC, self._buckets, WAYS, _SLOT) and \
            crc == zlib.crc32(head[:_HEADER.size])

    def _repair(self) -> int:
        """Under the lock: the table if another process made it sound meanwhile, else a new empty one."""
        fd = self._open_valid()
        if fd is not None:
            return fd
        tmp = self.folder / f".{TABLE}.{os.getpid()}.tmp"
        try:
            with open(tmp, "wb") as fh:
                head = _HEADER.pack(_MAGIC, self._buckets, WAYS, _SLOT, int(self._clock()))
                fh.write(head + zlib.crc32(head).to_bytes(4, "little"))
                fh.truncate(self._size())  # sparse: only the slots written take disk space
            existed = self.path.exists()
            os.replace(tmp, self.path)
        finally:
            tmp.unlink(missing_ok=True)
        self.rebuilt += int(existed)
        fd = self._open_valid()
        if fd is None:
            raise OSError("the token cache table cannot be opened after it was made")
        return fd

    def _current(self) -> int:
        """Under the lock: the descriptor of the file now at the path (another process may have replaced it)."""
        assert self._fd is not None
        try:
            same = os.stat(self.path).st_ino == self._ino
        except FileNotFoundError:
            same = False
        if not same or not self._sound(self._fd):
            os.close(self._fd)
            self._fd = self._repair()
            self._ino = os.fstat(self._fd).st_ino
        return self._fd

    def _give_up(self) -> None:
        self.usable = False
        self.close()

    def close(self) -> None:
        """Close the table (it is reopened on the next use)."""
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None


def _find(bucket: bytes, key: bytes) -> int:
    """Offset of the slot holding ``key`` in ``bucket``, or -1."""
    at = bucket.find(key)
    while at >= 0 and at % _SLOT:
        at = bucket.find(key, at + 1)
    return at


def _valid(bucket: bytes, at: int) -> bool:
    count, _used, check = _FIELDS.unpack_from(bucket, at + 16)
    return check == _check(bucket[at:at + 16], count)


def _victim(bucket: bytes) -> int:
    """The slot a new count takes: an empty or broken one, else the least recently used."""
    best, best_used = 0, None
    for slot in range(WAYS):
        at = slot * _SLOT
        if len(bucket) < at + _SLOT or not _valid(bucket, at):
            return slot
        used = _FIELDS.unpack_from(bucket, at + 16)[1]
        if best_used is None or used < best_used:
            best, best_used = slot, used
    return best


class _Lock:
    """An exclusive ``flock`` on the lock file, waited for at most :data:`_LOCK_WAIT` seconds."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None

    def __enter__(self) -> bool:
        try:
            import fcntl
        except ImportError:  # no flock (Windows): never write
            return False
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        deadline = time.monotonic() + _LOCK_WAIT
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.005)

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor releases the lock
