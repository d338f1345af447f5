"""tcompact eval's editors and scoring on small invented files: each format's records edited in its own
terms (a Codex output inside its JSON envelope, a Claude tool_result given as a list, chat content parts,
the session's own key for tool results), unchanged records byte for byte, the context an agent resumes
from read back after a compaction; the options validated and the walk over a folder."""

from __future__ import annotations

import random

import orjson
import pytest
from conftest import jsonl, msg
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tcompact.compaction import CompactOptions, compact_source
from tcompact.errors import UsageError
from tcompact.evaluation import EvalOptions, evaluate_paths
from tcompact.evaluation.canaries import Canary
from tcompact.evaluation.editors import plant_records
from tcompact.evaluation.planting import Plan, TextEdit, ToolStep
from tcompact.evaluation.scoring import seen_texts, share, survivors, visible_messages
from tcompact.formats import ReadOptions, read_bytes, read_file

ERROR = Canary("error_line-1", "error_line", "ERROR: boom t0ken1", ("ERROR: boom t0ken1",), token="t0ken1")
DECISION = Canary("decision-1", "decision", "We keep t0ken2.", ("We keep t0ken2.",), token="t0ken2")
RULE = Canary("user_constraint-1", "user_constraint", "Never push t0ken4.", ("Never push t0ken4.",), token="t0ken4")
COMMAND = Canary("command-1", "command", "done t0ken3", ("make t0ken3", "done t0ken3"), command="make t0ken3",
                 token="t0ken3")


def planted(path, edits=(), steps=()):
    source = read_file(path, ReadOptions(keep_raw=True))
    transcript = source.transcript()
    layout = Plan(tuple(e.canary for e in edits) + tuple(s.canary for s in steps), tuple(edits), tuple(steps), ())
    data = plant_records(source, transcript, layout)
    return source, data, read_bytes(data, "planted", ReadOptions(format=source.format))


