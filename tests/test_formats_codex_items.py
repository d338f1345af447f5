"""formats/codex_items.py: what the response items of a Codex rollout read as."""

from __future__ import annotations

from tcompact.formats.codex_items import assistant_item, failed, output_text, parts_of, text_of_parts
from tcompact.model import Reasoning, ToolCall


def _pending():
    return {"parts": [], "calls": [], "reasoning": [], "source": [], "lines": []}


def test_each_call_item_becomes_a_tool_call_of_its_kind():
    pending = _pending()
    assistant_item("function_call", {"call_id": "c1", "name": "shell", "arguments": '{"cmd": "ls"}'}, pending)
    assistant_item("custom_tool_call", {"call_id": "c2", "name": "apply_patch", "input": "*** Begin Patch"}, pending)
    assistant_item("local_shell_call", {"id": "c3", "action": {"command": ["ls"]}}, pending)
    assistant_item("web_search_call", {"action": {"query": "orjson"}}, pending)
    assert pending["calls"] == [
        ToolCall("c1", "shell", '{"cmd": "ls"}'),
        ToolCall("c2", "apply_patch", "*** Begin Patch", type="custom"),
        ToolCall("c3", "local_shell", '{"command":["ls"]}', type="local_shell"),
        ToolCall("web_search_call_3", "web_search", '{"query":"orjson"}', type="server"),  # no id: made from its place
    ]


def test_reasoning_keeps_its_summary_and_content_and_measures_what_is_encrypted():
    pending = _pending()
    assistant_item("reasoning", {"summary": [{"type": "summary_text", "text": "plan"}, "odd"],
                                 "content": [{"text": "step one"}], "encrypted_content": "x" * 40}, pending)
    assistant_item("reasoning", {"summary": [], "encrypted_content": None}, pending)
    assert pending["reasoning"] == [Reasoning(text="plan\nstep one", encrypted_chars=40, kind="summary"),
                                    Reasoning(text="", encrypted_chars=0, kind="reasoning")]


def test_content_becomes_chat_parts():
    image = {"type": "input_image", "image_url": "data:image/png;base64,AA"}
    other = {"type": "audio", "data": "…"}
    parts = parts_of([{"type": "input_text", "text": "hi"}, {"type": "output_text", "text": "yo"}, image, other, "x"])
    assert parts == ({"type": "text", "text": "hi"}, {"type": "text", "text": "yo"},
                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}, other)
    assert text_of_parts(parts) == "hi\nyo"
    assert parts_of("not a list") == ()


def test_an_output_that_is_no_string_is_read_as_text():
    assert output_text(None) == ""
    assert output_text({"content": "the log"}) == "the log"
    assert output_text({"exit": 1}) == '{"exit":1}'


def test_an_output_fails_by_its_exit_code_or_its_success_flag():
    assert failed("Process exited with code 2\nboom") is True
    assert failed("Exit code: 0\nfine") is False
    assert failed('{"output": "x", "metadata": {"exit_code": 1}}') is True
    assert failed({"success": False}) is True
    assert failed(["not", "text"]) is False
