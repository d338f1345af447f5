"""Long texts counted in pieces, in parallel: where a text may be cut so that the counts of its pieces add
up to its count (:func:`pieces`), the process's one thread pool (tiktoken and hashing release the GIL), work
cut into slices of about equal length, and the tokenizer built where Ctrl-C can reach the caller.

Split from :mod:`tcompact.counting.tokens`, which counts messages by the documented formula with these.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import cache
from typing import Any

__all__ = ["CHUNKS_PER_WORKER", "PIECE", "interruptibly", "parallel_keys", "pieces", "pool", "slices"]

#: Slices of work per pool thread (a slow slice holds up less of the batch).
CHUNKS_PER_WORKER = 4
#: A text longer than this many characters is counted in pieces of about this size, in parallel
#: (see :func:`pieces`).
PIECE = 1 << 18
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def interruptibly(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` on a thread of its own, waited for where Ctrl-C can reach the caller: building the
    tokenizer is one call into tiktoken's Rust (up to a second on a busy machine) that no signal cuts short."""
    box: list[Any] = []

    def run() -> None:
        try:
            box.append((True, fn(*args)))
        except BaseException as exc:  # handed to the caller
            box.append((False, exc))

    worker = threading.Thread(target=run, name="tcompact-tokenizer", daemon=True)
    worker.start()
    worker.join()
    ok, value = box[0]
    if not ok:
        raise value
    return value


@cache
def pool() -> Any:
    """One thread pool for the process: tiktoken releases the GIL while it encodes."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1)), thread_name_prefix="tcompact-tok")


# A forked copy (:mod:`tcompact.forked`) has none of the pool's threads: it makes a pool of its own.
os.register_at_fork(after_in_child=pool.cache_clear)


def pieces(text: str, size: int = PIECE) -> list[tuple[int, int]]:
    """``(start, end)`` ranges covering ``text``, each about ``size`` characters, cut only where tiktoken
    splits anyway, so that the counts of the pieces add up to the count of the text.

    A cut goes between a line break and an ASCII letter. No alternative of the o200k or cl100k
    split pattern matches a newline and then a letter (letter runs exclude line breaks; the
    punctuation, number and whitespace runs exclude letters), and none looks behind, so the
    pieces before such a point are the same as those of the text ending there, and the pieces
    after it the same as those of the text starting there (the one lookahead, ``\\s+(?!\\S)``, and
    cl100k's ``\\s++$`` both give way at a final whitespace run ending in a newline to
    ``\\s*[\\r\\n]``, which matches the same run). A text without such a point stays whole.
    """
    n = len(text)
    if n <= 2 * size:
        return [(0, n)]
    out, start = [], 0
    while n - start > 2 * size:
        cut = _cut_after(text, start + size, n - size)
        if cut < 0:
            break
        out.append((start, cut))
        start = cut
    out.append((start, n))
    return out


def _cut_after(text: str, pos: int, end: int) -> int:
    """The first position in ``[pos, end)`` that follows a newline and holds an ASCII letter, or -1."""
    while True:
        i = text.find("\n", pos - 1, end - 1)
        if i < 0:
            return -1
        if text[i + 1] in _LETTERS:
            return i + 1
        pos = i + 2


def slices(items: Sequence[tuple[int, int, int]], parts: int) -> list[Sequence[tuple[int, int, int]]]:
    """Contiguous slices of ``(text, start, end)`` work items of about equal total length, in order."""
    goal = sum(e - s for _, s, e in items) / max(parts, 1)
    out, start, size = [], 0, 0
    for i, (_, s, e) in enumerate(items):
        size += e - s
        if size >= goal:
            out.append(items[start : i + 1])
            start, size = i + 1, 0
    if start < len(items):
        out.append(items[start:])
    return out


def parallel_keys(keys_of: Any, salt: bytes, texts: list[str]) -> list[bytes]:
    """``keys_of(salt, texts)`` computed in the thread pool for large batches (hashing releases the GIL)."""
    total = sum(map(len, texts))
    if total < 1 << 20 or len(texts) < 2:
        return keys_of(salt, texts)
    parts = slices([(i, 0, len(t)) for i, t in enumerate(texts)], pool()._max_workers * CHUNKS_PER_WORKER)
    batches = [[texts[i] for i, _, _ in part] for part in parts]
    return [k for keys in pool().map(lambda b: keys_of(salt, b), batches) for k in keys]
