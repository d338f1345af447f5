"""tcompact eval: planting canaries in every format keeps the session well-formed and holds them all,
the same seed plants the same canaries, the scores are exact, the command's output and errors, and the
done-when of issue 12 on the real sessions (the default chain keeps every kind but the early fact)."""

from __future__ import annotations

import random
import shutil

import orjson
import pytest
from conftest import SAMPLES, SHARED, jsonl, msg, real_file
from openai_server import FakeOpenAI, error
from test_docs import _keys
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.defaults import DEFAULT_CHAIN
from tcompact.compaction import CompactOptions
from tcompact.evaluation import KINDS, EvalOptions, evaluate_file, evaluate_paths, summarize
from tcompact.evaluation.canary_eval import _digest
from tcompact.evaluation.canaries import Canary, draw, fresh_token
from tcompact.evaluation.editors import append_paragraph, insert_line, plant_records
from tcompact.evaluation.planting import plan
from tcompact.evaluation.scoring import last_request_kept, pairing_violations, seen_texts, survivors, tally
from tcompact.formats import ReadOptions, read_bytes, read_file
from tcompact.model import Message, ToolCall, index_tool_calls
from tcompact.rounds import is_real_user

SAMPLE_FILES = ["chat_tool_session.jsonl", "claude_code_session.jsonl", "codex_rollout.jsonl"]
REAL = ["ccviewer", "codemie", "drmaciver", "codex", "sweagent"]
SWE_FIXTURE = SAMPLES.parent / "tests" / "fixtures" / "swe_agent_small.traj"  # a small invented trajectory


def planted(path, seed=1, per_kind=2):
    """(original source, its main transcript, the plan, the planted source read back)."""
    source = read_file(path)
    transcript = source.transcript()
    rng = random.Random(f"{seed}:{_digest(source)}:{transcript.id}")
    layout = plan(transcript.messages, rng, per_kind=per_kind, taken="\n".join(seen_texts(transcript.messages)))
    data = plant_records(source, transcript, layout)
    return source, transcript, layout, read_bytes(data, "planted", ReadOptions(format=source.format))


def check_well_formed(source, transcript, layout, copy):
    after = copy.transcript(transcript.id).messages
    assert copy.format == source.format
    assert len(after) == len(transcript.messages) + 2 * len(layout.steps)
    before_index, after_index = index_tool_calls(transcript.messages), index_tool_calls(after)
    assert (len(after_index.orphan_results), len(after_index.unanswered)) == (
        len(before_index.orphan_results), len(before_index.unanswered))
    assert sum(map(is_real_user, after)) == sum(map(is_real_user, transcript.messages))
    texts = seen_texts(after)
    assert survivors(layout.canaries, texts) == {c.id for c in layout.canaries}
    users = [m.text for m in after if is_real_user(m)]
    for c in layout.canaries:
        if c.kind in ("user_constraint", "user_preference"):
            assert any(c.text in u for u in users), c.id
    assert [t.id for t in copy.transcripts] == [t.id for t in source.transcripts]


@pytest.mark.parametrize("name", SAMPLE_FILES)
def test_planting_keeps_each_sample_well_formed(name):
    source, transcript, layout, copy = planted(SAMPLES / name)
    assert [c.kind for c in layout.canaries] == [k for k in KINDS for _ in range(2)] and layout.skipped == ()
    check_well_formed(source, transcript, layout, copy)
    if not source.meta.get("document"):  # JSON Lines: only the edited records change, and new ones are added
        old = [r.raw for r in source.records]
        new = [r.raw for r in copy.records]
        assert len(new) == len(old) + 2 * len(layout.steps)
        assert sum(1 for line in old if line not in new) <= len(layout.edits) + len(layout.steps)


@pytest.mark.parametrize("key", REAL)
def test_planting_keeps_each_real_session_well_formed(key):
    check_well_formed(*planted(real_file(key)))


def test_planting_keeps_a_small_swe_agent_trajectory_well_formed():
    check_well_formed(*planted(SWE_FIXTURE))


