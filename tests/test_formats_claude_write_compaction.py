"""formats/claude_write_compaction.py: the boundary and the new chain a compaction appends to a Claude Code session."""

from __future__ import annotations

from dataclasses import replace

import orjson
import pytest
from claude_lines import SID, assistant, parallel_session, sidechain_session, user, usage
from hypothesis import given, settings
from hypothesis import strategies as st

from tcompact.formats import read_bytes
from tcompact.formats.claude_write_compaction import compaction_lines, is_summary
from tcompact.model import Message

SUMMARY = Message(role="user", content="Summary: the parser test fails on empty input.", meta={"memory_block": True})


def source(records):
    return read_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records), "s.jsonl")


def appended(records, pick, *, now="2026-01-01T00:00:00.000Z", transcript=0):
    sf = source(records)
    t = sf.transcripts[transcript]
    messages = pick(t.messages)
    lines = compaction_lines(sf.records, t, messages, now=now, pre_tokens=777)
    return sf, t, messages, [orjson.loads(x) for x in lines]


def test_the_boundary_names_the_old_leaf_and_the_size_before():
    _, _, _, docs = appended(parallel_session(), lambda ms: [SUMMARY, ms[-1]])
    boundary = docs[0]
    assert {k: v for k, v in boundary.items() if k != "uuid"} == {
        "parentUuid": None, "logicalParentUuid": "a2", "isSidechain": False, "userType": "external", "cwd": "/repo",
        "sessionId": SID, "version": "2.1.0", "type": "system", "subtype": "compact_boundary",
        "content": "Conversation compacted", "isMeta": False, "timestamp": "2026-01-05T10:00:03.001Z", "level": "info",
        "compactMetadata": {"trigger": "manual", "preTokens": 777}}
    assert [d["parentUuid"] for d in docs[1:]] == [d["uuid"] for d in docs[:-1]]  # one chain from the boundary


@pytest.mark.parametrize(("now", "first"), [
    ("2026-01-01T00:00:00.000Z", "2026-01-05T10:00:03.001Z"),  # 1 ms after the newest line of the file
    ("2026-02-01T08:30:00.250Z", "2026-02-01T08:30:00.250Z"),  # now, when it is later
])
def test_times_increase_by_a_millisecond_from_after_every_line_of_the_file(now, first):
    _, _, _, docs = appended(parallel_session(), lambda ms: [SUMMARY, *ms[1:]], now=now)
    assert docs[0]["timestamp"] == first
    stamps = [d["timestamp"] for d in docs]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps) == 7  # the thinking line is left out


def test_kept_lines_are_copies_with_fresh_ids_and_no_usage():
    records = parallel_session()
    records[5]["sourceToolAssistantUUID"] = "a1b"  # Claude Code 2.1 names the line that issued the call
    sf, t, _, docs = appended(records, lambda ms: [SUMMARY, *ms[1:]])
    summary, *copies = docs[1:]
    assert summary["message"] == {"role": "user", "content": SUMMARY.text}
    assert (summary["isCompactSummary"], summary["isVisibleInTranscriptOnly"], "isMeta" in summary) == (True, True,
                                                                                                       False)
    # every line of the kept messages but the thinking line a1a (its history changed: the first request is gone)
    originals = [records[i] for m in t.messages[1:] for i in m.source if records[i]["uuid"] != "a1a"]
    assert [c["type"] for c in copies] == [o["type"] for o in originals]
    assert all(c["uuid"] != o["uuid"] and "usage" not in c.get("message", {}) for c, o in zip(copies, originals))
    reply_ids = [c["message"]["id"] for c in copies if c["type"] == "assistant"]
    assert len(set(reply_ids[:2])) == 1 and reply_ids[2] != reply_ids[0]  # one new id per original reply
    assert all(i.startswith("msg_tc") and i not in ("msg_A", "msg_B") for i in reply_ids)
    assert copies[2]["sourceToolAssistantUUID"] == copies[0]["uuid"]  # renamed with the line it names
    assert copies[0]["parentUuid"] == summary["uuid"]  # the chain goes past the line left out
    assert [c["message"]["content"] for c in copies] == [o["message"]["content"] for o in originals]


def test_new_user_messages_are_injected_context_and_keep_their_level():
    level = Message(role="user", content="[round 1 summary]", extra={"metadata": {"compress_level": 2}},
                    meta={"memory_block": True})
    note = Message(role="user", content="Resume from here.")
    _, _, _, docs = appended(parallel_session(), lambda ms: [ms[0], level, note, ms[-1]])
    assert [(d.get("isMeta"), d.get("isCompactSummary"), d.get("metadata")) for d in docs[2:4]] == [
        (None, True, {"compress_level": 2}), (True, None, None)]


def test_a_subagent_compaction_stays_on_the_subagent():
    records = [dict(r, agentId="a1b2") for r in sidechain_session()[2:6]]
    _, _, _, docs = appended(records, lambda ms: [SUMMARY, ms[-1]])
    assert {(d["isSidechain"], d["agentId"]) for d in docs} == {(True, "a1b2")}
    assert docs[0]["logicalParentUuid"] == "s4"


@pytest.mark.parametrize(("m", "summary"), [
    (Message(role="user", content="x", meta={"memory_block": True}), True),
    (Message(role="user", content="This session is being continued from a previous conversation ..."), True),
    (Message(role="assistant", content="This session is being continued"), False),
    (Message(role="user", content="Please continue"), False),
])
def test_is_summary(m, summary):
    assert is_summary(m) is summary


def shape(messages):
    return [(m.role, m.text, m.tool_calls, m.tool_call_ids, m.is_error, [r.text for r in m.reasoning])
            for m in messages]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_the_compacted_file_reads_back_as_the_compacted_messages(data):
    records = parallel_session() + [
        user("u9", "a2", "and the docs", "2026-01-05T10:00:04.000Z"),
        assistant("a9", "u9", "msg_C", [{"type": "text", "text": "Docs done."}], usage(1, 0, 0, 1),
                  "2026-01-05T10:00:05.000Z", request="req_C")]
    sf = source(records)
    t = sf.transcripts[0]
    # keep a suffix that starts at a round (a cut never splits a call from its results), summaries before it
    start = data.draw(st.sampled_from([1, 4, 5]))
    summaries = [replace(SUMMARY, content=f"Summary {n}") for n in range(data.draw(st.integers(1, 2)))]
    extra = [Message(role="user", content="note")] if data.draw(st.booleans()) else []
    messages = [*summaries, *t.messages[start:], *extra]
    lines = compaction_lines(sf.records, t, messages, now="2026-01-01T00:00:00.000Z", pre_tokens=1)
    back = read_bytes(b"".join(r.raw for r in sf.records) + b"".join(lines), "c.jsonl")
    (main,) = back.transcripts
    assert shape(main.messages) == shape([replace(m, reasoning=()) for m in messages])  # a summary comes first
    assert [(c.index, c.trigger, c.pre_tokens) for c in main.compactions][-1] == (0, "manual", 1)
