"""``tcompact replay``: verify from dumps alone, catch edits, re-run against another backend, tabulate."""

from __future__ import annotations

import json
import shutil

import orjson
import pytest
from conftest import SAMPLES
from openai_server import FakeOpenAI, ok
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.dump import content_hashes

SUMMARISING = ["current-round", "dialogue", "full", "round-level", "truncate,dialogue", "micro,round-level"]
SETTINGS = {"round-level": ["--set", "round-level.first_pass_target_tokens=300"]}


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "120")
    return CliRunner()


def compact(runner, source, chain, tmp_path, dumps="dumps"):
    extra = SETTINGS["round-level"] if "round-level" in chain else []
    result = runner.invoke(app, ["compact", str(source), "-c", chain, "--now", "--force", "-o", f"out-{chain}.jsonl",
                                 "--dump-dir", dumps, *extra])
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize("chain", SUMMARISING)
@pytest.mark.parametrize("name", ["chat_tool_session.jsonl", "claude_code_session.jsonl", "codex_rollout.jsonl"])
def test_compact_then_verify_without_the_transcript(runner, tmp_path, name, chain):
    source = tmp_path / name
    shutil.copy(SAMPLES / name, source)
    compact(runner, source, chain, tmp_path)
    source.unlink()
    # a run whose summary the benefit check declines writes no transcript, but its dumps verify all the same
    (tmp_path / f"out-{chain}.jsonl").unlink(missing_ok=True)
    result = runner.invoke(app, ["replay", "dumps", "--verify"])
    assert result.exit_code == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    count = len(list((tmp_path / "dumps").iterdir()))
    assert count >= 1 and lines[-1] == f"{count} dump(s): {count} OK, 0 mismatched"
    assert all(line.startswith("OK ") for line in lines[:-1])


def _two_call_run(runner, tmp_path):
    result = runner.invoke(app, ["compact", str(SAMPLES / "chat_tool_session.jsonl"), "-c", "round-level", "--now",
                                 "-o", "out.jsonl", "--dump-dir", "dumps", "--concurrency", "1",
                                 "--set", "round-level.first_pass_target_tokens=300",
                                 "--set", "round-level.compression_call_max_tokens=3000"])
    assert result.exit_code == 0, result.stderr
    first, second = sorted((tmp_path / "dumps").iterdir(), key=lambda p: orjson.loads(p.read_bytes())["run"]["call"])
    return first, second


def test_a_run_stores_the_messages_before_it_once_and_later_calls_name_them(runner, tmp_path):
    first, second = _two_call_run(runner, tmp_path)
    one, two = orjson.loads(first.read_bytes()), orjson.loads(second.read_bytes())
    assert (one["schema_version"], two["schema_version"]) == (3, 3)
    assert one["run"]["id"] == two["run"]["id"] and (one["run"]["call"], two["run"]["call"]) == (1, 2)
    assert len(one["context_before"]["messages"]) == 33
    digest = __import__("hashlib").sha256(orjson.dumps(one["context_before"]["messages"],
                                                        option=orjson.OPT_SORT_KEYS)).hexdigest()
    assert two["context_before"] == {"in_call": 1, "messages_sha256": digest,
                                     "total_tokens": one["context_before"]["total_tokens"]}
    assert one["context_after"] is None and len(two["context_after"]["messages"]) < 33
    # the later dump alone: its run's first dump is found beside it
    result = runner.invoke(app, ["replay", str(second), "--verify"])
    assert (result.exit_code, result.stdout.splitlines()[-1]) == (0, "1 dump(s): 1 OK, 0 mismatched")


