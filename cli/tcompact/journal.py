"""What a command wrote, so that a command stopped part way can take it back.

:mod:`tcompact.artifacts`, the only writer, records each file it makes or replaces and each folder
it makes in the journals open at the time (:func:`journal`); ``compact`` opens one around its job,
and on Ctrl-C — or an error, or an in-place run refused because the agent wrote meanwhile — takes
back what the job made (:meth:`Journal.undo`), so that "interrupted, nothing written" is true.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["Journal", "journal", "record"]


class Journal:
    """What was written while it was open (:func:`journal`): the files made and those replaced, and the
    folders made, so that a command stopped part way — Ctrl-C, a refused in-place run — can take back
    what it wrote (:meth:`undo`) and say so."""

    def __init__(self) -> None:
        self.made: list[Path] = []
        self.replaced: list[Path] = []
        self.folders: list[Path] = []

    def undo(self) -> None:
        """Remove the files made and the folders made (those left empty), newest first; a replaced file
        cannot be given back and is left. A second Ctrl-C does not cut this short."""
        with _uninterrupted():
            for path in reversed(self.made):
                with contextlib.suppress(OSError):
                    os.unlink(path)
            for folder in reversed(self.folders):
                with contextlib.suppress(OSError):
                    os.rmdir(folder)  # only when empty: what was in it before stays
            self.made.clear()
            self.folders.clear()


_OPEN: list[Journal] = []


@contextlib.contextmanager
def journal() -> Iterator[Journal]:
    """Record every file and folder :mod:`tcompact.artifacts` writes while the block runs."""
    kept = Journal()
    _OPEN.append(kept)
    try:
        yield kept
    finally:
        _OPEN.remove(kept)


def record(kind: str, path: Path) -> None:
    """Note ``path`` as ``kind`` (made, replaced, folders) in every open journal."""
    for kept in _OPEN:
        getattr(kept, kind).append(path)


@contextlib.contextmanager
def _uninterrupted() -> Iterator[None]:
    """Ctrl-C ignored for the block (on the main thread; elsewhere there is no signal to ignore)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
