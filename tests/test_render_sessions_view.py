"""render/sessions_view.py: the sessions listing, its group-bys, a session's lines and a fork's, from fixed
documents (the listing is drawn 200 columns wide when stdout is no terminal)."""

from __future__ import annotations

import pytest

from tcompact.render.sessions_view import cost_text, resume_lines, session_lines, sessions_table


def usage(requests, inp, out, write, read, copied=0):
    return {"requests": requests, "input": inp, "output": out, "cache_write": write, "cache_read": read,
            "copied_requests": copied}


def cost(usd, priced, unpriced=()):
    return {"usd": usd, "priced_usd": priced, "requests": 3, "unpriced_requests": len(unpriced),
            "unpriced_models": list(unpriced)}


ROWS = [
    {"agent": "codex", "id": "019b0000-0000-7000-8000-000000000004", "project": "/home/dev/app",
     "first_activity": "2026-01-09T08:00:00.000+00:00", "last_activity": "2026-01-09T08:00:06.100+00:00",
     "models": ["gpt-5.1-codex"], "files": ["a"], "transcripts": 2, "messages": 6, "tool_calls": 1, "tokens": 9000,
     "context": {"tokens": 8000, "context_window": 272000, "utilisation": 0.0294},
     "usage": usage(3, 5100, 310, 0, 6000), "cost": cost(0.010225, 0.010225)},
    {"agent": "claude", "id": "c3c3c3c3-0000-4000-8000-000000000003", "project": "/home/dev/lib",
     "first_activity": "2026-01-07T23:50:00.000+00:00", "last_activity": "2026-01-08T00:10:05.000+00:00",
     "models": ["claude-mystery-9", "claude-sonnet-4-5"], "files": ["b"], "transcripts": 1, "messages": 4,
     "tool_calls": 0, "tokens": 120, "context": None, "usage": usage(2, 1010, 2010, 50000, 160000),
     "cost": cost(None, 0.567, ["claude-mystery-9"])},
    {"agent": "claude", "id": "a1a1a1a1-0000-4000-8000-000000000001", "project": None,
     "first_activity": "2025-12-31T10:00:00.000+00:00", "last_activity": "2026-01-05T10:05:00.000+00:00",
     "models": [], "files": ["c", "d"], "transcripts": 2, "messages": 6, "tool_calls": 1, "tokens": 700,
     "context": {"tokens": 700, "context_window": 200000, "utilisation": 0.0035}, "usage": None, "cost": None},
]
TOTALS = {"sessions": 3, "messages": 16, "tool_calls": 2, "tokens": 9820,
          "usage": {"requests": 5, "input": 6110, "output": 2320, "cache_write": 50000, "cache_read": 166000},
          "cost": cost(None, 0.577225, ["claude-mystery-9"])}
DOC = {"group_by": "session", "timezone": "UTC", "prices": {"package": "genai-prices", "version": "0.2.3"},
       "sessions": ROWS, "groups": None, "totals": TOTALS, "not_transcripts": [{"path": "x", "reason": "y"}]}


def test_the_sessions_with_cost(screen):
    sessions_table(DOC)
    assert screen() == """\
Sessions on this machine, newest first (times in UTC)
┏━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━┳━━━━━━━┳━━━━━━━━┳━━━━━━━━━┳━━━━━━━┳━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━━━━━━━━━┓
┃ agent      ┃ project       ┃ session  ┃ active                           ┃ models                           ┃ msgs ┃ calls ┃ tokens ┃ context ┃ input ┃ output ┃ cache w ┃ cache r ┃            cost ┃
┡━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━╇━━━━━━━╇━━━━━━━━╇━━━━━━━━━╇━━━━━━━╇━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━━━━━━━━━┩
│ codex      │ /home/dev/app │ 019b0000 │ 2026-01-09 08:00–08:00           │ gpt-5.1-codex                    │    6 │     1 │  9,000 │      3% │ 5,100 │    310 │       0 │   6,000 │           $0.01 │
│ claude     │ /home/dev/lib │ c3c3c3c3 │ 2026-01-07 23:50 – 01-08 00:10   │ claude-mystery-9,                │    4 │     0 │    120 │       — │ 1,010 │  2,010 │  50,000 │ 160,000 │ $0.57 + unknown │
│            │               │          │                                  │ claude-sonnet-4-5                │      │       │        │         │       │        │         │         │                 │
│ claude     │ —             │ a1a1a1a1 │ 2025-12-31 10:00 – 2026-01-05    │ —                                │    6 │     1 │    700 │      0% │     — │      — │       — │       — │               — │
│            │               │          │ 10:05                            │                                  │      │       │        │         │       │        │         │         │                 │
├────────────┼───────────────┼──────────┼──────────────────────────────────┼──────────────────────────────────┼──────┼───────┼────────┼─────────┼───────┼────────┼─────────┼─────────┼─────────────────┤
│ 3 sessions │               │          │                                  │                                  │   16 │     2 │  9,820 │         │ 6,110 │  2,320 │  50,000 │ 166,000 │ $0.58 + unknown │
└────────────┴───────────────┴──────────┴──────────────────────────────────┴──────────────────────────────────┴──────┴───────┴────────┴─────────┴───────┴────────┴─────────┴─────────┴─────────────────┘
Cost: provider-reported usage priced with genai-prices 0.2.3 (offline table); no price for claude-mystery-9 (shown as unknown)
—: no provider usage recorded in the session
Passed over 1 file(s) that hold no transcript
"""


