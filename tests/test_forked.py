"""Work handed to a forked copy of the process (tcompact.forked, issue 26): the copy's answers, its
failures, and compactions that write the same files with copies as without."""

from __future__ import annotations

import os
import signal
import threading
import time

import orjson
import pytest

from generated_sessions import _call, _result, chat_bytes, tool_heavy_session
from tcompact import forked
from tcompact.compaction import CompactOptions, compact_file
from tcompact.compressors import parse_sets
from tcompact.forked import later_half
from tcompact.counting.tokens import TokenCounter
from tcompact.dump import ahead as dump_ahead
from tcompact.forked import Forked
from tcompact.model import Message
from tcompact.summarizers.extractive.tools import errors

needs_copies = pytest.mark.skipif(not forked.enabled(), reason="copies of the process are made on Linux with two "
                                  "CPUs or more (this machine has not), else the work stays in the process")
KEY = "sk-proj-TESTKEY1234567890abcdefTESTKEY1234567890"


# the copy ---------------------------------------------------------------------------------------


@needs_copies
def test_a_copy_answers_with_what_the_work_returns():
    copy = Forked(lambda: {"pid": os.getpid(), "values": [1, "two", (3,)]})
    got = copy.result()
    assert got["values"] == [1, "two", (3,)]
    assert got["pid"] != os.getpid()
    assert copy.result() is None  # asked once


@needs_copies
@pytest.mark.parametrize("work", [lambda: 1 / 0, lambda: os.kill(os.getpid(), signal.SIGKILL),
                                  lambda: (lambda: None)], ids=["raises", "killed", "unpicklable"])
def test_a_copy_that_fails_answers_none(work):
    assert Forked(work).result() is None


def test_no_copy_when_turned_off(monkeypatch):
    monkeypatch.setenv("TCOMPACT_NO_FORK", "1")
    assert not forked.enabled()
    parent = os.getpid()
    assert Forked(lambda: os.getpid() != parent).result() is None


def test_no_copy_in_a_batch_task():
    before = forked.enabled()
    with forked.disabled():
        assert not forked.enabled()
        assert Forked(lambda: 1).result() is None
    assert forked.enabled() == before


@needs_copies
def test_close_stops_a_copy_still_running():
    copy = Forked(lambda: time.sleep(60))
    pid = copy._pid
    started = time.monotonic()
    copy.close()
    assert time.monotonic() - started < 10
    with pytest.raises(ChildProcessError):  # reaped
        os.waitpid(pid, os.WNOHANG)
    assert copy.result() is None


@needs_copies
def test_a_copy_leaves_the_parents_buffers_alone(tmp_path):
    path = tmp_path / "out.txt"
    with open(path, "w", buffering=1 << 16) as f:
        f.write("written once")  # in the buffer, not flushed: the copy must not write it too
        assert Forked(lambda: 2).result() == 2
    assert path.read_text() == "written once"


@needs_copies
def test_a_copy_counts_long_texts_with_a_pool_of_its_own():
    """The counting pool's threads are not in the copy: it makes its own (a pool taken over would hang)."""
    counter = TokenCounter(cache=False)
    text = "word " * 400_000  # long enough to be counted in pieces, by the pool
    expected = counter.count(text)  # the parent's pool made and used
    fresh = TokenCounter(cache=False)
    box = []
    waiting = threading.Thread(target=lambda: box.append(Forked(lambda: fresh.count(text + " x")).result()))
    waiting.start()
    waiting.join(120)
    assert not waiting.is_alive(), "the copy hangs on the parent's pool"
    assert box == [counter.count(text + " x")]
    assert box[0] > expected


# compactions with and without copies -----------------------------------------------------------


def _secret_session(tmp_path):
    messages = list(tool_heavy_session(12))
    at = next(i for i, m in enumerate(messages) if m.role == "user" and m.text.startswith("Now review module_3"))
    messages[at:at] = [_call("env", "Bash", command="env"),
                       _result("env", f"OPENAI_API_KEY={KEY}\nDB_PASSWORD=hunter22secret9\n" + "x=1\n" * 300),
                       Message(role="user", content=f"Round 2b: the token is {KEY}; password=hunter22secret9 too.")]
    path = tmp_path / "secrets.jsonl"
    path.write_bytes(chat_bytes(messages))
    return path


