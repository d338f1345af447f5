"""A copy of the process that builds the tokenizer while this one reads a grown file, and counts for it (issue 26).

Reading on from where a session's last read stopped takes a few tenths of a second; then the texts the
appended turns added are counted, and before that the tokenizer is built — about 0.3 s of tiktoken's
Rust that holds the GIL, the largest part of such a read. A copy of the process (made by ``fork``, see
:mod:`tcompact.forked`) builds it meanwhile, on the other core, and counts the texts sent to it through
a pipe (pickled, in order; their counts come back in order). A counter of its encoding that has no
tokenizer of its own counts through the copy (:meth:`tcompact.counting.tokens.TokenCounter._counts`);
when the copy is gone or fails, the counter builds the tokenizer itself, as before. The copy ends when
this process does (its pipe then ends).
"""

from __future__ import annotations

import os
import pickle
import threading
import weakref
from typing import NoReturn

from ..forked import enabled, in_copy, reap

__all__ = ["CountingCopy", "running", "start"]

_RUNNING: dict[str, CountingCopy] = {}
_HEADER = 8


def start(encoding: str) -> None:
    """A copy building ``encoding``'s tokenizer from now on (one per encoding; none when no copy can be made)."""
    if encoding not in _RUNNING and enabled():
        copy = CountingCopy(encoding)
        if copy.alive:
            _RUNNING[encoding] = copy


def running(encoding: str) -> CountingCopy | None:
    """The copy counting with ``encoding``, if one was started and still answers."""
    return _RUNNING.get(encoding)


class CountingCopy:
    """The copy's end of the two pipes, and its process."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self.alive = False
        self._lock = threading.Lock()
        down_read, down_write = os.pipe()
        up_read, up_write = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            for fd in (down_read, down_write, up_read, up_write):
                os.close(fd)
            return
        if pid == 0:
            os.close(down_write)
            os.close(up_read)
            _serve(encoding, down_read, up_write)
        os.close(down_read)
        os.close(up_write)
        self.pid = pid
        self._to = os.fdopen(down_write, "wb")
        self._from = os.fdopen(up_read, "rb")
        self.alive = True
        self._finalizer = weakref.finalize(self, reap, pid, self._to, self._from)

    def counts(self, texts: list[str]) -> list[int] | None:
        """The token counts of ``texts``, in order; None when the copy does not answer (count them here)."""
        with self._lock:
            if not self.alive:
                return None
            try:
                data = pickle.dumps(texts, protocol=pickle.HIGHEST_PROTOCOL)
                self._to.write(len(data).to_bytes(_HEADER, "little") + data)
                self._to.flush()
                head = self._from.read(_HEADER)
                size = int.from_bytes(head, "little") if len(head) == _HEADER else -1
                got = pickle.loads(self._from.read(size)) if size > 0 else None
            except (OSError, EOFError, pickle.UnpicklingError, ValueError):
                got = None
            if not isinstance(got, list) or len(got) != len(texts):
                self.alive = False
                _RUNNING.pop(self.encoding, None)
                self._finalizer()
                return None
            return got


def _serve(encoding: str, down: int, up: int) -> NoReturn:
    """In the copy: build the tokenizer, then count each batch sent until the pipe ends."""

    def serve() -> None:
        _RUNNING.clear()  # (the copy counts by itself)
        from .tokens import TokenCounter

        counter = TokenCounter(encoding, cache=False)
        _ = counter.encoding
        with os.fdopen(down, "rb") as inp, os.fdopen(up, "wb") as out:
            while len(head := inp.read(_HEADER)) == _HEADER:
                texts = pickle.loads(inp.read(int.from_bytes(head, "little")))
                data = pickle.dumps(counter._counts(texts), protocol=pickle.HIGHEST_PROTOCOL)
                out.write(len(data).to_bytes(_HEADER, "little") + data)
                out.flush()

    in_copy(serve)
