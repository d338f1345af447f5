"""The HTML reports: the exact data behind every chart, escaping, the terminal sparkline and the CLI paths."""

from __future__ import annotations

import re
import sys

import orjson
import pytest
from conftest import SAMPLES, SESSION, call, jsonl, msg
from openai_server import FakeOpenAI, error, ok
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.formats import ReadOptions
from tcompact.inspection import InspectOptions, inspect_counted, inspect_paths
from tcompact.pages import file_page
from tcompact.render import html_compact as hc
from tcompact.render import html_inspect as hi
from tcompact.render import html_inspect_charts as charts
from tcompact.render.html_common import esc, script_json
from tcompact.render.inspect_view import sparkline

pytest.importorskip("plotly", reason="the html extra (plotly) is not installed: pip install '.[html]'")

CHAT = SAMPLES / "chat_tool_session.jsonl"
CLAUDE = SAMPLES / "claude_code_session.jsonl"
CODEX = SAMPLES / "codex_rollout.jsonl"

KEY = "sk-proj-TESTKEY1234567890abcdefTESTKEY1234567890"
PWNED = ['<script>window.__pwned=1</script>', '</textarea><img src=x onerror="window.__pwned=2">']


def hostile_session():
    """A transcript whose texts, tool name and arguments try to break out of the page."""
    return [
        msg("system", "You are a coding agent. </script><script>window.__pwned=3</script>"),
        msg("user", f"Please look at this: {PWNED[0]} and {PWNED[1]}"),
        msg("assistant", "", tool_calls=[call("c1", "<b>bold</b>", {"cmd": "</textarea><script>x()</script>"})]),
        msg("tool", f"output {PWNED[1]} \u2028 end\n" + "PASSED tests/test_x.py::test_case\n" * 200,
            tool_call_id="c1"),
        msg("assistant", f"Done. {PWNED[0]}"),
    ]


def hostile_compactable():
    """The hostile session followed by a new request, so that dialogue has a body to summarise."""
    return [*hostile_session(), msg("user", "next </textarea> please"), msg("assistant", "ok")]


def one(path, options=None):
    options = options or InspectOptions()
    report, counted = inspect_counted([path], options)
    page = file_page(report, counted, spans=options.spans, keep_recent=options.keep_recent)
    return report, page.transcript, page.messages, page.counts, page


def charts_of(document: str) -> dict:
    found = re.search(r'<script type="application/json" id="tc-charts">(.*?)</script>', document, re.S)
    assert found, "no chart specs in the page"
    return orjson.loads(found.group(1))


# ---- inspect: chart data -------------------------------------------------------------------------


SPANS = ["current-round", "dialogue", "round-level", "full", "working-set"]


def test_small_session_charts_have_exact_numbers(tmp_path):
    report, t, messages, counts, page = one(jsonl(tmp_path / "s.jsonl", SESSION))
    assert [c.total for c in counts] == [10, 11, 10, 20, 13, 13, 6]
    specs = charts.file_charts(page)
    assert list(specs) == ["cumulative", "kinds-by-round", "spans"]  # no provider usage: no usage chart

    cum = specs["cumulative"]["data"]
    assert [d["name"] for d in cum] == ["tokens so far", "context window 200,000", "trigger (0.8) 160,000",
                                        "minimum target (0.1) 20,000"]
    assert (cum[0]["x"], cum[0]["y"]) == ([0, 1, 2, 3, 4, 5, 6], [10, 21, 31, 51, 64, 77, 83])
    assert cum[0]["customdata"] == ["system text", "user text", "assistant text", "tool results", "assistant text",
                                    "user text", "assistant text"]
    assert [(d["x"], d["y"]) for d in cum[1:]] == [([0, 6], [200000, 200000]), ([0, 6], [160000, 160000]),
                                                  ([0, 6], [20000, 20000])]
    assert specs["cumulative"]["layout"]["shapes"] == []

    kinds = specs["kinds-by-round"]["data"]
    assert [(d["name"], d["x"], d["y"]) for d in kinds] == [
        ("system text", ["0", "1", "2"], [10, 0, 0]),
        ("user text", ["0", "1", "2"], [0, 11, 13]),
        ("assistant text", ["0", "1", "2"], [0, 17, 6]),
        ("tool-call arguments", ["0", "1", "2"], [0, 6, 0]),
        ("tool results", ["0", "1", "2"], [0, 20, 0]),
    ]
    # the stacks add up to the report's rounds and kinds
    assert [sum(d["y"][i] for d in kinds) for i in range(3)] == [r["tokens"] for r in t["rounds"]] == [10, 54, 19]

    spans = specs["spans"]["data"]
    assert [(d["name"], d["y"], d["x"], d["customdata"]) for d in spans] == [
        ("preserved prefix", SPANS, [77, 0, 0, 10, 10], [6, 0, 0, 1, 1]),
        ("compressible body", SPANS, [6, 64, 83, 73, 67], [1, 5, 7, 6, 5]),
        ("protected tail", SPANS, [0, 19, 0, 0, 6], [0, 2, 0, 0, 1]),
    ]
    assert charts.tool_rows(t["tools"]) == [["run_tests", 1, 6, 20, 1, 0]]