def test_the_sessions_without_cost(screen):
    sessions_table({**DOC, "prices": None, "not_transcripts": []})
    assert screen() == """\
Sessions on this machine, newest first (times in UTC)
┏━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━┳━━━━━━━┳━━━━━━━━┳━━━━━━━━━┳━━━━━━━┳━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━┓
┃ agent      ┃ project       ┃ session  ┃ active                              ┃ models                              ┃ msgs ┃ calls ┃ tokens ┃ context ┃ input ┃ output ┃ cache w ┃ cache r ┃
┡━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━╇━━━━━━━╇━━━━━━━━╇━━━━━━━━━╇━━━━━━━╇━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━┩
│ codex      │ /home/dev/app │ 019b0000 │ 2026-01-09 08:00–08:00              │ gpt-5.1-codex                       │    6 │     1 │  9,000 │      3% │ 5,100 │    310 │       0 │   6,000 │
│ claude     │ /home/dev/lib │ c3c3c3c3 │ 2026-01-07 23:50 – 01-08 00:10      │ claude-mystery-9, claude-sonnet-4-5 │    4 │     0 │    120 │       — │ 1,010 │  2,010 │  50,000 │ 160,000 │
│ claude     │ —             │ a1a1a1a1 │ 2025-12-31 10:00 – 2026-01-05 10:05 │ —                                   │    6 │     1 │    700 │      0% │     — │      — │       — │       — │
├────────────┼───────────────┼──────────┼─────────────────────────────────────┼─────────────────────────────────────┼──────┼───────┼────────┼─────────┼───────┼────────┼─────────┼─────────┤
│ 3 sessions │               │          │                                     │                                     │   16 │     2 │  9,820 │         │ 6,110 │  2,320 │  50,000 │ 166,000 │
└────────────┴───────────────┴──────────┴─────────────────────────────────────┴─────────────────────────────────────┴──────┴───────┴────────┴─────────┴───────┴────────┴─────────┴─────────┘
—: no provider usage recorded in the session
"""


def test_sessions_by_project(screen):
    groups = [{"key": "/home/dev/app", "sessions": 2, "messages": 12, "tool_calls": 2, "tokens": 9700,
               "usage": {"requests": 3, "input": 5100, "output": 310, "cache_write": 0, "cache_read": 6000},
               "cost": cost(0.010225, 0.010225)},
              {"key": "/home/dev/lib", "sessions": 1, "messages": 4, "tool_calls": 0, "tokens": 120, "usage": None,
               "cost": None}]
    sessions_table({**DOC, "group_by": "project", "groups": groups, "not_transcripts": []})
    assert screen() == """\
Sessions by project
┏━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━┳━━━━━━━┳━━━━━━━━┳━━━━━━━┳━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━━━━━━━━━┓
┃ project       ┃ sessions ┃ msgs ┃ calls ┃ tokens ┃ input ┃ output ┃ cache w ┃ cache r ┃            cost ┃
┡━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━╇━━━━━━━╇━━━━━━━━╇━━━━━━━╇━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━━━━━━━━━┩
│ /home/dev/app │        2 │   12 │     2 │  9,700 │ 5,100 │    310 │       0 │   6,000 │           $0.01 │
│ /home/dev/lib │        1 │    4 │     0 │    120 │     — │      — │       — │       — │               — │
├───────────────┼──────────┼──────┼───────┼────────┼───────┼────────┼─────────┼─────────┼─────────────────┤
│ total         │        3 │   16 │     2 │  9,820 │ 6,110 │  2,320 │  50,000 │ 166,000 │ $0.58 + unknown │
└───────────────┴──────────┴──────┴───────┴────────┴───────┴────────┴─────────┴─────────┴─────────────────┘
Cost: provider-reported usage priced with genai-prices 0.2.3 (offline table); no price for claude-mystery-9 (shown as unknown)
—: no provider usage recorded in the session
"""


