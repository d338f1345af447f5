"""Work done in a forked copy of the process, on a core that would otherwise wait (issue 26).

Once its counts are made, a compaction is one thread of Python, and the second core of a typical
machine sits idle. Work that needs only what is in memory already and answers with something small —
the redaction of a transcript for the dumps, a summariser's answers — is done in a copy of the process
made by ``fork``: the copy inherits the data (nothing is sent to it), computes, writes its answer
(pickled) to a pipe and exits; the parent reads it when it needs it. When no copy can be made (not
Linux, one CPU, ``TCOMPACT_NO_FORK`` set, a worker of ``batch``, which keeps every core busy already),
or the copy fails or dies, :meth:`Forked.result` is None and the caller does the work itself: what is
written is the same either way.

Only a thread that holds none of the locks the work takes may fork: the copy has that thread alone.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import sys
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

__all__ = ["Forked", "disabled", "enabled"]

T = TypeVar("T")
_ALLOWED = [True]


@contextmanager
def disabled() -> Iterator[None]:
    """No copies from this process meanwhile (a ``batch`` task: the other cores run the other tasks)."""
    was, _ALLOWED[0] = _ALLOWED[0], False
    try:
        yield
    finally:
        _ALLOWED[0] = was


def enabled() -> bool:
    """Whether work may go to a copy of the process: Linux, two CPUs or more, not turned off."""
    if not _ALLOWED[0] or not sys.platform.startswith("linux") or os.environ.get("TCOMPACT_NO_FORK"):
        return False
    try:
        return len(os.sched_getaffinity(0)) > 1
    except (AttributeError, OSError):
        return (os.cpu_count() or 1) > 1


class Forked(Generic[T]):
    """``work()`` computed in a copy of the process from now on; :meth:`result` is its value, or None."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._pid: int | None = None
        self._fd: int | None = None
        if not enabled():
            return
        read, write = os.pipe()
        try:
            pid = os.fork()
        except OSError:  # no memory or too many processes: the parent does the work
            os.close(read)
            os.close(write)
            return
        if pid == 0:
            os.close(read)
            _child(work, write)
        os.close(write)
        self._pid, self._fd = pid, read
        self._finalizer = weakref.finalize(self, _reap, pid, read)

    def result(self) -> T | None:
        """The copy's answer, waited for; None when there is no copy or it failed (then do the work here)."""
        if self._pid is None or self._fd is None:
            return None
        pid, fd = self._pid, self._fd
        self._pid = self._fd = None
        self._finalizer.detach()
        data = b""
        try:
            with os.fdopen(fd, "rb") as pipe:
                data = pipe.read()
        finally:
            status = _reap(pid, None, kill=not data)
        if status != 0 or not data:
            return None
        try:
            return pickle.loads(data)
        except Exception:  # cut short: the parent does the work
            return None

    def close(self) -> None:
        """Stop the copy if it still runs (its answer is not wanted)."""
        if self._pid is not None:
            self._pid = self._fd = None
            self._finalizer()


def _child(work: Callable[[], object], write: int) -> None:
    """In the copy: compute, write the pickled answer, exit at once (no cleanup of the parent's: its
    buffers, files and exit handlers are the parent's)."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C reaches the whole group: the copy just ends
        gc.disable()  # a collection would touch, and so copy, every page of the parent's objects
        data = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write, "wb") as pipe:
            pipe.write(data)
        code = 0
    except BaseException:  # noqa: BLE001 - any failure: the parent does the work
        pass
    finally:
        os._exit(code)


def _reap(pid: int, fd: int | None, *, kill: bool = True) -> int:
    """Wait for the copy (stopped first when ``kill``); its exit status."""
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass
    if kill:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    except ChildProcessError:
        return -1
