"""formats/write_back.py: a changed transcript written into its own Claude Code or Codex file — in place or as a
compaction — and read back as the new messages."""

from __future__ import annotations

from dataclasses import replace

import orjson
import pytest
from claude_lines import parallel_session
from codex_lines import rollout
from hypothesis import given, settings
from hypothesis import strategies as st

from tcompact.formats import read_bytes, serialize
from tcompact.formats.write_back import SUMMARY_PREFIX, one_to_one
from tcompact.model import Message

NOW = "2026-01-01T00:00:00.000Z"
SUMMARY = Message(role="user", content="Summary: two tests fail.", meta={"memory_block": True})


def source(records, end=b"\n"):
    return read_bytes(b"".join(orjson.dumps(r) + end for r in records), "s.jsonl")


def with_messages(t, messages):
    return replace(t, messages=tuple(messages))


def test_one_to_one_is_the_same_messages_with_only_tool_texts_changed():
    user = Message(role="user", content="q", source=(0,))
    tool = Message(role="tool", content="out", tool_call_ids=("c",), source=(1,))
    assert one_to_one([user, tool], [user, replace(tool, content="cut")]) is True
    assert one_to_one([user, tool], [user, tool]) is True
    assert one_to_one([user, tool], [replace(user, content="other"), tool]) is False
    assert one_to_one([user, tool], [user]) is False
    assert one_to_one([user, tool], [user, replace(tool, source=())]) is False  # a new message
    assert one_to_one([user, tool], [tool, user]) is False


def test_claude_tool_results_changed_in_place_rewrite_only_their_lines():
    records = parallel_session()
    sf = source(records, end=b"\r\n")
    t = sf.transcripts[0]
    cut = [replace(m, content="[cut]") if m.role == "tool" else m for m in t.messages]
    out = serialize(with_messages(t, cut), "claude-code", source=sf, now=NOW).data.split(b"\n")
    original = [r.raw for r in sf.records]
    assert [x + b"\n" for x in out[:5]] == original[:5] and out[7] + b"\n" == original[7]
    for n in (5, 6):
        expected = dict(records[n])
        expected["message"] = {**records[n]["message"],
                               "content": [{**records[n]["message"]["content"][0], "content": "[cut]"}]}
        assert orjson.loads(out[n]) == expected
    (back,) = read_bytes(b"\n".join(out), "b.jsonl").transcripts
    assert [m.text for m in back.messages] == [m.text for m in cut]


def test_a_claude_line_holding_two_results_gets_both_replaced_in_order():
    records = parallel_session()
    both = dict(records[6], message={"role": "user", "content": [
        {"tool_use_id": "t1", "type": "tool_result", "content": "one"},
        {"type": "text", "text": "between"},
        {"tool_use_id": "t2", "type": "tool_result", "content": [{"type": "text", "text": "two"}]}]})
    sf = source([*records[:5], both, records[7]])
    t = sf.transcripts[0]
    assert [(m.role, m.text) for m in t.messages[2:5]] == [("tool", "one"), ("tool", "two"), ("user", "between")]
    cut = [replace(m, content=f"<{m.text}>") if m.role == "tool" else m for m in t.messages]
    lines = serialize(with_messages(t, cut), "claude-code", source=sf, now=NOW).data.splitlines()
    assert orjson.loads(lines[5])["message"]["content"] == [
        {"tool_use_id": "t1", "type": "tool_result", "content": "<one>"}, {"type": "text", "text": "between"},
        {"tool_use_id": "t2", "type": "tool_result", "content": "<two>"}]


def test_a_claude_compaction_appends_to_a_file_without_a_last_newline():
    sf = read_bytes(b"\n".join(orjson.dumps(r) for r in parallel_session()), "s.jsonl")
    t = sf.transcripts[0]
    data = serialize(with_messages(t, [SUMMARY, t.messages[-1]]), "claude-code", source=sf, now=NOW, pre_tokens=42).data
    assert data.startswith(b"".join(r.raw for r in sf.records) + b"\n")
    (back,) = read_bytes(data, "b.jsonl").transcripts
    assert [m.text for m in back.messages] == [SUMMARY.text, "The test fails; fixing."]
    assert [(c.trigger, c.pre_tokens) for c in back.compactions] == [("manual", 42)]


