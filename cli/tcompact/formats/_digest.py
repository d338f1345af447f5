"""The digests of transcript files: what vouches that a file, or the part of it read before, is unchanged.

The report cache keys a finished report by its file's sha256 (:func:`file_digest`); a grown file is
read on from its kept state only when the prefix that state was taken at is unchanged
(:func:`digest_with_mark`); a file read whole feeds its digest as it is read (:class:`Digesting`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["READ_BUFFER", "Digesting", "file_digest", "digest_with_mark"]

READ_BUFFER = 1 << 20  # read buffer: fewer, larger reads than the default 8 KiB


def file_digest(path: Path, name: str = "sha256") -> bytes | None:
    """The digest of a file's bytes, or None when it cannot be read (reading it then says why)."""
    import hashlib

    try:
        with path.open("rb", buffering=0) as fh:
            return hashlib.file_digest(fh, name).digest()
    except OSError:
        return None


class Digesting:
    """A binary file read through: each byte goes into ``digest`` the first time it is read."""

    def __init__(self, fh: Any, digest: Any) -> None:
        self._fh = fh
        self._digest = digest
        self._pos = self._fed = 0

    def read(self, size: int = -1) -> bytes:
        return self._feed(self._fh.read(size))

    def readline(self, size: int = -1) -> bytes:
        return self._feed(self._fh.readline(size))

    def seek(self, pos: int, whence: int = 0) -> int:
        self._pos = self._fh.seek(pos, whence)
        return self._pos

    def _feed(self, data: bytes) -> bytes:
        start, end = self._pos, self._pos + len(data)
        if end > self._fed:  # (bytes skipped unread would leave a digest that matches no whole file)
            self._digest.update(memoryview(data)[self._fed - start:] if start < self._fed else data)
            self._fed = end
        self._pos = end
        return data


def digest_with_mark(path: Path, mark: int | None, expect: bytes | None, *, keep_from: int = 0
                     ) -> tuple[bytes, bytes | None, bytes | None] | None:
    """One pass over a file: the sha256 of its bytes, that of its first ``mark`` bytes (None when it is
    shorter) and — when that is ``expect`` — its bytes from ``keep_from`` (at most ``mark``) to its end;
    None when it cannot be read."""
    import hashlib

    whole = hashlib.sha256()
    at_mark = None
    parts: list[bytes] = []
    seen = 0
    try:
        with path.open("rb", buffering=0) as fh:
            while chunk := fh.read(READ_BUFFER):
                end = seen + len(chunk)
                if mark is not None and at_mark is None and end >= mark:
                    whole.update(memoryview(chunk)[:mark - seen])
                    at_mark = whole.copy().digest()
                    whole.update(memoryview(chunk)[mark - seen:])
                else:
                    whole.update(chunk)
                if mark is not None and end > keep_from and (at_mark is None or at_mark == expect):
                    parts.append(chunk[max(0, keep_from - seen):])
                seen = end
    except OSError:
        return None
    return whole.digest(), at_mark, b"".join(parts) if at_mark is not None and at_mark == expect else None
