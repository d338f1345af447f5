"""render/batch_view.py: the summary of a batch run for each kind, drawn at 80 columns from fixed summaries, and
the progress a log gets (a line every ten seconds, none sooner)."""

from __future__ import annotations

from types import SimpleNamespace

from tcompact.render.batch_view import batch_progress, batch_summary

TOOLS = {"Bash": {"calls": 5, "argument_tokens": 10, "result_tokens": 90, "results": 5, "errors": 1},
         "Read": {"calls": 1, "argument_tokens": 1, "result_tokens": 9, "results": 1, "errors": 0}}
INSPECT = {"kind": "inspect",
           "tasks": {"total": 1200, "ok": 1190, "failed": 7, "resumed": 3, "not_transcript": 2, "duplicates": 0},
           "seconds": 83.25, "tasks_per_second": 14.414, "engine": "pool", "workers": 2,
           "results": "/out/results.jsonl",
           "totals": {"transcripts": 1250, "messages": 250000, "tool_calls": 90000, "tokens": 123456789,
                      "format": {"codex": 200, "claude-code": 1000, "chat": 50}, "main": {"over_trigger": 31},
                      "by_kind": {"system": 23456789, "user": 0, "tool_results": 100000000},
                      "by_role": {"user": 23456789, "tool": 100000000}, "tools": TOOLS},
           "failures": [{"error": "/d/x.jsonl:3: not valid JSON (unexpected character at column 2) — fix or remove "
                                  "that line"}]}
COMPACT = {**INSPECT, "kind": "compact", "tasks_per_second": 0, "failures": [],
           "tasks": {**INSPECT["tasks"], "failed": 0, "not_transcript": 0, "duplicates": 4},
           "totals": {"status": {"nothing to do": 20, "compacted": 1170}, "before": {"tokens": 5000000, "messages": 90000},
                      "after": {"tokens": 1000000, "messages": 30000}, "calls": 1170, "invariants": 2}}


def test_an_inspect_batch(screen):
    batch_summary(INSPECT)
    assert screen() == """\
Batch inspect: 1,200 tasks in 83.2 s (14.4/s) on pool × 2 → /out/results.jsonl
1,190 ok, 7 failed, 3 from earlier runs, 2 not transcripts
1,250 files (chat 50, claude-code 1,000, codex 200): 1,250 transcripts, 250,000 messages, 90,000 tool calls, 123,456,789 tokens; 31 over the 0.8 trigger
Tokens by content kind
┏━━━━━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━┓
┃ kind         ┃      tokens ┃ share ┃
┡━━━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━┩
│ system text  │  23,456,789 │ 19.0% │
│ tool results │ 100,000,000 │ 81.0% │
├──────────────┼─────────────┼───────┤
│ role user    │  23,456,789 │ 19.0% │
│ role tool    │ 100,000,000 │ 81.0% │
└──────────────┴─────────────┴───────┘
Tokens by tool
┏━━━━━━┳━━━━━━━┳━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━┓
┃ tool ┃ calls ┃ argument tokens ┃ result tokens ┃ errors ┃
┡━━━━━━╇━━━━━━━╇━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━┩
│ Bash │     5 │              10 │            90 │      1 │
│ Read │     1 │               1 │             9 │      0 │
└──────┴───────┴─────────────────┴───────────────┴────────┘
Failed (first 1 of 7)
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
┃ error                                                                        ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
│ /d/x.jsonl:3: not valid JSON (unexpected character at column 2) — fix or     │
│ remove that line                                                             │
└──────────────────────────────────────────────────────────────────────────────┘
"""


def test_a_compact_batch(screen):
    batch_summary(COMPACT)
    assert screen() == """\
Batch compact: 1,200 tasks in 83.2 s on pool × 2 → /out/results.jsonl
1,190 ok, 0 failed, 3 from earlier runs, 4 duplicates dropped
compacted 1,170, nothing to do 20; 5,000,000 → 1,000,000 tokens (80.0% saved), 90,000 → 30,000 messages, 1,170 summariser calls, 2 invariant warnings
"""


def test_another_kind_shows_its_counts_and_no_totals_show_nothing(screen):
    batch_summary({**INSPECT, "kind": "other", "totals": {"a": 3, "b": "x", "c": 1000}, "failures": []})
    assert screen().splitlines()[2:] == ["a 3, c 1,000"]
    batch_summary({**COMPACT, "totals": {}})
    assert len(screen().splitlines()) == 2


def test_progress_is_off_or_a_line_every_ten_seconds_in_a_log(capsys):
    with batch_progress("inspect", enabled=False) as update:
        assert update is None
    with batch_progress("inspect", enabled=True) as update:  # stderr is no terminal here: plain lines
        update(SimpleNamespace(done=1, total=2, failed=0))
    assert capsys.readouterr().err == ""  # the first line comes ten seconds in
