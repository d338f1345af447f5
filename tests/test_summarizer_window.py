"""The openai backend and the summariser's own window: what it sends, what it learns, what it records.

Against the loopback server (``openai_server.FakeOpenAI``, real HTTP through the real ``openai``
client), with the body shapes llama.cpp, vLLM and OpenAI really answer (measured against
llama.cpp in tests/test_llm_server.py; vLLM's and OpenAI's from their documented messages).
"""

from __future__ import annotations

import json

import pytest
from openai_server import FakeOpenAI, error, ok, raw

from tcompact.model import Message
from tcompact.summarizers.base import ModelWindow, SummarizerError, SummaryRequest
from tcompact.summarizers.classify import overflow_figures
from tcompact.summarizers.openai_compat import OpenAISummarizer

KEY = "sk-test-window-0123456789"
REQUEST = SummaryRequest(processor="current-round", contract="current", prompt="Summarise.",
                         messages=(Message("user", "Fix a.py"), Message("assistant", "Fixed.")), body=range(1, 2),
                         target_tokens=300, max_tokens=300)


@pytest.fixture(scope="module")
def _server():
    with FakeOpenAI() as s:
        yield s


@pytest.fixture
def server(_server):
    _server.clear()
    return _server


def make(server: FakeOpenAI, **kw) -> OpenAISummarizer:
    return OpenAISummarizer(**{"model": "smollm2-135m", "base_url": server.base_url, "api_key": KEY, "timeout": 2.0,
                               **kw})


def body(data: object) -> bytes:
    return json.dumps(data).encode()


# ------------------------------------------------------------------------- what is sent and recorded


def test_the_budget_is_sent_as_max_tokens_and_prepare_says_the_model_and_parameters_sent(server):
    summarizer = make(server)
    prepared = summarizer.prepare(REQUEST)
    assert (prepared.model, prepared.parameters, prepared.mode) == (
        "smollm2-135m", {"temperature": 0.0, "max_tokens": 300}, "conversation")
    summarizer.summarize(prepared)
    (received,) = server.requests
    assert received.body == {"model": "smollm2-135m", "messages": REQUEST.wire_messages(), "temperature": 0.0,
                             "max_tokens": 300}
    assert summarizer.prepare(prepared) == prepared  # idempotent: a prepared request is sent as it says


def test_max_output_tokens_caps_the_request_budget_and_an_explicit_parameter_wins(server):
    assert make(server, max_output_tokens=100).call_arguments(REQUEST)["max_tokens"] == 100
    explicit = SummaryRequest(**{**REQUEST.__dict__, "parameters": {"max_completion_tokens": 50}})
    arguments = make(server).call_arguments(explicit)
    assert arguments["max_completion_tokens"] == 50 and "max_tokens" not in arguments


def test_api_openai_com_gets_max_completion_tokens_which_its_newer_models_require():
    summarizer = OpenAISummarizer(model="gpt-5-mini", base_url="https://api.openai.com/v1", api_key=KEY)
    try:
        arguments = summarizer.call_arguments(REQUEST)
        assert arguments["max_completion_tokens"] == 300 and "max_tokens" not in arguments
        assert summarizer.context_window() is None  # api.openai.com is not asked: it says no window
    finally:
        summarizer.close()


def test_finish_reason_and_the_servers_timings_come_back(server):
    timings = {"cache_n": 0, "prompt_n": 31, "prompt_ms": 382.6, "predicted_n": 4, "predicted_ms": 19.7}
    server.enqueue(raw(200, body({"id": "c", "object": "chat.completion", "created": 1, "model": "smollm2-135m",
                                  "choices": [{"index": 0, "finish_reason": "length",
                                               "message": {"role": "assistant", "content": "This is a"}}],
                                  "usage": {"prompt_tokens": 31, "completion_tokens": 4, "total_tokens": 35},
                                  "timings": timings})))
    response = make(server).summarize(REQUEST)
    assert (response.text, response.finish_reason, response.timings) == ("This is a", "length", timings)
    server.enqueue(ok("<state_snapshot>1. Active Task\nfix</state_snapshot>"))
    response = make(server).summarize(REQUEST)
    assert (response.finish_reason, response.timings) == ("stop", None)


