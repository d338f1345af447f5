"""Span builders and legal cut points (spans.py; openjiuwen-spec §1.5, §3-5, §11): the examples of the spec, and
as properties on generated transcripts — spans partition the messages, and no cut splits a call from its results."""

from __future__ import annotations

import pytest
from conftest import calls as A
from conftest import result as T
from conftest import user as U
from hypothesis import given, settings
from hypothesis import strategies as st

from tcompact.errors import UsageError
from tcompact.model import Message, ToolCall, index_tool_calls
from tcompact.rounds import last_real_user_index
from tcompact.compressors import build_span, keep_recent_default, span_names
from tcompact.spans import (
    Span,
    adjust_keep_recent_for_tool_boundaries,
    current_round_span,
    dialogue_span,
    legal_cut_points,
    round_level_span,
)


def ranges(span):
    return (list(span.prefix), list(span.body), list(span.tail))


# ---- §1.5 variant 1: tail extension --------------------------------------------------------------


def test_adjust_keep_recent_grows_tail_to_the_call_of_a_kept_result():
    msgs = [U(), A("tc1"), T("tc1"), A("tc2"), T("tc2"), A(text="partial")]
    assert adjust_keep_recent_for_tool_boundaries(msgs, 2) == 3
    assert adjust_keep_recent_for_tool_boundaries(msgs, 1) == 1
    assert adjust_keep_recent_for_tool_boundaries(msgs, 0) == 0
    assert adjust_keep_recent_for_tool_boundaries(msgs, -3) == 0
    assert adjust_keep_recent_for_tool_boundaries([], 4) == 4
    assert adjust_keep_recent_for_tool_boundaries(msgs, 99) == 6


def test_adjust_keep_recent_follows_parallel_calls_and_repeats_until_stable():
    msgs = [U(), A("a", "b"), T("a"), A("c"), T("c"), T("b")]
    # tail [T(b)] pulls in A(a,b) at 1; then T(a) at 2 is already inside
    assert adjust_keep_recent_for_tool_boundaries(msgs, 1) == 5


def test_adjust_keep_recent_pairs_reused_ids_with_the_nearest_call():
    msgs = [U(), A("x"), T("x"), A("x"), T("x")]
    assert adjust_keep_recent_for_tool_boundaries(msgs, 1) == 2


# ---- §3 current round --------------------------------------------------------------------------


def test_current_round_worked_example_keep_2():
    msgs = [U("task"), A("tc1"), T("tc1"), A("tc2"), T("tc2"), A(text="partial")]
    assert ranges(current_round_span(msgs, keep_recent=2)) == ([0], [1, 2], [3, 4, 5])


def test_current_round_compresses_a_trailing_reminder():
    msgs = [U("Read files"), A("tc1", "tc2"), T("tc1"), T("tc2"), U("<system-reminder>todo</system-reminder>")]
    assert ranges(current_round_span(msgs)) == ([0], [1, 2, 3, 4], [])


def test_current_round_folds_internal_blocks_after_the_real_user():
    msgs = [U("hist"), A(text="hist answer"), U("real current"), U("<memory_block_current>old"),
            U("<recovered_context>x"), U("<system-reminder>y")]
    assert ranges(current_round_span(msgs)) == ([0, 1, 2], [3, 4, 5], [])


def test_current_round_nothing_to_do():
    assert ranges(current_round_span([A(text="a"), A(text="b")], keep_recent=1)) == ([0], [], [1])
    assert ranges(current_round_span([U("x"), A(text="y")], keep_recent=1)) == ([0], [], [1])
    assert current_round_span([U("x")]).empty


# ---- §4 dialogue -------------------------------------------------------------------------------


def test_dialogue_compresses_history_before_the_last_real_user():
    msgs = [U("one"), A("c1"), T("c1"), A(text="done"), U("two"), U("<system-reminder>r"), A(text="ok")]
    assert ranges(dialogue_span(msgs)) == ([], [0, 1, 2, 3], [4, 5, 6])


def test_dialogue_tail_grows_when_a_current_result_answers_an_earlier_call():
    msgs = [U("one"), A("c1"), U("two"), T("c1"), A(text="ok")]
    assert ranges(dialogue_span(msgs)) == ([], [0], [1, 2, 3, 4])


def test_dialogue_nothing_when_the_last_real_user_is_first():
    assert dialogue_span([U("only"), A(text="a")]).empty
    assert ranges(dialogue_span([A(text="a")])) == ([], [], [0])


