"""Claude Code sessions: the active chain, split replies, parallel results, compactions, sub-agents, usage."""

from __future__ import annotations

import orjson
import pytest
from claude_lines import SID, assistant, compacted_session, line, parallel_session, sidechain_session, user, usage
from conftest import jsonl

from tcompact.errors import InputError
from tcompact.formats import ReadOptions, read_file, serialize

def summary(messages):
    return [(m.role, m.text, tuple(c.id for c in m.tool_calls), m.tool_call_ids, m.is_error, m.internal)
            for m in messages]


def test_parallel_calls_become_one_reply_with_both_results(tmp_path):
    sf = read_file(jsonl(tmp_path / "s.jsonl", parallel_session()))
    assert sf.format == "claude-code"
    (main,) = sf.transcripts
    assert summary(main.messages) == [
        ("user", "Fix the bug in parser.py", (), (), False, False),
        ("assistant", "", ("t1", "t2"), (), False, False),
        ("tool", "def parse(): ...", (), ("t1",), False, False),
        ("tool", "1 failed", (), ("t2",), True, False),
        ("assistant", "The test fails; fixing.", (), (), False, False),
    ]
    reply = main.messages[1]
    assert [r.text for r in reply.reasoning] == ["Look at the parser."]
    assert reply.tool_calls[0].arguments == '{"file_path":"parser.py"}'
    assert reply.source == (2, 3, 4)
    assert main.messages[2].source == (5,)
    assert main.model == "claude-sonnet-4-5"
    assert main.compactions == ()


@pytest.mark.parametrize("request_id", ["req_A", None])
def test_provider_usage_keeps_the_last_line_of_each_reply(tmp_path, request_id):
    sf = read_file(jsonl(tmp_path / "s.jsonl", parallel_session(request_id)))
    assert sf.transcripts[0].provider_usage == {
        "source": "claude-code", "requests": 2, "lines": 4, "input_tokens": 13, "cache_read_input_tokens": 300,
        "cache_creation_input_tokens": 5, "output_tokens": 32, "last_context_tokens": 203,
        "last_line": 8,
    }


def test_write_back_unchanged_is_byte_identical(tmp_path):
    path = jsonl(tmp_path / "s.jsonl", parallel_session())
    sf = read_file(path)
    assert serialize(sf.transcripts[0], "claude-code", source=sf).data == path.read_bytes()


def test_active_chain_stops_at_the_compact_boundary(tmp_path):
    sf = read_file(jsonl(tmp_path / "c.jsonl", compacted_session()))
    (main,) = sf.transcripts
    assert [m.role for m in main.messages] == ["user", "user", "assistant", "tool", "tool", "assistant"]
    assert main.messages[0].internal and main.messages[0].meta["compact_summary"] is True
    assert [(c.kind, c.index, c.line, c.trigger, c.pre_tokens) for c in main.compactions] == [
        ("claude_compact_boundary", 0, 3, "auto", 1234)]


def test_full_history_follows_the_logical_parent(tmp_path):
    sf = read_file(jsonl(tmp_path / "c.jsonl", compacted_session()), ReadOptions(full_history=True))
    (main,) = sf.transcripts
    assert [m.text[:9] for m in main.messages[:4]] == ["old task", "old answe", "This sess", "Fix the b"]
    assert len(main.messages) == 8
    assert [(c.index, c.trigger) for c in main.compactions] == [(2, "auto")]


def test_newest_branch_wins_after_a_rewind(tmp_path):
    records = [
        user("u1", None, "hello", "2026-01-05T10:00:00.000Z"),
        assistant("a1", "u1", "msg_1", [{"type": "text", "text": "first try"}], usage(1, 0, 0, 1),
                  "2026-01-05T10:00:01.000Z"),
        assistant("a2", "u1", "msg_2", [{"type": "text", "text": "second try"}], usage(1, 0, 0, 1),
                  "2026-01-05T10:00:05.000Z", request="req2"),
    ]
    (main,) = read_file(jsonl(tmp_path / "b.jsonl", records)).transcripts
    assert [m.text for m in main.messages] == ["hello", "second try"]


