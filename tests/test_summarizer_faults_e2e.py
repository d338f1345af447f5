"""Summariser faults end to end: ``tcompact compact --summarizer openai`` against the loopback server.

Every fault of the hardening issue — timeouts, a reset connection, 429 with and without
Retry-After, 500/502/503, 413, 401, malformed JSON, empty choices, a tool-call-only reply, a reply
far over budget, a very slow stream — goes through the real command, the real ``openai`` client
and real HTTP, with the compressors ``full`` (one call) and ``round-level`` (four concurrent
calls). For each one the test checks what a user would see: the exit code, one clean ``Error:``
line on stderr, the input byte for byte, no output transcript, one dump per call whose error says
what happened, the report, the number of requests the server received (1 + retries for transient
kinds, 1 per call otherwise), the wait between attempts, and that the API key is written nowhere.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import call, jsonl, msg
from openai_server import (
    FakeOpenAI,
    Received,
    Reply,
    delay,
    dribble,
    empty_choices,
    error,
    ok,
    raw,
    reset,
    tool_calls_only,
)
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.model import Message
from tcompact.summarizers.base import SummarizerError, SummaryRequest
from tcompact.summarizers.openai_compat import OpenAISummarizer
from tcompact.counting.tokens import TokenCounter

KEY = "sk-e2e-fault-0123456789abcdefXYZ"
#: --timeout where the fault is a timeout; elsewhere a patient 5 s, so a loaded machine cannot turn a 429 into one.
TIMEOUT = 0.5
PATIENT = 5.0
RETRIES = 2
#: round-level: one call per round (4 rounds, ~900-token call budget), all four at once.
ROUND_LEVEL_SETS = ("--set", "round-level.compression_call_max_tokens=900",
                    "--set", "round-level.target_total_tokens=500")
ROUND_LEVEL_CALLS = 4
UNTOUCHED = " — the input is untouched; the failed call(s) are dumped in "
SNAPSHOT = "<state_snapshot>Active Task: fix the four bugs; all fixed.</state_snapshot>"


# ------------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def server():
    """One loopback server for the module; every test starts with an empty queue and no requests."""
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture(autouse=True)
def _fresh(server, monkeypatch):
    server.clear()
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    yield
    server.clear()


@pytest.fixture
def session(tmp_path) -> Path:
    """A small chat session: a system prompt and four rounds, each a request, a test run and its result,
    and an answer (~2,000 tokens)."""
    records = [msg("system", "You are a coding agent working in the rosterkit repository.")]
    for r in range(4):
        records += [msg("user", f"Round {r}: please fix bug number {r} in module_{r}.py"),
                    msg("assistant", None, tool_calls=[call(f"call_{r}", "run_tests", {"path": f"tests/test_{r}.py"})]),
                    msg("tool", f"FAILED tests/test_{r}.py::test_f{r}\n" + "    x = compute()\n" * 80,
                        tool_call_id=f"call_{r}"),
                    msg("assistant", f"Fixed bug {r} by editing module_{r}.py. " + "explanation " * 30)]
    return jsonl(tmp_path / "session.jsonl", records)


@dataclass
class Run:
    """One ``tcompact compact`` run and everything it left behind."""

    compressor: str
    exit_code: int
    stdout: str
    stderr: str
    elapsed: float
    ended: float  # time.monotonic(), like Received.at
    requests: list[Received]
    tmp: Path
    input_before: tuple[bytes, int]

    @property
    def out(self) -> Path:
        return self.tmp / "out.jsonl"

    @property
    def dump_dir(self) -> Path:
        return self.tmp / "dumps"

    def dumps(self) -> list[dict[str, Any]]:
        """The dumps in call order (``run.call``)."""
        docs = [orjson.loads(p.read_bytes()) for p in self.dump_dir.iterdir()] if self.dump_dir.exists() else []
        return sorted(docs, key=lambda d: d["run"]["call"])

    def report(self) -> dict[str, Any]:
        return orjson.loads((self.tmp / "report.json").read_bytes())

    def groups(self) -> list[list[Received]]:
        """The requests grouped by call: a retry sends the very same body again."""
        out: dict[str, list[Received]] = {}
        for r in self.requests:
            out.setdefault(json.dumps(r.body, sort_keys=True), []).append(r)
        return list(out.values())


def compact(server: FakeOpenAI, session: Path, compressor: str, *extra: str, timeout: float = PATIENT,
            retries: int = RETRIES) -> Run:
    """Run the real command against the loopback server."""
    tmp = session.parent
    before = (session.read_bytes(), session.stat().st_mtime_ns)
    args = ["compact", str(session), "-c", compressor, "--now", "--summarizer", "openai", "--model", "fake-model",
            "--base-url", server.base_url, "-o", str(tmp / "out.jsonl"), "--dump-dir", str(tmp / "dumps"),
            "--report", str(tmp / "report.json"), "--timeout", f"{timeout:g}", "--max-retries", str(retries),
            *(ROUND_LEVEL_SETS if compressor == "round-level" else ()), *extra]
    started = time.perf_counter()
    result = CliRunner().invoke(app, args)
    elapsed = time.perf_counter() - started
    return Run(compressor, result.exit_code, result.stdout, result.stderr, elapsed, time.monotonic(), server.requests,
               tmp, before)


def facts(n: int) -> str:
    """``n`` different facts: a long text that is no loop (a loop is refused as no summary at all)."""
    return " ".join(f"Fact {i}: {hashlib.sha256(str(i).encode()).hexdigest()[:16]}." for i in range(n))


def calls_of(compressor: str) -> int:
    return 1 if compressor == "full" else ROUND_LEVEL_CALLS


def blocks_answer(summary: Callable[[str], str]) -> Callable[[Received], Reply]:
    """A round-level answer: ``{"blocks": [...]}`` with ``summary(block_id)`` for every block of the prompt."""
    def answer(request: Received) -> Reply:
        prompt = request.body["messages"][-1]["content"]
        ids = re.findall(r"^\[Block: ([\w-]+)\]$", prompt, re.MULTILINE)
        return ok(json.dumps({"blocks": [{"block_id": i, "summary": summary(i)} for i in ids]}))

    return answer


def together(compressor: str, reply: Callable[[Received], Reply]) -> Callable[[Received], Reply]:
    """``reply``, but the first attempt of each call is answered only once every call of the stage is in flight.

    round-level's four calls are then provably concurrent (one at a time, they would break the barrier
    after 5 s), and a call that fails at once cannot keep another from being sent: the request counts
    stay exact even if a stage ever stops sending calls after the first failure.
    """
    barrier = threading.Barrier(calls_of(compressor), timeout=5)
    seen: set[str] = set()
    lock = threading.Lock()

    def answer(request: Received) -> Reply:
        body = json.dumps(request.body, sort_keys=True)
        with lock:
            first = body not in seen
            seen.add(body)
        if first:
            barrier.wait()
        return reply(request)

    return answer


def healthy(compressor: str) -> Callable[[Received], Reply]:
    if compressor == "round-level":
        return blocks_answer(lambda i: f"Block {i}: bug fixed.")
    return lambda request: ok(SNAPSHOT)


# ---------------------------------------------------------------------------------- assertions


def assert_key_written_nowhere(run: Run) -> None:
    assert run.requests and all(r.headers["authorization"] == f"Bearer {KEY}" for r in run.requests)
    assert KEY not in run.stdout and KEY not in run.stderr
    for path in run.tmp.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def assert_failed(run: Run, *, kind: str, status: int | None, attempts: int, what: str, shrinks: bool = False
                  ) -> list[dict[str, Any]]:
    """Exit 1, one clean error line, input untouched, no transcript, one failed dump per attempt (``shrinks``:
    each attempt sends a smaller request, else the very same one)."""
    calls = calls_of(run.compressor)
    assert run.exit_code == 1, run.stdout + run.stderr
    assert (run.tmp / "session.jsonl").read_bytes() == run.input_before[0]
    assert (run.tmp / "session.jsonl").stat().st_mtime_ns == run.input_before[1]
    assert not run.out.exists()
    assert sorted(p.name for p in run.tmp.iterdir()) == ["dumps", "report.json", "session.jsonl"]
    # stderr: exactly one line, what failed and what to do, no traceback
    assert run.stderr.count("\n") == 1 and run.stderr.endswith(f"{UNTOUCHED}{run.dump_dir}\n"), run.stderr
    stage = "recursive: " if run.compressor == "round-level" else ""
    assert run.stderr.startswith(f"Error: {run.compressor}: {stage}summariser failed: "), run.stderr
    assert what in run.stderr and "Traceback" not in run.stderr + run.stdout
    assert "Compaction failed; the input is untouched" in run.stdout
    # the server saw each call 1 + retries times (or once), the same request again unless it shrinks
    assert len(run.requests) == calls * attempts, diagnosis(run)
    assert sorted(len(g) for g in run.groups()) == ([1] * attempts * calls if shrinks else [attempts] * calls)
    # one dump per attempt, saying what happened
    dumps = run.dumps()
    assert len(dumps) == calls * attempts
    for n, doc in enumerate(dumps):
        attempt = n % attempts + 1
        assert doc["call"]["status"] == "failed" and doc["call"]["attempt"] == attempt
        assert (doc["call"]["number"], doc["call"]["of"]) == (n + 1, len(dumps)) == (doc["run"]["call"], len(dumps))
        assert doc["error"]["kind"] == kind and doc["error"]["status"] == status
        assert what in doc["error"]["message"]
        assert doc["call"]["retried"] == (attempt < attempts)
        assert [a["error_kind"] for a in doc["attempts"]] == [kind] * len(dumps)  # every call of the run
        assert doc["response"] is None and doc["context_after"] is None and doc["benefit"]["accepted"] is False
    report = run.report()
    assert report["status"] == "failed" and report["outputs"]["transcript"] is None
    assert (report["summarizer"]["calls"], report["summarizer"]["failed_calls"]) == (len(dumps), len(dumps))
    assert report["stages"][0]["failed"] is True and report["stages"][0]["applied"] is False
    assert_key_written_nowhere(run)
    return dumps


def diagnosis(run: Run) -> str:
    """What each attempt's dump says and when the server saw each request: a failed count of requests says
    whether an attempt never reached the server (its deadline ran out before it connected) or was not read."""
    first = run.requests[0].at if run.requests else 0.0
    lines = [f"{len(run.requests)} requests at {[round(r.at - first, 3) for r in run.requests]}"]
    lines += [f"call {d['run']['call']} attempt {d['call']['attempt']} at {d['timestamp']}: "
              f"{(d.get('error') or {}).get('message')}" for d in run.dumps()]
    return "\n".join(lines)


def gaps(group: list[Received]) -> list[float]:
    return [b.at - a.at for a, b in zip(group, group[1:], strict=False)]


# ------------------------------------------------------------------------ a healthy endpoint first


@pytest.mark.parametrize("compressor", ["full", "round-level"])
def test_a_healthy_endpoint_compacts_with_the_expected_number_of_calls(server, session, compressor):
    server.respond_with(together(compressor, healthy(compressor)))
    run = compact(server, session, compressor)
    assert (run.exit_code, run.stderr) == (0, "")
    assert len(run.requests) == calls_of(compressor) == len(run.groups()) == len(run.dumps())
    assert run.out.exists() and run.report()["status"] == "compacted"
    assert_key_written_nowhere(run)


# -------------------------------------------------------------------------------- transient faults

TRANSIENT = {
    # name: (reply, kind, HTTP status, words of the error message)
    "timeout": (lambda: delay(3.0), "timeout", None, f"no answer within {TIMEOUT:g} s"),
    "connection-reset": (reset, "server_unstable", None, "connection failed (ConnectionResetError: "),
    "429-no-retry-after": (lambda: error(429, "Rate limit reached for requests"), "rate_limit", 429,
                           "HTTP 429: Rate limit reached for requests"),
    "500": (lambda: error(500, "Internal server error"), "server_unstable", 500, "HTTP 500: Internal server error"),
    "502": (lambda: error(502, "Bad gateway"), "server_unstable", 502, "HTTP 502: Bad gateway"),
    "503": (lambda: error(503, "Service Unavailable"), "server_unstable", 503, "HTTP 503: Service Unavailable"),
    "malformed-json": (lambda: raw(200, b'{"choices": [{"message": '), "server_unstable", None,
                       "answered with a body that is not valid JSON"),
    "empty-choices": (empty_choices, "empty_response", None, "answered with no choices, no text"),
    "tool-calls-only": (tool_calls_only, "empty_response", None, "answered with only tool calls, no text"),
    "very-slow-stream": (lambda: dribble(0.2), "timeout", None,
                         f"the whole answer did not arrive within {TIMEOUT:g} s (the server was still sending it)"),
}


@pytest.mark.parametrize("compressor", ["full", "round-level"])
@pytest.mark.parametrize("fault", list(TRANSIENT))
def test_transient_fault_is_retried_then_fails_cleanly(server, session, compressor, fault):
    reply, kind, status, what = TRANSIENT[fault]
    if kind == "timeout":  # no barrier: its wait would eat into the 0.5 s deadline; a call fails after 0.5 s anyway
        server.respond_with(lambda request: reply())
        run = compact(server, session, compressor, timeout=TIMEOUT)
    else:
        server.respond_with(together(compressor, lambda request: reply()))
        run = compact(server, session, compressor)
    dumps = assert_failed(run, kind=kind, status=status, attempts=1 + RETRIES, what=what)
    if kind != "timeout":  # the server answered at once: between arrivals, the default backoff of 0.05 s then
        for group in run.groups():  # 0.1 s (spec §2.10), far from any Retry-After
            waits = gaps(group)
            assert waits[0] >= 0.05 and waits[1] >= 0.1 and all(w < 1.0 for w in waits), waits
    else:  # each attempt ends at the deadline (measured where the client starts it), backoff, next attempt;
        for n in range(0, len(dumps), 1 + RETRIES):  # not after the server's 3 s or the dribble's ~60 s
            started = [d["timestamp"] for d in dumps[n:n + 1 + RETRIES]]
            waits = [b - a for a, b in zip(started, started[1:], strict=False)]
            assert waits[0] >= TIMEOUT + 0.05 and waits[1] >= TIMEOUT + 0.1 and all(w < 2.0 for w in waits), waits
        assert all(w < 2.5 for group in run.groups() for w in gaps(group))
    assert run.elapsed < (10.0 if kind == "timeout" else 6.0)


def test_the_slow_stream_really_was_sending(server, session):
    """The dribbled answer's headers came at once: only the whole-call deadline can end it (a read never
    waits 0.5 s), and it does so for every attempt."""
    server.respond_with(lambda request: dribble(0.2))
    run = compact(server, session, "full", timeout=TIMEOUT, retries=0)
    (dump,) = assert_failed(run, kind="timeout", status=None, attempts=1, what="the whole answer did not arrive")
    assert dump["error"]["message"].endswith(f": the whole answer did not arrive within {TIMEOUT:g} s "
                                             "(the server was still sending it)")
    assert "the model took longer than 0.5 s: raise the timeout or use a faster model" in run.stderr
    assert run.elapsed >= TIMEOUT and run.ended - run.requests[0].at < TIMEOUT + 1.0  # not the dribble's ~60 s


def test_the_deadline_at_the_summariser_leaves_no_watchdog_behind(server):
    """The backend alone: a dribbled answer fails as a ``timeout`` after about ``timeout`` seconds, with no
    exception chain (the openai error holds the key), and the watchdog threads end with their calls."""
    summarizer = OpenAISummarizer(model="fake-model", base_url=server.base_url, api_key=KEY, timeout=TIMEOUT)
    request = SummaryRequest(processor="full", contract="full", prompt="Summarise.",
                             messages=(Message(role="user", content="hello"),), body=range(1), target_tokens=256)
    server.enqueue(dribble(0.2), ok("quick enough"))
    try:
        started = time.perf_counter()
        with pytest.raises(SummarizerError) as info:
            summarizer.summarize(request)
        assert TIMEOUT <= time.perf_counter() - started < 3.0  # the dribble would take ~50 s
        assert summarizer.summarize(request).text == "quick enough"  # the next call has its own deadline
    finally:
        summarizer.close()
    err = info.value
    assert (err.kind, err.status, err.retry_after) == ("timeout", None, None)
    assert err.what.endswith(f": the whole answer did not arrive within {TIMEOUT:g} s (the server was still sending it)")
    assert err.__cause__ is None and err.__context__ is None
    deadline = time.monotonic() + 2.0
    while any(isinstance(t, threading.Timer) for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not [t for t in threading.enumerate() if isinstance(t, threading.Timer)]


def test_a_slow_stream_that_ends_within_the_deadline_is_fine(server, session):
    server.respond_with(lambda request: dribble(0.002, then=ok(SNAPSHOT)))  # ~300 bytes: ~0.6 s in all
    run = compact(server, session, "full", timeout=3.0)
    assert (run.exit_code, run.stderr) == (0, "")
    (dump,) = run.dumps()
    assert dump["response"]["latency_s"] >= 0.3 and dump["benefit"]["accepted"] is True
    assert run.out.exists()


def test_a_transient_fault_then_an_answer_compacts(server, session):
    server.enqueue(dribble(0.2), error(503, "Service Unavailable"))
    server.respond_with(lambda request: ok(SNAPSHOT))
    run = compact(server, session, "full", timeout=TIMEOUT)
    assert (run.exit_code, run.stderr) == (0, "")
    first, second, third = run.dumps()
    assert (first["error"]["kind"], second["error"]["kind"], third["error"]) == ("timeout", "server_unstable", None)
    assert [a["error_kind"] for a in third["attempts"]] == ["timeout", "server_unstable", None]
    assert third["benefit"]["accepted"] is True and run.report()["status"] == "compacted"
    assert "Active Task: fix the four bugs" in run.out.read_text()
    assert len(run.requests) == 3


@pytest.mark.parametrize("compressor", ["full", "round-level"])
def test_429_retry_after_is_honoured(server, session, compressor):
    server.respond_with(together(compressor, lambda request: error(429, "Rate limit reached",
                                                                   headers={"Retry-After": "1"})))
    run = compact(server, session, compressor, retries=1)
    dumps = assert_failed(run, kind="rate_limit", status=429, attempts=2, what="HTTP 429: Rate limit reached")
    assert all(d["error"]["retry_after"] == 1.0 for d in dumps)
    for group in run.groups():
        assert all(1.0 <= w < 2.5 for w in gaps(group)), gaps(group)


@pytest.mark.parametrize("compressor", ["full", "round-level"])
def test_max_retries_0_means_one_attempt(server, session, compressor):
    server.respond_with(together(compressor, lambda request: error(503, "Service Unavailable")))
    run = compact(server, session, compressor, retries=0)
    dumps = assert_failed(run, kind="server_unstable", status=503, attempts=1, what="HTTP 503")
    assert {d["call"]["reason"] for d in dumps} == {"transient retries exhausted"}


# ---------------------------------------------------------------------------- non-transient faults


@pytest.mark.parametrize("compressor", ["full", "round-level"])
def test_401_is_not_retried_and_says_to_check_the_key(server, session, compressor):
    server.respond_with(together(compressor, lambda request: error(401, f"Incorrect API key provided: {KEY}",
                                                                   code="invalid_api_key")))
    run = compact(server, session, compressor)
    dumps = assert_failed(run, kind="authentication", status=401, attempts=1,
                          what="HTTP 401: Incorrect API key provided: [REDACTED] (invalid_api_key)")
    assert "check OPENAI_API_KEY for this endpoint" in run.stderr
    assert {d["call"]["reason"] for d in dumps} == {"authentication is not retried"}


@pytest.mark.parametrize(("status", "requests"), [(401, 1), (503, 1 + RETRIES)])
def test_round_level_one_at_a_time_stops_after_the_first_call_that_failed_for_good(server, session, status, requests):
    """A bad key or a dead server gets one call's attempts, not every call's."""
    server.respond_with(lambda request: error(status, "no"))
    run = compact(server, session, "round-level", "--concurrency", "1")
    assert run.exit_code == 1 and len(run.requests) == requests and len(run.groups()) == 1
    assert len(run.dumps()) == requests and run.report()["summarizer"]["calls"] == requests
    assert not run.out.exists()


def test_413_in_full_plans_smaller_calls_three_times_then_gives_up(server, session):
    """Context overflow: no wait; the calls are planned again for 0.85, 0.65, then 0.5 of what the first
    refused request needed (a 413 says no window, and the loopback server reports none), so each plan's
    first piece is smaller than the last refused request and never cuts a tool call from its result — 4
    requests in all (spec §2.10), each a new request (attempt 1), then exit 1."""
    server.respond_with(lambda request: error(413, "Request Entity Too Large"))
    run = compact(server, session, "full")
    assert run.exit_code == 1 and not run.out.exists()
    assert run.stderr.startswith("Error: full: summariser failed: ") and "HTTP 413: Request Entity" in run.stderr
    assert run.stderr.endswith(f"{UNTOUCHED}{run.dump_dir}\n")
    dumps = run.dumps()
    windows = [d["request"]["summarizer_window"] for d in dumps]
    assert windows[0] is None and [w["source"] for w in windows[1:]] == ["overflow error, estimated"] * 3
    first = windows[1]["tokens"] / 0.85
    assert [w["tokens"] for w in windows[1:]] == [int(first * r) for r in (0.85, 0.65, 0.5)]
    assert [d["call"]["reason"] for d in dumps] == [
        f"context overflow: the calls planned again for a window of {w['tokens']:,} tokens (overflow error, "
        "estimated)" for w in windows[1:]] + ["overflow retries exhausted"]
    assert [(d["call"]["status"], d["call"]["attempt"], d["error"]["kind"]) for d in dumps] == [
        ("failed", 1, "context_overflow")] * 4
    assert dumps[0]["request"]["max_tokens"] == 160  # no window known: a quarter of 0.13 of the body, at least 160
    sizes = [len(json.dumps(r.body)) for r in run.requests]
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == 4
    for r in run.requests:  # a tool call is never sent without its result
        sent = r.body["messages"]
        calls = {c["id"] for m in sent for c in m.get("tool_calls") or ()}
        assert calls == {m["tool_call_id"] for m in sent if m["role"] == "tool"}
        assert sent[-1]["role"] == "user" and sent[0]["role"] == "system"
    assert all(w < 0.5 for w in gaps(run.requests))


def test_413_in_round_level_is_final_for_a_request_fitted_to_its_budget(server, session):
    server.respond_with(together("round-level", lambda request: error(413, "Request Entity Too Large")))
    run = compact(server, session, "round-level")
    dumps = assert_failed(run, kind="context_overflow", status=413, attempts=1, what="HTTP 413: Request Entity")
    assert {d["call"]["reason"] for d in dumps} == {"context overflow on a request fitted to its budget"}


# ------------------------------------------------------------------------------ far over budget


def test_full_refuses_a_reply_bigger_than_what_it_replaces_and_keeps_the_original(server, session):
    """A summary is used as the model wrote it (no truncation); the benefit check refuses a result that is not
    smaller, so nothing but the call's dump is written and the exit code is 0 ("nothing to do", PRODUCT.md)."""
    huge = f"<state_snapshot>Active Task: {facts(1500)}</state_snapshot>"
    server.respond_with(lambda request: ok(huge))
    run = compact(server, session, "full")
    assert (run.exit_code, run.stderr) == (0, "")
    assert (run.tmp / "session.jsonl").read_bytes() == run.input_before[0] and not run.out.exists()
    (dump,) = run.dumps()
    assert dump["error"] is None and dump["response"]["raw_content"] == huge
    assert dump["benefit"]["accepted"] is False and dump["context_after"] is None
    assert dump["benefit"]["tokens_after"] > dump["benefit"]["tokens_before"]
    assert dump["benefit"]["reason"].startswith("no benefit (") and dump["benefit"]["reason"].endswith(
        " tokens); original kept")
    assert not (run.tmp / "report.json").exists()  # nothing to do writes no report, only the call's dump
    assert "original kept" in run.stdout
    assert len(run.requests) == 1
    assert_key_written_nowhere(run)