# ---- §5 round level ----------------------------------------------------------------------------


def test_round_level_keeps_the_newest_n_tool_safe():
    msgs = [U("a"), A(text="b"), U("c"), A("t1"), T("t1"), A("t2"), T("t2"), A(text="end")]
    assert ranges(round_level_span(msgs, keep_recent=4)) == ([], [0, 1, 2], [3, 4, 5, 6, 7])
    assert ranges(build_span("round-level", msgs, keep_recent=2)) == ([], [0, 1, 2, 3, 4], [5, 6, 7])
    assert ranges(build_span("round-level", msgs, keep_recent=1)) == ([], [0, 1, 2, 3, 4, 5, 6], [7])


def test_every_span_is_the_one_its_compressor_uses():
    # issue 13 item 6: the preview kept 4 recent messages for round-level, the compressor 0
    from tcompact.compressors import get

    msgs = [Message(role="system", content="sys"), U("a"), A(text="b"), U("c"), A("t1"), T("t1"), A("t2"), T("t2"), A(text="end")]
    assert span_names() == ["current-round", "dialogue", "round-level", "full", "working-set"]
    assert [keep_recent_default(n) for n in span_names()] == [0, None, 0, 0, 0]
    assert {n: ranges(build_span(n, msgs)) for n in span_names()} == {
        "current-round": ([0, 1, 2, 3], [4, 5, 6, 7, 8], []), "dialogue": ([], [0, 1, 2], [3, 4, 5, 6, 7, 8]),
        "round-level": ([], [0, 1, 2, 3, 4, 5, 6, 7, 8], []), "full": ([0], [1, 2, 3, 4, 5, 6, 7, 8], []),
        "working-set": ([0], [1, 2, 3, 4, 5, 6, 7], [8])}  # its tail: a tenth of the tokens, the last message
    for name in span_names():
        compressor = get(name)
        settings = compressor.settings_model()
        assert build_span(name, msgs) == compressor.span(msgs, settings)
    assert ranges(build_span("full", msgs, keep_recent=1)) == ([0], [1, 2, 3, 4, 5, 6, 7], [8])
    with pytest.raises(UsageError, match="--keep-recent does not apply to dialogue, whose span keeps no number of "
                                         "recent messages"):
        build_span("dialogue", msgs, keep_recent=7)
    with pytest.raises(UsageError, match="truncate has no span layout"):
        build_span("truncate", msgs)


# ---- legal cut points and pairing -------------------------------------------------------------


def test_legal_cut_points_never_separate_a_call_from_its_results():
    msgs = [U(), A("a", "b"), T("a"), T("b"), A(text="x"), A("c"), T("c")]
    assert legal_cut_points(msgs) == [0, 1, 4, 5, 7]


def test_legal_cut_points_java_boundary_cases():
    # openjiuwen-spec §1.5 variant 2, Java test: [user, assistant(call-1), tool(call-1), assistant final]
    msgs = [U(), A("call-1"), T("call-1"), A(text="final")]
    cuts = legal_cut_points(msgs)
    assert 2 not in cuts  # cutting after index 1 would orphan the result
    assert cuts == [0, 1, 3, 4]


def test_index_tool_calls_orphans_unanswered_server_and_reused_ids():
    msgs = [
        T("ghost"),
        A("x"),
        T("x"),
        Message(role="assistant", tool_calls=(ToolCall("x", "bash", "{}"), ToolCall("ws", "web_search", "{}", type="server"))),
        T("x"),
        A("never"),
    ]
    idx = index_tool_calls(msgs)
    assert [(link.call_at, link.result_at) for link in idx.links] == [(1, 2), (3, 4)]
    assert idx.orphan_results == (0,)
    assert [(i, c.id) for i, c in idx.unanswered] == [(5, "never")]


def test_span_from_cuts_and_empty():
    span = Span.from_cuts(7, 2, 5)
    assert (span.prefix, span.body, span.tail, span.empty) == (range(0, 2), range(2, 5), range(5, 7), False)
    assert Span.from_cuts(3, 3, 3).empty and Span.from_cuts(0, 0, 0) == Span(range(0), range(0), range(0))


def test_a_compressor_without_keep_recent_or_unknown_is_an_error():
    assert keep_recent_default("truncate") is None
    with pytest.raises(UsageError) as info:
        build_span("no-such", [U()])
    assert str(info.value).startswith("unknown compressor 'no-such' — use one of: truncate, ")
    with pytest.raises(UsageError, match="^unknown compressor 'x'"):
        keep_recent_default("x")