def test_a_later_call_without_its_first_dump_or_with_another_runs_is_refused(runner, tmp_path):
    first, second = _two_call_run(runner, tmp_path)
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(second, alone / second.name)
    result = runner.invoke(app, ["replay", "alone", "--verify"])
    assert (result.exit_code, result.stdout) == (2, f"FAILED {second.name}: the messages before this run are in its "
                                                    "call 1, whose dump is not in alone — keep the dumps of a run "
                                                    "together in one folder\n1 dump(s): 0 OK, 0 mismatched, 1 failed\n")
    edit(second, lambda d: d["context_before"].update(in_call=2))  # names itself: no messages there
    result = runner.invoke(app, ["replay", "dumps", "--verify"])
    assert (result.exit_code, result.stdout.splitlines()[1]) == (
        2, f"FAILED {second.name}: field context_before does not match the messages of call 2 ({second.name}) — the "
           "dumps of this run were edited or mixed with another run's; compact again to get new ones")
    edit(second, lambda d: d["context_before"].update(in_call=1))
    edit(first, lambda d: d["context_before"]["messages"][1].update(content="I never said that") or
         d.update(hashes=content_hashes(d)))
    result = runner.invoke(app, ["replay", "dumps", "--verify"])
    assert (result.exit_code, result.stdout.splitlines()[1]) == (
        2, f"FAILED {second.name}: field context_before does not match the messages of call 1 ({first.name}) — the "
           "dumps of this run were edited or mixed with another run's; compact again to get new ones")


def test_schema_1_dumps_are_still_read(runner, tmp_path):
    compact(runner, SAMPLES / "chat_tool_session.jsonl", "dialogue", tmp_path)
    (dump,) = (tmp_path / "dumps").iterdir()
    edit(dump, lambda d: d.update(schema_version=1))
    result = runner.invoke(app, ["replay", "dumps", "--verify"])
    assert (result.exit_code, result.stdout.splitlines()[-1]) == (0, "1 dump(s): 1 OK, 0 mismatched")


def edit(path, change):
    doc = orjson.loads(path.read_bytes())
    change(doc)
    path.write_bytes(orjson.dumps(doc))
    return doc


def test_an_edited_dump_is_named_with_its_field(runner, tmp_path):
    compact(runner, SAMPLES / "chat_tool_session.jsonl", "dialogue", tmp_path)
    (dump,) = (tmp_path / "dumps").iterdir()
    edit(dump, lambda d: d["context_before"]["messages"][1].update(content="I never said that"))
    result = runner.invoke(app, ["replay", "dumps"])
    assert (result.exit_code, result.stderr) == (2, "")
    assert result.stdout == (f"FAILED {dump.name}: field context_before does not match its recorded hash — the dump "
                             "was edited after it was written; compact again to get a new one\n"
                             "1 dump(s): 0 OK, 0 mismatched, 1 failed\n")
    result = runner.invoke(app, ["replay", "dumps", "--table"])  # a table needs every dump whole
    assert (result.exit_code, result.stderr) == (
        2, f"Error: dumps/{dump.name}: field context_before does not match its recorded hash — the dump was edited "
           "after it was written; compact again to get a new one\n")


def test_a_result_that_no_longer_rebuilds_is_a_mismatch(runner, tmp_path):
    compact(runner, SAMPLES / "chat_tool_session.jsonl", "dialogue", tmp_path)
    (dump,) = (tmp_path / "dumps").iterdir()

    def change(doc):  # as if the compressor had produced something else: hashes re-signed to match
        doc["context_after"]["messages"][1]["content"] = "a different memory block"
        doc["hashes"] = content_hashes(doc)

    edit(dump, change)
    result = runner.invoke(app, ["replay", "dumps", "--verify"])
    assert result.exit_code == 1
    first, summary = result.stdout.splitlines()
    assert first == (f'MISMATCH {dump.name}: context_after.messages[1].content: expected "a different memory block", '
                     'got "<memory_block_dialogue>\\n<meaning>\\nThis is a compressed handoff o…"')
    assert summary == "1 dump(s): 0 OK, 1 mismatched"


