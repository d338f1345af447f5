"""sessions/report.py: the sessions listing — rows counted as inspect counts, requests charged once, what
could not be read named."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from claude_lines import assistant, parallel_session, usage, user
from conftest import jsonl

from tcompact.errors import UsageError
from tcompact.formats import ReadOptions
from tcompact.inspection import InspectOptions, inspect_paths
from tcompact.sessions.pricing import price
from tcompact.sessions.report import SessionsOptions, session_detail, session_row, sessions_report
from tcompact.sessions.stores import Session
from tcompact.sessions.usage import ANTHROPIC, Request

UTC = timezone.utc


def later_reply():
    return [user("u9", "a2", "and the docs", "2026-01-05T11:00:00.000Z"),
            assistant("a9", "u9", "msg_C", [{"type": "text", "text": "Docs done."}], usage(1, 0, 0, 2),
                      "2026-01-05T11:00:01.000Z", request="req_C")]


@pytest.fixture
def sessions(tmp_path):
    original = jsonl(tmp_path / "a.jsonl", parallel_session())
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"role":"user"\n')
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_bytes(b'{"a":1}\n')
    fork = jsonl(tmp_path / "b.jsonl", parallel_session() + later_reply())  # holds the original's history

    def session(sid, files, hour):
        when = datetime(2026, 1, 5, hour, tzinfo=UTC)
        return Session(agent="claude", id=sid, main=files[0], subagents=tuple(files[1:]), project="/repo",
                       first=when, last=when)

    return [session("b", [fork], 11), session("a", [original, bad, foreign], 10)]


def test_each_session_is_a_row_and_a_copied_request_is_charged_once(sessions):
    calls = []
    doc = sessions_report(sessions, SessionsOptions(timezone="UTC", cost=False), on_file=lambda *a: calls.append(a))
    a_files = [str(p) for p in sessions[1].files]
    assert {k: doc[k] for k in ("tool", "schema_version", "view", "group_by", "timezone", "prices", "groups")} == {
        "tool": "tcompact", "schema_version": 1, "view": "sessions", "group_by": "session", "timezone": "UTC",
        "prices": None, "groups": None}
    b, a = doc["sessions"]
    assert {k: a[k] for k in ("id", "project", "first_activity", "last_activity", "models", "files", "transcripts",
                              "messages", "tool_calls")} == {
        "id": "a", "project": "/repo", "first_activity": "2026-01-05T10:00:00.000+00:00",
        "last_activity": "2026-01-05T10:00:00.000+00:00", "models": ["claude-sonnet-4-5"], "files": a_files,
        "transcripts": 1, "messages": 5, "tool_calls": 2}
    assert a["usage"] == {"requests": 2, "input": 13, "output": 32, "cache_write": 5, "cache_read": 300,
                          "copied_requests": 0}
    assert b["usage"] == {"requests": 1, "input": 1, "output": 2, "cache_write": 0, "cache_read": 0,
                          "copied_requests": 2}  # the fork's first two replies are the original's
    assert "cost" not in a
    assert doc["totals"] == {"sessions": 2, "messages": 12, "tool_calls": 4, "tokens": a["tokens"] + b["tokens"],
                             "usage": {"requests": 3, "input": 14, "output": 34, "cache_write": 5, "cache_read": 300}}
    # the sessions view reads on past bad lines: a file of bad lines only holds no transcript
    assert doc["errors"] == [] and doc["skipped_lines"] == []
    assert doc["not_transcripts"] == [
        {"path": a_files[1], "reason": "no line of the file is a JSON record (all are blank or were skipped)"},
        {"path": a_files[2], "reason": "cannot tell the format (first record has keys: a)"}]
    paths = [sessions[0].files[0], *sessions[1].files]
    assert calls == [(0, 4, paths[0]), (1, 4, paths[1]), (2, 4, paths[2]), (3, 4, paths[3]), (4, 4, paths[3])]


def test_the_counted_figures_are_those_of_inspect(sessions):
    doc = sessions_report(sessions, SessionsOptions(timezone="UTC", cost=False))
    (f,) = inspect_paths([sessions[0].files[0]], InspectOptions())["files"]
    (t,) = f["transcripts"]
    assert (doc["sessions"][0]["tokens"], doc["sessions"][0]["context"]) == (
        t["tokens"]["total"], {k: t["window"][k] for k in ("tokens", "context_window", "utilisation")})


def test_with_cost_each_row_and_the_totals_are_priced(sessions):
    doc = sessions_report(sessions[1:], SessionsOptions(timezone="UTC"))
    (row,) = doc["sessions"]
    assert doc["prices"]["package"] == "genai-prices"
    requests = [Request(key=("claude", "msg_A", "req_A"), model="claude-sonnet-4-5", provider=ANTHROPIC,
                        at=datetime(2026, 1, 5, 10, 0, 1, 200000, tzinfo=UTC), input=10, output=12, cache_write=5,
                        cache_read=100),
                Request(key=("claude", "msg_B", "req_B"), model="claude-sonnet-4-5", provider=ANTHROPIC,
                        at=datetime(2026, 1, 5, 10, 0, 3, tzinfo=UTC), input=3, output=20, cache_read=200)]
    assert row["cost"] == doc["totals"]["cost"] == price(requests).as_dict()


def test_a_row_lists_models_most_used_first_then_those_without_usage():
    def req(n, model):
        return Request(key=(n,), model=model, provider=ANTHROPIC, at=None, input=1)

    files = [{"transcripts": [
        {"kind": "subagent", "model": "sub-model", "messages": 1, "tool_calls": 0, "tokens": {"total": 5},
         "window": {"tokens": 5, "context_window": 100, "utilisation": 0.05}},
        {"kind": "main", "model": "b-model", "messages": 2, "tool_calls": 1, "tokens": {"total": 7},
         "window": {"tokens": 7, "context_window": 100, "utilisation": 0.07}}]}]
    s = Session(agent="codex", id="x", main=None, first=None, last=None)
    row = session_row(s, files, [req(1, "b-model"), req(2, "a-model"), req(3, "b-model"), req(4, None)], tz=UTC,
                      cost=False, copied=0)
    assert row == {"agent": "codex", "id": "x", "project": None, "first_activity": None, "last_activity": None,
                   "models": ["b-model", "a-model", "sub-model"], "files": [], "transcripts": 2, "messages": 3,
                   "tool_calls": 1, "tokens": 12, "context": {"tokens": 7, "context_window": 100, "utilisation": 0.07},
                   "usage": {"requests": 4, "input": 4, "output": 0, "cache_write": 0, "cache_read": 0,
                             "copied_requests": 0}}
    assert session_row(s, [], [], tz=UTC, cost=True) == {
        **row, "models": [], "transcripts": 0, "messages": 0, "tool_calls": 0, "tokens": 0, "context": None,
        "usage": None, "cost": None}


def test_an_unknown_grouping_is_refused():
    with pytest.raises(UsageError) as exc:
        SessionsOptions(group_by="week")
    assert str(exc.value) == "--group-by: unknown grouping 'week' — use one of: session, project, day, model, tool"


def test_the_detail_of_one_session_adds_its_row_to_the_inspect_report(sessions):
    report = inspect_paths([sessions[0].files[0]], InspectOptions())
    detail = session_detail(sessions[0], report, read=ReadOptions(), cost=False, timezone_name="UTC")
    assert detail["files"] == report["files"] and detail["prices"] is None
    assert detail["session"]["usage"] == {"requests": 3, "input": 14, "output": 34, "cache_write": 5,
                                          "cache_read": 300, "copied_requests": 0}  # alone, nothing is a copy


def test_a_copied_request_belongs_to_the_session_it_was_made_in():
    from tcompact.sessions.copies import owned, peers

    def s(sid, first, last, origin=None, agent="claude"):
        return Session(agent=agent, id=sid, main=None, first=datetime(2026, 1, 5, first, tzinfo=UTC),
                       last=datetime(2026, 1, 5, last, tzinfo=UTC), origin=origin)

    def req(n):
        return Request(key=(n,), model=None, provider=ANTHROPIC, at=None, input=1)

    original, later = s("b-original", 9, 12), s("c-other", 10, 11)
    resumed_after = s("a-fork", 9, 11, origin="b-original")  # the original went on after the fork: the name decides
    copy = s("0-copy", 9, 13)  # no name, same start: the one that ended first is the original
    held = [(resumed_after, [req(1), req(2), req(3)]), (original, [req(1), req(2), req(1)]), (later, [req(3)]),
            (copy, [req(1), req(4)])]
    assert [(len(kept), copied) for kept, copied in owned(held)] == [(1, 2), (2, 0), (0, 1), (1, 1)]
    assert [x.id for x in peers([resumed_after], [original, later, copy, resumed_after, s("x", 9, 9, agent="codex")])
            ] == ["b-original", "0-copy"]
