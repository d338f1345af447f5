"""The compaction report (report.py): the documented shape, built from stages made here by hand, so every figure
is known: before and after per status, one entry per stage with its span, calls and pipeline, and the
summariser's totals with usage summed over the calls that reported it."""

from __future__ import annotations

import orjson
import pytest
from conftest import SAMPLES

from tcompact import __version__
from tcompact.compaction import CompactOptions, Stage, compact_file
from tcompact.compressors import get
from tcompact.compressors.base import CallRecord, CompressionResult
from tcompact.model import Message
from tcompact.compaction.report import REPORT_SCHEMA_VERSION, compact_report
from tcompact.spans import Span
from tcompact.summarizers.base import SummarizerError, SummaryRequest, SummaryResponse
from tcompact.counting.tokens import TokenCounter

BEFORE = tuple(Message(role="user" if i % 2 == 0 else "assistant", content=f"message {i}") for i in range(6))
AFTER = (BEFORE[0], Message(role="user", content="summary"), BEFORE[5])
SPAN = Span.from_cuts(6, 1, 5)


def _call(attempt, *, usage=None, error=None, latency=0.1234567891, reason=""):
    request = SummaryRequest(processor="dialogue", contract="dialogue", prompt="p", messages=BEFORE, body=range(1, 5),
                             target_tokens=100)
    response = None if error else SummaryResponse(text="summary", usage=usage, latency_s=latency)
    return CallRecord(request=request, response=response, error=error, attempt=attempt, started=0.0, span=SPAN,
                      reason=reason)


def _stages():
    truncate, dialogue = get("truncate"), get("dialogue")
    untouched = CompressionResult(processor="truncate", messages=BEFORE, applied=False,
                                  reason="truncate: no tool output over the limits", tokens_before=60, tokens_after=60)
    calls = (_call(1, error=SummarizerError("timeout", "the summariser timed out"), reason="retried"),
             _call(2, usage={"prompt_tokens": 50, "completion_tokens": 7, "total_tokens": 57}),
             _call(3, usage={"prompt_tokens": 40, "completion_tokens": "9", "cached": 3}))
    summarised = CompressionResult(processor="dialogue", messages=AFTER, applied=True, reason="dialogue: compacted",
                                   tokens_before=60, tokens_after=25, span=SPAN, calls=calls, notes=("a note",),
                                   figures={"stages": [{"stage": "s1", "tokens_before": 60}]})
    return [Stage(truncate, truncate.settings_model(), untouched, BEFORE),
            Stage(dialogue, dialogue.settings_model(), summarised, BEFORE)]


def _report(status, stages=None, *, counter=None):
    return compact_report(source={"path": "s.jsonl", "format": "chat"}, stages=stages or _stages(), status=status,
                          window=200_000, counter=counter or TokenCounter("cl100k_base", approximate=True),
                          summarizer="extractive", output_format="chat")


def test_a_compacted_run_reports_every_documented_figure():
    report = _report("compacted")
    stages = report.pop("stages")
    assert report == {
        "tool": "tcompact", "version": __version__, "schema_version": REPORT_SCHEMA_VERSION, "status": "compacted",
        "source": {"path": "s.jsonl", "format": "chat"}, "output_format": "chat", "encoding": "cl100k_base",
        "approximate": True, "context_window": 200_000,
        "before": {"messages": 6, "tokens": 60}, "after": {"messages": 3, "tokens": 25},
        "summarizer": {"name": "extractive", "calls": 3, "failed_calls": 1,
                       # summed over the calls that reported usage; a figure that is not a number is left out
                       "usage": {"prompt_tokens": 90, "completion_tokens": 7, "total_tokens": 57}},
    }
    assert stages[0] == {
        "processor": "truncate", "settings": get("truncate").settings_model().model_dump(mode="json"),
        "applied": False, "failed": False, "reason": "truncate: no tool output over the limits",
        "messages_before": 6, "messages_after": 6, "tokens_before": 60, "tokens_after": 60, "span": None,
        "calls": [], "offloaded": 0, "notes": [], "pipeline": None}
    assert stages[1] == {
        "processor": "dialogue", "settings": get("dialogue").settings_model().model_dump(mode="json"),
        "applied": True, "failed": False, "reason": "dialogue: compacted",
        "messages_before": 6, "messages_after": 3, "tokens_before": 60, "tokens_after": 25,
        "span": {"prefix": [0, 1], "body": [1, 5], "tail": [5, 6]},
        "calls": [{"number": 1, "status": "failed", "error_kind": "timeout", "reason": "retried", "latency_s": None},
                  {"number": 2, "status": "ok", "error_kind": None, "reason": "", "latency_s": 0.123457},
                  {"number": 3, "status": "ok", "error_kind": None, "reason": "", "latency_s": 0.123457}],
        "offloaded": 0, "notes": ["a note"], "pipeline": [{"stage": "s1", "tokens_before": 60}]}
    assert orjson.loads(orjson.dumps(_report("compacted"))) == _report("compacted")  # plain JSON values only


@pytest.mark.parametrize("status", ["nothing to do", "failed"])
def test_a_run_that_did_not_compact_reports_the_input_as_after(status):
    report = _report(status)
    assert (report["status"], report["before"], report["after"]) == (
        status, {"messages": 6, "tokens": 60}, {"messages": 6, "tokens": 60})
    assert [s["applied"] for s in report["stages"]] == [False, True]  # the stages are still reported as they went


def test_no_usage_is_none_and_no_calls_count_zero():
    truncate = get("truncate")
    result = CompressionResult(processor="truncate", messages=BEFORE, applied=False, reason="r", tokens_before=60,
                               tokens_after=60, calls=(_call(1), _call(2, usage={})))
    report = _report("nothing to do", [Stage(truncate, truncate.settings_model(), result, BEFORE)],
                     counter=TokenCounter())
    assert report["summarizer"] == {"name": "extractive", "calls": 2, "failed_calls": 0, "usage": None}
    assert (report["encoding"], report["approximate"]) == ("o200k_base", False)


def test_the_report_of_a_real_run_has_the_documented_keys():
    run = compact_file(SAMPLES / "chat_tool_session.jsonl", CompactOptions(chain="truncate,dialogue", now=True))
    report = compact_report(source={"path": "x"}, stages=run.stages, status=run.status, window=200_000,
                            counter=TokenCounter.for_model(run.transcript.model), summarizer="extractive",
                            output_format="chat")
    assert list(report) == ["tool", "version", "schema_version", "status", "source", "output_format", "encoding",
                            "approximate", "context_window", "before", "after", "stages", "summarizer"]
    assert [s["processor"] for s in report["stages"]] == ["truncate", "dialogue"]
    assert report["after"]["tokens"] == run.stages[-1].result.tokens_after < report["before"]["tokens"]
    assert {k: v for k, v in report.items() if k != "source"} == {k: v for k, v in run.report.items()
                                                                  if k in report and k != "source"}
