"""A rewritten Claude Code history sends no thinking after its first change and never ends on an unanswered call
(issue 23 item 4; formats/claude_prune.py).

The fixture (``claude_lines.thinking_session``) has thinking as Claude Code writes it: on its own line of a reply
(2.0.x), as an empty text with its signature (2.1.69 on), redacted and beside text and a call on one line; the
session was cut while its last call ran. Messages: 0 request, 1 reply (thinking line a1a, call t1), 2 result,
3 reply (empty-thinking line a2a, text, call t2), 4 result, 5 reply (redacted thinking, text, call t3 unanswered).
"""

from __future__ import annotations

import json
from dataclasses import replace

import orjson
import pytest
from claude_lines import thinking_session
from conftest import real_file
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.compaction import CompactOptions, compact_file
from tcompact.compressors import parse_sets
from tcompact.formats import read_bytes, read_file, serialize
from tcompact.model import Message, Reasoning

NOW = "2026-01-01T00:00:00.000Z"
SUMMARY = Message(role="user", content="Summary: the date filter test fails on the last day.",
                  meta={"memory_block": True})
THINKING = ("thinking", "redacted_thinking")
NOTE = ("{} thinking block(s) left out of the turns from the first change on: Anthropic's newest models refuse a "
        "thinking block whose earlier history changed")
CALL_NOTE = "1 tool call(s) without a result left out, so that the history does not end on an unanswered call: t3"


def source():
    return read_bytes(b"".join(orjson.dumps(r) + b"\n" for r in thinking_session()), "s.jsonl")


def written(messages_of):
    sf = source()
    t = sf.transcripts[0]
    out = serialize(replace(t, messages=tuple(messages_of(t.messages))), "claude-code", source=sf, now=NOW,
                    pre_tokens=100)
    docs = [orjson.loads(x) for x in out.data.splitlines()]
    return sf, out, docs


def blocks(docs):
    return [(d["uuid"], b.get("type")) for d in docs if d.get("type") == "assistant"
            for b in d["message"]["content"]]


def test_empty_thinking_with_its_signature_is_opaque_reasoning():
    """Claude Code 2.1.69 on stores thinking as an empty text and its signature: reasoning estimated from its size."""
    (t,) = source().transcripts
    assert [m.reasoning for m in t.messages if m.reasoning] == [
        (Reasoning(text="Run the test first."),), (Reasoning(encrypted_chars=20, kind="thinking"),),
        (Reasoning(encrypted_chars=24, kind="redacted"),)]


def test_a_compaction_with_its_summary_first_sends_no_thinking_and_no_unanswered_call():
    sf, out, docs = written(lambda ms: [SUMMARY, *ms[1:]])
    added = docs[len(sf.records):]
    assert added[0]["subtype"] == "compact_boundary"
    assert [d["parentUuid"] for d in added[1:]] == [d["uuid"] for d in added[:-1]]  # one chain, no gap
    # the two thinking-only lines are not written; the text and the answered calls stay, t3 goes
    assert [t for _, t in blocks(added)] == ["tool_use", "text", "tool_use", "text"]
    assert [b["id"] for d in added if d["type"] == "assistant" for b in d["message"]["content"]
            if b["type"] == "tool_use"] == ["t1", "t2"]
    assert out.notes == (NOTE.format(3), CALL_NOTE)
    (back,) = read_bytes(out.data, "b.jsonl").transcripts
    assert [(m.role, m.text, [c.id for c in m.tool_calls], m.reasoning) for m in back.messages] == [
        (m.role, m.text, [c.id for c in m.tool_calls], ()) for m in out.written.messages]
    assert [c.id for m in out.written.messages for c in m.tool_calls] == ["t1", "t2"]


def test_turns_before_the_first_change_keep_their_thinking():
    """A summary after an unchanged prefix (as current-round writes it): the prefix's history is what it was."""
    sf, out, docs = written(lambda ms: [*ms[:3], SUMMARY, ms[5]])
    added = docs[len(sf.records):]
    assert blocks(added)[0][1] == "thinking" and added[2]["message"]["content"] == thinking_session()[1]["message"][
        "content"]
    assert [t for _, t in blocks(added)] == ["thinking", "tool_use", "text"]  # msg_3 without its thinking and t3
    assert out.notes == (NOTE.format(1), CALL_NOTE)
    assert [bool(m.reasoning) for m in out.written.messages] == [False, True, False, False, False]