def test_no_text_at_the_limit_names_the_setting_that_raises_the_budget(server):
    """The budget a reasoning model spent before answering is summary_max_tokens, which --set reaches."""
    server.enqueue(raw(200, body({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
                                  "choices": [{"index": 0, "finish_reason": "length",
                                               "message": {"role": "assistant", "content": ""}}]})))
    with pytest.raises(SummarizerError) as info:
        make(server).summarize(REQUEST)
    assert (info.value.kind, info.value.hint) == ("empty_response", "raise summary_max_tokens (--set "
                                                  "current-round.summary_max_tokens=N): the model spent its budget "
                                                  "(on reasoning?) before answering")


def test_serialized_mode_is_recorded_and_blocks_are_always_sent_as_a_conversation(server):
    summarizer = make(server, mode="serialized")
    assert summarizer.prepare(REQUEST).mode == "serialized"
    blocks = SummaryRequest(processor="round-level", contract="blocks", prompt="p", messages=(), body=range(0),
                            target_tokens=10, system="s")
    assert summarizer.prepare(blocks).mode == "conversation"


# ------------------------------------------------------------------------------- the model's window


LLAMA_MODELS = {"object": "list", "data": [{"id": "smollm2-135m", "aliases": ["smollm2-135m"], "object": "model",
                                           "owned_by": "llamacpp", "meta": {"n_ctx": 2048, "n_ctx_train": 8192}}]}
VLLM_MODELS = {"object": "list", "data": [{"id": "other", "object": "model", "max_model_len": 32768},
                                          {"id": "smollm2-135m", "object": "model", "max_model_len": 4096}]}


@pytest.mark.parametrize(("models", "expected"), [
    (LLAMA_MODELS, ModelWindow(2048, "GET /v1/models")),
    (VLLM_MODELS, ModelWindow(4096, "GET /v1/models")),  # the entry of the model asked for, not the first
    ({"data": [{"id": "served-under-another-name", "context_length": 8000}]}, ModelWindow(8000, "GET /v1/models")),
])
def test_the_window_is_read_from_v1_models_once(server, models, expected):
    server.serve_get("/v1/models", raw(200, body(models)))
    summarizer = make(server)
    assert summarizer.context_window() == expected == summarizer.context_window()
    assert server.get_paths == ["/v1/models"]  # asked once


def test_the_window_falls_back_to_llama_cpps_props(server):
    server.serve_get("/v1/models", raw(200, body({"data": [{"id": "a"}, {"id": "b"}]})))  # none is ours
    server.serve_get("/props", raw(200, body({"default_generation_settings": {"n_ctx": 1536}, "total_slots": 2})))
    assert make(server).context_window() == ModelWindow(1536, "GET /props")
    assert server.get_paths == ["/v1/models", "/props"]


def test_a_server_that_says_no_window_has_none_and_a_stated_window_asks_nothing(server):
    assert make(server).context_window() is None  # 404 for both
    assert server.get_paths == ["/v1/models", "/props"]
    server.clear()
    server.serve_get("/v1/models", raw(200, body(LLAMA_MODELS)))
    assert make(server, context_window=1000).context_window() == ModelWindow(1000, "--summarizer-window")
    assert server.get_paths == []


def test_a_window_that_is_not_a_positive_number_is_not_taken(server):
    server.serve_get("/v1/models", raw(200, body({"data": [{"id": "smollm2-135m", "meta": {"n_ctx": True}}]})))
    server.serve_get("/props", raw(200, b"not json"))
    assert make(server).context_window() is None


# --------------------------------------------------------------------------------- overflow shapes


LLAMA_400 = {"error": {"code": 400, "message": "request (3031 tokens) exceeds the available context size (2048 tokens), "
                                              "try increasing it", "type": "exceed_context_size_error",
                       "n_prompt_tokens": 3031, "n_ctx": 2048}}


