"""The openai summariser with a real instruction model: Qwen2.5-Coder-0.5B-Instruct in llama.cpp's server.

One server for the module (:mod:`llm_server`, the GGUF :mod:`llm_models` joins from its PyPI chunks)
on 127.0.0.1 with one slot of 4,096 tokens — the window of many local setups — and two threads. A
shared real session larger than that window is compacted through the openai path: the body goes
in pieces cut at legal cut points, each request within the window beside its answer, the model's
answers merged, the summary (the model's narrative, then the extractive facts) accepted, and every
call dumped so that ``replay --verify`` rebuilds the run. The other tests hold the backend to what
it promises a slow local server: replies constrained to the JSON schema (llama.cpp honours
``response_format``), progress streamed while the model writes, and a call abandoned at its
deadline cancelled at the server (its slot is free again within seconds while it writes).

Budgets are small (CI runs on two cores: the model reads ~60-150 prompt tokens and writes ~10-20
a second there); the long runs are in ``tests/benchmarks/bench_llm_summaries.py``. Without
xllamacpp or the model the module is skipped and says why; with TCOMPACT_REQUIRE_LLM (set by
``.ci/install.d/30-llm.sh``) it fails instead.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from dataclasses import replace
from pathlib import Path

import orjson
import pytest
from conftest import SHARED
from llm_models import REQUIRED, model_path
from llm_server import LlamaServer, missing_components
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.model import Message
from tcompact.summarizers.base import SummarizerError, SummaryRequest
from tcompact.summarizers.narrative import FIELDS, parse_reply, schema
from tcompact.summarizers.openai_compat import OpenAISummarizer
from tcompact.counting.tokens import TokenCounter

ALIAS = "qwen2.5-coder-0.5b"
WINDOW = 4096
_MODEL = model_path(ALIAS)
_REASON = missing_components() or (_MODEL if isinstance(_MODEL, str) else None)
if _REASON:
    if os.environ.get(REQUIRED):
        pytest.fail(f"{_REASON}, although {REQUIRED} is set: .ci/install.d/30-llm.sh failed", pytrace=False)
    pytest.skip(_REASON, allow_module_level=True)

CCVIEWER = SHARED / "claude_ccviewer_5c0375b4_japanese_task_subagents.jsonl"


@pytest.fixture(scope="module")
def qwen(tmp_path_factory):
    if not CCVIEWER.exists():
        pytest.skip(f"real transcripts not found at {SHARED} (set TCOMPACT_SHARED_DIR); CI always has them")
    log = tmp_path_factory.mktemp("qwen") / "llama.log"
    with LlamaServer(n_ctx=WINDOW, parallel=1, threads=2, batch_threads=2, model=Path(str(_MODEL)), alias=ALIAS,
                     log=log) as server:
        server.post("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1})
        yield server


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def _slots(server: LlamaServer) -> list[dict]:
    with urllib.request.urlopen(f"{server.url}/slots", timeout=30) as answer:  # noqa: S310 - 127.0.0.1 only
        return json.loads(answer.read())


def test_a_session_larger_than_the_window_compacts_in_pieces_each_within_it(qwen, tmp_path):
    """``full`` on the shared 6,186-token Claude Code session: the window (4,096, from ``GET /v1/models``) is
    too small for it, so the body goes in pieces and a merge; every request the server read fits its window
    beside the answer's limit, the summary is accepted, and ``replay --verify`` rebuilds the run."""
    started = time.perf_counter()
    result = CliRunner().invoke(app, [
        "compact", str(CCVIEWER), "-c", "full", "--now", "--summarizer", "openai", "--model", ALIAS, "--base-url",
        qwen.base_url, "--set", "summary_max_tokens=640", "-o", str(tmp_path / "out.jsonl"), "--dump-dir",
        str(tmp_path / "dumps"), "--report", str(tmp_path / "report.json")])
    elapsed = time.perf_counter() - started
    assert result.exit_code == 0, result.stdout + result.stderr
    report = orjson.loads((tmp_path / "report.json").read_bytes())
    assert report["status"] == "compacted" and report["before"]["tokens"] == 6186 > WINDOW
    dumps = sorted((orjson.loads(p.read_bytes()) for p in (tmp_path / "dumps").glob("*.json")),
                   key=lambda d: d["run"]["call"])
    answered = [d for d in dumps if d["response"] is not None]
    assert len({d["span"]["body"]["start"] for d in dumps}) >= 2  # pieces, then the merge over the whole body
    for d in dumps:
        assert d["request"]["summarizer_window"] == {"tokens": WINDOW, "source": "GET /v1/models"}
        assert d["request"]["contract"] == "narrative" and d["request"]["max_tokens"] == 160
    for d in answered:  # the server's own count of what it read, beside the answer's limit
        assert d["response"]["usage"]["prompt_tokens"] + d["request"]["max_tokens"] <= WINDOW
    notes = report["stages"][0]["notes"]
    assert any(n.startswith("summarised in ") and n.endswith(f"within the summariser's window of {WINDOW:,} tokens")
               for n in notes), notes
    assert dumps[-1]["benefit"]["accepted"] is True and dumps[-1]["context_after"] is not None
    text = (tmp_path / "out.jsonl").read_text()
    assert "Narrative written by the summariser model" in text and "Resume" in text
    verify = CliRunner().invoke(app, ["replay", str(tmp_path / "dumps"), "--verify"])
    assert verify.exit_code == 0 and verify.stdout.count("OK ") == len(dumps), verify.stdout
    print(f"\nqwen 0.5B, full, ccviewer: {len(dumps)} calls, {elapsed:.1f} s")