def test_claude_steps_are_spliced_into_the_uuid_chain():
    source, transcript, layout, copy = planted(SAMPLES / "claude_code_session.jsonl")
    lines = [r.data for r in copy.records if r.data and r.data.get("uuid")]
    by_uuid = {d["uuid"]: d for d in lines}
    for step in layout.steps:
        call = next(d for d in lines if d.get("message", {}).get("id") == f"msg_{step.call_id}")
        answer = next(d for d in lines if d.get("parentUuid") == call["uuid"])
        assert answer["message"]["content"][0]["tool_use_id"] == step.call_id
        assert call["parentUuid"] in by_uuid  # hung off the line before the next reply
        assert any(d.get("parentUuid") == answer["uuid"] for d in lines)  # and the next reply hangs off it
        assert call["sessionId"] == answer["sessionId"] == lines[0]["sessionId"]


def test_codex_user_message_and_its_event_mirror_change_together(tmp_path):
    rollout = jsonl(tmp_path / "r.jsonl", [
        {"timestamp": "t0", "type": "session_meta", "payload": {"id": "s1", "base_instructions": {"text": "sys"}}},
        {"timestamp": "t1", "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix the parser."}]}},
        {"timestamp": "t1", "type": "event_msg", "payload": {"type": "user_message", "message": "Fix the parser."}},
        {"timestamp": "t2", "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Fixed it."}]}},
    ])
    source, transcript, layout, copy = planted(rollout, per_kind=1)
    assert layout.skipped == ("error_line", "file_written", "command")  # no tool output, no step point
    users = [m.text for m in copy.transcript().messages if m.role == "user"]
    assert len(users) == 1 and users[0].startswith("Fix the parser.\n\n")  # not doubled by the mirror
    events = [r.data["payload"]["message"] for r in copy.records if r.data["type"] == "event_msg"]
    assert events == users


def test_documents_are_planted_in_their_own_lists(tmp_path):
    episode = [msg("user", "Book a flight to Oslo, never on a Friday."),
               msg("assistant", "", tool_calls=[{"id": "c1", "type": "function", "function": {
                   "name": "search_flights", "arguments": "{\"to\": \"OSL\"}"}}]),
               msg("tool", "SK123 08:10\nSK125 12:40\nSK127 18:05", tool_call_id="c1"),
               msg("assistant", "I found three flights. I will book SK125 because it is not on a Friday."),
               msg("user", "Thanks.")]
    tau = tmp_path / "tau.json"
    tau.write_bytes(orjson.dumps([{"task_id": 7, "trial": 0, "reward": 1.0, "traj": episode}]))
    array = tmp_path / "chat.json"
    array.write_bytes(orjson.dumps(episode))
    for path in (tau, array):
        source, transcript, layout, copy = planted(path, per_kind=1)
        assert layout.skipped == ()
        check_well_formed(source, transcript, layout, copy)


def test_text_edits_land_on_line_boundaries_and_inside_slash_command_arguments():
    assert insert_line("Chunk ID: 1\nProcess exited with code 0\nOutput:\na\nb\nc\nd", "ERR", 0.5) == \
        "Chunk ID: 1\nProcess exited with code 0\nOutput:\na\nb\nERR\nc\nd"
    assert insert_line("one line", "ERR", 0.9) == "ERR\none line"
    assert insert_line("head\ntail", "ERR", 0.0) == "head\nERR\ntail"
    assert append_paragraph("Fix it.\n", "Never push.") == "Fix it.\n\nNever push.\n"
    assert append_paragraph("<command-name>/x</command-name>\n<command-args>go </command-args>", "Never push.") == \
        "<command-name>/x</command-name>\n<command-args>go Never push.</command-args>"
    assert append_paragraph("", "Never push.") == "Never push."


def test_canaries_are_fresh_and_plain():
    rng = random.Random(5)
    taken = "abc123 " * 10
    tokens = {fresh_token(rng, taken) for _ in range(200)}
    assert len(tokens) == 200 and all(len(t) == 6 and t not in taken for t in tokens)
    for kind in KINDS:
        c = draw(random.Random(kind), kind, 1, taken="")
        assert c.id == f"{kind}-1" and c.token in "\n".join(c.values)
        assert all(v.isascii() and '"' not in v and "\\" not in v and "\t" not in v for v in c.values)
    command = draw(random.Random(3), "command", 2, taken="")
    assert command.values == (command.command, command.text) and command.id == "command-2"


# -- scoring ---------------------------------------------------------------------------------------


