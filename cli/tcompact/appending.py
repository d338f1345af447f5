"""The files tcompact appends to rather than replaces: a log that several processes write at once
(:func:`append_line`, the hooks' shared log) and a JSON Lines file appended to whole lines at a time by one
writer (:class:`AppendLog`, a batch's results). Part of the one writer (:mod:`tcompact.artifacts`, whose
folder making and atomic writes these use), apart because appending is its own discipline: one ``write`` per
line, a torn last line cut off, an exclusive lock.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from .artifacts import make_folder, write_bytes
from .errors import OutputError

__all__ = ["AppendLog", "append_line"]


def append_line(path: str | Path, line: str, *, keep: int = 1 << 20) -> None:
    """Append one line to a log that several processes may write at once (one ``write`` with
    O_APPEND each, so lines never interleave); past ``keep`` bytes it starts again from its newer
    half. The folder is created as needed."""
    target = Path(path)
    make_folder(target.parent)
    data = (line.rstrip("\n") + "\n").encode("utf-8", "replace")
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    except OSError as exc:
        raise OutputError(f"cannot open for appending: {exc.strerror}", path=str(target),
                          hint="check the folder's permissions") from None
    try:
        os.write(fd, data)
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    if size > keep:
        old = target.read_bytes()
        newer = old[len(old) // 2:]
        write_bytes(target, newer[newer.find(b"\n") + 1:], force=True, sync=False)


class AppendLog:
    """A JSON Lines file that lines are appended to whole: one ``write`` per line, on an exclusive lock.

    A line counts only once its newline is written, so an interrupted writer can leave at most a
    torn last line without one; opening the log cuts such a tail off (``dropped`` says how many
    bytes) so that the next line starts clean. A second writer on the same file is refused.
    """

    def __init__(self, path: str | Path) -> None:
        import fcntl

        self.path = Path(path)
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o666)
        except OSError as exc:
            raise OutputError(f"cannot open for appending: {exc.strerror}", path=str(self.path),
                              hint="check the folder's permissions") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._fd)
            raise OutputError("another tcompact run is writing this file", path=str(self.path),
                              hint="wait for it to finish, or use another output folder") from None
        self.dropped = self._cut_torn_tail()

    def _cut_torn_tail(self) -> int:
        size = os.fstat(self._fd).st_size
        end = size
        while end > 0:
            start = max(0, end - 65536)
            chunk = os.pread(self._fd, end - start, start)
            at = chunk.rfind(b"\n")
            if at != -1:
                end = start + at + 1
                break
            end = start
        if end != size:
            os.ftruncate(self._fd, end)
        return size - end

    def append(self, line: bytes) -> int:
        """Append one line (its newline added here); returns the offset it starts at."""
        data = line + b"\n"
        offset = os.lseek(self._fd, 0, os.SEEK_END)
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]
        return offset

    def sync(self) -> None:
        """Flush what was appended to the disk."""
        os.fsync(self._fd)

    def close(self) -> None:
        """Sync, unlock and close."""
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.fsync(self._fd)
            os.close(self._fd)
            self._fd = -1