def test_codex_outputs_are_edited_inside_their_json_envelope_and_steps_use_the_rollouts_shell(tmp_path):
    rollout = jsonl(tmp_path / "r.jsonl", [
        {"timestamp": "t0", "type": "session_meta", "payload": {"id": "s1"}},
        {"timestamp": "t1", "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}},
        {"timestamp": "t2", "type": "response_item", "payload": {
            "type": "function_call", "name": "shell", "arguments": '{"command": ["bash", "-lc", "ls"]}', "call_id": "a"}},
        {"timestamp": "t3", "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "a", "output": '{"output":"x\\ny\\nz\\n","metadata":{"exit_code":0}}'}},
        {"timestamp": "t4", "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}},
    ])
    source, data, copy = planted(rollout, edits=(TextEdit(2, ERROR, "line", 0.5), TextEdit(3, DECISION, "append")),
                                 steps=(ToolStep(2, COMMAND, "shell", "call_eval_t0ken3"),))
    lines = data.splitlines()
    assert lines[:3] == rollout.read_bytes().splitlines()[:3]  # untouched records keep their bytes
    output = orjson.loads(lines[3])["payload"]["output"]
    assert orjson.loads(output) == {"output": "x\ny\nERROR: boom t0ken1\nz\n", "metadata": {"exit_code": 0}}
    call, result = (orjson.loads(line)["payload"] for line in lines[4:6])
    assert (call["name"], orjson.loads(call["arguments"])) == ("shell", {"command": ["bash", "-lc", "make t0ken3"]})
    assert orjson.loads(result["output"]) == {"output": "done t0ken3\n", "metadata": {"exit_code": 0,
                                                                                       "duration_seconds": 0.1}}
    assert orjson.loads(lines[6])["payload"]["content"] == [{"type": "output_text", "text": "Done.\n\nWe keep t0ken2."}]
    assert survivors((ERROR, DECISION, COMMAND), seen_texts(copy.transcript().messages)) == {
        "error_line-1", "decision-1", "command-1"}


def test_claude_tool_results_given_as_lists_and_string_user_messages_are_edited_in_place(tmp_path):
    base = {"sessionId": "s1", "cwd": "/home/dev/app", "version": "2.1.14", "isSidechain": False, "userType": "external"}
    session = jsonl(tmp_path / "c.jsonl", [
        {**base, "type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": "Run the tests."}},
        {**base, "type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-01-01T00:00:01Z",
         "message": {"id": "m1", "role": "assistant", "type": "message", "model": "claude", "content": [
             {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest"}}]}},
        {**base, "type": "user", "uuid": "r1", "parentUuid": "a1", "timestamp": "2026-01-01T00:00:02Z",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                                  "content": [{"type": "text", "text": "a\nb\nc"}]}]}},
        {**base, "type": "assistant", "uuid": "a2", "parentUuid": "r1", "timestamp": "2026-01-01T00:00:03Z",
         "message": {"id": "m2", "role": "assistant", "type": "message", "model": "claude", "content": [
             {"type": "text", "text": "All green."}]}},
    ])
    source, data, copy = planted(session, edits=(TextEdit(0, RULE, "append"), TextEdit(2, ERROR, "line", 0.5),
                                                 TextEdit(3, DECISION, "append")))
    lines = [orjson.loads(line) for line in data.splitlines()]
    assert lines[0]["message"]["content"] == "Run the tests.\n\nNever push t0ken4."
    assert lines[2]["message"]["content"][0]["content"] == [{"type": "text", "text": "a\nb\nERROR: boom t0ken1\nc"}]
    assert lines[3]["message"]["content"] == [{"type": "text", "text": "All green.\n\nWe keep t0ken2."}]
    assert [d["uuid"] for d in lines] == ["u1", "a1", "r1", "a2"]
    assert len(copy.transcript().messages) == 4


def test_chat_content_parts_and_the_sessions_own_result_key(tmp_path):
    chat = jsonl(tmp_path / "chat.jsonl", [
        msg("user", [{"type": "text", "text": "Summarise the log."}]),
        msg("assistant", "", tool_calls=[{"id": "c1", "type": "function", "function": {"name": "run_shell",
                                                                                     "arguments": "{}"}}]),
        {"role": "tool", "content": "l1\nl2\nl3", "tool_call_ids": ["c1"]},
        msg("assistant", "It has three lines."),
    ])
    source, data, copy = planted(chat, edits=(TextEdit(0, RULE, "append"),),
                                 steps=(ToolStep(2, COMMAND, "shell", "call_eval_t0ken3"),))
    lines = [orjson.loads(line) for line in data.splitlines()]
    assert lines[0]["content"] == [{"type": "text", "text": "Summarise the log.\n\nNever push t0ken4."}]
    assert lines[3] == {"role": "assistant", "content": "", "tool_calls": [{
        "id": "call_eval_t0ken3", "type": "function", "function": {"name": "bash",
                                                                   "arguments": '{"command":"make t0ken3"}'}}]}
    assert lines[4] == {"role": "tool", "content": "done t0ken3", "tool_call_ids": ["call_eval_t0ken3"]}
    assert [m.role for m in copy.transcript().messages] == ["user", "assistant", "tool", "assistant", "tool",
                                                            "assistant"]


def test_the_context_read_back_is_the_input_when_nothing_was_written(tmp_path):
    chat = jsonl(tmp_path / "chat.jsonl", [msg("user", "Fix it."), msg("assistant", "Fixed.")])
    source = read_file(chat, ReadOptions(keep_raw=True))
    run = compact_source(source, CompactOptions(chain="truncate", now=True, read=ReadOptions(keep_raw=True)))
    assert run.status != "compacted" and visible_messages(run) == run.transcript.messages


def test_the_context_read_back_after_a_claude_compaction_starts_at_its_summary(tmp_path):
    from conftest import SAMPLES

    source = read_file(SAMPLES / "claude_code_session.jsonl", ReadOptions(keep_raw=True))
    run = compact_source(source, CompactOptions(chain="full", now=True, read=ReadOptions(keep_raw=True)))
    after = visible_messages(run)
    assert run.status == "compacted" and len(after) < len(run.transcript.messages)
    assert any(m.text.startswith("This session is being continued from a previous conversation") for m in after)


def test_share_is_rounded_and_none_without_canaries():
    assert (share({"kept": 1, "planted": 3}), share({"kept": 2, "planted": 2}), share({"kept": 0, "planted": 0})) == (
        0.3333, 1.0, None)


# ---- the options and the walk over paths ---------------------------------------------------------


@pytest.mark.parametrize(("values", "message"), [
    ({"per_kind": 0}, "Input should be greater than or equal to 1"),
    ({"per_kind": 21}, "Input should be less than or equal to 20"),
    ({"seed": -1}, "Input should be greater than or equal to 0"),
    ({"cuts": 0}, "Input should be greater than or equal to 1"),
    ({"cuts": 51}, "Input should be less than or equal to 50"),
    ({"metric": "all"}, "Input should be 'canaries', 'needed' or 'both'"),
    ({"colour": 1}, "Extra inputs are not permitted"),
])
def test_eval_options_are_validated_at_the_boundary(values, message):
    with pytest.raises(ValidationError) as info:
        EvalOptions(**values)
    assert info.value.errors()[0]["msg"] == message


def test_the_chains_are_checked_as_compact_checks_them_before_any_work():
    with pytest.raises(UsageError, match=r"^unknown compressor 'nope' — use one of: truncate, "):
        EvalOptions(chains=("nope",)).chain_list()
    with pytest.raises(UsageError) as info:
        EvalOptions(chains=("full",), summarizer="openai").chain_list()
    assert str(info.value) == "--summarizer openai needs --model — e.g. --model gpt-4o-mini or your vLLM model"


def test_a_folder_walk_reports_bad_files_and_passes_over_what_is_no_transcript(tmp_path):
    (tmp_path / "notes.json").write_bytes(orjson.dumps({"hello": 1}))
    (tmp_path / "bad.jsonl").write_text('{"role": "user", "content": "hi"}\n{oops\n')
    jsonl(tmp_path / "ok.jsonl", [msg("user", "Fix it."), msg("assistant", "Fixed it, the parser now works.")])
    report = evaluate_paths([tmp_path], EvalOptions(chains=("truncate",)))
    assert [f["path"] for f in report["files"]] == [str(tmp_path / "ok.jsonl")]
    assert report["errors"] == [{"path": str(tmp_path / "bad.jsonl"), "error": (
        f"{tmp_path / 'bad.jsonl'}:2: not valid JSON (unexpected character, expected a string key at column 2) — fix "
        "or remove that line, or pass --skip-bad-lines to read on without it")}]
    unknown = (f"{tmp_path / 'notes.json'}:1: cannot tell the format (first record has keys: hello) — pass --format "
               "chat, claude-code or codex")
    assert report["not_transcripts"] == [{"path": str(tmp_path / "notes.json"), "reason": unknown}]
    assert report["summary"][0]["files"] == 1 and report["chains"] == ["truncate"]
    named = evaluate_paths([tmp_path / "notes.json"], EvalOptions(chains=("truncate",)))
    assert (named["errors"], named["not_transcripts"]) == ([{"path": str(tmp_path / "notes.json"), "error": unknown}],
                                                           [])  # a file named on the command line is an error


# ---- scoring counts exactly what stands verbatim ---------------------------------------------------


@settings(max_examples=40, deadline=None, database=None)
@given(st.integers(min_value=0, max_value=10_000), st.sets(st.integers(min_value=0, max_value=13), max_size=14))
def test_survival_counts_exactly_the_canaries_left_whole(seed, lost):
    from tcompact.evaluation.canaries import KINDS, draw
    from tcompact.evaluation.scoring import tally

    rng = random.Random(seed)
    canaries = [draw(rng, kind, n, taken="") for kind in KINDS for n in (1, 2)]
    texts = []
    for k, c in enumerate(canaries):  # every value in a text of its own; a lost canary loses one value's token
        values = list(c.values)
        if k in lost:
            values[-1] = values[-1].replace(c.token, c.token[:-1])
        texts += [f"context before {v} and after" for v in values]
    kept = survivors(canaries, texts)
    assert kept == {c.id for k, c in enumerate(canaries) if k not in lost}
    counts = tally(canaries, kept)
    assert {kind: counts[kind]["planted"] for kind in KINDS} == dict.fromkeys(KINDS, 2)
    assert sum(counts[kind]["kept"] for kind in KINDS) == 14 - len(lost)


def test_the_default_chain_keeps_every_canary_of_an_invented_session_at_under_three_tenths(tmp_path):
    from generated_sessions import chat_bytes, tool_heavy_session

    from tcompact.evaluation import evaluate_file

    path = tmp_path / "session.jsonl"
    path.write_bytes(chat_bytes(tool_heavy_session()))
    (result,) = evaluate_file(path, EvalOptions(chains=("full",)))["results"]
    assert result["status"] == "compacted" and result["lost"] == [] and result["ratio"] <= 0.30
    assert (result["pairing_violations"], result["last_request_kept"], result["invariants"]) == (0, True, [])
    assert {kind: counts["planted"] for kind, counts in result["survival"].items()} == {
        "error_line": 2, "file_written": 2, "command": 2, "user_constraint": 2, "user_preference": 2, "decision": 2,
        "early_fact": 2}