def test_sidechains_are_their_own_transcripts_linked_to_the_task_call(tmp_path):
    sf = read_file(jsonl(tmp_path / "t.jsonl", sidechain_session()))
    main, sub = sf.transcripts
    assert (main.id, main.kind, sub.id, sub.kind) == ("main", "main", "sidechain-s1", "subagent")
    assert [m.text for m in main.messages] == ["Update the docs", "", "One package.json with 3 scripts.",
                                               "Docs updated."]
    assert [m.role for m in sub.messages] == ["user", "assistant", "tool", "assistant"]
    assert sub.parent_tool_call == "toolu_task"
    assert main.provider_usage["requests"] == 2 and sub.provider_usage["requests"] == 2
    assert sub.provider_usage["output_tokens"] == 11


def test_a_file_of_one_subagent_is_that_transcript(tmp_path):
    records = [dict(r, agentId="a1b2c3") for r in sidechain_session()[2:6]]
    sf = read_file(jsonl(tmp_path / "agent-a1b2c3.jsonl", records))
    (sub,) = sf.transcripts
    assert (sub.id, sub.kind, len(sub.messages)) == ("agent-a1b2c3", "subagent", 4)


def test_unknown_and_non_message_lines_are_kept(tmp_path):
    records = parallel_session() + [
        {"type": "file-history-snapshot", "messageId": "x", "snapshot": {}, "isSnapshotUpdate": False},
        {"type": "brand-new-kind", "uuid": "z9", "parentUuid": "a2", "sessionId": SID, "payload": [1, 2]},
    ]
    path = jsonl(tmp_path / "u.jsonl", records)
    sf = read_file(path)
    assert dict(sf.unknown_types) == {"brand-new-kind": 1}
    assert [m.role for m in sf.transcripts[0].messages][-1] == "assistant"
    assert serialize(sf.transcripts[0], "claude-code", source=sf).data == path.read_bytes()


def test_wrong_shape_is_an_error_naming_the_line(tmp_path):
    records = parallel_session()
    records[3] = dict(records[3], message="not an object")
    path = jsonl(tmp_path / "w.jsonl", records)
    with pytest.raises(InputError) as err:
        read_file(path)
    assert str(err.value) == (f'{path}:4: assistant line without a "message" object — fix or remove that line, '
                              "or pass --skip-bad-lines to read on without it")
    sf = read_file(path, ReadOptions(skip_bad_lines=True))
    assert sf.skipped == ((4, 'assistant line without a "message" object'),)
    assert [len(m.tool_calls) for m in sf.transcripts[0].messages if m.role == "assistant"] == [1, 0]


def progress_session():
    """Six messages, then a progress record dated a second after the last one and parented to message 2
    (seen in a real sub-agent file): it is not a message, so it must not end the context."""
    ts = [f"2026-01-05T10:00:0{n}.000Z" for n in range(6)]
    records = [user("m0", None, "Fix the parser", ts[0])]
    for n in range(1, 6):
        records.append(assistant(f"m{n}", f"m{n - 1}", f"msg_{n}", [{"type": "text", "text": f"step {n}"}],
                                 usage(1, 0, 0, 1), ts[n], request=f"req{n}") if n % 2 else
                       user(f"m{n}", f"m{n - 1}", f"go on {n}", ts[n]))
    records.append(line("progress", "p1", "m2", None, "2026-01-05T10:00:06.000Z", data={"type": "hook_progress"}))
    return records


def test_a_newer_progress_record_does_not_end_the_context(tmp_path):
    (main,) = read_file(jsonl(tmp_path / "p.jsonl", progress_session())).transcripts
    assert [m.text for m in main.messages] == ["Fix the parser", "step 1", "go on 2", "step 3", "go on 4", "step 5"]
    assert main.notes == ("1 record(s) that are not messages (progress) are newer than the last message but do "
                          "not end the context, which ends at line 6: lines 7",)