def test_survival_needs_every_value_verbatim():
    c1 = Canary("command-1", "command", "done in 3s", ("make x", "done in 3s"), command="make x")
    c2 = Canary("decision-1", "decision", "We keep X.", ("We keep X.",))
    texts = ["ran `make x` → ok: done in 3s", "we keep x."]
    assert survivors([c1, c2], texts) == {"command-1"}
    assert survivors([c1], ["make x"]) == set()
    assert tally([c1, c2], {"command-1"})["command"] == {"kept": 1, "planted": 1}
    assert tally([c1, c2], {"command-1"})["decision"] == {"kept": 0, "planted": 1}
    assert tally([c1, c2], set())["early_fact"] == {"kept": 0, "planted": 0}


def test_pairing_violations_count_only_what_the_compaction_broke():
    call = Message(role="assistant", tool_calls=(ToolCall("a", "bash", "{}"),))
    other = Message(role="assistant", tool_calls=(ToolCall("b", "bash", "{}"),))
    res_a = Message(role="tool", content="x", tool_call_ids=("a",))
    orphan = Message(role="tool", content="y", tool_call_ids=("zz",))
    before = [call, res_a, other, orphan]  # the input already lacks b's result and zz's call
    assert pairing_violations(before, before) == 0
    assert pairing_violations(before, [res_a, other, orphan]) == 1  # a's result lost its call
    assert pairing_violations(before, [call, other]) == 1  # a's call lost its result
    assert seen_texts([call, res_a]) == ["\nbash {}", "x"]


def test_the_last_request_must_stand_verbatim():
    before = [Message(role="user", content="first"), Message(role="user", content="  Ship v2 today.  ")]
    assert last_request_kept(before, [Message(role="user", content="…\nShip v2 today.\n")]) is True
    assert last_request_kept(before, [Message(role="user", content="Ship v2")]) is False
    assert last_request_kept([Message(role="assistant", content="hi")], []) is None


def test_summarize_adds_up_files():
    def result(chain, kept, planted, before, after, pairs=0, request=True, status="compacted"):
        survival = {k: {"kept": 0, "planted": 0} for k in KINDS}
        survival["decision"] = {"kept": kept, "planted": planted}
        return {"chain": chain, "status": status, "tokens_before": before, "tokens_after": after,
                "ratio": round(after / before, 4), "survival": survival, "pairing_violations": pairs,
                "last_request_kept": request}

    files = [{"results": [result("full", 2, 2, 1000, 100), result("micro", 1, 2, 1000, 900)]},
             {"results": [result("full", 1, 2, 3000, 600, pairs=1, request=None),
                          result("micro", 0, 2, 3000, 3000, status="failed")]}]
    full, micro = summarize(files, ["full", "micro"])
    assert full["survival"]["decision"] == {"kept": 3, "planted": 4, "share": 0.75}
    assert full["survival"]["error_line"] == {"kept": 0, "planted": 0, "share": None}
    assert (full["tokens_before"], full["tokens_after"], full["ratio"], full["worst_ratio"]) == (4000, 700, 0.175,
                                                                                                 0.2)
    assert (full["pairing_violations"], full["last_request_kept"], full["failed"]) == (1, {"kept": 1, "of": 1}, 0)
    assert (micro["overall"], micro["failed"], micro["worst_ratio"]) == ({"kept": 1, "planted": 4, "share": 0.25}, 1,
                                                                         1.0)


# -- evaluate_file ---------------------------------------------------------------------------------


def test_evaluate_file_is_deterministic_for_a_seed_and_independent_of_the_path(tmp_path):
    options = EvalOptions(chains=("micro", "full"))
    first = evaluate_file(SAMPLES / "codex_rollout.jsonl", options)
    assert evaluate_file(SAMPLES / "codex_rollout.jsonl", options) == first
    shutil.copy(SAMPLES / "codex_rollout.jsonl", tmp_path / "elsewhere.jsonl")
    moved = evaluate_file(tmp_path / "elsewhere.jsonl", options)
    assert moved["canaries"] == first["canaries"]  # the places and texts come from the seed and the bytes
    # (the tokens may differ: micro's markers name the path of the original)
    assert [(r["survival"], r["lost"]) for r in moved["results"]] == [(r["survival"], r["lost"])
                                                                      for r in first["results"]]
    other = evaluate_file(SAMPLES / "codex_rollout.jsonl", options.model_copy(update={"seed": 2}))
    assert other["canaries"] != first["canaries"]
    assert list(first) == ["path", "format", "transcript", "messages", "skipped_kinds", "canaries", "results"]
    assert [r["chain"] for r in first["results"]] == ["micro", "full"]
    assert len(first["canaries"]) == 14 and first["format"] == "codex"
    orjson.dumps(first)  # JSON-serialisable as it is


