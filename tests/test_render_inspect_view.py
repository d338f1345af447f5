"""render/inspect_view.py: the inspect view of one file in detail and of several files, drawn from a fixed report
at 80 columns; the window bar and the sparkline."""

from __future__ import annotations

import pytest
from conftest import SESSION, jsonl

from tcompact.errors import UsageError
from tcompact.inspection import InspectOptions, inspect_paths
from tcompact.render import inspect_report
from tcompact.render.inspect_view import sparkline, window_bar


def tokens(total, estimated=0):
    return {"total": total, "estimated": estimated,
            "by_role": {"system": 100, "user": 300, "assistant": 2600, "tool": 9000},
            "by_kind": {"system": 100, "user": 200, "injected": 100, "assistant": 1500, "reasoning": 0,
                        "tool_arguments": 1100, "tool_results": 9000, "images": 0}}


def window(tokens, utilisation, over=False):
    return {"context_window": 200000, "source": "model claude-sonnet-4-5 (from the file)", "tokens": tokens,
            "utilisation": utilisation, "trigger_ratio": 0.8, "trigger_tokens": 160000, "over_trigger": over,
            "min_target_ratio": 0.1, "min_target_tokens": 20000}


MAIN = {
    "id": "main", "kind": "main", "model": "claude-sonnet-4-5", "parent_tool_call": None, "encoding": "o200k_base",
    "approximate": True, "messages": 12, "tool_calls": 4, "tokens": tokens(12000, 800),
    "tools": [{"name": "Bash", "calls": 3, "argument_tokens": 900, "result_tokens": 8500, "results": 3, "errors": 1},
              {"name": "Read", "calls": 1, "argument_tokens": 200, "result_tokens": 500, "results": 1, "errors": 0}],
    "orphans": {"tool_results": 1, "unanswered_calls": 0},
    "rounds": [{"number": 0, "start": 0, "end": 1, "request": None, "messages": 1, "tokens": 100, "tool_calls": 0},
               {"number": 1, "start": 1, "end": 8, "request": "Fix the failing parser test", "messages": 7,
                "tokens": 9900, "tool_calls": 3},
               {"number": 2, "start": 8, "end": 12, "request": "Now update the changelog", "messages": 4,
                "tokens": 2000, "tool_calls": 1}],
    "top_messages": [{"index": 5, "role": "tool", "tool": "Bash", "tokens": 8000,
                      "preview": "FAILED tests/test_parser.py::test_empty - IndexError: list index out of range"},
                     {"index": 9, "role": "assistant", "tool": None, "tokens": 700, "preview": "Updated."}],
    "compactions": [{"index": 0, "line": 12, "kind": "claude_compact_boundary", "trigger": "auto",
                     "pre_tokens": 152340},
                    {"index": None, "line": 3, "kind": "claude_compact_boundary", "trigger": None,
                     "pre_tokens": None}],
    "provider_usage": {"last_line": 44, "source": "claude-code", "requests": 12, "lines": 19, "input_tokens": 17,
                       "cache_read_input_tokens": 285322, "cache_creation_input_tokens": 25430,
                       "output_tokens": 2728, "last_context_tokens": 30585, "predates_compaction": None},
    "window": window(12000, 0.06),
    "span": {"compressor": "dialogue", "keep_recent": None,
             "prefix": {"start": 0, "end": 0, "messages": 0, "tokens": 0},
             "body": {"start": 0, "end": 8, "messages": 8, "tokens": 10000},
             "tail": {"start": 8, "end": 12, "messages": 4, "tokens": 2000}, "would_compact": False},
    "notes": ["line 40 (user) has no uuid and is not read"],
}
SUB = {**MAIN, "id": "agent-a1b2c3", "kind": "subagent", "parent_tool_call": "toolu_01Task", "messages": 3,
       "tool_calls": 1, "tokens": {**tokens(900), "total": 900}, "window": window(900, 0.0045)}
FILE = {"path": "/data/s/session.jsonl", "format": "claude-code", "records": 44, "skipped_lines": [],
        "unknown_records": {"brand-new": 2, "(record without type)": 1}, "transcripts": [MAIN, SUB]}
REPORT = {"tool": "tcompact", "version": "0.1.0", "schema_version": 1, "files": [FILE], "errors": [],
          "not_transcripts": [], "totals": {"files": 1, "transcripts": 2, "messages": 15, "tool_calls": 5,
                                            "tokens": 12900, "skipped_lines": 0}}