def _request(text: str, max_tokens: int) -> SummaryRequest:
    fields = FIELDS[:2]
    return SummaryRequest(processor="full", contract="narrative", prompt=text,
                          messages=(Message("user", "Fix the failing test in tests/test_io.py."),
                                    Message("assistant", "Edited src/io.py; pytest: 12 passed.")),
                          body=range(0, 2), target_tokens=max_tokens, max_tokens=max_tokens, schema=schema(fields))


def test_the_reply_follows_the_json_schema_and_streams_its_progress(qwen):
    """``response_format`` with the narrative schema: llama.cpp answers that JSON; with a progress view the reply
    is streamed, each piece of text reported as it arrives, the last event says it is done."""
    events = []
    counter = TokenCounter()
    summarizer = OpenAISummarizer(model=ALIAS, base_url=qwen.base_url, timeout=600, counter=counter,
                                  progress=events.append)
    request = _request("Summarise the conversation above as JSON with the keys narrative and next_step.", 48)
    response = summarizer.summarize(request)
    assert response.text.lstrip().startswith('{') and '"narrative"' in response.text  # the schema's JSON
    if response.finish_reason == "stop":  # a reply not cut at its 48 tokens is the whole object
        assert parse_reply(response.text, FIELDS).keys() <= {"narrative", "next_step"}
    assert response.usage["completion_tokens"] <= 48 and response.timings["predicted_n"] >= 1
    assert events[0].received == 0 and events[-1].done and events[-1].received >= 1
    received = [e.received for e in events]
    assert received == sorted(received) and {e.sent for e in events} == {events[0].sent} and events[0].sent > 20


def test_a_call_past_its_deadline_is_cancelled_at_the_server(qwen):
    """A 4-second deadline on a streamed call that must write 400 tokens (``ignore_eos``, an extra llama.cpp
    parameter sent through): the call fails as a timeout, and the server stops
    writing the abandoned answer (its slot is free within seconds, not once the 400 tokens are written)."""
    events = []
    summarizer = OpenAISummarizer(model=ALIAS, base_url=qwen.base_url, timeout=4, progress=events.append)
    request = replace(_request("Write a long story, at least 400 words, about a parser that drops its last line.",
                               400), schema=None, parameters={"ignore_eos": True})  # llama.cpp: all 400 tokens
    with pytest.raises(SummarizerError) as failure:
        summarizer.summarize(request)
    assert failure.value.kind == "timeout" and "4 s" in failure.value.what
    assert events[-1].done and 0 < events[-1].received < 400
    deadline = time.monotonic() + 10
    while any(s.get("is_processing") for s in _slots(qwen)):
        assert time.monotonic() < deadline, "the abandoned call is still being computed"
        time.sleep(0.2)