def test_evaluate_file_runs_a_chain_as_compact_force_would():
    result = evaluate_file(SAMPLES / "chat_tool_session.jsonl", EvalOptions(chains=("truncate,full",)))["results"][0]
    assert result["status"] == "compacted" and result["reason"].startswith("truncate: ")
    assert result["reason"].endswith("; full: compacted")
    assert 0 < result["ratio"] < 0.5 and result["pairing_violations"] == 0 and result["last_request_kept"] is True
    assert result["invariants"] == []
    assert EvalOptions().compact_options("full") == CompactOptions(chain="full", now=True,
                                                                   read=EvalOptions().read_options())


def test_the_default_chains_are_every_compressor_then_the_default():
    every = ["truncate", "offload", "micro", "mask", "current-round", "dialogue", "round-level", "full", "working-set"]
    assert EvalOptions(default_chain="truncate,full").chain_list() == [*every, "truncate,full"]
    assert EvalOptions(default_chain="full").chain_list() == every  # the default is one of them: listed once
    assert CompactOptions().chain == DEFAULT_CHAIN == "working-set"


# -- the command -----------------------------------------------------------------------------------


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    return CliRunner()


def test_eval_command_prints_the_chains_side_by_side(runner):
    result = runner.invoke(app, ["eval", str(SAMPLES / "chat_tool_session.jsonl"), "-c", "micro", "-c",
                                 "working-set"])
    assert (result.exit_code, result.stderr) == (0, "")
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    assert lines[:6] == [
        "Canaries: 14 planted in 1 session(s), 2 of each kind per session, seed 1; every chain compacted with --now",
        "Kept verbatim, per chain",
        "",
        "                micro   working-set (default)",
        " ────────────────────────────────────────────",
        " error line       50%                    100%"]
    rows = {line.split("  ")[0].strip(): line.split()[-2:] for line in lines[6:20] if line.strip()}
    assert rows["pairing"] == ["0", "0"] and rows["last request"] == ["1/1", "1/1"]
    assert rows["constraint"] == ["100%", "100%"]


def test_eval_json_has_every_key_documented(runner):
    from conftest import REPO

    result = runner.invoke(app, ["eval", str(SAMPLES), "-c", "full", "--json", "--per-kind", "1", "--seed", "3"])
    assert result.exit_code == 0, result.stderr
    doc = orjson.loads(result.stdout)
    assert (doc["seed"], doc["per_kind"], doc["chains"], doc["default_chain"]) == (3, 1, ["full"], DEFAULT_CHAIN)
    assert [f["path"].rsplit("/", 1)[-1] for f in doc["files"]] == SAMPLE_FILES
    assert [n["path"].rsplit("/", 1)[-1] for n in doc["not_transcripts"]] == [] and doc["errors"] == []
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("### `tcompact eval [PATH...]`")
    section = readme[start:readme.index("\n## ", start)]
    keys = _keys(doc, set())
    assert sorted(k for k in keys - set(KINDS) if f'"{k}"' not in section) == []


