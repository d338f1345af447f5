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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Generic, NoReturn, TypeVar

__all__ = ["Forked", "disabled", "enabled", "in_copy", "later_half", "reap"]

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
        self._finalizer = weakref.finalize(self, reap, pid, read)

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
            status = reap(pid, kill=not data)
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
    """In the copy: compute, write the pickled answer."""

    def answer() -> None:
        data = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write, "wb") as pipe:
            pipe.write(data)

    in_copy(answer)


def in_copy(body: Callable[[], object]) -> NoReturn:
    """Run ``body`` in a copy just made, then end the copy at once: status 0 when it returned, 1 when it raised
    (the parent then does the work). Nothing of the parent's is cleaned up: its buffers, files and exit
    handlers are the parent's."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C reaches the whole group: the copy just ends
        gc.disable()  # a collection would touch, and so copy, every page of the parent's objects
        body()
        code = 0
    except BaseException:  # noqa: BLE001 - any failure: the parent does the work
        pass
    finally:
        os._exit(code)


def reap(pid: int, *ends: int | IO[bytes], kill: bool = True) -> int:
    """Close this process's ``ends`` of the pipes to a copy (descriptors or files), stop the copy when ``kill``,
    wait for it; its exit status."""
    for end in ends:
        try:
            os.close(end) if isinstance(end, int) else end.close()
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


def later_half(sizes: Sequence[int]) -> int:
    """Where the later items of some work begin that a copy takes, so that the larger of the two shares of
    ``sizes`` is as small as it can be (the later start on a tie: the copy has its own costs; ``len(sizes)``,
    nothing for the copy, when there is one item)."""
    total, before, best, at = sum(sizes), 0, None, len(sizes)
    for n in range(1, len(sizes)):
        before += sizes[n - 1]
        larger = max(before, total - before)
        if best is None or larger <= best:
            best, at = larger, n
    return at
