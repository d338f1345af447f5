"""Rounds, real-user detection, span builders and legal cut points (openjiuwen-spec §1.4-1.5, §3-5, §11)."""

from __future__ import annotations

import pytest

from tcompact.model import Message, ToolCall, index_tool_calls
from tcompact.spans import (
    adjust_keep_recent_for_tool_boundaries,
    build_span,
    current_round_span,
    dialogue_span,
    legal_cut_points,
    round_level_span,
)


def U(text: str = "task", **kw) -> Message:
    return Message(role="user", content=text, **kw)


def A(*call_ids: str, text: str = "") -> Message:
    return Message(role="assistant", content=text, tool_calls=tuple(ToolCall(c, "bash", "{}") for c in call_ids))


def T(call_id: str) -> Message:
    return Message(role="tool", content="ok", tool_call_ids=(call_id,))


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
    from tcompact.errors import UsageError
    from tcompact.spans import keep_recent_default, span_names

    msgs = [Message(role="system", content="sys"), U("a"), A(text="b"), U("c"), A("t1"), T("t1"), A("t2"), T("t2"), A(text="end")]
    assert span_names() == ["current-round", "dialogue", "round-level", "full"]
    assert [keep_recent_default(n) for n in span_names()] == [0, None, 0, 0]
    assert {n: ranges(build_span(n, msgs)) for n in span_names()} == {
        "current-round": ([0, 1, 2, 3], [4, 5, 6, 7, 8], []), "dialogue": ([], [0, 1, 2], [3, 4, 5, 6, 7, 8]),
        "round-level": ([], [0, 1, 2, 3, 4, 5, 6, 7, 8], []), "full": ([0], [1, 2, 3, 4, 5, 6, 7, 8], [])}
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
