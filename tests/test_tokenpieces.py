"""tokenpieces.py: where a long text is cut (the counts of the pieces adding up is test_tokens.py's), the work cut
into slices of about equal length in order, the keys hashed in the pool equal to those hashed in one call, and the
tokenizer built on a thread of its own that hands back its value or its error."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tcompact.counting.cache import text_keys
from tcompact.counting.pieces import CHUNKS_PER_WORKER, interruptibly, parallel_keys, pieces, pool, slices

SRC = Path(__file__).resolve().parents[1] / "cli"


def test_a_text_up_to_twice_the_size_stays_whole_and_a_longer_one_is_cut_before_a_letter_after_a_newline():
    assert pieces("", 4) == [(0, 0)]
    assert pieces("abcdefgh", 4) == [(0, 8)]
    text = "aaaa\nbbbb\ncccc\n"
    assert pieces(text, 4) == [(0, 5), (5, 10), (10, 15)]  # what is left after a cut: at most twice the size
    assert [text[s:e] for s, e in pieces(text, 5)] == ["aaaa\n", "bbbb\ncccc\n"]  # the first point at or after 5


def test_a_text_without_a_newline_before_a_letter_stays_whole():
    assert pieces("x" * 100, 10) == [(0, 100)]
    assert pieces("1\n2\n3\n" * 20, 10) == [(0, 120)]  # digits after every newline: no point to cut at
    assert pieces("a" * 50 + "\n\n" + "b" * 50, 10) == [(0, 52), (52, 102)]  # the letter after the second newline


def test_slices_are_contiguous_in_order_and_of_about_equal_length():
    items = [(i, 0, n) for i, n in enumerate([5, 5, 5, 5, 10, 10, 40])]
    got = slices(items, 4)
    assert [x for part in got for x in part] == items
    assert [sum(e - s for _, s, e in part) for part in got] == [20, 20, 40]
    assert slices(items, 1) == [items]
    assert slices(items, 0) == [items]  # no parts asked: one slice, not a division by zero
    assert slices([], 3) == []
    assert [len(part) for part in slices([(0, 0, 1)] * 6, 3)] == [2, 2, 2]


def test_keys_hashed_in_the_pool_are_those_of_one_call_in_the_same_order():
    small = ["a", "bb", "ccc"]
    assert parallel_keys(text_keys, b"salt", small) == text_keys(b"salt", small)
    big = [f"{i:06d}" + "x" * 40_000 for i in range(64)]  # 2.5 MB: hashed in slices on the pool
    calls = []

    def counted(salt, texts):
        calls.append(len(texts))
        return text_keys(salt, texts)

    assert parallel_keys(counted, b"salt", big) == text_keys(b"salt", big)
    assert sum(calls) == 64 and len(calls) == min(64, pool()._max_workers * CHUNKS_PER_WORKER)


def test_the_pool_is_one_for_the_process():
    assert pool() is pool() and 1 <= pool()._max_workers <= 8


def test_interruptibly_runs_on_a_thread_of_its_own_and_hands_back_the_value_or_the_error():
    names = []

    def where(a, b):
        names.append(threading.current_thread().name)
        return a + b

    assert interruptibly(where, 2, 3) == 5
    assert names == ["tcompact-tokenizer"]

    def broken():
        raise KeyboardInterrupt  # even what is no Exception reaches the caller

    with pytest.raises(KeyboardInterrupt):
        interruptibly(broken)
    with pytest.raises(ValueError, match="bad"):
        interruptibly(lambda: (_ for _ in ()).throw(ValueError("bad")))


def test_ctrl_c_reaches_the_caller_while_the_tokenizer_is_being_built():
    """The point of building it on a thread of its own: a long call into native code that releases the GIL and
    checks no signal (as tiktoken's Rust does; here a PBKDF2 of a billion rounds, minutes long) would hold off
    SIGINT until it returned. Called directly, this test fails: the child is still busy when the 60 s run out."""
    import os
    import signal
    import subprocess
    import sys

    code = ("import hashlib\nfrom tcompact.counting.pieces import interruptibly\ntry:\n    print('ready', flush=True)\n"
            "    interruptibly(hashlib.pbkdf2_hmac, 'sha256', b'x', b'y', 1_000_000_000)\n"
            "except KeyboardInterrupt:\n    print('interrupted', flush=True)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(SRC)})
    try:
        assert proc.stdout.readline() == "ready\n"
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert (out, proc.returncode) == ("interrupted\n", 0)
