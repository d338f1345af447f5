"""render/inspect_tables.py: the tables and lines of the detailed inspect view that the detail test does not
reach — every provider's usage line, a long list of rounds, a span with keep_recent, empty shares, cut cells."""

from __future__ import annotations

import pytest

from tcompact.render import console
from tcompact.render import inspect_tables as tables


@pytest.mark.parametrize(("usage", "counted", "lines"), [
    (None, 10, ["Provider usage: none recorded in the file"]),
    ({"source": "codex", "events": 3, "requests": 2, "total": {"input_tokens": 25000, "cached_input_tokens": 12000,
                                                               "output_tokens": 900},
      "last": {"input_tokens": 15000}, "last_context_tokens": 15000, "predates_compaction": None}, 9000,
     ["Provider usage (codex, 2 requests from 3 token_count events): input 25,000 (cached 12,000), output 900; last "
      "request input 15,000",
      "  context at the last request: 15,000 reported vs 9,000 counted by tcompact (the provider also counts the "
      "system prompt and tool definitions)"]),
    ({"source": "codex", "events": 1, "requests": 0, "total": None, "last": None, "last_context_tokens": None}, 9000,
     ["Provider usage (codex, 0 requests from 1 token_count events): input — (cached —), output —; last request "
      "input —"]),
    ({"source": "swe-agent", "requests": None, "input_tokens": 1200, "output_tokens": 80,
      "last_context_tokens": None}, 5,
     ["Provider usage (swe-agent, — requests): input 1,200, output 80"]),
    ({"source": "chat", "requests": 2, "input_tokens": 40, "output_tokens": 6, "last_context_tokens": 30,
      "predates_compaction": 17}, 12,
     ["Provider usage (chat, 2 requests): input 40, output 6",
      "  context at the last request: 30 reported, before the compaction at line 17; 12 counted by tcompact now "
      "(the usage predates the compaction)"]),
])
def test_usage_lines(screen, usage, counted, lines):
    tables.usage_lines(console(), usage, counted)
    assert screen().splitlines() == lines


def test_more_than_forty_rounds_show_the_first_ten_and_the_last_thirty(screen):
    rounds = [{"number": n, "start": n, "end": n + 1, "request": f"request {n}", "messages": 1, "tokens": n * 10,
               "tool_calls": 0} for n in range(45)]
    tables.rounds_table(console(), rounds)
    lines = screen().splitlines()
    assert lines[:6] == ["Rounds",
                         "┏━━━━┳━━━━━━━━━━┳━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━┓",
                         "┃  # ┃ messages ┃ calls ┃ tokens ┃ request       ┃",
                         "┡━━━━╇━━━━━━━━━━╇━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━┩",
                         "│  0 │      0–0 │     0 │      0 │ request 0     │",
                         "│  1 │      1–1 │     0 │     10 │ request 1     │"]
    assert lines[13:16] == ["│  9 │      9–9 │     0 │     90 │ request 9     │",
                            "│  … │          │       │        │ 5 more rounds │",
                            "│ 15 │    15–15 │     0 │    150 │ request 15    │"]
    assert lines[-2:] == ["│ 44 │    44–44 │     0 │    440 │ request 44    │",
                          "└────┴──────────┴───────┴────────┴───────────────┘"]
    assert len(lines) == 4 + 40 + 1 + 1


def test_a_span_with_keep_recent_that_would_compact(screen):
    tables.span_table(console(), {
        "compressor": "round-level", "keep_recent": 2, "prefix": {"start": 0, "end": 1, "messages": 1, "tokens": 10},
        "body": {"start": 1, "end": 5, "messages": 4, "tokens": 4000},
        "tail": {"start": 5, "end": 7, "messages": 2, "tokens": 30}, "would_compact": True})
    assert screen() == """\
Span layout of round-level, keep_recent 2
┏━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━┳━━━━━━━━┓
┃ part              ┃ messages ┃ range ┃ tokens ┃
┡━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━╇━━━━━━━━┩
│ preserved prefix  │        1 │   0–0 │     10 │
│ compressible body │        4 │   1–4 │  4,000 │
│ protected tail    │        2 │   5–6 │     30 │
└───────────────────┴──────────┴───────┴────────┘
  would compact now: yes
"""


def test_kinds_without_tokens_are_left_out_and_an_empty_total_has_no_share(screen):
    tables.kinds_table(console(), {"total": 0, "by_kind": {"system": 0, "user": 0}, "by_role": {"user": 0}})
    assert screen() == """\
Tokens by content kind
┏━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━┓
┃ kind      ┃ tokens ┃ share ┃
┡━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━┩
│ role user │      0 │     — │
└───────────┴────────┴───────┘
"""


def test_long_tool_names_and_previews_are_cut_to_the_width(screen):
    tables.top_table(console(), [{"index": 123, "tokens": 1234567, "role": "assistant",
                                  "tool": "mcp__github__create_pull_request", "preview": "x" * 200}])
    assert screen().splitlines()[-2] == (
        "│ 123 │ 1,234,567 │ assistant │ mcp__github__cr… │ xxxxxxxxxxxxxxxxxxxxxxxxxx… │")


def test_transcript_ids_are_never_cut(screen, monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    long_id = "agent-a1b2c3d4e5f6a7b8c9d0"
    tables.transcripts_table(console(), [
        {"id": long_id, "kind": "subagent", "messages": 3, "tool_calls": 1, "tokens": {"total": 900},
         "parent_tool_call": "toolu_01ABCDEFGHIJKLMNOP"}])
    lines = screen().splitlines()
    assert lines[0] == "Transcripts in this file (--transcript ID shows one)"
    assert lines[3].split()[0] == long_id  # what --transcript needs, whole even at 40 columns