def test_codex_outputs_changed_in_place_rewrite_only_their_lines():
    records = rollout()
    sf = source(records)
    t = sf.transcripts[0]
    cut = [replace(m, content="[cut]") if m.role == "tool" else m for m in t.messages]
    lines = serialize(with_messages(t, cut), "codex", source=sf, now=NOW).data.splitlines(keepends=True)
    changed = [n for n, (a, b) in enumerate(zip(lines, (r.raw for r in sf.records))) if a != b]
    assert (len(lines), changed) == (len(records), [10, 11])
    assert [orjson.loads(lines[n])["payload"]["output"] for n in changed] == ["[cut]", "[cut]"]
    assert orjson.loads(lines[10]) == {**records[10], "payload": {**records[10]["payload"], "output": "[cut]"}}


def test_a_codex_compaction_appends_a_compacted_line_whose_history_reuses_the_original_items():
    records = rollout()
    sf = source(records)
    t = sf.transcripts[0]
    kept = [t.messages[0], t.messages[3], SUMMARY, *t.messages[4:]]
    lines = serialize(with_messages(t, kept), "codex", source=sf, now=NOW).data.splitlines(keepends=True)
    assert lines[:len(records)] == [r.raw for r in sf.records]
    compacted, event = (orjson.loads(x) for x in lines[len(records):])
    assert event == {"timestamp": NOW, "type": "event_msg", "payload": {"type": "context_compacted"}}
    assert (compacted["timestamp"], compacted["type"]) == (NOW, "compacted")
    assert compacted["payload"]["message"] == f"{SUMMARY_PREFIX}\nSummary: two tests fail."
    history = compacted["payload"]["replacement_history"]
    originals = [records[i]["payload"] for m in t.messages[4:] for i in m.source]
    # no session_meta prompt in the history; kept items byte for byte, encrypted reasoning included
    assert history == [records[4]["payload"],
                       {"type": "message", "role": "user", "content": [{"type": "input_text",
                                                                        "text": "Summary: two tests fail."}]},
                       *originals]
    assert history[2]["encrypted_content"] == records[6]["payload"]["encrypted_content"]
    (back,) = read_bytes(b"".join(lines), "b.jsonl").transcripts
    assert [(m.role, m.text) for m in back.messages] == [(m.role, m.text) for m in kept]


def test_a_codex_compaction_without_a_summary_has_an_empty_message():
    sf = source(rollout())
    t = sf.transcripts[0]
    lines = serialize(with_messages(t, t.messages[3:]), "codex", source=sf, now=NOW).data.splitlines()
    assert orjson.loads(lines[-2])["payload"]["message"] == ""


def shape(messages):
    return [(m.role, m.text, tuple((c.id, c.name, c.type) for c in m.tool_calls), m.tool_call_ids, m.is_error,
             [(r.text, r.encrypted_chars) for r in m.reasoning]) for m in messages]


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["claude-code", "codex"]), st.sampled_from([1, 3]), st.booleans(), st.booleans())
def test_the_written_file_reads_back_as_the_new_messages(fmt, start, summary, edit):
    sf = source(parallel_session() if fmt == "claude-code" else rollout())
    t = sf.transcripts[0]
    head = [m for m in t.messages[:start] if m.role == "system"]
    # an edit keeps the first line, as truncate does: a Codex result is an error by its "exited with code" line
    body = [replace(m, content=m.text.split("\n")[0] + "\n[cut]") if edit and m.role == "tool" else m
            for m in t.messages[start:]]
    new = [*head, *([SUMMARY] if summary else []), *body]
    data = serialize(with_messages(t, new), fmt, source=sf, now=NOW, pre_tokens=10).data
    (back,) = read_bytes(data, "b.jsonl").transcripts
    if fmt == "claude-code":  # no thinking from the first change on, here the first message (always left out)
        new = [replace(m, reasoning=()) for m in new]
    assert shape(back.messages) == shape(new)


@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_an_unchanged_transcript_gives_the_file_back(fmt):
    records = parallel_session() if fmt == "claude-code" else rollout()
    data = b"\r\n".join(orjson.dumps(r) for r in records) + b"\r\n\r\n"
    sf = read_bytes(data, "s.jsonl")
    assert serialize(sf.transcripts[0], fmt, source=sf, now=NOW).data == data