def fail(server: FakeOpenAI, reply) -> SummarizerError:
    server.enqueue(reply)
    with pytest.raises(SummarizerError) as info:
        make(server).summarize(REQUEST)
    return info.value


def test_llama_cpps_400_is_an_overflow_with_the_servers_window_and_prompt_size(server):
    err = fail(server, raw(400, body(LLAMA_400)))
    assert (err.kind, err.status, err.context_window, err.prompt_tokens) == ("context_overflow", 400, 2048, 3031)
    assert err.what.endswith(": HTTP 400: request (3031 tokens) exceeds the available context size (2048 tokens), "
                             "try increasing it (400)")


def test_llama_cpps_500_under_load_is_an_overflow_without_figures(server):
    err = fail(server, error(500, "Context size has been exceeded.", type="server_error"))
    assert (err.kind, err.status, err.context_window, err.prompt_tokens) == ("context_overflow", 500, None, None)
    assert err.hint == "the request is larger than the model's context: a smaller span or a larger model"


@pytest.mark.parametrize(("message", "figures"), [
    ("This model's maximum context length is 8192 tokens. However, your messages resulted in 9,000 tokens. "
     "Please reduce the length of the messages.", (8192, 9000)),  # OpenAI
    ("This model's maximum context length is 2048 tokens. However, you requested 2100 tokens (2000 in the messages, "
     "100 in the completion). Please reduce the length of the messages or completion.", (2048, 2000)),  # vLLM
    ("'max_tokens' or 'max_completion_tokens' is too large: 500. This model's maximum context length is 2048 tokens "
     "and your request has 1900 input tokens (500 > 2048 - 1900).", (2048, 1900)),  # newer vLLM
    ("Request Entity Too Large", (None, None)),  # an overflow by its code, saying no figures
])
def test_overflow_figures_from_the_wording_of_other_servers(server, message, figures):
    err = fail(server, error(400, message, type="invalid_request_error", code="context_length_exceeded"))
    assert (err.kind, err.context_window, err.prompt_tokens) == ("context_overflow", *figures)


def test_overflow_figures_of_an_exception_chain():
    class Refused(Exception):
        body = {"n_ctx": 4096, "n_prompt_tokens": 5000}

    outer = RuntimeError("wrapped")
    outer.__cause__ = Refused("too long")
    assert overflow_figures(outer) == (4096, 5000)
    assert overflow_figures(ValueError("nothing here")) == (None, None)


# ------------------------------------------------------------------------- through compact and replay