def test_full_keeps_a_reply_many_times_its_budget_whole_when_the_result_is_smaller(server, session):
    """Spec §2.8: only the whole list must shrink; a model's narrative over its budget is not cut, and the
    extractive facts follow it."""
    long = '{"narrative": "' + " ".join(f"fact{i}" for i in range(500)) + '"}'
    assert TokenCounter().count(long) >= 3 * 256
    server.respond_with(lambda request: ok(long))
    run = compact(server, session, "full", "--set", "full.summary_max_tokens=256")
    assert (run.exit_code, run.stderr) == (0, "")
    (dump,) = run.dumps()
    assert (dump["request"]["target_tokens"], dump["request"]["max_tokens"]) == (160, 160)
    assert dump["response"]["usage"]  # what the server said it spent
    assert dump["benefit"]["accepted"] is True, dump["benefit"]
    text = run.out.read_text()
    assert "fact0 " in text and "fact499" in text  # all of it, not truncated to the budget
    assert "Narrative written by the summariser model" in text and "Resume" in text


def test_round_level_refuses_blocks_far_over_budget_and_ends_with_the_hard_truncation(server, session):
    """Each block summary bigger than what it replaces is refused (spec §8.1.4); the aggressive stages get the same
    answer; the model-free hard truncation then reaches the target: exit 0, nothing of the oversized text kept."""
    server.respond_with(blocks_answer(lambda i: facts(400)))
    run = compact(server, session, "round-level", "--set", "round-level.first_pass_target_tokens=50", "--set",
                  "round-level.second_pass_target_tokens=50", "--set", "round-level.third_pass_target_tokens=50")
    assert (run.exit_code, run.stderr) == (0, "")
    report = run.report()
    stages = report["stages"][0]["pipeline"]
    assert [(s["stage"], s["replaced"]) for s in stages] == [
        ("recursive", 0), ("aggressive_keep_recent", 0), ("aggressive_full_context", 0), ("hard_truncate", 0)]
    assert sum(s["calls"] for s in stages) == len(run.requests) == len(run.dumps()) == report["summarizer"]["calls"]
    assert stages[0]["calls"] == ROUND_LEVEL_CALLS and report["summarizer"]["failed_calls"] == 0
    assert report["status"] == "compacted" and report["after"]["tokens"] <= 500
    text = run.out.read_text()
    assert "oversized summary" not in text and "...[TRUNCATED]..." in text
    assert (run.tmp / "session.jsonl").read_bytes() == run.input_before[0]
    assert_key_written_nowhere(run)
