"""formats/claude_write.py: Claude Code lines generated from messages — the chain, blocks, results, losses."""

from __future__ import annotations

import uuid

import orjson
import pytest

from tcompact import __version__
from tcompact.formats import read_bytes
from tcompact.formats.claude_write import claude_message_body, claude_result_content, claude_session, json_object
from tcompact.model import Message, ToolCall, Transcript

NOW = "2026-01-01T00:00:00.000Z"
NAMESPACE = uuid.UUID("6f1d3c2a-9b1e-4c55-8a8e-2f4f7d0c9e11")
TRANSCRIPT = Transcript(id="main", kind="main", model="gpt-4o", messages=(
    Message(role="system", content="You are terse."),
    Message(role="user", content="Fix it"),
    Message(role="user", content="<system-reminder>cwd /repo</system-reminder>", internal=True),
    Message(role="assistant", content="On it.", tool_calls=(ToolCall("c1", "Bash", '{"command":"ls"}'),)),
    Message(role="tool", content="a.py", tool_call_ids=("c1",)),
    Message(role="developer", content="be careful"),
    Message(role="assistant", content="Done."),
))


def test_a_session_is_one_line_per_message_on_a_fresh_chain():
    lines, losses = claude_session(TRANSCRIPT, now=NOW, session="S1")
    assert losses == ["message 0 (system): Claude Code sessions have no system messages",
                      "message 5 (developer): Claude Code sessions have no developer messages"]
    docs = [orjson.loads(x) for x in lines]
    uuids = [str(uuid.uuid5(NAMESPACE, f"S1/{n}")) for n in (1, 2, 3, 4, 6)]  # numbered by message, stable
    assert [(d["uuid"], d["parentUuid"], d["type"], d.get("isMeta")) for d in docs] == [
        (uuids[0], None, "user", None), (uuids[1], uuids[0], "user", True), (uuids[2], uuids[1], "assistant", None),
        (uuids[3], uuids[2], "user", None), (uuids[4], uuids[3], "assistant", None)]
    assert {(d["sessionId"], d["timestamp"], d["version"], d["cwd"], d["isSidechain"], d["userType"]) for d in docs} == {
        ("S1", NOW, f"tcompact-{__version__}", "", False, "external")}
    assert docs[2]["message"] == {
        "id": "msg_" + uuids[2].replace("-", "")[:24], "type": "message", "role": "assistant", "model": "gpt-4o",
        "content": [{"type": "text", "text": "On it."}, {"type": "tool_use", "id": "c1", "name": "Bash",
                                                       "input": {"command": "ls"}}],
        "stop_reason": "tool_use", "stop_sequence": None}
    assert docs[4]["message"]["stop_reason"] == "end_turn"
    assert docs[3]["message"] == {"role": "user", "content": [{"tool_use_id": "c1", "type": "tool_result",
                                                               "content": "a.py"}]}
    assert claude_session(TRANSCRIPT, now=NOW, session="S1") == (lines, losses)  # deterministic


def test_the_generated_session_reads_back_as_the_messages():
    lines, _ = claude_session(TRANSCRIPT, now=NOW, session="S1")
    (back,) = read_bytes(b"".join(lines), "s.jsonl").transcripts
    kept = [m for m in TRANSCRIPT.messages if m.role not in ("system", "developer")]
    assert [(m.role, m.text, m.tool_calls, m.tool_call_ids, m.internal) for m in back.messages] == [
        (m.role, m.text, m.tool_calls, m.tool_call_ids, m.internal) for m in kept]
    assert back.model == "gpt-4o"


def test_a_result_of_several_calls_is_one_block_per_call():
    kind, body = claude_message_body(Message(role="tool", content="out", tool_call_ids=("a", "b"), is_error=True))
    assert (kind, body) == ("user", {"role": "user", "content": [
        {"tool_use_id": "a", "type": "tool_result", "content": "out", "is_error": True},
        {"tool_use_id": "b", "type": "tool_result", "content": "(same output as the result above)", "is_error": True}]})
    _, orphan = claude_message_body(Message(role="function", content="x"))
    assert orphan["content"] == [{"tool_use_id": "", "type": "tool_result", "content": "x"}]


@pytest.mark.parametrize(("part", "block"), [
    ({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
     {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}),
    ({"type": "image_url", "image_url": "https://example.com/a.png"},
     {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}),
    ({"type": "image_url", "image_url": None}, {"type": "image", "source": {"type": "url", "url": ""}}),
    ({"type": "text", "text": "kept"}, {"type": "text", "text": "kept"}),
    ({"type": "document", "source": {"x": 1}}, {"type": "document", "source": {"x": 1}}),
])
def test_content_parts_become_anthropic_blocks(part, block):
    assert claude_message_body(Message(role="user", content=(part,))) == ("user", {"role": "user", "content": [block]})
    assert claude_result_content(Message(role="tool", content=(part,))) == [block]


def test_message_bodies_of_each_role():
    assert claude_message_body(Message(role="user", content="hi")) == ("user", {"role": "user", "content": "hi"})
    assert claude_message_body(Message(role="user")) == ("user", {"role": "user", "content": []})
    kind, body = claude_message_body(Message(role="assistant", content=({"type": "text", "text": "a"},)), uid="12-34")
    assert (kind, body["id"], body["model"], body["content"]) == ("assistant", "msg_1234", "unknown",
                                                                  [{"type": "text", "text": "a"}])
    assert claude_result_content(Message(role="tool", content="plain")) == "plain"
    assert claude_result_content(Message(role="tool")) == []


@pytest.mark.parametrize(("arguments", "value"), [
    ('{"a": 1}', {"a": 1}), ("", {}), ("[1, 2]", {"input": [1, 2]}), ('"s"', {"input": "s"}),
    ("*** Begin Patch", {"input": "*** Begin Patch"}), ("null", {"input": None}),
])
def test_json_object_wraps_what_is_not_an_object(arguments, value):
    assert json_object(arguments) == value