DETAIL = """\
/data/s/session.jsonl · claude-code · main (main)
12 messages · 4 tool calls · 12,000 tokens (o200k_base, approximate, 800 estimated) · model claude-sonnet-4-5

Context window: 12,000 of 200,000 tokens (6.0%; size: model claude-sonnet-4-5 (from the file))
  [██··┆···························│·······] below the trigger
  trigger 160,000 (0.8) · minimum target 20,000 (0.1)

Tokens per round 0–2: ▁█▂ (peak 9,900 in round 1)

Tokens by content kind
┏━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━┓
┃ kind                ┃ tokens ┃ share ┃
┡━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━┩
│ system text         │    100 │  0.8% │
│ user text           │    200 │  1.7% │
│ injected context    │    100 │  0.8% │
│ assistant text      │  1,500 │ 12.5% │
│ tool-call arguments │  1,100 │  9.2% │
│ tool results        │  9,000 │ 75.0% │
├─────────────────────┼────────┼───────┤
│ role system         │    100 │  0.8% │
│ role user           │    300 │  2.5% │
│ role assistant      │  2,600 │ 21.7% │
│ role tool           │  9,000 │ 75.0% │
└─────────────────────┴────────┴───────┘
Tokens by tool
┏━━━━━━┳━━━━━━━┳━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━┓
┃ tool ┃ calls ┃ argument tokens ┃ result tokens ┃ errors ┃
┡━━━━━━╇━━━━━━━╇━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━┩
│ Bash │     3 │             900 │         8,500 │      1 │
│ Read │     1 │             200 │           500 │      0 │
└──────┴───────┴─────────────────┴───────────────┴────────┘
Rounds
┏━━━┳━━━━━━━━━━┳━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
┃ # ┃ messages ┃ calls ┃ tokens ┃ request                     ┃
┡━━━╇━━━━━━━━━━╇━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
│ 0 │      0–0 │     0 │    100 │ (before the first request)  │
│ 1 │      1–7 │     3 │  9,900 │ Fix the failing parser test │
│ 2 │     8–11 │     1 │  2,000 │ Now update the changelog    │
└───┴──────────┴───────┴────────┴─────────────────────────────┘
Largest messages
┏━━━━━┳━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
┃   # ┃ tokens ┃ role      ┃ tool         ┃ preview                      ┃
┡━━━━━╇━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
│   5 │  8,000 │ tool      │ Bash         │ FAILED tests/test_parser.py… │
│   9 │    700 │ assistant │              │ Updated.                     │
└─────┴────────┴───────────┴──────────────┴──────────────────────────────┘
Compactions found in the file
┏━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┓
┃ line ┃ kind                    ┃ trigger ┃ tokens before ┃ at message ┃
┡━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━━━┩
│ 12   │ claude_compact_boundary │ auto    │ 152,340       │ 0          │
│ 3    │ claude_compact_boundary │ —       │ —             │ —          │
└──────┴─────────────────────────┴─────────┴───────────────┴────────────┘
Provider usage (claude-code, 12 requests from 19 lines): input 17, cache read 285,322, cache creation 25,430, output 2,728
  context at the last request: 30,585 reported vs 12,000 counted by tcompact (the provider also counts the system prompt and tool definitions)
Span layout of dialogue
┏━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━┳━━━━━━━━┓
┃ part              ┃ messages ┃ range ┃ tokens ┃
┡━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━╇━━━━━━━━┩
│ preserved prefix  │        0 │     — │      0 │
│ compressible body │        8 │   0–7 │ 10,000 │
│ protected tail    │        4 │  8–11 │  2,000 │
└───────────────────┴──────────┴───────┴────────┘
  would compact now: no
Tool pairing: 1 result(s) without a call, 0 call(s) without a result
Note: line 40 (user) has no uuid and is not read
Transcripts in this file (--transcript ID shows one)
id            kind      msgs  calls  tokens  started by
─────────────────────────────────────────────────────────
main          main        12      4  12,000
agent-a1b2c3  subagent     3      1     900  toolu_01Task
Kept 3 record(s) of unknown type: brand-new ×2, (record without type) ×1
"""


