"""Converting a transcript (conversion.py): the formats it writes, losses refused unless asked for and then named,
lines skipped on reading named too, the transcript chosen, and what reads back."""

from __future__ import annotations

import orjson
import pytest
from conftest import SAMPLES, SESSION, call, jsonl, msg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcompact.conversion import convert_file
from tcompact.errors import InputError, UsageError
from tcompact.formats import ReadOptions, read_bytes
from tcompact.inspection import InspectOptions, inspect_source
from tcompact.model import index_tool_calls

CHAT = SAMPLES / "chat_tool_session.jsonl"
CLAUDE = SAMPLES / "claude_code_session.jsonl"
NOW = "2026-01-01T00:00:00Z"


def _messages(data: bytes, name: str = "out.jsonl"):
    return [(m.role, m.text, m.tool_call_ids) for m in read_bytes(data, name).transcript().messages]


@pytest.mark.parametrize("to", ["swe-agent", "tau-bench", "html", ""])
def test_a_format_that_cannot_be_written_is_a_usage_error(to):
    with pytest.raises(UsageError) as info:
        convert_file(CHAT, to)
    assert str(info.value) == f"cannot convert to {to!r} — use --to chat, claude-code, codex"


def test_a_chat_file_converted_to_chat_is_the_same_bytes():
    result = convert_file(CHAT, "chat")
    assert (result.data, result.losses, result.notes) == (CHAT.read_bytes(), (), ())


@pytest.mark.parametrize("to", ["chat", "codex"])
def test_a_converted_transcript_reads_back_with_the_same_messages(to):
    result = convert_file(CHAT, to, now=NOW)
    assert read_bytes(result.data, "out.jsonl").format == to
    assert _messages(result.data) == _messages(CHAT.read_bytes())


def test_the_time_of_a_converted_file_is_the_one_given():
    first, second = (convert_file(CHAT, "claude-code", lossy=True, now=NOW) for _ in range(2))
    assert first.data == second.data and b'"timestamp":"2026-01-01T00:00:00Z"' in first.data


def test_losses_are_refused_naming_them_and_what_to_do():
    with pytest.raises(UsageError) as info:
        convert_file(CHAT, "claude-code")
    assert str(info.value) == (f"{CHAT}: claude-code cannot represent 1 part(s) of this transcript: message 0 (system): "
                               "Claude Code sessions have no system messages — pass --lossy to convert anyway without "
                               "them, or convert to chat")


def test_more_than_three_losses_are_counted_not_listed(tmp_path):
    path = jsonl(tmp_path / "s.jsonl", [msg("system", f"rule {i}") for i in range(5)] + SESSION[1:])
    with pytest.raises(UsageError) as info:
        convert_file(path, "claude-code")
    assert info.value.what == ("claude-code cannot represent 5 part(s) of this transcript: message 0 (system): Claude "
                               "Code sessions have no system messages; message 1 (system): Claude Code sessions have no "
                               "system messages; message 2 (system): Claude Code sessions have no system messages; and 2 "
                               "more")


def test_lossy_converts_and_names_each_loss_as_dropped():
    result = convert_file(CHAT, "claude-code", lossy=True, now=NOW)
    assert result.losses == ("message 0 (system): Claude Code sessions have no system messages",)
    assert result.notes == ("dropped: message 0 (system): Claude Code sessions have no system messages",)
    assert _messages(result.data) == _messages(CHAT.read_bytes())[1:]


def test_what_stays_behind_is_noted():
    result = convert_file(CLAUDE, "chat")
    assert result.losses == () and result.notes == (
        "1 other transcript(s) in the file not included (sidechain-26dd4578); pass --transcript ID",
        "10 message line(s) outside the active context (before a compaction, or on an abandoned branch) stay behind; "
        "pass --full-history to include what precedes a compaction",
        "2 record(s) that are not messages stay behind: file-history-snapshot ×1, system ×1")