def test_a_newer_progress_record_in_a_real_session_cuts_nothing(tmp_path):
    from conftest import real_file

    src = real_file("drmaciver")
    lines = src.read_bytes().splitlines()
    parent = orjson.loads(lines[34])["uuid"]
    extra = line("progress", "p-late", parent, None, "2026-12-31T00:00:00.000Z", data={"type": "hook_progress"})
    (main,) = read_file(jsonl(tmp_path / "d.jsonl", [*lines, extra])).transcripts
    (before,) = read_file(src).transcripts
    assert len(main.messages) == len(before.messages) == 80
    assert main.notes[-1].startswith("1 record(s) that are not messages (progress) are newer than the last message")


def test_message_lines_left_outside_for_another_reason_are_named(tmp_path):
    records = [
        user("u1", None, "hello", "2026-01-05T10:00:00.000Z"),
        assistant("a1", "u1", "msg_1", [{"type": "text", "text": "hi"}], usage(1, 0, 0, 1), "2026-01-05T10:00:01.000Z"),
        user("x1", None, "a tree of its own", "2026-01-05T09:00:00.000Z"),  # not connected, older
        user("u1", None, "same uuid again", "2026-01-05T10:00:02.000Z"),
        {k: v for k, v in user("nouuid", "a1", "no uuid", "2026-01-05T10:00:03.000Z").items() if k != "uuid"},
    ]
    (main,) = read_file(jsonl(tmp_path / "s.jsonl", records)).transcripts
    assert [m.text for m in main.messages] == ["hello", "hi"]
    assert main.notes == (
        "1 message line(s) outside the active context, neither before a compaction nor on an abandoned branch "
        "(not connected to the chain that ends at line 2): lines 3",
        "line 4 (user) repeats the uuid of line 1 and is not read",
        "line 5 (user) has no uuid and is not read",
    )


def test_a_tie_on_the_newest_time_resumes_the_first_leaf_in_file_order(tmp_path):
    records = [
        user("u1", None, "hello", "2026-01-05T10:00:00.000Z"),
        assistant("a1", "u1", "msg_1", [{"type": "text", "text": "first"}], usage(1, 0, 0, 1), "2026-01-05T10:00:05.000Z"),
        assistant("a2", "u1", "msg_2", [{"type": "text", "text": "second"}], usage(1, 0, 0, 1),
                  "2026-01-05T10:00:05.000Z", request="req2"),
    ]
    (main,) = read_file(jsonl(tmp_path / "t.jsonl", records)).transcripts
    assert [m.text for m in main.messages] == ["hello", "first"]  # as Claude Code 2.0.76 picks it


@pytest.mark.parametrize(("record", "is_claude"), [
    ({"type": "user", "message": {}, "uuid": "x"}, True),
    ({"type": "assistant", "message": {}, "sessionId": "s"}, True),
    ({"type": "user", "message": {}}, False),  # neither uuid nor sessionId
    ({"type": "user", "message": "x", "uuid": "x"}, False),
    ({"type": "summary", "leafUuid": "x"}, True),
    ({"type": "file-history-snapshot", "messageId": "x"}, True),
    ({"type": "progress", "uuid": "x"}, True),
    ({"type": "summary"}, False),
    ({"type": "brand-new", "uuid": "x"}, False),  # unknown types are kept, but do not make a file Claude's
    ({"type": 3, "uuid": "x"}, False),
])
def test_sniff(record, is_claude):
    from tcompact.formats.claude_code import sniff

    assert sniff(record) is is_claude


@pytest.mark.parametrize("content", [5, ["not a block"], None])
def test_message_content_of_the_wrong_shape_is_named(tmp_path, content):
    records = parallel_session()
    records[1] = dict(records[1], message={"role": "user", "content": content})
    path = jsonl(tmp_path / "w.jsonl", records)
    with pytest.raises(InputError) as err:
        read_file(path)
    assert str(err.value) == (f'{path}:2: message "content" must be a string or a list of blocks — fix or remove that '
                              "line, or pass --skip-bad-lines to read on without it")


