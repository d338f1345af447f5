"""The compaction invariants (invariants.py): each check and its exact violation on transcripts made here, then over
every compressor × every sample and real file, and generated transcripts."""

from __future__ import annotations

import pytest
from conftest import REAL_FILES, SAMPLES, SHARED
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcompact.compaction import CompactOptions, Stage, compact_file
from tcompact.compressors import get, names, parse_sets
from tcompact.compressors._edit import CUT_MARK
from tcompact.compressors.base import CompressionResult, Context
from tcompact.formats import read_file
from tcompact.compaction.invariants import violations
from tcompact.model import Message, ToolCall
from tcompact.summarizers.extractive import ExtractiveSummarizer
from tcompact.spans import Span
from tcompact.counting.tokens import TokenCounter

SYSTEM = Message(role="system", content="You are an agent.")
REQUEST = Message(role="user", content="Fix the parser, keep the API.")
CALL = Message(role="assistant", tool_calls=(ToolCall("c1", "bash", "{}"),))
RESULT = Message(role="tool", content="3 failed", tool_call_ids=("c1",))
ANSWER = Message(role="assistant", content="Fixed.")
BEFORE = [SYSTEM, REQUEST, CALL, RESULT, ANSWER]
SUMMARY = Message(role="user", content="Summary: the parser was fixed.")


@pytest.mark.parametrize(("after", "found"), [
    (BEFORE, []),
    ([SYSTEM, REQUEST, SUMMARY, ANSWER], []),  # a pair removed whole is no violation
    ([SYSTEM, REQUEST, RESULT, ANSWER], ["1 tool result(s) lost their call"]),
    ([SYSTEM, REQUEST, CALL, ANSWER], ["1 tool call(s) lost their result"]),
    ([REQUEST, CALL, RESULT], ["1 system/developer message(s) dropped"]),
    ([Message(role="developer", content="You are an agent."), REQUEST, CALL, RESULT], []),  # kept, as developer
    ([Message(role="system", content="You are an agent!"), REQUEST], ["1 system/developer message(s) dropped"]),
    ([SYSTEM, SUMMARY, ANSWER], ["the last real user request is not kept verbatim"]),
    ([SYSTEM, Message(role="user", content=REQUEST.text + " "), ANSWER], ["the last real user request is not kept "
                                                                          "verbatim"]),
    ([CALL, RESULT], ["1 system/developer message(s) dropped", "the last real user request is not kept verbatim"]),
])
def test_each_check_and_its_violation(after, found):
    assert violations(BEFORE, after) == found


def test_what_the_input_already_lacked_is_no_violation():
    before = [REQUEST, RESULT, CALL]  # an orphan result and an unanswered call in the input
    assert violations(before, before) == []
    assert violations(before, [REQUEST, RESULT]) == []  # one fewer unanswered call
    assert violations(before, [REQUEST, RESULT, RESULT, CALL]) == ["1 tool result(s) lost their call"]
    assert violations([ANSWER], [SUMMARY]) == []  # no real request to keep


def _stage(name, after, *, applied=True, tokens=(100, 40), span=None, before=BEFORE):
    compressor = get(name)
    result = CompressionResult(processor=name, messages=tuple(after), applied=applied, reason="r",
                               tokens_before=tokens[0], tokens_after=tokens[1], span=span)
    return Stage(compressor, compressor.settings_model(), result, tuple(before))


@pytest.mark.parametrize("name", ["full", "round-level"])
def test_only_the_compressors_that_may_cut_a_request_may_keep_it_cut(name):
    long = Message(role="user", content="Port the parser to Rust. " * 40)
    before = [SYSTEM, long, ANSWER]

    def after(head):
        return [SYSTEM, SUMMARY, Message(role="user", content=long.text[:head] + "\n[... the rest of this message "
                                         f"(9 tokens) {CUT_MARK} {name} to fit ...]")]

    assert violations(before, after(250), [_stage(name, after(250), before=before)]) == []
    assert violations(before, after(250), [_stage("dialogue", after(250), before=before)]) == [
        "the last real user request is not kept verbatim"]
    # the cut keeps at least the request's first 200 characters, and says it was cut
    assert violations(before, after(150), [_stage(name, after(150), before=before)]) == [
        "the last real user request is not kept verbatim"]
    unmarked = [SYSTEM, SUMMARY, Message(role="user", content=long.text[:250])]
    assert violations(before, unmarked, [_stage(name, unmarked, before=before)]) == [
        "the last real user request is not kept verbatim"]


@pytest.mark.parametrize(("stage", "found"), [
    (_stage("dialogue", [SYSTEM, SUMMARY, REQUEST, ANSWER]), []),
    (_stage("dialogue", [SYSTEM, SUMMARY, REQUEST, ANSWER], tokens=(100, 100)),
     ["dialogue: applied but not smaller (100 → 100)"]),
    (_stage("dialogue", [SYSTEM, SUMMARY, REQUEST, ANSWER], tokens=(100, 120)),
     ["dialogue: applied but not smaller (100 → 120)"]),
    (_stage("current-round", [SYSTEM, REQUEST, SUMMARY], span=Span.from_cuts(5, 2, 5)), []),
    (_stage("current-round", [SYSTEM, SUMMARY, REQUEST], span=Span.from_cuts(5, 2, 5)),
     ["current-round: the preserved prefix changed"]),
    (_stage("truncate", BEFORE, applied=False, tokens=(100, 100)), []),
    (_stage("truncate", [SYSTEM, REQUEST, SUMMARY], applied=False, tokens=(100, 100)),
     ["truncate: not applied but the messages changed"]),
])
def test_each_stage_check(stage, found):
    assert violations(BEFORE, BEFORE, [stage]) == found


def test_violations_come_in_order_transcript_first_then_each_stage():
    stages = [_stage("truncate", [SYSTEM], applied=False, tokens=(5, 5)), _stage("dialogue", [SUMMARY], tokens=(5, 9))]
    assert violations(BEFORE, [RESULT], stages) == [
        "1 tool result(s) lost their call", "1 system/developer message(s) dropped",
        "the last real user request is not kept verbatim", "truncate: not applied but the messages changed",
        "dialogue: applied but not smaller (5 → 9)"]


FILES = [SAMPLES / n for n in ("chat_tool_session.jsonl", "claude_code_session.jsonl", "codex_rollout.jsonl")] + [
    SHARED / n for n in REAL_FILES.values()]
CHAINS = [*names(), "truncate,micro,dialogue,current-round"]
OPTIONS = {"offload": ("offload.large_message_tokens=300",)}


@pytest.mark.parametrize("chain", CHAINS)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_invariants_hold_and_the_output_reads_back(path, chain, tmp_path):
    if not path.exists():
        pytest.skip(f"real transcripts not found at {SHARED}; CI always has them")
    run = compact_file(path, CompactOptions(chain=chain, now=True, overrides=parse_sets(OPTIONS.get(chain)),
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