def test_a_chosen_transcript_is_the_one_converted():
    main, side = (convert_file(CLAUDE, "chat", transcript=t) for t in (None, "sidechain-26dd4578"))
    source = read_bytes(CLAUDE.read_bytes(), str(CLAUDE))
    assert _messages(side.data) == [(m.role, m.text, m.tool_call_ids) for m in source.transcript("sidechain-26dd4578").messages]
    assert _messages(side.data) != _messages(main.data)
    with pytest.raises(UsageError, match=r"no transcript 'nope' in this file — choose one of: "):
        convert_file(CLAUDE, "chat", transcript="nope")


def test_lines_skipped_on_reading_are_noted_first(tmp_path):
    path = jsonl(tmp_path / "s.jsonl", [*SESSION[:3], "not json", *SESSION[3:]])
    with pytest.raises(InputError, match=r"s\.jsonl:4: not valid JSON"):
        convert_file(path, "codex")
    result = convert_file(path, "codex", read=ReadOptions(skip_bad_lines=True), now=NOW)
    assert result.notes == ("skipped bad line 4: not valid JSON (invalid literal, expected 'null' at column 1)",)
    assert len(_messages(result.data)) == len(SESSION)


@pytest.mark.parametrize("name", ["chat_tool_session.jsonl", "claude_code_session.jsonl", "codex_rollout.jsonl"])
@pytest.mark.parametrize("to", ["chat", "claude-code", "codex"])
def test_every_sample_converts_keeping_its_messages_pairs_and_tokens(name, to):
    """The sample-session twin of test_real_transcripts.py's conversions of the real files."""
    path = SAMPLES / name
    result = convert_file(path, to, lossy=True, now=NOW)
    source, again = read_bytes(path.read_bytes(), name), read_bytes(result.data, f"out.{to}.jsonl")
    original, back = source.transcript(), again.transcript()
    assert len(back.messages) == len(original.messages) - len(result.losses)
    index = index_tool_calls(back.messages)
    assert (index.orphan_results, index.unanswered) == ((), ())
    before = inspect_source(source, InspectOptions())["transcripts"][source.transcripts.index(original)]
    after = inspect_source(again, InspectOptions(model=original.model))["transcripts"][again.transcripts.index(back)]
    assert after["tool_calls"] == before["tool_calls"]
    if not result.losses:  # only opaque encrypted reasoning cannot leave a Codex file
        opaque = before["tokens"]["estimated"] if source.format == "codex" and to != "codex" else 0
        assert after["tokens"]["total"] == before["tokens"]["total"] - opaque


_TEXT = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=24)


@st.composite
def _sessions(draw):
    """Chat sessions of requests, answers and parallel tool calls with their results. An answer is followed by a
    request: Codex has no boundary between two assistant messages in a row, its reader joins them (as it joins
    the items of one model turn)."""
    out, turn = [msg("user", draw(_TEXT))], 0
    for _ in range(draw(st.integers(0, 5))):
        if draw(st.booleans()):
            out += [msg("assistant", draw(_TEXT)), msg("user", draw(_TEXT))]
            continue
        ids = [f"call_{turn}_{k}" for k in range(draw(st.integers(1, 3)))]
        turn += 1
        out.append(msg("assistant", draw(st.just("") | _TEXT),
                       tool_calls=[call(i, "bash", {"cmd": draw(_TEXT)}) for i in ids]))
        out += [msg("tool", draw(_TEXT), tool_call_id=i) for i in ids]
    return out


def _key(messages):
    return [(m.role, m.text, m.tool_call_ids, [(c.id, c.name, orjson.loads(c.arguments)) for c in m.tool_calls])
            for m in messages]


@settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_sessions(), st.sampled_from(["chat", "claude-code", "codex"]))
def test_any_chat_session_converts_and_reads_back_with_the_same_messages(tmp_path, session, to):
    path = jsonl(tmp_path / "s.jsonl", session)
    result = convert_file(path, to, now=NOW)
    assert result.losses == ()
    assert _key(read_bytes(result.data, "out.jsonl").transcript().messages) == _key(
        read_bytes(path.read_bytes(), "s.jsonl").transcript().messages)
