"""formats/claude_messages.py: Claude Code lines to messages — blocks, results, compactions, model, usage."""

from __future__ import annotations

import pytest
from claude_lines import assistant, line, tool_result, usage, user

from tcompact.formats.claude_chain import line_of
from tcompact.formats.claude_messages import (
    assistant_message,
    blocks,
    compaction,
    model_of,
    provider_usage,
    user_messages,
)
from tcompact.model import Compaction, Message, Reasoning, Record, ToolCall


def records(*lines):
    return [Record(line=n + 1, data=d) for n, d in enumerate(lines)]


def test_blocks_are_the_list_content_of_the_message_or_nothing():
    assert blocks(user("u", None, [{"type": "text", "text": "a"}])) == [{"type": "text", "text": "a"}]
    assert blocks(user("u", None, "a string")) == []
    assert blocks({"type": "user", "message": "not an object"}) == []
    assert blocks({"type": "user"}) == []


def test_one_reply_over_several_lines_is_one_assistant_message():
    recs = records(
        assistant("a1", "u0", "m1", [{"type": "thinking", "thinking": "Plan it.", "signature": "s"},
                                     {"type": "redacted_thinking", "data": "x" * 12}], usage(1, 0, 0, 1)),
        assistant("a2", "a1", "m1", [{"type": "text", "text": "Looking."}, {"type": "text"},
                                     {"type": "image", "source": {"type": "base64", "data": "AAAA"}}], usage(1, 0, 0, 2)),
        assistant("a3", "a2", "m1", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
                                     {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"q": "x"}},
                                     {"type": "tool_use", "name": "Read"},
                                     {"type": "web_search_tool_result", "content": []}], usage(1, 0, 0, 3)),
        dict(assistant("a4", "a3", "m1", "a plain string", usage(1, 0, 0, 4))))
    m = assistant_message([0, 1, 2, 3], recs)
    assert m == Message(
        role="assistant",
        content=({"type": "text", "text": "Looking."}, {"type": "text", "text": ""},
                 {"type": "image", "source": {"type": "base64", "data": "AAAA"}},
                 {"type": "web_search_tool_result", "content": []}, {"type": "text", "text": "a plain string"}),
        tool_calls=(ToolCall("t1", "Bash", '{"command":"ls"}'), ToolCall("s1", "web_search", '{"q":"x"}', "server"),
                    ToolCall("", "Read", "{}")),
        reasoning=(Reasoning(text="Plan it.", kind="thinking"), Reasoning(encrypted_chars=12, kind="redacted")),
        source=(0, 1, 2, 3))
    assert dict(m.meta) == {"lines": [1, 2, 3, 4], "uuid": "a1", "message_id": "m1"}


def test_an_api_error_reply_is_internal():
    recs = records(assistant("a1", "u0", "m1", [{"type": "text", "text": "API Error: 529"}], usage(0, 0, 0, 0),
                             isApiErrorMessage=True))
    assert assistant_message([0], recs).internal is True


