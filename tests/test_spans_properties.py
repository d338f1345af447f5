"""Property tests: on generated transcripts, cuts never split a tool call from its results."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tcompact.model import Message, ToolCall, index_tool_calls
from tcompact.rounds import split_rounds
from tcompact.compressors import build_span
from tcompact.spans import adjust_keep_recent_for_tool_boundaries, legal_cut_points


@st.composite
def transcripts(draw):
    """Users, internal users, assistants with 0-3 calls whose results come later, some delayed."""
    messages: list[Message] = []
    pending: list[str] = []
    n = draw(st.integers(min_value=0, max_value=30))
    for step in range(n):
        kind = draw(st.sampled_from(["user", "internal", "assistant", "result", "result"]))
        if kind == "user":
            messages.append(Message(role="user", content=f"request {step}"))
        elif kind == "internal":
            messages.append(Message(role="user", content="<system-reminder>note</system-reminder>"))
        elif kind == "assistant":
            ids = [f"c{step}_{k}" for k in range(draw(st.integers(min_value=0, max_value=3)))]
            reuse = draw(st.booleans()) and ids
            if reuse:  # real files reuse ids: pairing must take the nearest call
                ids[0] = "shared"
            messages.append(Message(role="assistant", content="x",
                                    tool_calls=tuple(ToolCall(i, "bash", "{}") for i in ids)))
            pending.extend(ids)
        elif pending:
            cid = pending.pop(draw(st.integers(min_value=0, max_value=len(pending) - 1)))
            messages.append(Message(role="tool", content="ok", tool_call_ids=(cid,)))
    return messages


def _crossing(messages, cut):
    return [link for link in index_tool_calls(messages).links if link.call_at < cut <= link.result_at]


@settings(max_examples=300, deadline=None)
@given(transcripts())
def test_legal_cut_points_are_exactly_the_cuts_no_pair_crosses(messages):
    legal = set(legal_cut_points(messages))
    for cut in range(len(messages) + 1):
        assert (cut in legal) == (not _crossing(messages, cut))


@settings(max_examples=300, deadline=None)
@given(transcripts(), st.integers(min_value=0, max_value=8))
def test_every_span_tail_starts_at_a_legal_cut(messages, keep):
    from tcompact.compressors import keep_recent_default, span_names

    for name in span_names():
        span = build_span(name, messages, keep_recent=None if keep_recent_default(name) is None else keep)
        assert span.prefix.start == 0
        assert span.prefix.stop == span.body.start and span.body.stop == span.tail.start
        assert span.tail.stop == len(messages) or (not span.tail and span.tail.start == len(messages))
        if span.body:
            assert not _crossing(messages, span.tail.start), name


@settings(max_examples=300, deadline=None)
@given(transcripts(), st.integers(min_value=0, max_value=8))
def test_adjusted_tail_only_grows(messages, keep):
    got = adjust_keep_recent_for_tool_boundaries(messages, keep)
    assert got >= keep or got == len(messages) or not messages
    if messages and keep:
        assert not _crossing(messages, max(len(messages) - got, 0))


@settings(max_examples=300, deadline=None)
@given(transcripts())
def test_rounds_partition_the_transcript(messages):
    rounds = split_rounds(messages)
    assert [i for r in rounds for i in range(r.start, r.end)] == list(range(len(messages)))
    assert all(r.request == r.start for r in rounds if r.number > 0)
