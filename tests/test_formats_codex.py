"""Codex rollouts: item grouping, injected context, event-only user turns, compactions, usage, write-back."""

from __future__ import annotations

import pytest
from codex_lines import TS, compacted_rollout, item, ln, message, rollout
from conftest import jsonl

from tcompact.errors import InputError
from tcompact.formats import ReadOptions, read_file, serialize
from tcompact.rounds import split_rounds

def test_items_group_into_assistant_turns(tmp_path):
    sf = read_file(jsonl(tmp_path / "r.jsonl", rollout()))
    assert sf.format == "codex"
    (t,) = sf.transcripts
    got = [(m.role, m.text, tuple((c.id, c.type) for c in m.tool_calls), m.tool_call_ids, m.is_error)
           for m in t.messages]
    assert got == [
        ("system", "You are Codex.", (), (), False),
        ("user", "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>", (), (), False),
        ("developer", "<permissions instructions>sandboxed</permissions instructions>", (), (), False),
        ("user", "run the tests", (), (), False),
        ("assistant", "", (("c1", "function"), ("c2", "custom")), (), False),
        ("tool", "Process exited with code 1\n2 failed", (), ("c1",), True),
        ("tool", "Success.", (), ("c2",), False),
        ("assistant", "Two tests fail.", (("web_search_call_0", "server"),), (), False),
    ]
    reasoning = t.messages[4].reasoning[0]
    assert (reasoning.text, reasoning.encrypted_chars, reasoning.kind) == ("**Plan** run pytest", 800, "summary")
    assert t.messages[4].source == (6, 7, 9)
    assert t.model == "gpt-5-codex"
    assert dict(sf.unknown_types) == {"world_state": 1}
    assert [(r.number, r.request) for r in split_rounds(t.messages)] == [(0, None), (1, 3)]


def test_provider_usage_from_token_count_events(tmp_path):
    (t,) = read_file(jsonl(tmp_path / "r.jsonl", rollout())).transcripts
    assert t.provider_usage == {
        "source": "codex",
        "events": 2,
        "requests": 2,
        "total": {"input_tokens": 2500, "cached_input_tokens": 1250, "output_tokens": 90,
                  "reasoning_output_tokens": 0, "total_tokens": 2590},
        "last": {"input_tokens": 1500, "cached_input_tokens": 750, "output_tokens": 40,
                 "reasoning_output_tokens": 0, "total_tokens": 1540},
        "model_context_window": 272000,
        "last_context_tokens": 1500,
        "last_line": 18,
    }


def test_no_token_count_means_no_provider_usage(tmp_path):
    records = [r for r in rollout() if r["payload"].get("type") != "token_count"]
    assert read_file(jsonl(tmp_path / "r.jsonl", records)).transcripts[0].provider_usage is None


def test_user_turns_recorded_only_as_events_become_messages(tmp_path):
    records = [r for r in rollout() if not (r["type"] == "response_item" and r["payload"].get("role") == "user")]
    (t,) = read_file(jsonl(tmp_path / "r.jsonl", records)).transcripts
    users = [(m.text, m.meta.get("from")) for m in t.messages if m.role == "user"]
    assert users == [("run the tests", "event_msg")]


def test_write_back_unchanged_is_byte_identical(tmp_path):
    path = jsonl(tmp_path / "r.jsonl", rollout())
    sf = read_file(path)
    assert serialize(sf.transcripts[0], "codex", source=sf).data == path.read_bytes()


def test_context_after_compaction_is_the_replacement_history(tmp_path):
    (t,) = read_file(jsonl(tmp_path / "r.jsonl", compacted_rollout())).transcripts
    assert [(m.role, m.text) for m in t.messages] == [
        ("system", "You are Codex."),
        ("user", "run the tests"),
        ("user", "Summary: two fail."),
        ("user", "now fix them"),
        ("assistant", "Fixed."),
    ]
    # the compacted line and the context_compacted event Codex writes with it are one compaction
    assert [(c.kind, c.index, c.line) for c in t.compactions] == [("codex_compacted", 1, 19)]


@pytest.mark.parametrize("with_replacement", [True, False])
def test_a_compaction_is_listed_once_whichever_of_its_two_lines_comes_first(tmp_path, with_replacement):
    records = compacted_rollout(with_replacement)
    records[18], records[19] = records[19], records[18]  # the event before the compacted line
    (t,) = read_file(jsonl(tmp_path / "r.jsonl", records)).transcripts
    assert [(c.kind, c.line) for c in t.compactions] == [("codex_compacted", 20)]
    (t,) = read_file(jsonl(tmp_path / "r.jsonl", records), ReadOptions(full_history=True)).transcripts
    assert [(c.kind, c.line) for c in t.compactions] == [("codex_compacted", 20)]