def test_a_result_rewritten_in_place_drops_the_thinking_after_it_and_rechains_past_empty_lines():
    sf, out, docs = written(lambda ms: [replace(m, content="[cut]") if m.text.startswith("FAILED") else m for m in ms])
    raw = out.data.splitlines(keepends=True)
    assert raw[:3] == [r.raw for r in sf.records[:3]]  # before the change, byte for byte: a1a keeps its thinking
    assert [d["uuid"] for d in docs] == ["u1", "a1a", "a1b", "r1", "a2b", "a2c", "r2", "a3"]  # a2a left out
    assert docs[4]["parentUuid"] == "r1"  # the line under it hangs from its parent
    assert raw[5:7] == [r.raw for r in sf.records[6:8]]  # untouched lines keep their bytes
    assert docs[7]["message"]["content"] == [{"type": "text", "text": "Fixed; running the tests again."}]
    assert out.notes == (NOTE.format(2), CALL_NOTE)
    (back,) = read_bytes(out.data, "b.jsonl").transcripts
    assert [(m.text, len(m.reasoning)) for m in back.messages] == [
        ("Fix the failing date filter test", 0), ("", 1), ("[cut]", 0), ("The filter drops the last day.", 0),
        ("edited filter.py", 0), ("Fixed; running the tests again.", 0)]


def test_an_unchanged_session_keeps_everything():
    sf, out, _ = written(lambda ms: ms)
    assert out.data == b"".join(r.raw for r in sf.records) and out.notes == () and out.written is None


def test_compact_says_what_it_left_out_in_the_report(tmp_path):
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in thinking_session()))
    result = CliRunner().invoke(app, ["compact", str(src), "-c", "truncate", "--set", "max_lines=8", "--now", "-o",
                                      str(tmp_path / "o.jsonl"), "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["status"], report["notes"]) == ("compacted", [NOTE.format(2), CALL_NOTE])
    assert json.loads((tmp_path / "o.report.json").read_text())["notes"] == report["notes"]
    assert f"Warning: {NOTE.format(2)}" in result.stderr  # the terminal says it too


@pytest.mark.parametrize("compressor", ["dialogue", "full", "round-level", "truncate"])
def test_a_compacted_real_session_sends_no_thinking_after_its_first_change(compressor, tmp_path):
    """claude_codemie_3fe1b6bc: 65 thinking lines of a 2.0.76 session, each alone on its line."""
    src = real_file("codemie")
    options = CompactOptions(chain=compressor, now=True, overrides=parse_sets(
        ["max_lines=8"] if compressor == "truncate" else []))
    run = compact_file(src, options)
    assert run.status == "compacted" and run.report["invariants"] == []
    first = next(n for n, (a, b) in enumerate(zip(run.transcript.messages, run.messages)) if a != b)
    kept = sum(len(m.reasoning) for m in run.messages[first:])  # the thinking of the turns kept after the change
    assert (kept > 0) is (compressor in ("dialogue", "truncate"))  # full and round-level keep no reply
    assert run.report["notes"] == ([NOTE.format(kept)] if kept else [])
    out = tmp_path / "o.jsonl"
    out.write_bytes(run.output.data)
    back = read_file(out).transcript().messages
    assert [len(m.reasoning) for m in back] == [len(m.reasoning) if n < first else 0
                                                for n, m in enumerate(run.messages)]
    assert sum(1 for m in back for r in m.reasoning) == sum(len(m.reasoning) for m in run.messages[:first]) and (
        first > 0) is (compressor == "truncate")


def test_only_the_last_reply_s_calls_can_be_left_unanswered():
    """A call left without its result earlier, followed by more turns, is the history's own and stays."""
    from tcompact.formats.claude_prune import prune

    (t,) = source().transcripts
    ms = list(t.messages)
    ms[2] = replace(ms[2], tool_call_ids=("",))  # t1's result lost its id
    assert prune(t.messages, ms).calls == {"t3"}
    assert prune(t.messages, ms[:5]).calls == frozenset()  # ends on t2's result
    assert prune(t.messages, ms[:2]).calls == {"t1"}
    assert prune(t.messages, [*ms[:5], Message(role="user", content="go on"), ms[5]]).calls == {"t3"}
    assert prune(t.messages, [*ms, Message(role="user", content="stop")]).calls == frozenset()