def test_a_user_line_splits_into_its_tool_results_and_the_rest():
    d = user("u1", "a0", [
        {"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
        {"type": "text", "text": "and also"},
        {"type": "tool_result", "tool_use_id": "t2", "is_error": True,
         "content": [{"type": "text", "text": "boom"}, {"type": "image", "source": {}}, "junk", {"type": "text"}]},
        {"type": "tool_result", "content": 42},
        {"type": "image", "source": {"type": "base64", "data": "AA"}}], metadata={"compress_level": 1})
    m = user_messages(3, Record(line=9, data=d))
    meta = {"lines": [9], "uuid": "u1"}
    assert [(x.role, x.content, x.tool_call_ids, x.is_error, x.source, dict(x.meta), dict(x.extra)) for x in m] == [
        ("tool", "ok", ("t1",), False, (3,), meta, {}),
        ("tool", ({"type": "text", "text": "boom"}, {"type": "image", "source": {}}, {"type": "text", "text": ""}),
         ("t2",), True, (3,), meta, {}),
        ("tool", "", ("",), False, (3,), meta, {}),
        ("user", ({"type": "text", "text": "and also"}, {"type": "image", "source": {"type": "base64", "data": "AA"}}),
         (), False, (3,), meta, {"metadata": {"compress_level": 1}})]


@pytest.mark.parametrize(("flags", "internal", "summary"), [
    ({}, False, False),
    ({"isMeta": True}, True, False),
    ({"isMeta": "yes"}, False, False),
    ({"isCompactSummary": True, "isVisibleInTranscriptOnly": True}, True, True),
    ({"isVisibleInTranscriptOnly": True}, True, False),
])
def test_injected_user_lines_are_internal(flags, internal, summary):
    (m,) = user_messages(0, Record(line=1, data=user("u1", None, "text", **flags)))
    assert (m.text, m.internal, m.meta.get("compact_summary", False)) == ("text", internal, summary)


def _line(d, line_no, index=0):
    return line_of(index, d["uuid"], d, "", line_no)


def test_a_compact_boundary_gives_its_trigger_and_size():
    boundary = line("system", "b1", None, None, subtype="compact_boundary",
                    compactMetadata={"trigger": "manual", "preTokens": 5400})
    assert compaction(_line(boundary, 7), 3) == Compaction(kind="claude_compact_boundary", index=3, line=7,
                                                           trigger="manual", pre_tokens=5400)
    odd = line("system", "b2", None, None, subtype="compact_boundary", compactMetadata={"trigger": 1, "preTokens": "9"})
    assert compaction(_line(odd, 8), None) == Compaction(kind="claude_compact_boundary", line=8)
    bare = line("system", "b3", None, None, subtype="compact_boundary", compactMetadata="x")
    assert compaction(_line(bare, 9), None) == Compaction(kind="claude_compact_boundary", line=9)


def test_the_model_is_that_of_the_last_real_reply():
    def reply(uuid, model):
        d = assistant(uuid, None, f"m_{uuid}", [{"type": "text", "text": "x"}], usage(1, 0, 0, 1))
        d["message"]["model"] = model
        return d

    replies = [_line(reply(u, model), n, n - 1) for n, (u, model) in enumerate(
        [("a1", "claude-opus-4"), ("a2", "claude-haiku-4"), ("a3", "<synthetic>"), ("a4", "")], 1)]
    assert model_of(replies) == "claude-haiku-4"
    assert model_of(replies[2:4]) is None
    assert model_of([]) is None


def usage_of(recs, chain_uuids):
    members = [line_of(i, r.data["uuid"], r.data, "", r.line) for i, r in enumerate(recs)]
    by_uuid = {ln.uuid: ln for ln in members}
    return provider_usage(members, [by_uuid[u] for u in chain_uuids])


def test_provider_usage_counts_each_reply_once_by_its_last_line():
    recs = records(
        user("u0", None, "q"),
        assistant("a1", "u0", "m1", [], usage(10, 100, 5, 1), request="r1"),
        assistant("a2", "a1", "m1", [], usage(10, 100, 5, 9), request="r1"),
        assistant("a3", "a2", "m1", [], usage(10, 100, 5, 3), request="r2"),  # same id, another request
        assistant("a4", "a3", "m2", [], {"input_tokens": True, "output_tokens": 2.5, "cache_read_input_tokens": 7},
                  request="r3"),  # figures that are no counts count nothing
        assistant("a5", "a4", "m3", [], "no usage", request="r4"),
        tool_result("u6", "a5", "t1", "ok", "2026-01-05T10:00:02.000Z"))
    assert usage_of(recs, ["u0", "a1", "a2", "a3", "a4", "a5", "u6"]) == {
        "source": "claude-code", "requests": 3, "lines": 4, "input_tokens": 20, "cache_read_input_tokens": 207,
        "cache_creation_input_tokens": 10, "output_tokens": 12, "last_context_tokens": None, "last_line": None}
    # the context is that of the last reply on the chain, as its last line reports it
    assert usage_of(recs, ["u0", "a1", "a2"])["last_context_tokens"] == 115
    assert usage_of(recs, ["u0", "a1", "a2"])["last_line"] == 3
    assert usage_of(records(user("u0", None, "q")), ["u0"]) is None