def test_context_compacted_events_of_their_own_are_compactions(tmp_path):
    # an event with no compacted line next to it (a rollout that recorded only the event), and two compactions
    # whose lines are apart: each is listed
    records = [*rollout(), ln("event_msg", {"type": "context_compacted"}), message("user", "go on"),
               *compacted_rollout()[len(rollout()):]]
    (t,) = read_file(jsonl(tmp_path / "r.jsonl", records)).transcripts
    assert [(c.kind, c.line) for c in t.compactions] == [("codex_context_compacted", 19), ("codex_compacted", 21)]


def test_full_history_reads_through_the_compaction(tmp_path):
    (t,) = read_file(jsonl(tmp_path / "r.jsonl", compacted_rollout()), ReadOptions(full_history=True)).transcripts
    assert len(t.messages) == 11
    assert (t.messages[8].text, t.messages[8].internal) == ("Summary: tests were run, two fail.", True)


def test_legacy_compaction_keeps_the_user_requests_and_the_summary(tmp_path):
    (t,) = read_file(jsonl(tmp_path / "r.jsonl", compacted_rollout(with_replacement=False))).transcripts
    assert [(m.role, m.text) for m in t.messages] == [
        ("system", "You are Codex."),
        ("user", "run the tests"),
        ("user", "Summary: tests were run, two fail."),
        ("user", "now fix them"),
        ("assistant", "Fixed."),
    ]


def test_structured_outputs_and_exit_codes():
    from tcompact.formats.codex_items import failed as _failed

    assert _failed('{"output":"boom","metadata":{"exit_code":2,"duration_seconds":0.1}}') is True
    assert _failed('{"output":"fine","metadata":{"exit_code":0}}') is False
    assert _failed("Chunk ID: 1\nProcess exited with code 0\nOutput:") is False
    assert _failed({"success": False}) is True
    assert _failed(None) is False


def test_payload_of_the_wrong_shape(tmp_path):
    records = rollout()
    records[6] = {"timestamp": TS, "type": "response_item", "payload": "oops"}
    path = jsonl(tmp_path / "r.jsonl", records)
    with pytest.raises(InputError, match=r":7: response_item line without a \"payload\" object"):
        read_file(path)