def test_one_span_layout_matches_the_report(tmp_path):
    path = jsonl(tmp_path / "s.jsonl", SESSION)
    report, t, messages, counts, page = one(path, InspectOptions(spans="dialogue"))
    specs, layouts = charts.file_charts(page), page.layouts
    assert len(layouts) == 1
    for part in ("prefix", "body", "tail"):
        assert layouts[0][part] == t["span"][part]
    assert [d["x"] for d in specs["spans"]["data"]] == [[0], [64], [19]]


def test_sample_chat_session_charts():
    report, t, messages, counts, page = one(CHAT)
    specs = charts.file_charts(page)
    cum = specs["cumulative"]["data"][0]
    assert (len(cum["x"]), cum["y"][-1]) == (33, 11796)
    kinds = {d["name"]: d["y"] for d in specs["kinds-by-round"]["data"]}
    assert {k: sum(v) for k, v in kinds.items()} == {"system text": 211, "user text": 105, "assistant text": 924,
                                                     "tool-call arguments": 4013, "tool results": 6543}
    assert [sum(v[i] for v in kinds.values()) for i in range(3)] == [211, 8066, 3519]
    assert charts.tool_rows(t["tools"]) == [
        ["run_tests", 4, 75, 4294, 4, 0],
        ["apply_patch", 4, 3229, 121, 4, 0],
        ["read_file", 3, 45, 1789, 3, 0],
        ["write_file", 1, 577, 20, 1, 0],
        ["grep", 3, 87, 319, 3, 0],
    ]


def test_compactions_are_marked_on_the_cumulative_chart():
    options = InspectOptions(read=ReadOptions(full_history=True, keep_raw=False))
    report, t, messages, counts, page = one(CLAUDE, options)
    specs = charts.file_charts(page)
    layout = specs["cumulative"]["layout"]
    assert [(s["x0"], s["x1"]) for s in layout["shapes"]] == [(8, 8)]
    assert [a["text"] for a in layout["annotations"]] == ["compaction"]
    assert len(specs["cumulative"]["data"][0]["y"]) == 26


def test_provider_usage_chart_of_the_codex_sample():
    report, t, messages, counts, page = one(CODEX)
    specs = charts.file_charts(page)
    assert specs["usage"]["data"][0]["x"] == ["provider-reported", "counted by tcompact"]
    assert specs["usage"]["data"][0]["y"] == [15652, 4428]
    assert charts.usage_chart(None, 10) is None
    assert charts.usage_chart({"source": "chat", "requests": 2}, 10) is None
    stale = charts.usage_chart({**t["provider_usage"], "predates_compaction": 51}, 2109)  # issue 13 item 16
    assert stale["data"][0]["x"] == ["provider-reported, before the compaction at line 51", "counted by tcompact"]


def test_many_files_page_has_one_small_chart_per_file():
    report = inspect_paths([SAMPLES], InspectOptions())
    document = hi.inspect_html(report)
    specs = charts_of(document)
    assert list(specs) == ["rounds-0", "rounds-1", "rounds-2"]
    assert [s["data"][0]["y"] for s in specs.values()] == [[211, 8066, 3519], [451, 2477], [324, 3408, 696]]
    assert charts.rounds_chart(report["files"][0]["transcripts"][0]["rounds"])["data"][0]["x"] == [0, 1, 2]
    assert "3 files, 4 transcripts, 80 messages, 33 tool calls, 19,935 tokens" in document
    assert document.count('class="chart small"') == 3