def codex_with_fake_keys(path):
    """A Codex rollout whose tool outputs are test files holding fake API keys (six rounds, two reads each)."""
    def line(typ, payload):
        return {"timestamp": "2026-01-01T00:00:00.000Z", "type": typ, "payload": payload}

    keys = ('OPENAI_API_KEY = "sk-proj-' + "Fake0Key1For2Tests3Only4" * 2 + '"\nAWS_ACCESS_KEY_ID = "AKIA'
            'FAKETESTKEY12345"\nGITHUB_TOKEN = "ghp_fakeTestToken0123456789abcdefghijABCD"\n')
    out = [line("session_meta", {"id": "019f0000-0000-7000-8000-000000000005", "cwd": "/src/app",
                                 "base_instructions": {"text": "You are Codex, a coding agent."}}),
           line("turn_context", {"cwd": "/src/app", "model": "gpt-5-codex"})]
    for r in range(6):
        out.append(line("response_item", {"type": "message", "role": "user",
                                          "content": [{"type": "input_text", "text": f"Round {r}: make it pass"}]}))
        for k in range(2):
            cid = f"call_{r}_{k}"
            out.append(line("response_item", {"type": "function_call", "name": "shell", "call_id": cid,
                                              "arguments": json.dumps({"command": ["cat", f"tests/test_{r}_{k}.py"]})}))
            body = "import client\n\n" + keys + "".join(f"\ndef test_{r}_{k}_{i}():\n    assert client.call({i}) == "
                                                        f"{2 * i}\n" for i in range(40))
            out.append(line("response_item", {"type": "function_call_output", "call_id": cid,
                                              "output": json.dumps({"output": body, "metadata": {"exit_code": 0}})}))
        out.append(line("response_item", {"type": "message", "role": "assistant",
                                          "content": [{"type": "output_text", "text": f"Round {r} passes."}]}))
    path.write_text("".join(json.dumps(o) + "\n" for o in out))
    return path


def test_round_level_dumps_with_redacted_secrets_verify(runner, tmp_path):
    # issue 13 item 5: the round-level prompt states current_context_window_tokens, counted on the
    # original texts; the rebuild counted the redacted ones, and verify reported a false MISMATCH
    compact(runner, codex_with_fake_keys(tmp_path / "keys.jsonl"), "round-level", tmp_path)
    (dump,) = (tmp_path / "dumps").iterdir()
    doc = orjson.loads(dump.read_bytes())
    assert (doc["redactions"], doc["request"]["stage"]) == (13, "l0_to_l1")
    assert "- current_context_window_tokens: 12565\n" in doc["request"]["messages_sent"][1]["content"]
    result = runner.invoke(app, ["replay", "dumps", "--verify"])
    assert (result.exit_code, result.stdout) == (0, f"OK {dump.name} (token figures not compared: 13 redacted "
                                                    "text(s))\n1 dump(s): 1 OK, 0 mismatched\n")

    def change(d):  # a request the rebuild does not make: the first differing field and both values
        sent = d["request"]["messages_sent"][1]
        sent["content"] = sent["content"].replace("- phase: l0_to_l1", "- phase: l1_to_l2")
        d["hashes"] = content_hashes(d)

    edit(dump, change)
    result = runner.invoke(app, ["replay", "dumps", "--verify"])
    assert (result.exit_code, result.stdout) == (1, (
        f'MISMATCH {dump.name}: request.messages_sent[1].content: expected "…ression Task]\\n- phase: l1_to_l2\\n'
        '- target_summary_tokens: #\\n- kee…", got "…ression Task]\\n- phase: l0_to_l1\\n- target_summary_tokens: '
        '#\\n- kee…"\n1 dump(s): 0 OK, 1 mismatched\n'))


