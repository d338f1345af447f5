"""formats/writers.py: which writer a transcript goes to, what a conversion leaves behind, and read∘write
being the identity on unchanged files of every writable format."""

from __future__ import annotations

import uuid
from dataclasses import replace

import orjson
import pytest
from claude_lines import compacted_session, parallel_session, sidechain_session
from codex_lines import rollout
from conftest import SESSION
from hypothesis import given, settings
from hypothesis import strategies as st

from tcompact.errors import UsageError
from tcompact.formats import ReadOptions, read_bytes, serialize
from tcompact.model import Message, Reasoning, Transcript
from tcompact.counting.tokens import TokenCounter

NOW = "2026-01-01T00:00:00.000Z"
RECORDS = {"chat": SESSION, "claude-code": parallel_session(), "codex": rollout()}


def source(fmt, records=None, *, name="s.jsonl", **options):
    data = b"".join(orjson.dumps(r) + b"\n" for r in (records or RECORDS[fmt]))
    return read_bytes(data, name, ReadOptions(**options))


@pytest.mark.parametrize("fmt", ["chat", "claude-code", "codex"])
def test_a_file_read_without_its_bytes_cannot_be_written_back(fmt):
    sf = source(fmt, keep_raw=False)
    t = sf.transcripts[0]
    changed = replace(t, messages=t.messages[1:])
    for transcript in (t, changed):
        with pytest.raises(UsageError) as exc:
            serialize(transcript, fmt, source=sf, now=NOW)
        assert str(exc.value) == ("s.jsonl: this file was read without its raw bytes — read it with "
                                  "ReadOptions(keep_raw=True) to write it back")
    target, kept = ("codex" if fmt == "chat" else "chat"), source(fmt)  # converting needs no bytes
    assert serialize(t, target, source=sf, now=NOW).data == serialize(kept.transcripts[0], target, source=kept, now=NOW).data


def test_a_claude_compaction_records_the_size_before_it():
    sf = source("claude-code")
    t = sf.transcripts[0]
    new = replace(t, messages=(Message(role="user", content="Summary.", meta={"memory_block": True}), t.messages[-1]))

    def pre_tokens(**kw):
        lines = serialize(new, "claude-code", source=sf, now=NOW, **kw).data.splitlines()
        return orjson.loads(lines[len(sf.records)])["compactMetadata"]["preTokens"]

    assert pre_tokens(pre_tokens=1234) == 1234
    assert pre_tokens() == TokenCounter.for_model("claude-sonnet-4-5").total(t.messages)


def test_a_conversion_gets_a_session_id_of_its_source_and_transcript():
    sf = source("chat", name="/data/s.jsonl")
    lines = serialize(sf.transcripts[0], "codex", source=sf, now=NOW).data.splitlines()
    namespace = uuid.UUID("6f1d3c2a-9b1e-4c55-8a8e-2f4f7d0c9e11")
    assert orjson.loads(lines[0])["payload"]["id"] == str(uuid.uuid5(namespace, "/data/s.jsonl/main"))
    alone = serialize(sf.transcripts[0], "codex", now=NOW).data.splitlines()
    assert orjson.loads(alone[0])["payload"]["id"] == str(uuid.uuid5(namespace, "/main"))


def test_a_conversion_names_what_stays_behind():
    records = compacted_session() + [{"type": "file-history-snapshot", "messageId": "x", "snapshot": {}},
                                     {"type": "summary", "summary": "s", "leafUuid": "a2"}]
    sf = source("claude-code", records)
    rendered = serialize(sf.transcripts[0], "codex", source=sf, now=NOW)
    assert rendered.losses == ()
    assert rendered.notes == (
        "2 message line(s) outside the active context (before a compaction, or on an abandoned branch) stay behind; "
        "pass --full-history to include what precedes a compaction",
        "3 record(s) that are not messages stay behind: system ×1, file-history-snapshot ×1, summary ×1")


def test_other_transcripts_of_the_file_are_named_up_to_five():
    sf = source("claude-code", sidechain_session())
    assert serialize(sf.transcripts[1], "chat", source=sf).notes == (
        "1 other transcript(s) in the file not included (main); pass --transcript ID",)
    episodes = [{"messages": [{"role": "user", "content": f"episode {n}"}]} for n in range(7)]
    sf = source("chat", episodes)
    assert serialize(sf.transcripts[0], "codex", source=sf, now=NOW).notes == (
        "6 other transcript(s) in the file not included (line-2, line-3, line-4, line-5, line-6 …); pass "
        "--transcript ID",)


def test_records_are_named_by_their_type_and_payload_type():
    sf = source("codex")
    assert serialize(sf.transcripts[0], "chat", source=sf).notes == (
        "7 record(s) that are not messages stay behind: event_msg/token_count ×2, turn_context ×1, "
        "event_msg/user_message ×1, event_msg/agent_reasoning ×1, response_item/ghost_snapshot ×1, world_state ×1",
        "1 encrypted reasoning item(s) are opaque and cannot be carried over")


def test_encrypted_reasoning_is_left_out_of_what_the_converted_file_holds():
    sf = source("codex")
    t = sf.transcripts[0]
    rendered = serialize(t, "chat", source=sf, now=NOW)
    written = rendered.written
    assert [m for m in written.messages if m.reasoning] == [
        replace(t.messages[4], reasoning=(Reasoning(text="**Plan** run pytest", kind="summary"),))]
    assert written.messages[:4] == t.messages[:4] and written.messages[5:] == t.messages[5:]
    assert serialize(source("chat").transcripts[0], "codex", now=NOW).written is None  # nothing left out


def test_readable_reasoning_going_to_claude_code_is_named_and_left_out():
    # a Claude Code thinking block carries a signature only the model's provider can make: none is written
    t = Transcript(id="main", kind="main", messages=(
        Message(role="user", content="q"),
        Message(role="assistant", content="a", reasoning=(Reasoning(text="why"), Reasoning(encrypted_chars=8))),
        Message(role="assistant", content="b", reasoning=(Reasoning(text="more", kind="summary"),))))
    rendered = serialize(t, "claude-code", now=NOW)
    assert rendered.notes == ("2 reasoning item(s) are not written: a Claude Code thinking block needs a signature "
                              "only the model's provider can make",)
    assert [m.reasoning for m in rendered.written.messages] == [(), (), ()]
    (back,) = read_bytes(rendered.data, "c.jsonl").transcripts
    assert [m.reasoning for m in back.messages] == [(), (), ()]
    assert serialize(t, "codex", now=NOW).notes == ()  # a rollout holds readable reasoning


_ODD = st.sampled_from([b"\n", b"  \n", b"\r\n", b'{"type":"brand-new","x":[1]}\n', b'{"note": "kept"}\n'])


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["chat", "claude-code", "codex"]), st.lists(st.tuples(st.integers(0, 20), _ODD), max_size=4),
       st.booleans(), st.booleans(), st.booleans())
def test_read_then_write_is_the_identity_on_an_unchanged_file(fmt, inserts, crlf, bom, last_newline):
    lines = [orjson.dumps(r) + (b"\r\n" if crlf else b"\n") for r in RECORDS[fmt]]
    for at, odd in inserts:
        lines.insert(min(at, len(lines)), odd)
    data = (b"\xef\xbb\xbf" if bom else b"") + b"".join(lines)
    data = data if last_newline else data.rstrip(b"\r\n")
    sf = read_bytes(data, "g.jsonl")
    assert sf.format == fmt
    for t in sf.transcripts:
        assert serialize(t, fmt, source=sf, now=NOW).data == data