def test_page_embeds_exactly_the_chart_data(tmp_path):
    report, t, messages, counts, page = one(CHAT)
    specs = charts.file_charts(page)
    embedded = charts_of(hi.inspect_html(report, page))
    assert {k: (v["data"], v["layout"]) for k, v in embedded.items()} == \
        {k: (v["data"], v["layout"]) for k, v in specs.items()}


def test_chart_specs_are_valid_plotly_figures():
    import plotly.graph_objects as go

    report, t, messages, counts, page = one(CODEX)
    specs = charts.file_charts(page)
    run_report = _dry_run_report(["-c", "round-level", "--set", "trigger_total_tokens=100",
                                  "--set", "target_total_tokens=50"])
    specs["waterfall"] = hc.waterfall_chart(run_report)
    specs["latency"] = hc.latency_chart(hc.calls_rows(run_report))
    specs["rounds"] = charts.rounds_chart(t["rounds"])
    for name, spec in specs.items():
        go.Figure(data=spec["data"], layout=spec["layout"])  # raises on an unknown attribute
        assert name


# ---- compact: chart data -------------------------------------------------------------------------


def _dry_run_report(args):
    result = CliRunner().invoke(app, ["compact", str(CHAT), "--now", "--dry-run", "--json", *args])
    assert result.exit_code == 0, result.stderr
    return orjson.loads(result.stdout)


def test_waterfall_of_a_dialogue_compaction():
    report = _dry_run_report(["-c", "dialogue"])
    assert hc.waterfall_steps(report) == [
        {"label": "before", "measure": "absolute", "value": 11796},
        {"label": "1. dialogue", "measure": "relative", "value": -6832},
        {"label": "after", "measure": "absolute", "value": 4964},
    ]
    data = hc.waterfall_chart(report)["data"][0]
    assert (data["x"], data["measure"], data["y"], data["text"]) == (
        ["before", "1. dialogue", "after"], ["absolute", "relative", "absolute"], [11796, -6832, 4964],
        ["11,796", "-6,832", "4,964"])


def test_waterfall_of_a_chain_and_of_the_round_level_pipeline():
    report = _dry_run_report(["-c", "truncate,dialogue"])
    steps = hc.waterfall_steps(report)
    assert [s["label"] for s in steps] == ["before", "1. truncate", "2. dialogue", "after"]
    assert steps[0]["value"] + steps[1]["value"] + steps[2]["value"] == steps[3]["value"]
    report = _dry_run_report(["-c", "round-level", "--set", "trigger_total_tokens=100",
                              "--set", "target_total_tokens=50"])
    assert [(s["label"], s["value"]) for s in hc.waterfall_steps(report)] == [
        ("before", 11796),
        ("1. round-level<br>recursive", -10081),
        ("1. round-level<br>aggressive_keep_recent", -1179),  # each block asked for the smallest budget, 64
        ("1. round-level<br>aggressive_full_context", -6),
        ("1. round-level<br>hard_truncate", -251),
        ("after", 279),
    ]
    rows = hc.calls_rows(report)
    assert [(r["processor"], r["attempt"], r["status"]) for r in rows] == [("round-level", 1, "ok")] * 3
    assert len(hc.latency_chart(rows)["data"][0]["y"]) == 3


def test_waterfall_adds_the_rest_of_a_stage_its_pipeline_does_not_explain():
    report = {"before": {"tokens": 100}, "after": {"tokens": 40},
              "stages": [{"processor": "round-level", "tokens_before": 100, "tokens_after": 40,
                          "pipeline": [{"stage": "recursive", "tokens_before": 100, "tokens_after": 50}]}]}
    assert [(s["label"], s["value"]) for s in hc.waterfall_steps(report)] == [
        ("before", 100), ("1. round-level<br>recursive", -50), ("1. round-level<br>rest", -10), ("after", 40)]