def test_requests_by_model(screen):
    groups = [{"key": "claude-sonnet-4-5", "sessions": 2,
               "usage": {"requests": 3, "input": 5100, "output": 310, "cache_write": 0, "cache_read": 6000},
               "cost": cost(0.0051, 0.0051)},
              {"key": "claude-mystery-9", "sessions": 1,
               "usage": {"requests": 1, "input": 10, "output": 10, "cache_write": 0, "cache_read": 0},
               "cost": cost(None, 0, ["claude-mystery-9"])}]
    sessions_table({**DOC, "group_by": "model", "groups": groups, "not_transcripts": []})
    assert screen() == """\
Requests by model
┏━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━┳━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━━━━━━━━━┓
┃ model             ┃ sessions ┃ requests ┃ input ┃ output ┃ cache w ┃ cache r ┃            cost ┃
┡━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━╇━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━━━━━━━━━┩
│ claude-sonnet-4-5 │        2 │        3 │ 5,100 │    310 │       0 │   6,000 │         $0.0051 │
│ claude-mystery-9  │        1 │        1 │    10 │     10 │       0 │       0 │         unknown │
├───────────────────┼──────────┼──────────┼───────┼────────┼─────────┼─────────┼─────────────────┤
│ total             │        3 │        5 │ 6,110 │  2,320 │  50,000 │ 166,000 │ $0.58 + unknown │
└───────────────────┴──────────┴──────────┴───────┴────────┴─────────┴─────────┴─────────────────┘
Cost: provider-reported usage priced with genai-prices 0.2.3 (offline table); no price for claude-mystery-9 (shown as unknown)
—: no provider usage recorded in the session
"""


def test_tools_across_sessions(screen):
    groups = [{"key": "Bash", "sessions": 2, "calls": 3, "argument_tokens": 30, "result_tokens": 1350, "results": 3,
               "errors": 1}]
    totals = {"sessions": 3, "calls": 3, "argument_tokens": 30, "result_tokens": 1350, "results": 3, "errors": 1}
    sessions_table({**DOC, "group_by": "tool", "groups": groups, "prices": None, "totals": totals,
                    "not_transcripts": []})
    assert screen() == """\
Tools across sessions
┏━━━━━━━┳━━━━━━━━━━┳━━━━━━━┳━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━┓
┃ tool  ┃ sessions ┃ calls ┃ argument tokens ┃ result tokens ┃ errors ┃
┡━━━━━━━╇━━━━━━━━━━╇━━━━━━━╇━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━┩
│ Bash  │        2 │     3 │              30 │         1,350 │      1 │
├───────┼──────────┼───────┼─────────────────┼───────────────┼────────┤
│ total │        3 │     3 │              30 │         1,350 │      1 │
└───────┴──────────┴───────┴─────────────────┴───────────────┴────────┘
—: no provider usage recorded in the session
"""


def test_the_lines_of_one_session_and_of_a_fork(screen):
    session_lines(ROWS[1])
    session_lines({**ROWS[2], "first_activity": None})
    session_lines({k: v for k, v in ROWS[0].items() if k != "cost"})  # --no-cost: no cost said
    resume_lines({"mode": "fork", "agent": "claude", "id": "n1", "path": "/p/n1.jsonl", "backup": None,
                  "resume": "cd /repo && claude --resume n1"})
    resume_lines({"mode": "in-place", "agent": "codex", "id": "019b", "path": "/s/r.jsonl",
                  "backup": "/s/r.jsonl.tcompact-backup-20260101T000000Z", "resume": "codex resume 019b"})
    assert screen() == """\
Session c3c3c3c3-0000-4000-8000-000000000003 (claude, /home/dev/lib), 2026-01-07 23:50 – 01-08 00:10, 1 file(s)
Provider usage of the session: input 1,010, output 2,010, cache w 50,000, cache r 160,000; cost $0.57 + unknown
Session a1a1a1a1-0000-4000-8000-000000000001 (claude, project not recorded), 2026-01-05 10:05, 2 file(s)
Provider usage of the session: none recorded; cost —
Session 019b0000-0000-7000-8000-000000000004 (codex, /home/dev/app), 2026-01-09 08:00–08:00, 1 file(s)
Provider usage of the session: input 5,100, output 310, cache w 0, cache r 6,000
Forked as a new claude session n1: /p/n1.jsonl
Resume it with:
  cd /repo && claude --resume n1
Replaced /s/r.jsonl in place; the original is kept as /s/r.jsonl.tcompact-backup-20260101T000000Z (`tcompact restore --session 019b` brings it back)
Resume it with:
  codex resume 019b
"""


@pytest.mark.parametrize(("value", "text"), [
    (None, "—"), (cost(0.0, 0.0), "$0.00"), (cost(0.004, 0.004), "$0.0040"), (cost(1234.5, 1234.5), "$1,234.50"),
    (cost(None, 0.0), "unknown"), (cost(None, 0.005), "$0.0050 + unknown"),
])
def test_cost_text(value, text):
    assert cost_text(value) == text
