"""render/replay_view.py: replay's verification lines, the dump table and a re-run side by side, at 80 columns."""

from __future__ import annotations

from pathlib import Path

from tcompact.compressors.base import CompressionResult
from tcompact.render import check_dict, replay_checks, replay_table, rerun_dict, rerun_view
from tcompact.replaying import Check, Dump, Rerun


def dump(name, doc=None):
    return Dump(path=Path("/d") / name, doc=doc or {})


CHECKS = [Check(dump=dump("0001-dialogue.json"), ok=True),
          Check(dump=dump("0002-dialogue.json"), ok=True, note="re-run with the extractive summariser"),
          Check(dump=dump("0003-full.json"), ok=False, field="response.text", expected="'a'", got="'b'"),
          Check(dump=dump("0004-x.json"), ok=False, error="not a dump: no schema_version — pass a dump file")]


def test_one_line_per_dump_and_a_summary(screen):
    replay_checks(CHECKS)
    assert screen() == """\
OK 0001-dialogue.json
OK 0002-dialogue.json (re-run with the extractive summariser)
MISMATCH 0003-full.json: response.text: expected 'a', got 'b'
FAILED 0004-x.json: not a dump: no schema_version — pass a dump file
4 dump(s): 2 OK, 1 mismatched, 1 failed
"""
    replay_checks(CHECKS[:1])
    assert screen() == "OK 0001-dialogue.json\n1 dump(s): 1 OK, 0 mismatched\n"


def test_a_check_as_json_names_the_difference_only_when_there_is_one():
    assert check_dict(CHECKS[2]) == {"dump": "0003-full.json", "ok": False, "field": "response.text",
                                     "expected": "'a'", "got": "'b'", "note": None, "error": None}
    assert check_dict(Check(dump=dump("a.json"), ok=True, expected="x", got="y")) == {
        "dump": "a.json", "ok": True, "field": None, "expected": None, "got": None, "note": None, "error": None}


def test_the_dump_table_cuts_no_figure(screen):
    replay_table([
        {"time": "2026-01-05T10:00:01.123Z", "processor": "round-level", "stage": "round 2", "tokens_before": 120000,
         "tokens_after": 9000, "reduction_ratio": 0.925, "latency_s": 1.234, "attempts": 2,
         "error_kinds": ["timeout", "rate_limit"], "accepted": True, "status": "ok"},
        {"time": None, "processor": "dialogue", "stage": None, "tokens_before": None, "tokens_after": 50,
         "reduction_ratio": 0.0, "latency_s": None, "attempts": 1, "error_kinds": [], "accepted": False,
         "status": "failed"}])
    assert screen() == """\
Compression dumps (--json for their file names)
          processor /
time      stage                 tokens  saved  latency  tries  errors      accepted
───────────────────────────────────────────────────────────────────────────────────
10:00:01  round-level    120,000→9,000    92%    1.23s      2  timeout,    yes
          round 2                                              rate_limit
—         dialogue                —→50     0%        —      1              no

total     2 dumps                                              1 failed    1/2
"""


RERUN = Rerun(dump=dump("0001-dialogue.json", {"benefit": {"tokens_before": 1000, "tokens_after": 300,
                                                           "reduction_ratio": 0.7, "accepted": True}}),
              result=CompressionResult(processor="dialogue", messages=(), applied=False, reason="no benefit",
                                       tokens_before=1000, tokens_after=990),
              dumps=[], recorded_summary="The user asked to fix the parser; the test now passes.", new_summary="")


def test_a_rerun_side_by_side(screen):
    rerun_view(RERUN, [Path("/out/0001-dialogue.rerun.json")])
    assert screen() == """\
Re-run of 0001-dialogue.json
┏━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━┓
┃          ┃ recorded                                        ┃ new             ┃
┡━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━┩
│ tokens   │ 1,000 → 300                                     │ 1,000 → 990     │
├──────────┼─────────────────────────────────────────────────┼─────────────────┤
│ saved    │ 70.0%                                           │ 1.0%            │
├──────────┼─────────────────────────────────────────────────┼─────────────────┤
│ accepted │ yes                                             │ no (no benefit) │
├──────────┼─────────────────────────────────────────────────┼─────────────────┤
│ summary  │ The user asked to fix the parser; the test now  │ (none)          │
│          │ passes.                                         │                 │
└──────────┴─────────────────────────────────────────────────┴─────────────────┘
Wrote 1 dump(s): /out/0001-dialogue.rerun.json
"""


def test_a_rerun_as_json():
    assert rerun_dict(RERUN, [Path("/out/a.json")]) == {
        "dump": "0001-dialogue.json",
        "recorded": {"summary": "The user asked to fix the parser; the test now passes.", "tokens_before": 1000,
                     "tokens_after": 300, "reduction_ratio": 0.7, "accepted": True},
        "new": {"summary": "", "tokens_before": 1000, "tokens_after": 990, "reduction_ratio": 0.01, "accepted": False,
                "reason": "no benefit"},
        "written": ["/out/a.json"]}
    grown = Rerun(dump=RERUN.dump, result=CompressionResult(processor="dialogue", messages=(), applied=False,
                                                            reason="longer", tokens_before=0, tokens_after=10),
                  dumps=[], recorded_summary="", new_summary="x")
    assert rerun_dict(grown, [])["new"]["reduction_ratio"] == 0.0  # nothing to save from: no ratio, no division