def _normal(value):
    """A dump without the times a run stamps on it."""
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()
                if k not in ("timestamp", "created_at", "latency_s", "started", "id")}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def _outcome(path, chain, sets):
    run = compact_file(path, CompactOptions(chain=chain, now=True, overrides=parse_sets(sets)), dumps_ahead=True)
    dumps = {}
    for _, doc in run.dumps():
        doc["hashes"].pop("response")  # (the response holds the latency)
        dumps[doc["run"]["call"], doc["processor"]["name"]] = _normal(doc)
    return run.output.data, dumps, orjson.dumps(_normal(run.report))


@needs_copies
@pytest.mark.parametrize("chain, sets", [
    ("working-set", []), ("full", []), ("dialogue", []),
    ("round-level", ["round-level.first_pass_target_tokens=300", "round-level.compression_call_max_tokens=3000"]),
])
def test_a_compaction_writes_the_same_with_copies_and_without(tmp_path, monkeypatch, chain, sets):
    path = _secret_session(tmp_path)
    monkeypatch.setattr(dump_ahead, "MIN_TEXTS", 0)  # every stage's prompts to a copy
    monkeypatch.setattr(errors, "_AHEAD_FROM", 0)  # and every scan's error lines
    answered = []
    result = Forked.result

    def spied(self):
        got = result(self)
        answered.append(got is not None)
        return got

    monkeypatch.setattr(Forked, "result", spied)
    with_copies = _outcome(path, chain, sets)
    assert answered and all(answered)
    errors._REMEMBERED.clear()
    monkeypatch.setenv("TCOMPACT_NO_FORK", "1")
    answered.clear()
    without = _outcome(path, chain, sets)
    assert answered == []
    assert with_copies[0] == without[0]
    assert with_copies[1] == without[1]
    assert with_copies[2] == without[2]
    assert KEY not in orjson.dumps(list(with_copies[1].values())).decode()
    first = with_copies[1][1, chain]
    assert first["redactions"] >= 2
    if chain == "round-level":
        assert len(with_copies[1]) >= 3  # several calls: some answered by the copy


@needs_copies
def test_no_redaction_ahead_for_dumps_nobody_writes(tmp_path, monkeypatch):
    """``compact --dry-run`` and ``eval`` without ``--dump-dir`` write no dumps: no copy redacts them."""
    made = []
    real = dump_ahead.DumpsAhead.__init__

    def spied(self, messages):
        made.append(len(messages))
        real(self, messages)

    monkeypatch.setattr(dump_ahead.DumpsAhead, "__init__", spied)
    path = _secret_session(tmp_path)
    compact_file(path, CompactOptions(chain="full", now=True))
    assert made == []
    compact_file(path, CompactOptions(chain="full", now=True), dumps_ahead=True)
    assert made == [len(tool_heavy_session(12)) + 3]


@pytest.mark.parametrize("sizes, at", [([10, 10, 10, 10], 2), ([100, 1, 1], 1), ([1, 1, 100], 2), ([5, 5], 1),
                                       ([1, 2, 3, 4, 5, 6], 4), ([7], 1)])
def test_the_later_calls_given_to_a_copy_hold_about_half_the_work(sizes, at):
    assert later_half(sizes) == at


# the counting copy ------------------------------------------------------------------------------


@needs_copies
def test_a_counting_copy_counts_as_the_tokenizer_here():
    from tcompact.counting.helper import CountingCopy

    texts = ["hello world", "x" * 300_000 + " ü", "lone \ud800 surrogate", "", "naïve café"]
    copy = CountingCopy("cl100k_base")
    assert copy.alive
    here = TokenCounter("cl100k_base", cache=False)
    assert copy.counts(texts) == [here.count(t) for t in texts]
    assert copy.counts(["one more"]) == [here.count("one more")]


@needs_copies
def test_a_counter_without_its_tokenizer_counts_through_the_copy_and_without_it_when_it_dies(monkeypatch):
    from tcompact.counting import helper

    monkeypatch.setattr(helper, "_RUNNING", {})
    helper.start("cl100k_base")
    copy = helper.running("cl100k_base")
    assert copy is not None
    counter = TokenCounter("cl100k_base", cache=False)
    expected = TokenCounter("cl100k_base", cache=False)
    assert counter.count("counted elsewhere") == expected.count("counted elsewhere")
    assert counter._encoding is None and counter.tokenized == 1  # no tokenizer built here
    os.kill(copy.pid, signal.SIGKILL)
    assert counter.count("counted here") == expected.count("counted here")
    assert counter._encoding is not None and helper.running("cl100k_base") is None