def test_one_file_in_detail(screen):
    inspect_report(REPORT)
    assert screen() == DETAIL


def test_the_fixed_report_has_the_keys_inspect_gives(tmp_path):
    real = inspect_paths([jsonl(tmp_path / "s.jsonl", SESSION)], InspectOptions(spans="dialogue"))
    (t,) = real["files"][0]["transcripts"]
    assert (sorted(real), sorted(real["files"][0]), sorted(t)) == (sorted(REPORT), sorted(FILE), sorted(MAIN))
    assert [sorted(t[k]) for k in ("tokens", "window", "span", "orphans")] == [
        sorted(MAIN[k]) for k in ("tokens", "window", "span", "orphans")]


def test_transcript_picks_one_transcript_of_the_file(screen):
    inspect_report(REPORT, transcript="agent-a1b2c3")
    assert screen().splitlines()[:3] == [
        "/data/s/session.jsonl · claude-code · agent-a1b2c3 (subagent)",
        "3 messages · 1 tool call · 900 tokens (o200k_base, approximate) · model claude-sonnet-4-5", ""]


@pytest.mark.parametrize(("report", "error"), [
    (REPORT, "/data/s/session.jsonl: no transcript 'agent-x' in this file — choose one of: main, agent-a1b2c3"),
    ({**REPORT, "files": [FILE, FILE]}, "--transcript needs a single file — pass the one file that holds that "
                                        "transcript"),
])
def test_a_transcript_that_is_not_there_is_an_error(report, error):
    with pytest.raises(UsageError) as exc:
        inspect_report(report, transcript="agent-x")
    assert str(exc.value) == error


def test_several_files_are_one_row_per_context(screen):
    other = {**FILE, "path": "/data/s/sub/other.jsonl", "format": "codex", "unknown_records": {},
             "transcripts": [{**MAIN, "window": window(170000, 0.85, True)}]}
    inspect_report({**REPORT, "files": [FILE, other],
                    "not_transcripts": [{"path": "/data/s/x.json", "reason": "cannot tell the format"}],
                    "totals": {"files": 2, "transcripts": 3, "messages": 27, "tool_calls": 9, "tokens": 24900,
                               "skipped_lines": 0}})
    assert screen() == """\
Transcripts in /data/s/
┏━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━┳━━━━━━━┳━━━━━━━━┳━━━━━━━━┓
┃ file                   ┃ format      ┃ msgs ┃ calls ┃ tokens ┃ window ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━╇━━━━━━━╇━━━━━━━━╇━━━━━━━━┩
│ session.jsonl          │ claude-code │   12 │     4 │ 12,000 │   6.0% │
│   + agent-a1b2c3       │   subagent  │    3 │     1 │    900 │   0.4% │
│ sub/other.jsonl        │ codex       │   12 │     4 │ 12,000 │  85.0% │
├────────────────────────┼─────────────┼──────┼───────┼────────┼────────┤
│ 2 files, 3 transcripts │             │   27 │     9 │ 24,900 │        │
└────────────────────────┴─────────────┴──────┴───────┴────────┴────────┘
Passed over 1 file(s) that hold no transcript: /data/s/x.json (cannot tell the format)
"""


def test_files_in_the_current_folder_have_no_folder_in_the_title(screen):
    inspect_report({**REPORT, "files": [{**FILE, "path": "a.jsonl"}, {**FILE, "path": "b.jsonl"}]})
    assert screen().splitlines()[0] == "Transcripts"


@pytest.mark.parametrize(("utilisation", "bar"), [
    (0.0, "····┆···························│·······"),
    (0.06, "██··┆···························│·······"),
    (0.5, "████████████████████············│·······"),
    (0.85, "██████████████████████████████████······"),
    (1.7, "████████████████████████████████████████"),
])
def test_window_bar(utilisation, bar):
    assert window_bar(utilisation) == bar


@pytest.mark.parametrize(("values", "width", "line"), [
    ([], 60, ""),
    ([0, 0], 60, "  "),
    ([1, 2, 3, 4, 5, 6, 7, 8], 60, "▂▃▄▅▆▇██"),
    ([100, 0, 9900, 2000], 60, "▁ █▂"),
    ([1, 1, 1, 5, 0, 0], 3, "▃█ "),  # two values a cell, summed
])
def test_sparkline(values, width, line):
    assert sparkline(values, width) == line