@pytest.mark.parametrize(("content", "message"), [
    (b'{"schema_version": 1, "processor"', "not a valid JSON dump (unexpected end of data at line 1) — the dump is "
                                           "truncated or damaged; compact again to get a new one"),
    (b'{"schema_version": 7}', "schema_version 7 is not supported (this tcompact reads 1, 2 and 3) — replay it with the "
                               "tcompact that wrote it"),
    (b'{"hello": 1}', "not a tcompact compression dump (no schema_version) — pass dumps written by tcompact compact "
                      "--dump-dir"),
    (b'{"schema_version": 1, "processor": {}}', "field run is missing — the dump was edited or cut"),
])
def test_bad_dumps_give_one_line(runner, tmp_path, content, message):
    (tmp_path / "d.json").write_bytes(content)
    result = runner.invoke(app, ["replay", "d.json"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, f"FAILED d.json: {message}\n1 dump(s): 0 OK, 0 mismatched, 1 failed\n", "")
    result = runner.invoke(app, ["replay", "d.json", "--table"])
    assert (result.exit_code, result.stderr) == (2, f"Error: d.json: {message}\n")


def test_one_damaged_dump_is_one_failed_line_among_the_others(runner, tmp_path):
    # issue 13 item 13: one damaged dump stopped the verification of the whole folder
    first, second = _two_call_run(runner, tmp_path)
    compact(runner, SAMPLES / "codex_rollout.jsonl", "dialogue", tmp_path)
    (tmp_path / "dumps" / "0_cut.json").write_bytes(b'{"schema_version": 2, "processor"')
    result = runner.invoke(app, ["replay", "dumps", "--verify", "--json"])
    assert result.exit_code == 2
    checks = orjson.loads(result.stdout)["checks"]
    assert [(c["dump"], c["ok"], c["error"]) for c in checks] == [
        ("0_cut.json", False, "not a valid JSON dump (unexpected end of data at line 1) — the dump is truncated or "
                              "damaged; compact again to get a new one"),
        *((c["dump"], True, None) for c in checks[1:])]
    assert first.name in {c["dump"] for c in checks} and second.name in {c["dump"] for c in checks} and len(checks) == 4


def test_rerun_against_an_openai_endpoint_writes_a_linked_dump(runner, tmp_path, monkeypatch):
    compact(runner, SAMPLES / "chat_tool_session.jsonl", "dialogue", tmp_path)
    (dump,) = (tmp_path / "dumps").iterdir()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-0000000000000000000000")
    (tmp_path / "prompt.md").write_text("Summarise in one line.")
    with FakeOpenAI() as server:
        server.enqueue(ok("<state_snapshot>CSV export fixed in rosterkit/export.py; --encoding added.</state_snapshot>"))
        result = runner.invoke(app, ["replay", f"dumps/{dump.name}", "--summarizer", "openai", "--model", "m",
                                     "--base-url", server.base_url, "--prompt", "prompt.md", "--json"])
        sent = server.requests
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["new"]["summary"] == "CSV export fixed in rosterkit/export.py; --encoding added."
    assert doc["recorded"]["summary"].startswith("1. Historical User Requests and Outcomes")
    assert doc["new"]["accepted"] is True and doc["new"]["tokens_after"] < doc["recorded"]["tokens_after"]
    budget = orjson.loads(dump.read_bytes())["request"]["max_tokens"]
    assert sent[0].body["messages"][-1] == {"role": "user", "content": "Summarise in one line.\n\nYour whole answer "
                                            f"must fit in {budget:,} tokens: it is cut off there."}
    assert sent[0].body["max_tokens"] == budget == 1076  # the recorded budget (0.13 of the body), sent and stated
    (written,) = doc["written"]
    new = orjson.loads((tmp_path / written).read_bytes())
    assert new["replayed_from"] == {"dump": dump.name, "run": orjson.loads(dump.read_bytes())["run"]["id"],
                                    "prompt": "Summarise in one line."}
    assert new["request"]["prompt"] == sent[0].body["messages"][-1]["content"]  # what was sent, not the template
    assert new["request"]["summarizer"] == "openai" and new["response"]["model"] == "fake-model"
    assert runner.invoke(app, ["replay", "dumps/replays", "--verify"]).exit_code == 0  # the new dump verifies too


def test_a_rerun_shows_the_new_summary_redacted(runner, tmp_path, monkeypatch):
    # issue 13 item 7: a secret the model returned was printed as new.summary, unredacted
    compact(runner, SAMPLES / "chat_tool_session.jsonl", "dialogue", tmp_path)
    (dump,) = (tmp_path / "dumps").iterdir()
    secret = "sk-proj-" + "Leak3dByTheM0del" * 3
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-0000000000000000000000")
    with FakeOpenAI() as server:
        for _ in range(2):
            server.enqueue(ok(f"<state_snapshot>1. Historical User Requests and Outcomes\nDeploy with "
                              f"OPENAI_API_KEY={secret} next.</state_snapshot>"))
        as_json = runner.invoke(app, ["replay", f"dumps/{dump.name}", "--summarizer", "openai", "--model", "m",
                                      "--base-url", server.base_url, "--json"])
        as_table = runner.invoke(app, ["replay", f"dumps/{dump.name}", "--summarizer", "openai", "--model", "m",
                                       "--base-url", server.base_url, "--dump-dir", "again"])
    assert (as_json.exit_code, as_table.exit_code) == (0, 0)
    assert json.loads(as_json.stdout)["new"]["summary"] == (
        "1. Historical User Requests and Outcomes\nDeploy with OPENAI_API_KEY=[REDACTED:openai_key] next.")
    assert "│ summary  │ 1. Historical User Requests" in as_table.stdout and "[REDACTED:openai_key]" in as_table.stdout
    written = b"".join(p.read_bytes() for p in tmp_path.rglob("*.json"))
    assert secret not in as_json.stdout + as_table.stdout and secret.encode() not in written


def test_table_over_a_folder_of_mixed_dumps(runner, tmp_path, monkeypatch):
    compact(runner, SAMPLES / "chat_tool_session.jsonl", "dialogue", tmp_path)
    compact(runner, SAMPLES / "codex_rollout.jsonl", "full", tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-0000000000000000000000")
    with FakeOpenAI() as server:
        server.enqueue(FakeOpenAI.error(503, "Service Unavailable"),
                       ok("<state_snapshot>Active Task: short: fixed invoice_app/totals.py</state_snapshot>"))
        result = runner.invoke(app, ["compact", str(SAMPLES / "claude_code_session.jsonl"), "-c", "current-round",
                                     "--now", "--summarizer", "openai", "--model", "m", "--base-url", server.base_url,
                                     "-o", "claude.jsonl", "--dump-dir", "dumps"])
    assert result.exit_code == 0, result.stderr
    result = runner.invoke(app, ["replay", "dumps", "--table", "--json"])
    rows = json.loads(result.stdout)["dumps"]
    got = sorted((r["processor"], r["status"], r["attempts"], r["error_kinds"], r["accepted"]) for r in rows)
    assert got == [("current-round", "failed", 2, ["server_unstable"], False),
                   ("current-round", "ok", 2, ["server_unstable"], True),
                   ("dialogue", "ok", 1, [], True), ("full", "ok", 1, [], True)]
    text = runner.invoke(app, ["replay", "dumps", "--table"]).stdout
    assert text.splitlines()[-1].split() == ["total", "4", "dumps", "1", "failed", "3/4"]
    assert runner.invoke(app, ["replay", "dumps", "--verify"]).exit_code == 0


def test_replay_options(runner, tmp_path):
    compact(runner, SAMPLES / "chat_tool_session.jsonl", "dialogue", tmp_path)
    result = runner.invoke(app, ["replay", "dumps", "--table", "--verify"])
    assert (result.exit_code, result.stderr) == (2, "Error: choose one of --verify, --table and --summarizer\n")
    compact(runner, SAMPLES / "codex_rollout.jsonl", "dialogue", tmp_path)
    result = runner.invoke(app, ["replay", "dumps", "--summarizer", "extractive"])
    assert (result.exit_code, result.stderr) == (
        2, "Error: --summarizer re-runs one dump; 2 were given — pass a single dump file\n")
    (tmp_path / "empty").mkdir()
    result = runner.invoke(app, ["replay", "empty"])
    assert (result.exit_code, result.stderr) == (2, "Error: empty: no dumps in this folder or below it — pass a "
                                                    "folder written by --dump-dir\n")


def test_rerun_options_that_would_be_ignored_are_refused(runner, tmp_path):
    # issue 13 item 15: --prompt with the extractive summariser gave the identical summary, silently
    (tmp_path / "prompt.md").write_text("Summarise in one line.")
    for args, message in (
        (["--summarizer", "extractive", "--prompt", "prompt.md"],
         "--prompt does not apply to the extractive summariser, which builds its summary from the transcript and "
         "reads no prompt — re-run with --summarizer openai to try a prompt"),
        (["--summarizer", "extractive", "--model", "m"],
         "--model is an option of the openai summariser — add --summarizer openai, or leave it out"),
        (["--prompt", "prompt.md"], "--prompt applies to a re-run, and no --summarizer was given — add --summarizer "
                                    "extractive or openai"),
        (["--summarizer", "replay"], "--summarizer 'replay' cannot re-run a dump — use extractive or openai"),
    ):
        result = runner.invoke(app, ["replay", "no-such-dump.json", *args])  # options are checked first
        assert (result.exit_code, result.stderr) == (2, f"Error: {message}\n"), args


def test_an_extractive_rerun_of_a_dump_runs(runner, tmp_path):
    # issue 23 item 9: the re-run filled in a request mode for every backend, and the extractive one refused it
    compact(runner, SAMPLES / "chat_tool_session.jsonl", "dialogue", tmp_path)
    (dump,) = (tmp_path / "dumps").iterdir()
    result = runner.invoke(app, ["replay", f"dumps/{dump.name}", "--summarizer", "extractive", "--json"])
    assert (result.exit_code, result.stderr) == (0, "")
    doc = json.loads(result.stdout)
    recorded = orjson.loads(dump.read_bytes())
    assert doc["new"] == {**doc["new"], "summary": doc["recorded"]["summary"], "accepted": True,
                          "tokens_after": recorded["benefit"]["tokens_after"]}  # the same backend: the same summary
    (written,) = doc["written"]
    new = orjson.loads((tmp_path / written).read_bytes())
    assert (new["request"]["summarizer"], new["request"]["mode"]) == ("extractive", recorded["request"]["mode"])
    assert runner.invoke(app, ["replay", "dumps/replays", "--verify"]).exit_code == 0


def test_replay_finds_the_dumps_below_a_folder(runner, tmp_path):
    # issue 23 item 19: `replay` on the state folder answered "no dumps": it looked at the folder's own files only,
    # where a fork or an in-place run keeps each run's dumps in <state>/sessions/<run>/dumps/
    for name, run in (("chat_tool_session.jsonl", "claude-1"), ("codex_rollout.jsonl", "codex-2")):
        compact(runner, SAMPLES / name, "dialogue", tmp_path, dumps=f"state/sessions/{run}/dumps")
        (tmp_path / "state" / "sessions" / run / "report.json").write_text("{}")  # beside the dumps: no dump
    (tmp_path / "state" / "sessions" / "claude-1" / "offload").mkdir()
    (tmp_path / "state" / "sessions" / "claude-1" / "offload" / "0123456789abcdef000004.json").write_text("{}")
    result = runner.invoke(app, ["replay", "state"])
    assert (result.exit_code, result.stdout.splitlines()[-1]) == (0, "2 dump(s): 2 OK, 0 mismatched")
    rows = json.loads(runner.invoke(app, ["replay", "state", "--table", "--json"]).stdout)["dumps"]
    assert sorted(r["processor"] for r in rows) == ["dialogue", "dialogue"]
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    result = runner.invoke(app, ["replay", "empty"])
    assert (result.exit_code, result.stderr) == (2, "Error: empty: no dumps in this folder or below it — pass a "
                                                    "folder written by --dump-dir\n")


def test_a_refused_connection_is_no_unstable_server(runner, tmp_path, monkeypatch):
    # issue 23 item 21: replay --table called "connection refused" server_unstable: nothing answered at all
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-0000000000000000000000")
    result = runner.invoke(app, ["compact", str(SAMPLES / "chat_tool_session.jsonl"), "-c", "dialogue", "--now",
                                 "--summarizer", "openai", "--model", "m", "--base-url", f"http://127.0.0.1:{port}/v1",
                                 "--max-retries", "1", "-o", "out.jsonl", "--dump-dir", "dumps"])
    assert result.exit_code == 1 and result.stderr.startswith("Error: dialogue: summariser failed: 127.0.0.1:")
    rows = json.loads(runner.invoke(app, ["replay", "dumps", "--table", "--json"]).stdout)["dumps"]
    assert rows and {(r["attempts"], tuple(r["error_kinds"]), r["status"]) for r in rows} == {
        (2, ("unreachable",), "failed")}
    assert "unreachable" in runner.invoke(app, ["replay", "dumps", "--table"]).stdout  # retried, as a server starting
