"""Codex rollouts: item grouping, injected context, event-only user turns, compactions, usage, write-back."""

from __future__ import annotations

import pytest
from codex_lines import TS, compacted_rollout, rollout
from conftest import jsonl

from tcompact.errors import InputError
from tcompact.formats import ReadOptions, read_file, render
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
    assert render(sf.transcripts[0], "codex", source=sf).data == path.read_bytes()


def test_context_after_compaction_is_the_replacement_history(tmp_path):
    (t,) = read_file(jsonl(tmp_path / "r.jsonl", compacted_rollout())).transcripts
    assert [(m.role, m.text) for m in t.messages] == [
        ("system", "You are Codex."),
        ("user", "run the tests"),
        ("user", "Summary: two fail."),
        ("user", "now fix them"),
        ("assistant", "Fixed."),
    ]
    assert [(c.kind, c.index, c.line) for c in t.compactions] == [
        ("codex_compacted", 1, 19), ("codex_context_compacted", 3, 20)]


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
    from tcompact.formats.codex import _failed

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