def test_calls_rows_merge_the_report_facts_and_dumps():
    report = {"stages": [
        {"processor": "dialogue", "calls": [
            {"number": 1, "status": "failed", "error_kind": "rate_limit", "reason": "rate limited", "latency_s": None},
            {"number": 2, "status": "ok", "error_kind": None, "reason": "ok", "latency_s": 0.25}]}]}
    facts = [{"stage": None, "target_tokens": 900, "usage": None, "retried": False},
             {"stage": None, "target_tokens": 900, "retried": True,
              "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}]
    rows = hc.calls_rows(report, facts, ["d/1.json", "d/2.json"])
    assert [(r["attempt"], r["status"], r["error_kind"], r["latency_s"], r["target_tokens"], r["prompt_tokens"],
             r["completion_tokens"], r["dump"]) for r in rows] == [
        (1, "failed", "rate_limit", None, 900, None, None, "d/1.json"),
        (2, "ok", None, 0.25, 900, 11, 7, "d/2.json")]
    assert hc.latency_chart(rows)["data"][0]["y"] == [0, 0.25]
    assert hc.latency_chart(rows)["data"][0]["marker"]["color"] == ["#b42318", "#2563eb"]
    # facts or dumps that do not line up with the report's calls are left out, not misattributed
    assert [r["dump"] for r in hc.calls_rows(report, facts[:1], ["d/1.json"])] == [None, None]


# ---- escaping ------------------------------------------------------------------------------------


def test_script_json_cannot_close_its_script_element():
    assert script_json({"t": "</script><!-- & \u2028\u2029"}) == \
        '{"t":"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028\\u2029"}'
    assert esc('<a href="x">&') == "&lt;a href=&quot;x&quot;&gt;&amp;"


@pytest.mark.parametrize("top", [10, 0])
def test_transcript_text_is_escaped_everywhere(tmp_path, top):
    path = jsonl(tmp_path / "evil.jsonl", hostile_session())
    options = InspectOptions(top=top)
    report, counted = inspect_counted([path], options)
    document = hi.inspect_html(report, file_page(report, counted))
    lowered = document.lower()
    # the only script elements are the page's own three: the chart data, plotly.js and the page script
    assert lowered.count("<script") == 3
    assert "window.__pwned" not in document.split('<script type="application/json"')[1]
    assert "<img" not in lowered and "</textarea>" not in lowered and "<b>bold" not in lowered
    if top:
        assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in document
        assert "&lt;/textarea&gt;&lt;img src=x onerror=&quot;window.__pwned=2&quot;&gt;" in document
        assert "&lt;b&gt;bold&lt;/b&gt;" in document  # the tool name, in the tool table


def test_compact_page_escapes_memory_blocks_and_reasons(tmp_path):
    path = jsonl(tmp_path / "evil.jsonl", hostile_compactable())
    runner = CliRunner()
    result = runner.invoke(app, ["compact", str(path), "-c", "dialogue", "--now", "-o", str(tmp_path / "o.jsonl"),
                                 "--html", str(tmp_path / "c.html")])
    assert result.exit_code == 0, result.stderr
    document = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert document.lower().count("<script") == 3
    assert "<img" not in document.lower()
    assert "memory_block_dialogue" in document and "&lt;memory_block_dialogue&gt;" in document


# ---- compact: the page through the CLI -----------------------------------------------------------


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    return CliRunner()


def test_compact_html_links_dumps_and_shows_calls_blocks_and_checks(runner, tmp_path):
    (tmp_path / "pages").mkdir()
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "dialogue", "--now", "-o", "out.jsonl",
                                 "--html", "pages/report.html"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-1] == ("Wrote 4 file(s): the transcript out.jsonl, 1 dump(s) in out.dumps, the "
                                              "report out.report.json, the HTML report pages/report.html")
    document = (tmp_path / "pages" / "report.html").read_text(encoding="utf-8")
    (dump,) = sorted((tmp_path / "out.dumps").iterdir())
    assert f'href="../out.dumps/{dump.name}"' in document
    assert 'href="../out.jsonl"' in document and 'href="../out.report.json"' in document
    specs = charts_of(document)
    assert specs["waterfall"]["data"][0]["y"] == [11796, -6832, 4964]
    assert len(specs["latency"]["data"][0]["y"]) == 1
    assert "<summary>message 1: memory_block_dialogue (4,890 characters, 1,230 tokens)</summary>" in document
    assert document.count("<details>") == 1
    assert "✓ the written transcript reads back as the compacted messages" in document


def test_compact_html_with_a_real_openai_server_shows_attempts_and_usage(runner, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeOpenAI() as server:
        server.enqueue(error(429, "Rate limit reached", headers={"Retry-After": "0.05"}),
                       ok("<state_snapshot>1. Active Task\nexport fix</state_snapshot>"))
        result = runner.invoke(app, ["compact", str(CHAT), "-c", "dialogue", "--now", "--summarizer", "openai",
                                     "--model", "fake-model", "--base-url", server.base_url, "-o", "out.jsonl",
                                     "--dump-dir", "dumps", "--timeout", "5", "--html", "r.html"])
    assert result.exit_code == 0, result.stderr
    document = (tmp_path / "r.html").read_text(encoding="utf-8")
    first, second = sorted(p.name for p in (tmp_path / "dumps").iterdir())
    rows = re.findall(r"<tr><td class=\"num\" data-v=\"(\d)\">.*?</tr>", document.split('id="calls"')[1])
    assert rows == ["1", "2"]
    calls = document.split('id="calls"')[1].split("</table>")[0]
    assert "failed (rate_limit)" in calls and f'href="dumps/{first}"' in calls and f'href="dumps/{second}"' in calls
    assert '<td class="num" data-v="11">11</td><td class="num" data-v="7">7</td>' in calls
    assert KEY not in document


def test_compact_html_of_a_failed_run(runner, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeOpenAI() as server:
        server.enqueue(error(401, "Incorrect API key provided"))
        result = runner.invoke(app, ["compact", str(CHAT), "-c", "dialogue", "--now", "--summarizer", "openai",
                                     "--model", "fake-model", "--base-url", server.base_url, "-o", "out.jsonl",
                                     "--dump-dir", "dumps", "--html", "r.html"])
    assert result.exit_code == 1 and result.stderr.startswith("Error: dialogue: summariser failed: ")
    assert not (tmp_path / "out.jsonl").exists()
    document = (tmp_path / "r.html").read_text(encoding="utf-8")
    (dump,) = (tmp_path / "dumps").iterdir()
    assert "failed (authentication)" in document and f'href="dumps/{dump.name}"' in document
    assert charts_of(document)["waterfall"]["data"][0]["y"] == [11796, 0, 11796]
    assert "Not checked: nothing was compacted." in document and KEY not in document


def test_compact_html_on_a_dry_run_is_the_only_file_written(runner, tmp_path):
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "round-level", "--set", "trigger_total_tokens=100",
                                 "--set", "target_total_tokens=50", "--now", "--dry-run", "--html", "r.html"])
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]
    assert "Dry run: no transcript, dump or report was written.\nWrote the HTML report: r.html\n" in result.stdout
    document = (tmp_path / "r.html").read_text(encoding="utf-8")
    # every invariant holds (the system prompt alone is over the 50-token target, so hard truncation keeps
    # the last request's first 512 tokens); a dry run reads nothing back, so that check is not listed
    assert "invariant(s) broken" not in document and document.count("<li>✓ ") == len(hc.CHECKS) - 1
    assert len(charts_of(document)["waterfall"]["data"][0]["x"]) == 6
    result = runner.invoke(app, ["compact", str(CHAT), "--now", "--force", "--dry-run", "--json", "--html", "r.html"])
    assert orjson.loads(result.stdout)["written"] == ["r.html"]


