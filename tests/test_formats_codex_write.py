"""formats/codex_write.py: Codex rollout lines generated from messages — session_meta, items, call kinds."""

from __future__ import annotations

import orjson
import pytest

from tcompact import __version__
from tcompact.formats import read_bytes
from tcompact.formats.codex_write import codex_call_kinds, codex_items, codex_rollout
from tcompact.model import Message, Reasoning, ToolCall, Transcript

NOW = "2026-01-01T00:00:00.000Z"
CALLS = (ToolCall("f1", "shell", '{"command":["ls"]}'), ToolCall("p1", "apply_patch", "*** Begin Patch", "custom"),
         ToolCall("l1", "local_shell", '{"type":"exec"}', "local_shell"),
         ToolCall("w1", "web_search", '{"query":"x"}', "server"))
TRANSCRIPT = Transcript(id="main", kind="main", model="gpt-5-codex", messages=(
    Message(role="system", content="You are Codex."),
    Message(role="user", content="run it"),
    Message(role="assistant", content="Running.", tool_calls=CALLS,
            reasoning=(Reasoning(text="plan"), Reasoning(encrypted_chars=99), Reasoning(text="more"))),
    Message(role="tool", content="a.py", tool_call_ids=("f1",)),
    Message(role="tool", content="Success.", tool_call_ids=("p1",)),
    Message(role="tool", content=({"type": "text", "text": "out"},), tool_call_ids=("l1",)),
))


def test_a_rollout_opens_with_session_meta_and_the_model():
    lines, losses = codex_rollout(TRANSCRIPT, now=NOW, session="S1")
    docs = [orjson.loads(x) for x in lines]
    assert losses == []
    assert docs[0] == {"timestamp": NOW, "type": "session_meta", "payload": {
        "id": "S1", "timestamp": NOW, "cwd": "", "originator": "tcompact", "cli_version": __version__,
        "source": "exec", "base_instructions": {"text": "You are Codex."}}}
    assert docs[1] == {"timestamp": NOW, "type": "turn_context", "payload": {"cwd": "", "model": "gpt-5-codex"}}
    assert {(d["timestamp"], d["type"]) for d in docs[2:]} == {(NOW, "response_item")}
    assert [d["payload"]["type"] for d in docs[2:]] == [
        "message", "reasoning", "reasoning", "message", "function_call", "custom_tool_call", "local_shell_call",
        "web_search_call", "function_call_output", "custom_tool_call_output", "function_call_output"]


def test_without_a_system_prompt_or_a_model_there_is_neither():
    t = Transcript(id="main", kind="main", messages=(Message(role="user", content="hi"),))
    lines, _ = codex_rollout(t, now=NOW, session="S2")
    assert [orjson.loads(x)["type"] for x in lines] == ["session_meta", "response_item"]
    assert "base_instructions" not in orjson.loads(lines[0])["payload"]


def test_the_generated_rollout_reads_back_as_the_messages():
    lines, _ = codex_rollout(TRANSCRIPT, now=NOW, session="S1")
    (back,) = read_bytes(b"".join(lines), "r.jsonl").transcripts
    assert back.model == "gpt-5-codex"
    assert [(m.role, m.text, m.tool_call_ids) for m in back.messages] == [
        (m.role, m.text, m.tool_call_ids) for m in TRANSCRIPT.messages]
    # a web search call has no call id in a rollout (Codex runs it, no result names it): its place names it
    assert back.messages[2].tool_calls == (*CALLS[:3], ToolCall("web_search_call_3", "web_search", '{"query":"x"}',
                                                                "server"))
    assert [r.text for r in back.messages[2].reasoning] == ["plan", "more"]  # encrypted reasoning cannot be made


def test_items_of_an_assistant_message():
    kinds = codex_call_kinds(TRANSCRIPT.messages)
    assert kinds == {"f1": "function", "p1": "custom", "l1": "local_shell"}  # a server call has no result
    assert codex_items(TRANSCRIPT.messages[2], kinds) == [
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "plan"}], "content": None,
         "encrypted_content": None},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "more"}], "content": None,
         "encrypted_content": None},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Running."}]},
        {"type": "function_call", "name": "shell", "arguments": '{"command":["ls"]}', "call_id": "f1"},
        {"type": "custom_tool_call", "status": "completed", "call_id": "p1", "name": "apply_patch",
         "input": "*** Begin Patch"},
        {"type": "local_shell_call", "call_id": "l1", "status": "completed", "action": {"type": "exec"}},
        {"type": "web_search_call", "status": "completed", "action": {"query": "x"}}]
    assert codex_items(Message(role="assistant", content=""), {}) == []


def test_items_of_results_and_of_other_roles():
    kinds = {"p1": "custom"}
    assert codex_items(Message(role="tool", content="ok", tool_call_ids=("p1", "f9")), kinds) == [
        {"type": "custom_tool_call_output", "call_id": "p1", "output": "ok"},
        {"type": "custom_tool_call_output", "call_id": "f9", "output": "ok"}]  # the kind of the first call
    assert codex_items(Message(role="function", content=None), kinds) == [
        {"type": "function_call_output", "call_id": "", "output": []}]
    level = Message(role="user", content="[summary]", extra={"metadata": {"compress_level": 1}})
    assert codex_items(level, {}) == [{"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "[summary]"}], "metadata": {"compress_level": 1}}]
    assert codex_items(Message(role="developer", content=None), {}) == [{"type": "message", "role": "developer",
                                                                         "content": []}]


@pytest.mark.parametrize(("part", "item"), [
    ({"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
     {"type": "input_image", "image_url": "data:image/png;base64,AA"}),
    ({"type": "image_url", "image_url": "https://example.com/a.png"},
     {"type": "input_image", "image_url": "https://example.com/a.png"}),
    ({"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "BB"}},
     {"type": "input_image", "image_url": "data:image/jpeg;base64,BB"}),
    ({"type": "image", "source": {"type": "url", "url": "https://example.com/b.png"}},
     {"type": "input_image", "image_url": "https://example.com/b.png"}),
    ({"type": "image", "source": {"data": "CC"}}, {"type": "input_image", "image_url": "data:image/png;base64,CC"}),
    ({"type": "text", "text": "t"}, {"type": "input_text", "text": "t"}),
    ({"type": "refusal", "refusal": "no"}, {"type": "refusal", "refusal": "no"}),
])
def test_content_parts_become_codex_items(part, item):
    assert codex_items(Message(role="user", content=(part,)), {}) == [{"type": "message", "role": "user",
                                                                       "content": [item]}]
