"""Chat JSONL and JSON documents, SWE-agent trajectories, tau-bench episodes; write-back and conversion."""

from __future__ import annotations

import orjson
import pytest
from conftest import call, jsonl, msg
from hypothesis import given, settings
from hypothesis import strategies as st

from tcompact.errors import InputError, UsageError
from tcompact.formats import ReadOptions, read_file, serialize
from tcompact.formats.chat import message_to_dict, parse_message

SESSION = [
    msg("system", "You are a careful coding agent."),
    msg("user", "Fix parser.py"),
    msg("assistant", None, tool_calls=[call("c1", "read_file", {"path": "parser.py"}),
                                       call("c2", "run_tests", {})]),
    msg("tool", "def parse(): pass", tool_call_id="c1"),
    msg("tool", "1 failed", tool_call_id="c2"),
    msg("assistant", "Fixed.", reasoning_content="It was an off-by-one.", finish_reason="stop",
        usage={"prompt_tokens": 900, "completion_tokens": 40}),
]


def test_chat_jsonl_reads_every_field(tmp_path):
    sf = read_file(jsonl(tmp_path / "c.jsonl", SESSION))
    assert sf.format == "chat"
    (t,) = sf.transcripts
    assert [m.role for m in t.messages] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert [(c.id, c.name, c.arguments) for c in t.messages[2].tool_calls] == [
        ("c1", "read_file", '{"path":"parser.py"}'), ("c2", "run_tests", "{}")]
    last = t.messages[5]
    assert [r.text for r in last.reasoning] == ["It was an off-by-one."]
    assert dict(last.extra) == {"finish_reason": "stop", "usage": {"prompt_tokens": 900, "completion_tokens": 40}}
    assert t.provider_usage == {"source": "chat", "requests": 1, "input_tokens": 900, "output_tokens": 40,
                                "last_context_tokens": 900, "last_line": 6}


def test_message_dict_round_trip_keeps_unknown_keys():
    d = msg("assistant", "x", tool_calls=[call("c", "f", {"a": 1})], reasoning_content="why", metadata={"k": [1]})
    assert message_to_dict(parse_message(d)) == d


def test_flattened_tool_calls_and_dict_arguments_are_read():
    m = parse_message({"role": "assistant", "content": "", "tool_calls": [
        {"id": "c", "type": "function", "name": "grep", "arguments": {"pattern": "x"}}]})
    assert (m.tool_calls[0].name, m.tool_calls[0].arguments) == ("grep", '{"pattern":"x"}')


def test_unchanged_write_back_is_byte_identical_even_with_odd_spacing(tmp_path):
    path = tmp_path / "c.jsonl"
    raw = b'{"role": "user",   "content": "hi"}\r\n\n{"type": "note", "text": "kept"}\n{"content":"yo","role":"assistant"}'
    path.write_bytes(raw)
    sf = read_file(path)
    assert dict(sf.unknown_types) == {"note": 1}
    assert serialize(sf.transcripts[0], "chat", source=sf).data == raw


def test_changed_messages_are_rewritten_the_rest_keeps_its_bytes(tmp_path):
    from dataclasses import replace

    path = jsonl(tmp_path / "c.jsonl", SESSION)
    sf = read_file(path)
    t = sf.transcripts[0]
    edited = replace(t, messages=(*t.messages[:3], replace(t.messages[3], content="[cut]"), *t.messages[4:]))
    lines = serialize(edited, "chat", source=sf).data.splitlines()
    original = path.read_bytes().splitlines()
    assert lines[:3] == original[:3] and lines[4:] == original[4:]
    assert orjson.loads(lines[3]) == {"role": "tool", "content": "[cut]", "tool_call_id": "c1"}


@pytest.mark.parametrize("shape", ["array", "object"])
def test_json_documents(tmp_path, shape):
    doc = SESSION if shape == "array" else {"model": "gpt-4o", "messages": SESSION}
    path = tmp_path / "c.json"
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    sf = read_file(path)
    assert (sf.format, len(sf.transcripts[0].messages), sf.meta["document"]) == ("chat", 6, True)
    assert sf.transcripts[0].model == (None if shape == "array" else "gpt-4o")
    out = serialize(sf.transcripts[0], "chat", source=sf).data
    assert [orjson.loads(x) for x in out.splitlines()] == SESSION