def test_broken_invariants_are_listed_escaped():
    assert hc._invariants_html("compacted", ["1 tool result(s) lost their call", "<b>odd</b>"], False) == (
        '<p class="bad">2 invariant(s) broken:</p><ul class="bad"><li>✗ 1 tool result(s) lost their call</li>'
        "<li>✗ &lt;b&gt;odd&lt;/b&gt;</li></ul>")
    assert hc._invariants_html("nothing to do", [], False) == '<p class="note">Not checked: nothing was compacted.</p>'


def test_compact_html_nothing_to_do(runner, tmp_path):
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "dialogue", "-o", "out.jsonl", "--html", "r.html"])
    assert result.exit_code == 0, result.stderr
    document = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Not checked: nothing was compacted." in document and "No summariser call" in document
    assert "latency" not in charts_of(document)


def test_compact_html_is_never_overwritten_without_force_nor_an_input(runner, tmp_path):
    (tmp_path / "r.html").write_text("keep me")
    result = runner.invoke(app, ["compact", str(CHAT), "--dry-run", "--html", "r.html"])
    assert (result.exit_code, result.stderr) == (2, "Error: r.html: the output file exists already — pass --force "
                                                    "to overwrite it, or choose another path\n")
    assert (tmp_path / "r.html").read_text() == "keep me"
    result = runner.invoke(app, ["compact", str(CHAT), "--force", "--dry-run", "--html", "r.html"])
    assert result.exit_code == 0 and (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    result = runner.invoke(app, ["compact", str(CHAT), "--force", "-o", "o.jsonl", "--html", "o.jsonl"])
    assert (result.exit_code, result.stderr) == (2, "Error: o.jsonl: the HTML report would replace the input or "
                                                    "another output — choose another path for --html\n")
    assert not (tmp_path / "o.jsonl").exists()


# ---- inspect: the page through the CLI -----------------------------------------------------------


def test_inspect_html_writes_a_self_contained_page(runner, tmp_path):
    jsonl(tmp_path / "s.jsonl", SESSION)
    (tmp_path / "r.html").write_text("an old page")
    result = runner.invoke(app, ["inspect", "s.jsonl", "--html", "r.html"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "Wrote the HTML report: r.html"
    document = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert document.startswith("<!DOCTYPE html>")
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", document)  # nothing loaded from elsewhere
    assert list(charts_of(document)) == ["cumulative", "kinds-by-round", "spans"]
    result = runner.invoke(app, ["inspect", "s.jsonl", "--json", "--html", "r.html"])
    assert result.exit_code == 0 and orjson.loads(result.stdout)["totals"]["tokens"] == 83
    result = runner.invoke(app, ["inspect", "s.jsonl", "--html", "s.jsonl"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", "Error: s.jsonl: the HTML report would replace the input or another output — choose another path "
               "for --html\n")
    result = runner.invoke(app, ["inspect", "s.jsonl", "--html", "no/such/r.html"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", "Error: no/such: the output folder does not exist — create it first\n")
    (tmp_path / "dir").mkdir()
    jsonl(tmp_path / "dir" / "a.jsonl", SESSION)
    result = runner.invoke(app, ["inspect", "dir", "--html", "dir/a.jsonl"])  # found in a folder: still an input
    assert (result.exit_code, result.stderr) == (2, "Error: dir/a.jsonl: the output is the input file — write to "
                                                    "another path; tcompact never replaces its input\n")


def test_html_without_the_extra_is_one_error_line(runner, tmp_path, monkeypatch):
    jsonl(tmp_path / "s.jsonl", SESSION)
    monkeypatch.setitem(sys.modules, "plotly", None)
    monkeypatch.setitem(sys.modules, "plotly.offline", None)
    expected = ("Error: --html needs plotly, which is not installed — install tcompact[html] "
                "(pip install 'tcompact[html]')\n")
    for args in (["inspect", "s.jsonl", "--html", "r.html"],
                 ["compact", "s.jsonl", "--now", "-o", "o.jsonl", "--html", "r.html"]):
        result = runner.invoke(app, args)
        assert (result.exit_code, result.stdout, result.stderr) == (2, "", expected), args
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]  # checked before any work


def test_plotly_is_loaded_only_on_the_html_path(tmp_path):
    import subprocess

    jsonl(tmp_path / "s.jsonl", SESSION)
    code = ("import sys; from typer.testing import CliRunner; from tcompact.app import app; r = CliRunner(); "
            "r.invoke(app, ['--help']); r.invoke(app, ['inspect', 's.jsonl']); a = 'plotly' in sys.modules; "
            "r.invoke(app, ['inspect', 's.jsonl', '--html', 'r.html']); print(a, 'plotly' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.stdout.strip() == "False True", out.stderr


# ---- the terminal picture ------------------------------------------------------------------------


def test_sparkline_scales_to_the_largest_cell():
    assert sparkline([10, 54, 19]) == "▂█▃"
    assert sparkline([0, 5, 0]) == " █ "
    assert sparkline([]) == "" and sparkline([0, 0]) == "  "
    assert sparkline(list(range(1, 9))) == "▂▃▄▅▆▇██"
    # 130 rounds in 60 cells: three rounds a cell, summed (the last cell holds one)
    assert sparkline([1] * 120 + [3] * 10, width=60) == "▃" * 40 + "███▃"


def test_inspect_view_draws_tokens_per_round(runner, tmp_path):
    jsonl(tmp_path / "s.jsonl", SESSION)
    lines = runner.invoke(app, ["inspect", "s.jsonl"]).stdout.splitlines()
    assert lines[7:9] == ["Tokens per round 0–2: ▂█▃ (peak 54 in round 1)", ""]
    jsonl(tmp_path / "long.jsonl", [msg("user", f"request {i} " + "word " * (i % 7)) for i in range(130)])
    lines = runner.invoke(app, ["inspect", "long.jsonl"]).stdout.splitlines()
    (line,) = [x for x in lines if x.startswith("Tokens per round")]
    assert line.startswith("Tokens per round 1–130, 3 rounds a cell: ")
    assert len(line.split(": ", 1)[1].split(" (")[0]) == 44