def test_records_without_a_type_of_text_are_counted_apart_and_known_ones_not_at_all(tmp_path):
    records = parallel_session() + [{"type": 5, "uuid": "q1"}, {"uuid": "q2", "sessionId": SID},
                                    {"type": "custom-title", "customTitle": "parser", "sessionId": SID},
                                    {"type": "summary", "summary": "Fix parser", "leafUuid": "a2"}]
    sf = read_file(jsonl(tmp_path / "t.jsonl", records))
    assert dict(sf.unknown_types) == {'("type" is int)': 1, "(record without type)": 1}
    assert sf.meta["session_ids"] == [SID]


def test_session_ids_are_listed_in_the_order_they_first_appear(tmp_path):
    records = parallel_session()
    records[5] = dict(records[5], sessionId="second")
    assert read_file(jsonl(tmp_path / "s.jsonl", records)).meta["session_ids"] == [SID, "second"]


def test_a_compaction_before_the_last_one_is_listed_outside_the_context(tmp_path):
    first = compacted_session()
    again = [line("system", "b2", None, None, "2026-01-05T11:00:00.000Z", subtype="compact_boundary",
                  logicalParentUuid="a2", content="Conversation compacted",
                  compactMetadata={"trigger": "manual", "preTokens": 999}),
             user("s2", "b2", "This session is being continued from a previous conversation. Summary: fixed.",
                  "2026-01-05T11:00:01.000Z", isCompactSummary=True),
             user("u9", "s2", "now the docs", "2026-01-05T11:00:02.000Z")]
    path = jsonl(tmp_path / "c.jsonl", first + again)
    (main,) = read_file(path).transcripts
    assert [m.text[:12] for m in main.messages] == ["This session", "now the docs"]
    assert [(c.index, c.line, c.trigger, c.pre_tokens) for c in main.compactions] == [(None, 3, "auto", 1234),
                                                                                     (0, 12, "manual", 999)]
    (full,) = read_file(path, ReadOptions(full_history=True)).transcripts
    assert [(c.index, c.line) for c in full.compactions] == [(2, 3), (8, 12)]
    assert len(full.messages) == 10


def test_a_line_without_a_timestamp_counts_as_written_when_the_line_before_it_was(tmp_path):
    records = [user("u0", None, "hello", "2026-01-05T10:00:00.000Z"),
               assistant("a1", "u0", "msg_1", [{"type": "text", "text": "first"}], usage(1, 0, 0, 1),
                         "2026-01-05T10:00:05.000Z"),
               {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-01-05T10:00:09.000Z",
                "sessionId": SID},
               {k: v for k, v in assistant("a2", "u0", "msg_2", [{"type": "text", "text": "second"}],
                                           usage(1, 0, 0, 1), request="r2").items() if k != "timestamp"}]
    (main,) = read_file(jsonl(tmp_path / "t.jsonl", records)).transcripts
    assert [m.text for m in main.messages] == ["hello", "second"]