def test_jsonl_of_message_lists_gives_one_episode_per_line(tmp_path):
    sf = read_file(jsonl(tmp_path / "e.jsonl", [{"messages": SESSION[:2]}, {"messages": SESSION}]))
    assert [(t.id, t.kind, len(t.messages)) for t in sf.transcripts] == [("line-1", "episode", 2),
                                                                         ("line-2", "episode", 6)]


def test_compacting_one_episode_rewrites_its_line_only(tmp_path):
    # issue 13 item 3: the compacted episode was written as flat lines followed by both original
    # episode lines, so the file read back as three transcripts, the original among them
    from typer.testing import CliRunner

    from tcompact.app import app

    big = "".join(f"collected item {i}\n" for i in range(400))
    episode = [msg("user", "run"), msg("assistant", "", tool_calls=[{"id": "c1", "name": "bash", "arguments": {}}]),
               msg("tool", big, tool_call_id="c1"), msg("assistant", "ok")]
    first = b'{"id": "ep1", "messages": [{"role": "user", "content": "hi"}]}\n'
    src = jsonl(tmp_path / "e.jsonl", [first, {"id": "ep2", "messages": episode, "reward": 1}])
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["compact", str(src), "-c", "truncate", "--now", "--transcript", "line-2",
                                      "-o", str(out), "--set", "max_lines=20"])
    assert result.exit_code == 0, result.stderr
    line1, line2 = out.read_bytes().splitlines(keepends=True)
    assert line1 == first
    cut = orjson.loads(line2)
    assert list(cut) == ["id", "messages", "reward"] and (cut["id"], cut["reward"]) == ("ep2", 1)
    assert cut["messages"][:2] + cut["messages"][3:] == episode[:2] + episode[3:]  # unchanged items as they were
    assert cut["messages"][2]["content"].startswith("collected item 0\n")
    assert (f"[... tcompact truncated 380 lines / 7,126 characters of 7,490 here; the full output is in {src}:2 ...]"
            in cut["messages"][2]["content"])
    back = read_file(out)
    assert [(t.id, len(t.messages)) for t in back.transcripts] == [("line-1", 1), ("line-2", 4)]
    assert serialize(back.transcript("line-2"), "chat", source=back).data == out.read_bytes()  # unchanged: as is


def test_swe_agent_trajectory(tmp_path):
    history = [
        {"role": "system", "content": "SETTING: you are an autonomous programmer", "agent": "main",
         "message_type": "system_prompt"},
        {"role": "user", "content": [{"type": "text", "text": "Solve the issue"}], "agent": "main"},
        {"role": "assistant", "content": "ls", "thought": "look", "action": "ls",
         "tool_calls": [call("call_a", "bash", {"command": "ls"})]},
        {"role": "tool", "content": "setup.py", "tool_call_ids": ["call_a"]},
    ]
    doc = {"trajectory": [], "history": history, "replay_config": orjson.dumps({"agent": {"model": {"name": "gpt-4o"}}}).decode(),
           "info": {"model_stats": "{'instance_cost': 0.1, 'tokens_sent': 1200, 'tokens_received': 80, 'api_calls': 2}"}}
    path = tmp_path / "x.traj"
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    sf = read_file(path)
    (t,) = sf.transcripts
    assert (sf.format, t.model, len(t.messages)) == ("swe-agent", "gpt-4o", 4)
    assert t.messages[3].tool_call_ids == ("call_a",)
    assert dict(t.messages[2].extra) == {"thought": "look", "action": "ls"}
    assert t.provider_usage == {"source": "swe-agent", "requests": 2, "input_tokens": 1200, "output_tokens": 80,
                                "last_context_tokens": None}
    with pytest.raises(UsageError, match="cannot write swe-agent"):
        serialize(t, "swe-agent", source=sf)


def test_tau_bench_episodes(tmp_path):
    episodes = [{"task_id": 7, "reward": 1.0, "trial": 0, "info": {}, "traj": SESSION[:2]},
                {"task_id": 8, "reward": 0.0, "trial": 0, "info": {}, "traj": SESSION}]
    path = tmp_path / "results.json"
    path.write_bytes(orjson.dumps(episodes))
    sf = read_file(path)
    assert sf.format == "tau-bench"
    assert [(t.id, t.kind, len(t.messages), t.notes) for t in sf.transcripts] == [
        ("task-7-trial-0", "episode", 2, ("reward 1.0",)), ("task-8-trial-0", "episode", 6, ("reward 0.0",))]
    assert sf.transcript("task-8-trial-0").messages[1].text == "Fix parser.py"
    with pytest.raises(UsageError, match="no transcript 'task-9'"):
        sf.transcript("task-9")