# ---- properties on generated transcripts ------------------------------------------------------------


def _build(steps):
    messages: list[Message] = []
    pending: list[str] = []
    for step, (kind, calls, reuse, pick) in enumerate(steps):
        if kind == "user":
            messages.append(Message(role="user", content=f"request {step}"))
        elif kind == "internal":
            messages.append(Message(role="user", content="<system-reminder>note</system-reminder>"))
        elif kind == "assistant":
            ids = [f"c{step}_{k}" for k in range(calls)]
            if reuse and ids:  # real files reuse ids: pairing must take the nearest call
                ids[0] = "shared"
            messages.append(Message(role="assistant", content="x",
                                    tool_calls=tuple(ToolCall(i, "bash", "{}") for i in ids)))
            pending.extend(ids)
        elif pending:
            messages.append(Message(role="tool", content="ok", tool_call_ids=(pending.pop(pick % len(pending)),)))
    return messages


def transcripts():
    """Users, internal users, assistants with 0-3 calls whose results come later, some delayed."""
    step = st.tuples(st.sampled_from(["user", "internal", "assistant", "result", "result"]), st.integers(0, 3),
                     st.booleans(), st.integers(0, 99))
    return st.lists(step, max_size=30).map(_build)


def _crossing(messages, cut):
    return [link for link in index_tool_calls(messages).links if link.call_at < cut <= link.result_at]


@settings(max_examples=200, deadline=None, database=None)
@given(transcripts())
def test_legal_cut_points_are_exactly_the_cuts_no_pair_crosses(messages):
    cuts = legal_cut_points(messages)
    assert cuts[0] == 0 and cuts[-1] == len(messages) and cuts == sorted(set(cuts))
    legal = set(cuts)
    for cut in range(len(messages) + 1):
        assert (cut in legal) == (not _crossing(messages, cut))


@settings(max_examples=200, deadline=None, database=None)
@given(transcripts(), st.integers(min_value=0, max_value=8))
def test_every_span_tail_starts_at_a_legal_cut(messages, keep):
    for name in span_names():
        span = build_span(name, messages, keep_recent=None if keep_recent_default(name) is None else keep)
        assert span.prefix.start == 0
        assert span.prefix.stop == span.body.start and span.body.stop == span.tail.start
        assert span.tail.stop == len(messages) or (not span.tail and span.tail.start == len(messages))
        if span.body:
            assert not _crossing(messages, span.tail.start), name


@settings(max_examples=200, deadline=None, database=None)
@given(transcripts(), st.integers(min_value=0, max_value=8))
def test_adjusted_tail_only_grows_and_is_stable(messages, keep):
    got = adjust_keep_recent_for_tool_boundaries(messages, keep)
    assert adjust_keep_recent_for_tool_boundaries(messages, got) == got
    assert got >= keep or got == len(messages) or not messages
    if messages and keep:
        assert not _crossing(messages, max(len(messages) - got, 0))


_SETTINGS = settings(max_examples=200, deadline=None, database=None)


def _partitions(span, n):
    return span.prefix.start == 0 and span.prefix.stop == span.body.start and span.body.stop == span.tail.start \
        and span.tail.stop == n


@_SETTINGS
@given(transcripts(), st.integers(min_value=0, max_value=8))
def test_current_round_compresses_only_work_after_the_last_request(messages, keep):
    span, n, user = current_round_span(messages, keep_recent=keep), len(messages), last_real_user_index(messages)
    assert _partitions(span, n)
    if user is None:
        assert span.empty
        return
    assert span.body.start > user and span.body.start in legal_cut_points(messages)
    if span.body:
        assert len(span.tail) == adjust_keep_recent_for_tool_boundaries(messages, keep)


@_SETTINGS
@given(transcripts())
def test_dialogue_compresses_only_what_precedes_the_last_request(messages):
    span, n, user = dialogue_span(messages), len(messages), last_real_user_index(messages)
    assert _partitions(span, n) and not span.prefix
    if user is None:
        assert span.empty and span.tail == range(n)
    else:
        assert span.tail.start <= user and span.tail.start in legal_cut_points(messages)


@_SETTINGS
@given(transcripts(), st.integers(min_value=0, max_value=40))
def test_round_level_keeps_at_least_the_newest_n(messages, keep):
    span = round_level_span(messages, keep_recent=keep)
    assert _partitions(span, len(messages)) and not span.prefix
    assert len(span.tail) >= min(keep, len(messages)) and span.tail.start in legal_cut_points(messages)