def test_crlf_and_a_bom_read_and_write_back_unchanged(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"".join(orjson.dumps(r) + b"\r\n" for r in parallel_session()) + b"\r\n")
    sf = read_file(path)
    assert [m.role for m in sf.transcripts[0].messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert serialize(sf.transcripts[0], "claude-code", source=sf).data == path.read_bytes()


def test_a_subagent_is_linked_only_to_a_call_whose_prompt_started_it(tmp_path):
    records = sidechain_session()
    records[1]["message"]["content"].insert(0, {"type": "tool_use", "id": "toolu_other", "name": "Task",
                                                "input": {"prompt": "something else"}})
    sf = read_file(jsonl(tmp_path / "t.jsonl", records))
    assert sf.transcripts[1].parent_tool_call == "toolu_task"
    records[2] = user("s1", None, "a prompt no call gave", "2026-01-05T10:00:02.000Z", isSidechain=True)
    sf = read_file(jsonl(tmp_path / "u.jsonl", records))
    assert sf.transcripts[1].parent_tool_call is None


def _without_chain(records, *, drop=("parentUuid",)):
    return [{k: v for k, v in r.items() if k not in drop} for r in records]


@pytest.mark.parametrize("drop", [("parentUuid",), ("parentUuid", "uuid")])
def test_a_file_without_any_parent_uuid_is_read_in_file_order(tmp_path, drop):
    # as older Claude Code versions and other tools write them: no parentUuid on any line (and, written by some
    # tools, no uuid either); a reply over two lines, a tool call and its result, two requests, a sub-agent's lines
    records = _without_chain([
        {"type": "summary", "summary": "Parser fix", "leafUuid": "a4"},
        user("u1", None, "Fix the parser", "2026-01-05T10:00:00.000Z"),
        assistant("a1", None, "msg_1", [{"type": "text", "text": "Looking."}], usage(5, 0, 0, 3),
                  "2026-01-05T10:00:01.000Z"),
        assistant("a1b", None, "msg_1", [{"type": "tool_use", "id": "t1", "name": "Read",
                                          "input": {"file_path": "parser.py"}}], usage(5, 0, 0, 9),
                  "2026-01-05T10:00:02.000Z"),
        user("r1", None, [{"type": "tool_result", "tool_use_id": "t1", "content": "def parse(): ..."}],
             "2026-01-05T10:00:03.000Z"),
        user("s1", None, "Sub-task: list the tests", "2026-01-05T10:00:03.500Z", isSidechain=True),
        assistant("s2", None, "msg_s", [{"type": "text", "text": "3 tests."}], usage(2, 0, 0, 2),
                  "2026-01-05T10:00:03.700Z", request="req_s", isSidechain=True),
        assistant("a2", None, "msg_2", [{"type": "text", "text": "Fixed."}], usage(6, 0, 0, 2),
                  "2026-01-05T10:00:04.000Z", request="req_2"),
        user("u2", None, "thanks", "2026-01-05T10:00:05.000Z"),
        assistant("a4", None, "msg_4", [{"type": "text", "text": "You're welcome."}], usage(7, 0, 0, 4),
                  "2026-01-05T10:00:06.000Z", request="req_4"),
    ], drop=drop)
    sf = read_file(jsonl(tmp_path / "old.jsonl", records))
    assert sf.format == "claude-code"
    main, side = sf.transcripts
    assert summary(main.messages) == [
        ("user", "Fix the parser", (), (), False, False),
        ("assistant", "Looking.", ("t1",), (), False, False),
        ("tool", "def parse(): ...", (), ("t1",), False, False),
        ("assistant", "Fixed.", (), (), False, False),
        ("user", "thanks", (), (), False, False),
        ("assistant", "You're welcome.", (), (), False, False),
    ]
    assert [m.source for m in main.messages] == [(1,), (2, 3), (4,), (7,), (8,), (9,)]
    assert main.notes == ()
    assert (side.kind, [m.text for m in side.messages]) == ("subagent", ["Sub-task: list the tests", "3 tests."])
    assert main.provider_usage["requests"] == 3


def test_skipped_lines_are_listed_in_file_order(tmp_path):
    # the reader's rejections (line 2) come after the parser's (line 4) as they are found: listed in file order
    records = [user("u1", None, "hello"), {**user("u2", "u1", "x"), "message": "not an object"}, user("u3", "u1", "y"),
               '{"type": "user", "mess']
    sf = read_file(jsonl(tmp_path / "s.jsonl", records), ReadOptions(skip_bad_lines=True))
    assert sf.skipped == ((2, 'user line without a "message" object'),
                          (4, "not valid JSON (unexpected control character in string at column 23)"))