def test_bad_message_inside_a_document_is_named_by_its_position(tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(orjson.dumps([SESSION[0], {"role": "user", "content": 5}]))
    with pytest.raises(InputError) as err:
        read_file(path)
    assert str(err.value) == (f'{path}: messages[1]: "content" must be a string, a list of parts or null, not int '
                              "— fix the file, or pass --format if it is another format")


def test_format_override(tmp_path):
    path = jsonl(tmp_path / "c.jsonl", SESSION)
    with pytest.raises(InputError, match="no messages found in this codex file"):
        read_file(path, ReadOptions(format="codex"))
    with pytest.raises(UsageError, match="JSON Lines"):
        read_file(path, ReadOptions(format="swe-agent"))


CONVERSION_CASES = ["chat", "claude-code", "codex"]


@pytest.mark.parametrize("target", CONVERSION_CASES)
def test_conversion_keeps_every_message_and_token(tmp_path, target):
    from tcompact.inspection import InspectOptions, inspect_file

    source = jsonl(tmp_path / "c.jsonl", SESSION[1:])  # Claude Code has no system messages
    sf = read_file(source)
    out = tmp_path / f"out.{target}.jsonl"
    out.write_bytes(serialize(sf.transcripts[0], target, source=sf, now="2026-01-01T00:00:00.000Z").data)
    again = read_file(out)
    assert again.format == target
    a, b = sf.transcripts[0].messages, again.transcripts[0].messages
    assert [(m.role, m.text, tuple(c.id for c in m.tool_calls), m.tool_call_ids) for m in a] == [
        (m.role, m.text, tuple(c.id for c in m.tool_calls), m.tool_call_ids) for m in b]
    before = inspect_file(source, InspectOptions())["transcripts"][0]["tokens"]["total"]
    after = inspect_file(out, InspectOptions())["transcripts"][0]["tokens"]["total"]
    reasoning = 0 if target != "claude-code" else len(sf.transcripts[0].messages[4].reasoning[0].text)
    assert after == before or (target == "claude-code" and after < before and reasoning)


def test_claude_code_cannot_hold_system_messages(tmp_path):
    sf = read_file(jsonl(tmp_path / "c.jsonl", SESSION))
    rendered = serialize(sf.transcripts[0], "claude-code", source=sf, now="2026-01-01T00:00:00.000Z")
    assert rendered.losses == ("message 0 (system): Claude Code sessions have no system messages",)


@pytest.mark.parametrize(("d", "error"), [
    ({"content": "x"}, '"role" must be a non-empty string'),
    ({"role": ""}, '"role" must be a non-empty string'),
    ({"role": 1}, '"role" must be a non-empty string'),
    ({"role": "user", "content": 5}, '"content" must be a string, a list of parts or null, not int'),
    ({"role": "user", "content": {"text": "x"}}, '"content" must be a string, a list of parts or null, not dict'),
    ({"role": "user", "content": ["x"]}, '"content" parts must be objects'),
    ({"role": "assistant", "tool_calls": {}}, '"tool_calls" must be a list'),
    ({"role": "assistant", "tool_calls": [call("c", "f", {}), "x"]}, '"tool_calls"[1] must be an object'),
    ({"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}, '"tool_calls"[0] has no function name'),
    ({"role": "user", "name": 3}, '"name" must be a string'),
    ({"role": "assistant", "reasoning_content": ["x"]}, '"reasoning_content" must be a string'),
    ({"role": "tool", "tool_call_id": 3}, '"tool_call_id" must be a string'),
    ({"role": "tool", "tool_call_ids": "c1"}, '"tool_call_ids" must be a list of strings'),
    ({"role": "tool", "tool_call_ids": ["c1", 2]}, '"tool_call_ids" must be a list of strings'),
])
def test_a_message_of_the_wrong_shape_names_the_key(d, error):
    from tcompact.formats.chat import ShapeError

    with pytest.raises(ShapeError) as exc:
        parse_message(d)
    assert str(exc.value) == error


def test_parse_message_fills_what_a_call_leaves_out():
    m = parse_message({"role": "assistant", "tool_calls": [{"function": {"name": "f"}},
                                                             {"name": "g", "arguments": [1], "type": None, "id": 7}]})
    assert [(c.id, c.name, c.arguments, c.type) for c in m.tool_calls] == [("call_0", "f", "", "function"),
                                                                         ("7", "g", "[1]", "function")]
    tool = parse_message({"role": "tool", "tool_call_id": "a", "tool_call_ids": ["a", "b", ""]})
    assert tool.tool_call_ids == ("a", "b", "")  # the single id first, once; an empty id is kept
    assert parse_message({"role": "assistant", "content": "x", "reasoning_content": ""}).reasoning == ()


@pytest.mark.parametrize(("record", "is_chat"), [
    ({"role": "user", "content": "x"}, True),
    ({"messages": []}, True),
    ({"role": "user", "type": "message"}, False),  # Claude and Codex lines carry a "type"
    ({"messages": [], "type": "x"}, False),
    ({"role": 3}, False),
    ({"messages": "x"}, False),
    ({}, False),
])
def test_sniff(record, is_chat):
    from tcompact.formats.chat import sniff

    assert sniff(record) is is_chat


def test_message_to_dict_writes_openai_shapes():
    from tcompact.model import Message, Reasoning, ToolCall

    m = Message(role="assistant", content=({"type": "text", "text": "a"},),
                tool_calls=(ToolCall("w", "web_search", "{}", type="server"), ToolCall("p", "apply_patch", "x", "custom")),
                reasoning=(Reasoning(text="one"), Reasoning(encrypted_chars=40), Reasoning(text="two")),
                extra={"role": "ignored", "usage": {"prompt_tokens": 1}})
    assert message_to_dict(m) == {
        "role": "assistant", "content": [{"type": "text", "text": "a"}],
        "tool_calls": [{"id": "w", "type": "function", "function": {"name": "web_search", "arguments": "{}"}},
                       {"id": "p", "type": "custom", "function": {"name": "apply_patch", "arguments": "x"}}],
        "reasoning_content": "one\n\ntwo", "usage": {"prompt_tokens": 1}}
    assert message_to_dict(Message(role="tool", content="r", tool_call_ids=("a", "b"), name="t")) == {
        "role": "tool", "content": "r", "name": "t", "tool_call_ids": ["a", "b"]}


def test_records_that_are_no_message_are_counted_by_kind_and_kept(tmp_path):
    lines = [msg("user", "a"), {"type": "note"}, {"foo": 1}, {"type": 3}, {"type": ""}, {"type": "note"},
             {"id": "x", "messages": [msg("user", "e")]}]
    path = jsonl(tmp_path / "c.jsonl", lines)
    sf = read_file(path)
    assert dict(sf.unknown_types) == {"note": 2, "(record without role)": 2, '("type" is int)': 1}
    assert [(t.id, t.kind, [m.text for m in t.messages]) for t in sf.transcripts] == [
        ("main", "main", ["a"]), ("line-7", "episode", ["e"])]
    assert serialize(sf.transcripts[0], "chat", source=sf).data == path.read_bytes()
    assert serialize(sf.transcripts[1], "chat", source=sf).data == path.read_bytes()


def test_a_skipped_message_line_is_written_back_as_it_was(tmp_path):
    from dataclasses import replace

    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"role":"user","content":"a"}\n{"role":"user","content":5}\n{"role":"assistant","content":"b"}\n')
    sf = read_file(path, ReadOptions(skip_bad_lines=True))
    assert sf.skipped == ((2, 'chat message: "content" must be a string, a list of parts or null, not int'),)
    t = sf.transcripts[0]
    changed = replace(t, messages=(t.messages[0], replace(t.messages[1], content="c")))
    assert serialize(changed, "chat", source=sf).data == (b'{"role":"user","content":"a"}\n{"role":"user","content":5}\n'
                                                      b'{"role":"assistant","content":"c"}\n')


def test_an_item_skipped_inside_an_episode_stays_when_the_episode_is_rewritten(tmp_path):
    from dataclasses import replace

    path = tmp_path / "e.jsonl"
    path.write_bytes(b'{"messages":[{"role":"user","content":"a"}]}\r\n'
                     b'{"messages":[{"role":"user","content":"q"},{"role":"user","content":5},'
                     b'{"role":"assistant","content":"c"}],"reward":1}\r\n')
    sf = read_file(path, ReadOptions(skip_bad_lines=True))
    assert sf.skipped == ((2, 'messages[1]: "content" must be a string, a list of parts or null, not int'),)
    t = sf.transcript("line-2")
    assert [(m.text, dict(m.meta)) for m in t.messages] == [("q", {"item": 0, "line": 2}), ("c", {"item": 2, "line": 2})]
    changed = replace(t, messages=(t.messages[0], replace(t.messages[1], content="cut")))
    assert serialize(changed, "chat", source=sf).data == (
        b'{"messages":[{"role":"user","content":"a"}]}\r\n'
        b'{"messages":[{"role":"user","content":"q"},{"role":"user","content":5},'
        b'{"role":"assistant","content":"cut"}],"reward":1}\r\n')


@pytest.mark.parametrize(("messages", "usage"), [
    ([msg("assistant", "a", usage={"prompt_tokens": 10, "completion_tokens": 2}),
      msg("assistant", "b", usage_metadata={"input_tokens": 30, "output_tokens": 4}, usage={"prompt_tokens": 1})],
     {"source": "chat", "requests": 2, "input_tokens": 40, "output_tokens": 6, "last_context_tokens": 30,
      "last_line": 2}),
    ([msg("assistant", "a", usage={"prompt_tokens": 0, "completion_tokens": 0}),  # no figures: not a request
      msg("user", "b", usage={"prompt_tokens": 5, "completion_tokens": 5}),  # only replies are requests
      msg("assistant", "c", usage={"prompt_tokens": "5", "completion_tokens": 5}),
      msg("assistant", "d", usage=[1])], None),
])
def test_provider_usage_of_chat_replies(tmp_path, messages, usage):
    sf = read_file(jsonl(tmp_path / "u.jsonl", [msg("user", "q"), *messages]))
    usage = usage if usage is None else {**usage, "last_line": usage["last_line"] + 1}
    assert sf.transcripts[0].provider_usage == usage


@pytest.mark.parametrize("target", ["chat", "claude-code", "codex"])
def test_a_lone_surrogate_in_a_written_message_still_reads_back(target):
    # parse_json turns lone surrogates into U+FFFD, but a summariser's reply can hold one: the line written
    # must be UTF-8 that tcompact (and every JSON reader) can read again
    from tcompact.formats import read_bytes
    from tcompact.formats.chat_write import dumps_line
    from tcompact.model import Message, Transcript

    assert dumps_line({"a\ud800": "café \udfff"}) == b'{"a\\ud800":"caf\xc3\xa9 \\udfff"}\n'
    t = Transcript(id="main", kind="main", messages=(Message(role="user", content="café \ud800 ok"),))
    data = serialize(t, target, now="2026-01-01T00:00:00.000Z").data
    data.decode("utf-8")
    assert [m.text for m in read_bytes(data, "back.jsonl").transcripts[0].messages] == ["café \ufffd ok"]


_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
_MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant", "tool"]),
     "content": st.one_of(st.none(), _TEXT, st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": _TEXT}),
                                                     max_size=2))},
    optional={"name": _TEXT, "tool_call_id": _TEXT, "reasoning_content": _TEXT.filter(bool),
              "tool_calls": st.lists(st.builds(lambda i, n, a: call(i, n, a), _TEXT, _TEXT.filter(bool), _TEXT),
                                     min_size=1, max_size=2),
              "metadata": st.dictionaries(_TEXT, st.integers(-5, 5), max_size=2)})


@settings(max_examples=80, deadline=None)
@given(_MESSAGE)
def test_parse_then_to_dict_is_the_identity_on_chat_messages(d):
    assert message_to_dict(parse_message(d)) == d


@settings(max_examples=40, deadline=None)
@given(st.lists(_MESSAGE, min_size=1, max_size=6),
       st.lists(st.sampled_from([b"\n", b"\r\n", b" \n", b"\n\n"]), min_size=6, max_size=6), st.booleans())
def test_reading_and_writing_back_an_unchanged_chat_file_gives_its_bytes(messages, ends, indent):
    from tcompact.formats import read_bytes

    lines = [orjson.dumps(d).replace(b'":', b'": ') if indent else orjson.dumps(d) for d in messages]
    data = b"".join(line + end for line, end in zip(lines, ends))
    sf = read_bytes(data, "g.jsonl")
    assert serialize(sf.transcripts[0], "chat", source=sf).data == data
