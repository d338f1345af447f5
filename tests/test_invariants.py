"""The compaction invariants over every compressor × every real and sample file, and generated transcripts."""

from __future__ import annotations

import pytest
from conftest import REAL_FILES, SAMPLES, SHARED
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcompact.compaction import CompactOptions, Stage, compact_file
from tcompact.compressors import get, names, parse_sets
from tcompact.compressors.base import Context
from tcompact.formats import read_file
from tcompact.invariants import violations
from tcompact.model import Message, ToolCall
from tcompact.summarizers.extractive import ExtractiveSummarizer
from tcompact.tokens import TokenCounter

FILES = [SAMPLES / n for n in ("chat_tool_session.jsonl", "claude_code_session.jsonl", "codex_rollout.jsonl")] + [
    SHARED / n for n in REAL_FILES.values()]
CHAINS = [*names(), "truncate,micro,dialogue,current-round"]
OPTIONS = {"offload": ("offload.large_message_tokens=300",)}


@pytest.mark.parametrize("chain", CHAINS)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_invariants_hold_and_the_output_reads_back(path, chain, tmp_path):
    if not path.exists():
        pytest.skip(f"real transcripts not found at {SHARED}; CI always has them")
    run = compact_file(path, CompactOptions(chain=chain, force=True, overrides=parse_sets(OPTIONS.get(chain)),
                                            offload_dir=str(tmp_path / "store")))
    assert run.status in ("compacted", "nothing to do"), run.message
    assert violations(run.transcript.messages, run.messages, run.stages) == []
    if run.status == "nothing to do":
        assert run.output is None and run.messages == run.transcript.messages
        return
    out = tmp_path / "out.jsonl"
    out.write_bytes(run.output.data)
    again = read_file(out)
    assert again.format == run.output_format
    (back,) = [t for t in again.transcripts if t.id == run.transcript.id or (t.kind == "main" and
                                                                             run.transcript.kind != "subagent")][:1]
    assert [(m.role, m.text, m.tool_call_ids) for m in back.messages] == [
        (m.role, m.text, m.tool_call_ids) for m in run.messages]
    counter = TokenCounter.for_model(run.transcript.model)
    assert counter.total(back.messages) < counter.total(run.transcript.messages)


@st.composite
def transcripts(draw):
    """Chat transcripts with a system prompt, requests, reminders, big and small tool results."""
    msgs = [Message(role="system", content="You are an agent.")]
    pending: list[str] = []
    for step in range(draw(st.integers(min_value=1, max_value=24))):
        kind = draw(st.sampled_from(["user", "reminder", "call", "result", "result", "answer"]))
        if kind == "user":
            msgs.append(Message(role="user", content=f"request {step}: fix module {step}"))
        elif kind == "reminder":
            msgs.append(Message(role="user", content="<system-reminder>keep going</system-reminder>"))
        elif kind == "call":
            ids = [f"c{step}_{k}" for k in range(draw(st.integers(min_value=1, max_value=3)))]
            msgs.append(Message(role="assistant", content="", tool_calls=tuple(
                ToolCall(i, draw(st.sampled_from(["bash", "read_file", "grep"])), f'{{"n": {step}}}') for i in ids)))
            pending.extend(ids)
        elif kind == "result" and pending:
            size = draw(st.sampled_from([1, 40, 900]))
            msgs.append(Message(role="tool", content=f"output {step} " * size, tool_call_ids=(pending.pop(0),)))
        elif kind == "answer":
            msgs.append(Message(role="assistant", content=f"done with step {step}"))
    return msgs


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transcripts(), st.sampled_from(names()))
def test_invariants_on_generated_transcripts(messages, name):
    counter = TokenCounter()
    ctx = Context(counter=counter, window=200_000, summarizer=ExtractiveSummarizer(counter), force=True)
    compressor = get(name)
    settings_ = compressor.settings_model(**({"large_message_tokens": 100, "protected_tools": []}
                                             if name == "offload" else {}))
    result = compressor.compress(messages, settings_, ctx)
    stage = Stage(compressor, settings_, result, tuple(messages))
    assert violations(messages, result.messages, [stage]) == []
    assert not result.failed