def test_every_kind_of_item_becomes_what_the_model_saw(tmp_path):
    records = [
        ln("session_meta", {"id": "x", "instructions": "Old-style prompt", "dynamic_tools": [{"name": "t"}]}),
        item({"type": "message", "role": "user", "content": "a plain string", "metadata": {"compress_level": 1}}),
        item({"type": "message", "role": "user", "content": [
            {"type": "input_image", "image_url": "data:image/png;base64,AA"}, {"type": "input_text", "text": "look"},
            {"type": "refusal", "refusal": "no"}, "junk"]}),
        item({"type": "local_shell_call", "call_id": "ls1", "status": "completed",
              "action": {"type": "exec", "command": ["ls"]}}),
        item({"type": "function_call", "name": "shell", "arguments": {"cmd": "x"}, "id": "fc_1"}),
        item({"type": "function_call", "name": "shell"}),
        item({"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "raw thought"}, 5]}),
        item({"type": "function_call_output", "call_id": "ls1", "output": [{"type": "input_text", "text": "a.py"}]}),
        item({"type": "function_call_output", "call_id": "fc_1", "output": {"content": "structured", "success": False}}),
        item({"type": "function_call_output", "output": None}),
        item({"type": "compaction", "encrypted_content": "E" * 50}),
        item({"type": "tool_search_call", "query": "x"}),
        item({"type": 5}),
    ]
    sf = read_file(jsonl(tmp_path / "r.jsonl", records))
    (t,) = sf.transcripts
    from tcompact.model import Message, Reasoning, ToolCall

    assert t.messages == (
        Message(role="system", content="Old-style prompt", internal=True, source=(0,)),
        Message(role="user", content=({"type": "text", "text": "a plain string"},), source=(1,),
                extra={"metadata": {"compress_level": 1}}),
        Message(role="user", content=({"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
                                      {"type": "text", "text": "look"}, {"type": "refusal", "refusal": "no"}),
                source=(2,)),
        Message(role="assistant", tool_calls=(
            ToolCall("ls1", "local_shell", '{"type":"exec","command":["ls"]}', "local_shell"),
            ToolCall("fc_1", "shell", '{"cmd":"x"}'), ToolCall("function_call_2", "shell", "")),
            reasoning=(Reasoning(text="raw thought", kind="reasoning"),), source=(3, 4, 5, 6)),
        Message(role="tool", content=({"type": "text", "text": "a.py"},), tool_call_ids=("ls1",), source=(7,)),
        Message(role="tool", content="structured", tool_call_ids=("fc_1",), is_error=True, source=(8,)),
        Message(role="tool", content="", tool_call_ids=("",), source=(9,)),
        Message(role="user", internal=True, reasoning=(Reasoning(encrypted_chars=50, kind="compaction"),),
                source=(10,)),
    )
    assert dict(sf.unknown_types) == {"response_item/tool_search_call": 1, "response_item/(int)": 1}
    assert dict(sf.meta) == {"id": "x", "document": False}


def test_base_instructions_come_first_wherever_session_meta_is(tmp_path):
    records = [message("user", "run the tests"),
               ln("compacted", {"message": "legacy summary"}),
               message("assistant", "ok", "output_text"),
               ln("session_meta", {"id": "x", "base_instructions": {"text": "You are Codex."}})]
    (t,) = read_file(jsonl(tmp_path / "r.jsonl", records)).transcripts
    assert [(m.role, m.text) for m in t.messages] == [("system", "You are Codex."), ("user", "run the tests"),
                                                      ("user", "legacy summary"), ("assistant", "ok")]
    assert [(c.kind, c.index) for c in t.compactions] == [("codex_compacted", 2)]


@pytest.mark.parametrize(("record", "error"), [
    ({"timestamp": TS, "type": "response_item", "payload": {"type": "message", "content": []}},
     'response_item message needs a "role" and a "content" list'),
    ({"timestamp": TS, "type": "response_item", "payload": {"type": "message", "role": "user", "content": 5}},
     'response_item message needs a "role" and a "content" list'),
    ({"timestamp": TS, "type": "event_msg", "payload": []}, 'event_msg line without a "payload" object'),
])
def test_items_of_the_wrong_shape_name_the_line(tmp_path, record, error):
    path = jsonl(tmp_path / "r.jsonl", [*rollout()[:5], record])
    with pytest.raises(InputError) as exc:
        read_file(path)
    assert str(exc.value) == (f"{path}:6: {error} — fix or remove that line, or pass --skip-bad-lines to read on "
                              "without it")
    sf = read_file(path, ReadOptions(skip_bad_lines=True))
    assert sf.skipped == ((6, error),)
    assert serialize(sf.transcripts[0], "codex", source=sf).data == path.read_bytes()


@pytest.mark.parametrize(("output", "failed"), [
    ("Exit code: 2\nWall time: 0.1 seconds", True),
    ("Process exited with code -1", True),
    ("Process exited with code 0\nall good", False),
    ("x" * 400 + "Process exited with code 1", False),  # only the head says how a command ended
    ('{"output":"x","metadata":{"exit_code":"1"}}', False),
    ('{"output":"x","metadata":[1]}', False),
    ("{not json} Process exited with code 3", True),
    ({"success": True}, False),
    ([{"type": "input_text", "text": "Process exited with code 1"}], False),
])
def test_which_outputs_are_errors(output, failed):
    from tcompact.formats.codex_items import failed as _failed

    assert _failed(output) is failed


def test_usage_figures_that_are_no_counts_count_nothing(tmp_path):
    records = [*rollout()[:5], ln("event_msg", {"type": "token_count", "info": {
        "total_token_usage": {"input_tokens": "9", "output_tokens": [1], "cached_input_tokens": -3,
                              "total_tokens": True}, "model_context_window": 0}}),
               ln("event_msg", {"type": "token_count", "info": None})]
    (t,) = read_file(jsonl(tmp_path / "r.jsonl", records)).transcripts
    zero = dict.fromkeys(("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens",
                          "total_tokens"), 0)
    assert t.provider_usage == {"source": "codex", "events": 1, "requests": 0, "total": zero, "last": None,
                                "model_context_window": None, "last_context_tokens": None, "last_line": None}


def test_an_event_only_user_turn_before_a_compaction_is_not_in_the_context(tmp_path):
    records = [ln("session_meta", {"id": "x"}), ln("event_msg", {"type": "user_message", "message": "old request"}),
               ln("compacted", {"message": "s", "replacement_history": [
                   {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "kept"}]}]}),
               ln("event_msg", {"type": "user_message", "message": "new request"})]
    (t,) = read_file(jsonl(tmp_path / "r.jsonl", records)).transcripts
    assert [(m.text, m.meta.get("from"), m.meta.get("replacement")) for m in t.messages] == [
        ("kept", None, 0), ("new request", "event_msg", None)]