def test_eval_errors_are_one_line(runner, tmp_path):
    result = runner.invoke(app, ["eval", "missing.jsonl"])
    assert (result.exit_code, result.stderr) == (2, "Error: missing.jsonl: no such file or folder — check the path\n")
    result = runner.invoke(app, ["eval", str(SAMPLES / "codex_rollout.jsonl"), "-c", "full,nope"])
    assert result.exit_code == 2 and result.stderr.startswith("Error: unknown compressor 'nope' — use one of: ")
    for args, message in ((["--summarizer", "openai"], "--summarizer openai needs --model — e.g. --model "
                                                        "gpt-4o-mini or your vLLM model"),
                          (["--base-url", "http://x"], "--base-url is an option of the openai summariser, and the "
                                                       "summariser is extractive — add --summarizer openai, or leave "
                                                       "--base-url out"),
                          (["--context-window", "0"], "--context-window must be a positive number of tokens")):
        result = runner.invoke(app, ["eval", "missing.jsonl", *args])  # options first, as compact checks them
        assert (result.exit_code, result.stderr) == (2, f"Error: {message}\n"), args
    result = runner.invoke(app, ["eval", str(SAMPLES / "codex_rollout.jsonl"), "--per-kind", "0"])
    assert (result.exit_code, result.stderr) == (
        2, "Error: --per-kind must be 1 or more, not 0 — see tcompact eval --help\n")
    (tmp_path / "bad.jsonl").write_text('{"role": "user", "content": "hi"}\n{broken\n')
    result = runner.invoke(app, ["eval", "bad.jsonl", str(SAMPLES / "codex_rollout.jsonl"), "-c", "micro", "--json"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and result.stderr.startswith("Error: bad.jsonl:2")
    assert [f["path"] for f in orjson.loads(result.stdout)["files"]] == [str(SAMPLES / "codex_rollout.jsonl")]


def test_a_failed_compaction_counts_nothing_and_exits_1(runner, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-0000000000000000000000")
    with FakeOpenAI() as server:
        for _ in range(3):
            server.enqueue(error(401, "invalid api key"))
        result = runner.invoke(app, ["eval", str(SAMPLES / "chat_tool_session.jsonl"), "-c", "full", "--summarizer",
                                     "openai", "--model", "m", "--base-url", server.base_url, "--json"])
    assert result.exit_code == 1
    assert result.stderr == ("Error: 1 compaction(s) failed (full first) — their rows count nothing as kept; see the "
                             "reasons with --json\n")
    row = orjson.loads(result.stdout)["summary"][0]
    assert (row["failed"], row["overall"]["kept"]) == (1, 0)


# -- done when -------------------------------------------------------------------------------------


def test_the_default_chain_keeps_every_kind_at_under_three_tenths_of_the_real_sessions():
    if not SHARED.exists():
        pytest.skip(f"real transcripts not found at {SHARED} (set TCOMPACT_SHARED_DIR); CI always has them")
    report = evaluate_paths([SHARED], EvalOptions(chains=(DEFAULT_CHAIN,), default_chain=DEFAULT_CHAIN))
    assert len(report["files"]) == 5 and report["errors"] == []
    (row,) = report["summary"]
    shares = {kind: counts["share"] for kind, counts in row["survival"].items()}
    assert all(share >= 0.9 for kind, share in shares.items() if kind != "early_fact"), shares
    assert row["ratio"] <= 0.30 and row["pairing_violations"] == 0  # all sessions together
    assert row["last_request_kept"] == {"kept": 5, "of": 5} and row["failed"] == 0


# -- the records a step adds, format by format ---------------------------------------------------------


def _one_step(source, transcript, action):
    from tcompact.evaluation.planting import Plan, ToolStep

    canary = (Canary("file_written-1", "file_written", "# t0ken1\n", ("docs/n_t0ken1.md",), token="t0ken1")
              if action == "write" else
              Canary("command-1", "command", "done t0ken1", ("make t0ken1", "done t0ken1"), command="make t0ken1",
                     exit_code=2, token="t0ken1"))
    after = next(i for i, m in enumerate(transcript.messages) if m.role == "tool")
    layout = Plan((canary,), (), (ToolStep(after, canary, action, "call_eval_t0ken1"),), ())
    return read_bytes(plant_records(source, transcript, layout), "x", ReadOptions(format=source.format))


def test_a_claude_step_is_a_bash_or_write_pair_of_lines(tmp_path):
    source = read_file(SAMPLES / "claude_code_session.jsonl")
    copy = _one_step(source, source.transcript(), "shell")
    lines = [r.data for r in copy.records if r.data and "call_eval_t0ken1" in orjson.dumps(r.data).decode()]
    call, answer = lines
    assert call["type"] == "assistant" and call["message"]["content"] == [
        {"type": "tool_use", "id": "call_eval_t0ken1", "name": "Bash",
         "input": {"command": "make t0ken1", "description": "Run a command"}}]
    assert answer["message"]["content"] == [{"tool_use_id": "call_eval_t0ken1", "type": "tool_result",
                                             "content": "Exit code 2\ndone t0ken1", "is_error": True}]
    messages = copy.transcript().messages
    at = next(i for i, m in enumerate(messages) if m.tool_calls and m.tool_calls[0].id == "call_eval_t0ken1")
    assert messages[at + 1].is_error and messages[at + 1].text == "Exit code 2\ndone t0ken1"
    write = _one_step(source, source.transcript(), "write")
    (path,) = [c.arguments for m in write.transcript().messages for c in m.tool_calls if c.id == "call_eval_t0ken1"]
    assert orjson.loads(path) == {"file_path": "/home/dev/invoice-app/docs/n_t0ken1.md", "content": "# t0ken1\n"}


def test_a_codex_step_is_an_exec_command_or_an_apply_patch(tmp_path):
    rollout = jsonl(tmp_path / "r.jsonl", [
        {"timestamp": "t0", "type": "session_meta", "payload": {"id": "s1"}},
        {"timestamp": "t1", "type": "event_msg", "payload": {"type": "user_message", "message": "go"}},
        {"timestamp": "t2", "type": "response_item", "payload": {"type": "function_call", "name": "exec_command",
                                                                  "arguments": "{\"cmd\": \"ls\"}", "call_id": "a"}},
        {"timestamp": "t3", "type": "response_item", "payload": {"type": "function_call_output", "call_id": "a",
                                                                  "output": "Process exited with code 0\nx"}},
        {"timestamp": "t4", "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}},
    ])
    source = read_file(rollout)
    shell = _one_step(source, source.transcript(), "shell")
    added = [r.data for r in shell.records if r.data and "call_eval" in orjson.dumps(r.data).decode()]
    assert [(d["timestamp"], d["payload"]["type"]) for d in added] == [("t3", "function_call"),
                                                                      ("t3", "function_call_output")]
    assert added[0]["payload"]["arguments"] == '{"cmd":"make t0ken1"}'
    assert added[1]["payload"]["output"] == ("Chunk ID: t0ken1\nWall time: 0.1000 seconds\nProcess exited with code "
                                             "2\nOriginal token count: 3\nOutput:\ndone t0ken1\n")
    assert shell.transcript().messages[4].is_error  # the reader takes the exit code
    write = _one_step(source, source.transcript(), "write")
    added = [r.data["payload"] for r in write.records if r.data and "call_eval" in orjson.dumps(r.data).decode()]
    assert added[0] == {"type": "custom_tool_call", "status": "completed", "call_id": "call_eval_t0ken1",
                        "name": "apply_patch", "input": "*** Begin Patch\n*** Add File: docs/n_t0ken1.md\n+# t0ken1\n"
                                                        "*** End Patch\n"}
    assert orjson.loads(added[1]["output"])["output"] == "Success. Updated the following files:\nA docs/n_t0ken1.md\n"


@pytest.mark.parametrize(("real", "function"), [
    (False, {"name": "write_file", "arguments": '{"path":"docs/n_t0ken1.md","content":"# t0ken1\\n"}'}),
    (True, {"name": "create", "arguments": '{"filename":"docs/n_t0ken1.md"}'}),  # the trajectory's own tool
], ids=["fixture", "real"])
def test_a_swe_agent_step_follows_the_trajectorys_own_keys(real, function):
    source = read_file(real_file("sweagent") if real else SWE_FIXTURE)
    copy = _one_step(source, source.transcript(), "write")
    history = copy.records[0].data["history"]
    call = next(h for h in history if h.get("tool_calls") and h["tool_calls"][0]["id"] == "call_eval_t0ken1")
    answer = history[history.index(call) + 1]
    assert (call["agent"], call["message_type"], call["tool_calls"][0]["function"]) == ("main", "action", function)
    assert answer == {"role": "tool", "content": "File created successfully at: docs/n_t0ken1.md",
                      "tool_call_ids": ["call_eval_t0ken1"], "agent": "main", "message_type": "observation"}


@pytest.mark.parametrize(("name", "chain"), [("codex_rollout.jsonl", "dialogue"),
                                             ("claude_code_session.jsonl", "current-round")])
def test_planting_into_a_compacted_session(tmp_path, name, chain):
    # a compacted Codex rollout's context starts in a `compacted` line's replacement_history: the canaries and
    # steps go into those items; a compacted Claude session's into the lines after its compact_boundary
    from tcompact.compaction import compact_file

    run = compact_file(SAMPLES / name, CompactOptions(chain=chain, now=True))
    path = tmp_path / name
    path.write_bytes(run.output.data)
    source, transcript, layout, copy = planted(path)
    check_well_formed(source, transcript, layout, copy)
    if name.startswith("codex"):  # the dialogue output keeps the last round raw: its calls and results
        assert len(layout.steps) == 4 and layout.skipped == ()
    else:  # current-round left only the user's messages and the summary: no tool output, no assistant text
        assert layout.skipped == ("error_line", "file_written", "command", "decision", "early_fact")
