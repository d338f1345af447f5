"""render/compact_view.py: the compact report and the compressors listing, drawn at 80 columns from fixed dicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcompact.render import compact_report, compressors_table


def stage(processor, tokens, messages, reason, calls=()):
    return {"processor": processor, "tokens_before": tokens[0], "tokens_after": tokens[1],
            "messages_before": messages[0], "messages_after": messages[1], "reason": reason,
            "calls": [{"status": s} for s in calls]}


REPORT = {"status": "compacted", "reason": "dialogue: summarised", "approximate": True, "context_window": 200000,
          "encoding": "o200k_base", "source": {"path": "/data/s.jsonl", "format": "claude-code"},
          "before": {"tokens": 182400, "messages": 240}, "after": {"tokens": 21890, "messages": 12},
          "stages": [stage("truncate", (182400, 150100), (240, 240), "truncated"),
                     stage("dialogue", (150100, 21890), (240, 12), "summarised", ["ok", "failed", "ok"])],
          "summarizer": {"name": "openai", "calls": 3, "failed_calls": 1, "usage": {"total_tokens": 41230}}}
NO_SUMMARIES = {"name": None, "calls": 0, "failed_calls": 0, "usage": None}
STAGES = """\
Stages
┏━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━━┓
┃ compressor ┃            tokens ┃  messages ┃        calls ┃ outcome    ┃
┡━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━━┩
│ truncate   │ 182,400 → 150,100 │ 240 → 240 │            0 │ truncated  │
│ dialogue   │  150,100 → 21,890 │  240 → 12 │ 3 (1 failed) │ summarised │
└────────────┴───────────────────┴───────────┴──────────────┴────────────┘
"""


def test_a_compaction(screen):
    compact_report(REPORT, written=[Path("a"), Path("b"), Path("c")], dry_run=False,
                   where=["the transcript /data/s.compacted.jsonl", "1 dump(s) in /data/s.compacted.dumps"])
    assert screen() == ("/data/s.jsonl · claude-code · window 200,000 · o200k_base, approximate\n"
                        "Compacted: 182,400 → 21,890 tokens (88.0% saved), 240 → 12 messages\n" + STAGES +
                        "Summariser openai: 3 call(s), 1 failed, 41,230 tokens used\n"
                        "Wrote 3 file(s): the transcript /data/s.compacted.jsonl, 1 dump(s) in "
                        "/data/s.compacted.dumps\n")


@pytest.mark.parametrize(("change", "written", "dry_run", "head", "tail"), [
    ({"status": "nothing to do", "reason": "below the threshold (1,200 < 160,000 tokens)", "approximate": False,
      "summarizer": NO_SUMMARIES}, [], True,
     "Nothing to do: 182,400 tokens, 240 messages; the transcript stays as it is (below the threshold (1,200 < "
     "160,000 tokens))", "Dry run: nothing was written.\n"),
    ({"status": "nothing to do", "reason": "no tool output over the limits", "summarizer": NO_SUMMARIES},
     [Path("r.json")], False,
     "Nothing to do: 182,400 tokens, 240 messages; the transcript stays as it is (no tool output over the limits)",
     "Wrote 1 file(s)\n"),  # nothing said where: the count alone
    ({"status": "failed", "summarizer": {"name": "openai", "calls": 1, "failed_calls": 1, "usage": None}},
     [Path("page.html")], True, "Compaction failed; the input is untouched",
     "Summariser openai: 1 call(s), 1 failed\nDry run: no transcript, dump or report was written.\n"),
    ({"summarizer": {"name": "extractive", "calls": 2, "failed_calls": 0, "usage": {}}}, [], False,
     "Compacted: 182,400 → 21,890 tokens (88.0% saved), 240 → 12 messages",
     "Summariser extractive: 2 call(s), 0 failed\n"),
])
def test_the_other_outcomes(screen, change, written, dry_run, head, tail):
    compact_report({**REPORT, **change}, written=written, dry_run=dry_run)
    approx = ", approximate" if change.get("approximate", True) else ""
    assert screen() == (f"/data/s.jsonl · claude-code · window 200,000 · o200k_base{approx}\n{head}\n" + STAGES +
                        tail)


def test_a_compaction_of_nothing_has_no_share_saved(screen):
    empty = {**REPORT, "before": {"tokens": 0, "messages": 0}, "after": {"tokens": 0, "messages": 0}, "stages": [],
             "summarizer": NO_SUMMARIES}
    compact_report(empty, written=[], dry_run=False)
    assert screen().splitlines()[1] == "Compacted: 0 → 0 tokens (— saved), 0 → 0 messages"


def test_the_compressors_listing(screen):
    compressors_table([
        {"name": "truncate", "description": "Cut long tool outputs to their head and tail.", "uses_summarizer": False,
         "settings": [{"name": "max_lines", "default": 256, "description": "lines kept at most"},
                      {"name": "tools", "default": [], "description": "only these tools (all when empty); a long "
                                                                     "description that has to wrap somewhere past the "
                                                                     "edge"}]},
        {"name": "dialogue", "description": "Summarise the dialogue before the kept messages.",
         "uses_summarizer": True,
         "settings": [{"name": "trigger_context_ratio", "default": {"a": "very long default value that folds"},
                       "description": "x"}]}])
    assert screen() == """\
truncate: Cut long tool outputs to their head and tail.
  setting      default    description
  max_lines    256        lines kept at most
  tools        []         only these tools (all when empty); a long
                          description that has to wrap somewhere past the edge

dialogue: Summarise the dialogue before the kept messages. (uses a summariser)
  setting                  default                 description
  trigger_context_ratio    {"a":"very long         x
                           default value that
                           folds"}

"""
