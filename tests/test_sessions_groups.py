"""sessions/groups.py: session rows summed by project, day, model or tool, and the totals of each."""

from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace

import pytest

from tcompact.sessions.pricing import price
from tcompact.sessions.groups import group_rows, usage_sums
from tcompact.sessions.usage import ANTHROPIC, Request

UTC = timezone.utc
SONNET = "claude-sonnet-4-5-20250929"


def req(n, model, inp=0, out=0, write=0, read=0):
    return Request(key=("t", n), model=model, provider=ANTHROPIC, at=datetime(2026, 1, 5, tzinfo=UTC), input=inp,
                   output=out, cache_write=write, cache_read=read)


def tool(name, calls, args, results, errors=0):
    return {"name": name, "calls": calls, "argument_tokens": args, "result_tokens": results, "results": calls,
            "errors": errors}


def row(sid, project, last, messages, calls, tokens, agent="claude"):
    return {"agent": agent, "id": sid, "project": project, "last_activity": last, "messages": messages,
            "tool_calls": calls, "tokens": tokens}


def read(requests=(), tools=()):
    return SimpleNamespace(requests=list(requests), files=[{"transcripts": [{"tools": list(tools)}]}])


ROWS = [row("s3", "/app", "2026-01-07T09:00:00.000+00:00", 4, 1, 400),
        row("s2", None, "2026-01-06T23:00:00.000+00:00", 2, 0, 200, agent="codex"),
        row("s1", "/app", "2026-01-06T08:00:00.000+00:00", 6, 3, 600)]
READS = [read([req(1, SONNET, 10, 5, 100, 1000)], [tool("Bash", 1, 20, 300)]),
         read(),
         read([req(2, SONNET, 1, 1), req(3, "claude-mystery", 2, 2), req(4, None, 3, 3)],
              [tool("Bash", 2, 10, 50, errors=1), tool("Read", 1, 5, 900)])]


def usage(requests, inp, out, write, read_):
    return {"requests": requests, "input": inp, "output": out, "cache_write": write, "cache_read": read_}


def test_usage_sums():
    assert usage_sums([req(1, "m", 1, 2, 3, 4), req(2, "m", 10, 20, 30, 40)]) == usage(2, 11, 22, 33, 44)
    assert usage_sums([]) == usage(0, 0, 0, 0, 0)


TOTALS = {"sessions": 3, "messages": 12, "tool_calls": 4, "tokens": 1200, "usage": usage(4, 16, 11, 100, 1000)}


def test_session_gives_the_totals_only():
    assert group_rows("session", ROWS, READS, tz=UTC, cost=False) == (None, TOTALS)


@pytest.mark.parametrize(("group_by", "groups"), [
    ("project", [{"key": "/app", "sessions": 2, "messages": 10, "tool_calls": 4, "tokens": 1000,
                  "usage": usage(4, 16, 11, 100, 1000)},
                 {"key": "(not recorded)", "sessions": 1, "messages": 2, "tool_calls": 0, "tokens": 200,
                  "usage": None}]),
    ("day", [{"key": "2026-01-07", "sessions": 1, "messages": 4, "tool_calls": 1, "tokens": 400,
              "usage": usage(1, 10, 5, 100, 1000)},
             {"key": "2026-01-06", "sessions": 2, "messages": 8, "tool_calls": 3, "tokens": 800,
              "usage": usage(3, 6, 6, 0, 0)}]),
])
def test_project_and_day_sum_whole_sessions_newest_first(group_by, groups):
    assert group_rows(group_by, ROWS, READS, tz=UTC, cost=False) == (groups, TOTALS)


def test_model_splits_the_requests_and_counts_the_sessions_that_used_each():
    groups, totals = group_rows("model", ROWS, READS, tz=UTC, cost=False)
    assert totals == TOTALS
    assert groups == [{"key": SONNET, "sessions": 2, "usage": usage(2, 11, 6, 100, 1000)},
                      {"key": "(not recorded)", "sessions": 1, "usage": usage(1, 3, 3, 0, 0)},
                      {"key": "claude-mystery", "sessions": 1, "usage": usage(1, 2, 2, 0, 0)}]


def test_model_groups_are_ordered_by_their_priced_cost_with_cost():
    groups, totals = group_rows("model", ROWS, READS, tz=UTC, cost=True)
    sonnet = [r for rd in READS for r in rd.requests if r.model == SONNET]
    assert [(g["key"], g["cost"]) for g in groups] == [
        (SONNET, price(sonnet).as_dict()),
        ("(not recorded)", price([READS[2].requests[2]]).as_dict()),
        ("claude-mystery", price([READS[2].requests[1]]).as_dict())]
    assert groups[0]["cost"]["usd"] > 0 and groups[2]["cost"]["usd"] is None
    assert totals["cost"] == price([r for rd in READS for r in rd.requests]).as_dict()


def test_tool_sums_each_tool_over_the_sessions():
    groups, totals = group_rows("tool", ROWS, READS, tz=UTC, cost=True)
    assert groups == [
        {"key": "Read", "calls": 1, "argument_tokens": 5, "result_tokens": 900, "results": 1, "errors": 0, "sessions": 1},
        {"key": "Bash", "calls": 3, "argument_tokens": 30, "result_tokens": 350, "results": 3, "errors": 1,
         "sessions": 2}]
    assert totals == {"sessions": 3, "calls": 4, "argument_tokens": 35, "result_tokens": 1250, "results": 4,
                      "errors": 1}

