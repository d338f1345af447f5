"""The value model (model.py): frozen messages and their derived views, choosing a transcript, and how tool
calls pair with their results (nearest earlier call of the id, server tools expecting none)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcompact.errors import UsageError
from tcompact.model import (
    EMPTY,
    IMAGE_PART_TYPES,
    Message,
    Reasoning,
    SourceFile,
    ToolCall,
    Transcript,
    index_tool_calls,
    text_of,
)

IMAGE = {"type": "image_url", "image_url": {"url": "https://example.invalid/a.png"}}


# ---- values ----------------------------------------------------------------------------------------


def test_values_are_frozen_and_changed_by_replace():
    m = Message(role="user", content="hi")
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.content = "changed"  # type: ignore[misc]
    changed = dataclasses.replace(m, content="changed")
    assert (m.content, changed.content, changed.role) == ("hi", "changed", "user")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ToolCall("c1", "bash").name = "x"  # type: ignore[misc]


def test_defaults():
    m = Message(role="assistant")
    assert (m.content, m.tool_calls, m.tool_call_ids, m.name, m.reasoning) == (None, (), (), None, ())
    assert (m.is_error, m.internal, m.source, m.meta, m.extra) == (False, False, (), EMPTY, EMPTY)
    assert ToolCall("c1", "bash") == ToolCall(id="c1", name="bash", arguments="", type="function")
    assert Reasoning() == Reasoning(text="", encrypted_chars=0, kind="thinking")
    with pytest.raises(TypeError):
        EMPTY["x"] = 1  # type: ignore[index]


def test_meta_is_left_out_of_equality_but_extra_is_not():
    # line numbers and ids differ between a transcript and its compacted copy; the message is the same
    assert Message(role="user", content="x", meta={"line": 3}) == Message(role="user", content="x", meta={"line": 9})
    assert Message(role="user", content="x", extra={"k": 1}) != Message(role="user", content="x", extra={"k": 2})


@pytest.mark.parametrize(("content", "text"), [
    (None, ""),
    ("", ""),
    ("plain 日本語 🎉", "plain 日本語 🎉"),
    ((), ""),
    (({"type": "text", "text": "one"}, {"type": "text", "text": "two"}), "one\ntwo"),
    (({"type": "input_text", "text": "codex"}, {"type": "output_text", "text": "parts"}), "codex\nparts"),
    (({"type": "text", "text": "a"}, IMAGE, {"type": "text", "text": "b"}), "a\nb"),
    # a text key on an image part is no text of the message; a part without a string text adds nothing
    (({"type": "image_url", "text": "alt"}, {"type": "text", "text": 5}, {"type": "tool_use"}), ""),
    (({"type": "text", "text": ""}, {"type": "text", "text": ""}), "\n"),
])
def test_text_joins_the_text_parts_by_newlines(content, text):
    assert text_of(content) == text
    assert Message(role="user", content=content).text == text


def test_text_of_accepts_a_list_as_readers_hand_it():
    assert text_of([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]) == "a\nb"


def test_tool_call_id_is_the_first_answered_id():
    assert Message(role="tool", tool_call_ids=("a", "b")).tool_call_id == "a"
    assert Message(role="tool").tool_call_id is None


def test_images_are_the_parts_of_the_three_image_shapes():
    codex = {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}
    anthropic = {"type": "image", "source": {"type": "base64", "data": "AAAA"}}
    text = {"type": "text", "text": "see"}
    odd = {"type": ["image"]}  # an unhashable type value is no image and no error
    m = Message(role="user", content=(text, IMAGE, codex, odd, anthropic))
    assert m.images == (IMAGE, codex, anthropic)
    assert Message(role="user", content="data:image/png;base64,AAAA").images == ()
    assert Message(role="user").images == ()
    assert IMAGE_PART_TYPES == {"image_url", "input_image", "image"}


# ---- choosing a transcript ------------------------------------------------------------------------


def _file(*transcripts: Transcript) -> SourceFile:
    return SourceFile(path="s.jsonl", format="claude-code", records=(), transcripts=transcripts)


def _t(tid: str, kind: str) -> Transcript:
    return Transcript(id=tid, kind=kind, messages=(Message(role="user", content=tid),))


def test_transcript_by_id_else_the_first_main_one_else_the_first():
    side, main, other = _t("side-1", "subagent"), _t("main", "main"), _t("ep-2", "episode")
    assert _file(side, main, other).transcript() is main
    assert _file(side, other).transcript() is side
    assert _file(side, main, other).transcript("ep-2") is other


def test_an_unknown_transcript_id_is_a_usage_error_listing_the_known_ones():
    with pytest.raises(UsageError) as info:
        _file(_t("main", "main"), _t("side-1", "subagent")).transcript("sid")
    err = info.value
    assert (err.what, err.path, err.line, err.hint) == ("no transcript 'sid' in this file", "s.jsonl", None,
                                                        "choose one of: main, side-1")
    assert str(err) == "s.jsonl: no transcript 'sid' in this file — choose one of: main, side-1"


def test_source_file_defaults():
    f = _file(_t("main", "main"))
    assert (f.skipped, f.unknown_types, f.meta) == ((), EMPTY, EMPTY)


# ---- pairing calls and results --------------------------------------------------------------------


def A(*ids: str, server: tuple[str, ...] = ()) -> Message:
    calls = tuple(ToolCall(i, "bash", "{}") for i in ids) + tuple(ToolCall(i, "web_search", "", "server") for i in server)
    return Message(role="assistant", tool_calls=calls)


def T(*ids: str) -> Message:
    return Message(role="tool", content="ok", tool_call_ids=ids)


def _pairs(messages):
    idx = index_tool_calls(messages)
    return ([(link.call_at, link.call.id, link.result_at) for link in idx.links], idx.orphan_results,
            [(i, c.id) for i, c in idx.unanswered])


@pytest.mark.parametrize(("messages", "expected"), [
    ([], ([], (), [])),
    ([Message(role="user", content="hi")], ([], (), [])),
    ([A("a", "b"), T("b"), T("a")], ([(0, "b", 1), (0, "a", 2)], (), [])),
    # a result before its call, and a call of the same message as the "result", are orphans
    ([T("a"), A("a"), T("a")], ([(1, "a", 2)], (0,), [])),
    ([Message(role="assistant", tool_calls=(ToolCall("a", "bash"),), tool_call_ids=("a",))], ([], (0,), [(0, "a")])),
    # a reused id goes to the latest call before the result; the earlier call stays unanswered
    ([A("x"), A("x"), T("x")], ([(1, "x", 2)], (), [(0, "x")])),
    ([A("x"), T("x"), A("x"), T("x")], ([(0, "x", 1), (2, "x", 3)], (), [])),
    # one call answered twice makes two links and is answered
    ([A("a"), T("a"), T("a")], ([(0, "a", 1), (0, "a", 2)], (), [])),
    # a result answering several ids is an orphan only when none of them has a call
    ([A("a"), T("a", "ghost")], ([(0, "a", 1)], (), [])),
    ([A("a"), T("ghost", "ghost2")], ([], (1,), [(0, "a")])),
    # server tools (web search) expect no result
    ([A("a", server=("ws",)), T("a")], ([(0, "a", 1)], (), [])),
    # two calls of one id in one message: the later one takes the result, and pairing is by message and id,
    # so neither is left unanswered
    ([Message(role="assistant", tool_calls=(ToolCall("d", "bash", "1"), ToolCall("d", "bash", "2"))), T("d")],
     ([(0, "d", 1)], (), [])),
])
def test_index_tool_calls(messages, expected):
    assert _pairs(messages) == expected


def test_a_link_carries_the_call_itself():
    (link,) = index_tool_calls([Message(role="assistant", tool_calls=(ToolCall("d", "bash", "1"),
                                                                      ToolCall("d", "grep", "2"))), T("d")]).links
    assert link.call == ToolCall("d", "grep", "2")


def test_a_list_changed_in_place_is_paired_again():
    call = Message(role="assistant", tool_calls=(ToolCall("d", "bash", "1"),))
    messages = [call, T("x")]
    assert index_tool_calls(messages).orphan_results == (1,)
    messages[1] = T("d")  # same list, same length, another message
    assert [(k.call_at, k.result_at) for k in index_tool_calls(messages).links] == [(0, 1)]
    messages.append(T("d"))
    assert [(k.call_at, k.result_at) for k in index_tool_calls(messages).links] == [(0, 1), (0, 2)]
    assert index_tool_calls(messages[:1]).unanswered == ((0, call.tool_calls[0]),)


_IDS = st.sampled_from(["a", "b", "c", "d"])
_CALLS = st.lists(st.tuples(_IDS, st.sampled_from(["function", "server"])), max_size=3).map(
    lambda calls: Message(role="assistant", tool_calls=tuple(ToolCall(i, "t", "", k) for i, k in calls)))
_RESULTS = st.lists(_IDS, min_size=1, max_size=2).map(lambda ids: T(*ids))


@settings(max_examples=200, deadline=None, database=None)
@given(st.lists(_CALLS | _RESULTS, max_size=14))
def test_every_result_pairs_with_the_latest_earlier_call_of_its_id(messages):
    idx = index_tool_calls(messages)
    expected_links, orphans, answered = [], [], set()
    for i, m in enumerate(messages):
        matched = False
        for cid in m.tool_call_ids:
            earlier = [(j, c) for j in range(i) for c in messages[j].tool_calls if c.id == cid]
            if earlier:
                j, c = earlier[-1]
                expected_links.append((j, c, i))
                answered.add((j, cid))
                matched = True
        if m.tool_call_ids and not matched:
            orphans.append(i)
    assert [(link.call_at, link.call, link.result_at) for link in idx.links] == expected_links
    assert idx.orphan_results == tuple(orphans)
    assert list(idx.unanswered) == [(i, c) for i, m in enumerate(messages) for c in m.tool_calls
                                    if c.type != "server" and (i, c.id) not in answered]