def test_a_refused_reply_is_dumped_retried_resampled_and_replayed(server, tmp_path, monkeypatch):
    """compact: a loop is refused (dumped with its text and why), the retry goes at temperature 0.7 / seed 1 and
    its snapshot is used; the dumps record model, parameters, max_tokens, window, finish_reason and usage;
    ``replay --verify`` refuses the same reply again and rebuilds the same result."""
    from typer.testing import CliRunner

    from tcompact.app import app

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.serve_get("/v1/models", raw(200, body(LLAMA_MODELS)))
    session = tmp_path / "session.jsonl"
    session.write_text("".join(json.dumps(m) + "\n" for m in [
        {"role": "user", "content": "Port the parser"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "output line\n" * 120},
        {"role": "assistant", "content": "Ported."}]))
    server.enqueue(ok("I'm sorry for the inconvenience. " * 10),
                   ok("<state_snapshot>\n1. Active Task\nPort the parser: done.\n</state_snapshot>"))
    runner = CliRunner()
    args = ["compact", str(session), "-c", "current-round", "--now", "--summarizer", "openai", "--model",
            "smollm2-135m", "--base-url", server.base_url, "-o", str(tmp_path / "out.jsonl"), "--dump-dir",
            str(tmp_path / "dumps"), "--report", str(tmp_path / "report.json")]
    result = runner.invoke(app, args)
    assert (result.exit_code, result.stderr) == (0, "")
    refused, used = sorted((json.loads(p.read_text()) for p in (tmp_path / "dumps").iterdir()),
                           key=lambda d: d["run"]["call"])
    assert refused["error"] == {"kind": "invalid_response", "message": "not a usable summary: a loop: the reply "
                                "repeats 'i'm sorry for the inconvenience.' 10 times", "status": None,
                                "retry_after": None, "context_window": None, "prompt_tokens": None}
    assert refused["response"]["raw_content"] == "I'm sorry for the inconvenience. " * 10
    assert refused["call"]["reason"] == "reply refused: retrying" and refused["context_after"] is None
    for doc, params in ((refused, {"temperature": 0.0, "max_tokens": 190}),
                        (used, {"temperature": 0.7, "max_tokens": 190, "seed": 1})):
        request = doc["request"]  # 190: half the body (under 512), under a quarter of the 2,048 /v1/models says
        assert (request["model"], request["parameters"], request["max_tokens"], request["mode"]) == (
            "smollm2-135m", params, 190, "conversation")
        assert request["summarizer_window"] == {"tokens": 2048, "source": "GET /v1/models"}
        assert "must fit in 190 tokens" in request["prompt"]
        assert doc["response"]["finish_reason"] == "stop" and doc["response"]["usage"] == {
            "prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    assert [r.body["max_tokens"] for r in server.requests] == [190, 190]
    assert [r.body.get("seed") for r in server.requests] == [None, 1]
    assert used["benefit"]["accepted"] is True and "Port the parser: done." in (tmp_path / "out.jsonl").read_text()
    assert [c["error_kind"] for c in json.loads((tmp_path / "report.json").read_text())["stages"][0]["calls"]] == [
        "invalid_response", None]
    verify = runner.invoke(app, ["replay", str(tmp_path / "dumps"), "--verify"])
    assert verify.exit_code == 0 and verify.stdout.count("OK ") == 2, verify.stdout
    replayed = runner.invoke(app, [*args[:6], "replay", "--replay-dir", str(tmp_path / "dumps"), "-o",
                                   str(tmp_path / "again.jsonl"), "--dump-dir", str(tmp_path / "again")])
    assert replayed.exit_code == 0, replayed.stderr
    assert (tmp_path / "again.jsonl").read_text() == (tmp_path / "out.jsonl").read_text()
    # a re-run needs no --model: the dump says which model was called (issue: "needs --model")
    server.clear()
    server.enqueue(ok("<state_snapshot>\n1. Active Task\nPort the parser.\n</state_snapshot>"))
    first = next(p for p in (tmp_path / "dumps").iterdir() if json.loads(p.read_text())["run"]["call"] == 1)
    rerun = runner.invoke(app, ["replay", str(first), "--summarizer", "openai", "--base-url", server.base_url])
    assert rerun.exit_code == 0, rerun.stderr
    (request,) = server.requests
    assert (request.body["model"], request.body["max_tokens"], request.body["temperature"]) == (
        "smollm2-135m", 190, 0.0)


def test_llama_cpps_500_overflow_through_compact_shrinks_the_refused_request(server, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from tcompact.app import app

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    session = tmp_path / "session.jsonl"
    session.write_text("".join(json.dumps(m) + "\n" for m in [{"role": "user", "content": "go"}] + [
        m for n in range(4) for m in (
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{n}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": "output line\n" * 300})]))
    server.enqueue(error(500, "Context size has been exceeded.", type="server_error"),
                   ok("<state_snapshot>1. Active Task\ngo: ran bash 4 times\n</state_snapshot>"))
    result = CliRunner().invoke(app, ["compact", str(session), "-c", "current-round", "--now", "--summarizer",
                                      "openai", "--model", "m", "--base-url", server.base_url, "-o",
                                      str(tmp_path / "out.jsonl"), "--dump-dir", str(tmp_path / "dumps")])
    assert (result.exit_code, result.stderr) == (0, "")
    first, second = (r.body["messages"] for r in server.requests)
    assert len(second) < len(first) and first[-1] == second[-1]  # a smaller body, the same prompt
    calls = {c["id"] for m in second for c in m.get("tool_calls") or ()}
    assert calls == {m["tool_call_id"] for m in second if m["role"] == "tool"}
