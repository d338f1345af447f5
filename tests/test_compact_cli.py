"""``tcompact compact``: outcomes and exit codes, outputs and dumps, the openai backend end to end."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from conftest import SAMPLES
from openai_server import FakeOpenAI, error, ok
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.formats import read_file

CHAT = SAMPLES / "chat_tool_session.jsonl"
CLAUDE = SAMPLES / "claude_code_session.jsonl"
CODEX = SAMPLES / "codex_rollout.jsonl"
# a fake summary naming some facts of what it replaces (one keeping none of them is refused as no benefit)
SNAPSHOT = ("<coverage_check>ok</coverage_check><state_snapshot>\n1. Active Task\nexport fix in rosterkit/export.py "
            "and tests/test_export.py\n</state_snapshot>")
KEY = "sk-proj-TESTKEY1234567890abcdefTESTKEY1234567890"


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return CliRunner()


def dumps_in(folder):
    return [orjson.loads(p.read_bytes()) for p in sorted(folder.iterdir())]


def test_nothing_to_do_is_exit_0_and_writes_nothing(runner, tmp_path):
    # issue 13 item 10: the report was written anyway, so the same command failed the second time
    for _ in range(2):
        result = runner.invoke(app, ["compact", str(CHAT), "-o", "out.jsonl"])
        assert (result.exit_code, result.stderr) == (0, "")
        assert [line.rstrip() for line in result.stdout.splitlines()] == [
            f"{CHAT} · chat · window 200,000 · o200k_base, approximate",
            "Nothing to do: 11,796 tokens, 33 messages; the transcript stays as it is (working-set: below the "
            "threshold (11,796 < 160,000 tokens); --now compacts anyway)",
            "Stages",
            "┏━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━┓",
            "┃ compressor  ┃          tokens ┃ messages ┃ calls ┃ outcome                   ┃",
            "┡━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━┩",
            "│ working-set │ 11,796 → 11,796 │  33 → 33 │     0 │ below the threshold       │",
            "│             │                 │          │       │ (11,796 < 160,000 tokens) │",
            "└─────────────┴─────────────────┴──────────┴───────┴───────────────────────────┘",
        ]
        assert list(tmp_path.iterdir()) == []
    report = orjson.loads(runner.invoke(app, ["compact", str(CHAT), "-o", "out.jsonl", "--json"]).stdout)
    assert (report["status"], report["reason"], report["written"], report["summarizer"]["calls"]) == (
        "nothing to do", "working-set: below the threshold (11,796 < 160,000 tokens); --now compacts anyway", [],
        0)


def test_nothing_to_do_when_forced_says_the_real_reason(runner, tmp_path):
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "truncate", "--now", "--set", "max_chars=1000000",
                                 "--set", "max_lines=100000"])
    assert (result.exit_code, result.stdout.splitlines()[1]) == (
        0, "Nothing to do: 11,796 tokens, 33 messages; the transcript stays as it is (truncate: no tool output over "
           "the limits)")
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "offload,round-level", "-o", "out.jsonl", "--json"])
    assert orjson.loads(result.stdout)["reason"] == ("offload: below the threshold; round-level: below the threshold "
                                                     "(11,796 < 230,000 tokens); --now compacts anyway")
    assert list(tmp_path.iterdir()) == []


def test_forced_dialogue_writes_transcript_dump_and_report(runner, tmp_path):
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "dialogue", "--now", "-o", "out.jsonl",
                                 "--dump-dir", "dumps", "--report", "r.json"])
    assert (result.exit_code, result.stderr) == (0, "")
    (dump,) = dumps_in(tmp_path / "dumps")
    report = orjson.loads((tmp_path / "r.json").read_bytes())
    assert report["before"] == {"messages": 33, "tokens": 11796}
    assert report["after"]["tokens"] == dump["benefit"]["tokens_after"] < 11796
    assert [(s["processor"], s["applied"], s["reason"]) for s in report["stages"]] == [("dialogue", True, "compacted")]
    assert report["outputs"]["transcript"] == "out.jsonl" and len(report["outputs"]["dumps"]) == 1
    name = (tmp_path / "dumps").iterdir().__next__().name
    assert name.endswith("_dialogue_chat_tool_session.json") and name.split("_")[0].isdigit()
    assert (dump["schema_version"], dump["processor"]["name"], dump["call"]) == (
        3, "dialogue", {"number": 1, "attempt": 1, "of": 1, "status": "ok", "retried": False, "reason": "ok"})
    assert dump["source"]["sha256"] == __import__("hashlib").sha256(CHAT.read_bytes()).hexdigest()
    assert dump["request"]["messages_sent"][-1] == {"role": "user", "content": dump["request"]["prompt"]}
    assert dump["benefit"]["accepted"] is True and 0 < dump["benefit"]["reduction_ratio"] <= 1
    after = dump["context_after"]["messages"]
    assert after[0]["role"] == "system" and after[1]["content"].startswith("<memory_block_dialogue>")
    out = read_file(tmp_path / "out.jsonl").transcript()
    assert [m.text for m in out.messages] == [m["content"] for m in dump["context_after"]["messages"]]
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "dialogue", "--now", "--force", "-o", "out.jsonl",
                                 "--report", "r2.json"])
    assert result.exit_code == 0  # --force overwrites
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "dialogue", "-o", "out.jsonl"])
    assert (result.exit_code, result.stderr) == (
        2, "Error: out.jsonl: the output file exists already — pass --force to overwrite it, or choose another path\n")


def test_dry_run_writes_nothing_and_json_reports(runner, tmp_path):
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "truncate,micro", "--now", "--dry-run", "--json"])
    assert result.exit_code == 0
    doc = orjson.loads(result.stdout)
    assert (doc["dry_run"], doc["written"], doc["status"]) == (True, [], "compacted")
    assert [s["processor"] for s in doc["stages"]] == ["truncate", "micro"]
    assert list(tmp_path.iterdir()) == [] and not SAMPLES.joinpath("chat_tool_session.compacted.jsonl").exists()


def test_claude_compaction_layout(runner, tmp_path):
    result = runner.invoke(app, ["compact", str(CLAUDE), "-c", "current-round", "--now", "-o", "out.jsonl"])
    assert result.exit_code == 0, result.stderr
    lines = [orjson.loads(x) for x in (tmp_path / "out.jsonl").read_bytes().splitlines()]
    original = CLAUDE.read_bytes().splitlines()
    assert (tmp_path / "out.jsonl").read_bytes().splitlines()[: len(original)] == original  # history kept
    boundary, *chain = lines[len(original):]
    assert {k: boundary[k] for k in ("type", "subtype", "parentUuid", "content")} == {
        "type": "system", "subtype": "compact_boundary", "parentUuid": None, "content": "Conversation compacted"}
    assert boundary["compactMetadata"]["trigger"] == "manual" and boundary["compactMetadata"]["preTokens"] == 2928
    assert boundary["logicalParentUuid"] == orjson.loads(original[-1])["uuid"]
    assert [x["parentUuid"] for x in chain] == [boundary["uuid"]] + [x["uuid"] for x in chain[:-1]]
    summary = next(x for x in chain if "<memory_block_current>" in str(x["message"]["content"]))
    assert summary["isCompactSummary"] is True and summary["message"]["content"].startswith("<memory_block_current>")
    again = read_file(tmp_path / "out.jsonl")
    main = again.transcript()
    assert main.compactions[-1].trigger == "manual" and main.compactions[-1].index == 0
    assert [t.id for t in again.transcripts] == [t.id for t in read_file(CLAUDE).transcripts]


def test_codex_compaction_layout(runner, tmp_path):
    result = runner.invoke(app, ["compact", str(CODEX), "-c", "dialogue", "--now", "-o", "out.jsonl"])
    assert result.exit_code == 0, result.stderr
    original = CODEX.read_bytes().splitlines()
    lines = (tmp_path / "out.jsonl").read_bytes().splitlines()
    assert lines[: len(original)] == original
    compacted, event = (orjson.loads(x) for x in lines[len(original):])
    assert compacted["type"] == "compacted" and event["payload"] == {"type": "context_compacted"}
    assert compacted["payload"]["message"].startswith("Another language model started to solve this problem")
    history = compacted["payload"]["replacement_history"]
    assert history[0]["type"] == "message" and "<memory_block_dialogue>" in history[1]["content"][0]["text"]
    t = read_file(tmp_path / "out.jsonl").transcript()
    assert t.messages[0].role == "system" and t.messages[0].meta["from"] == "session_meta"


def test_unknown_compressor_and_bad_settings(runner):
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "truncate,zip"])
    assert (result.exit_code, result.stderr) == (
        2, "Error: unknown compressor 'zip' — use one of: truncate, offload, micro, mask, current-round, dialogue, "
           "round-level, full, working-set\n")
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "dialogue", "--set", "trigger_context_ratio=2"])
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: dialogue setting trigger_context_ratio must be less than 1, not 2 — "
                                    "settings of dialogue: trigger_context_ratio, min_target_context_ratio,")
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "truncate", "--set", "max_chars"])
    assert (result.exit_code, result.stderr) == (
        2, "Error: bad --set 'max_chars' — write --set key=value or --set compressor.key=value\n")
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "truncate", "--trigger-ratio", "0.5"])
    assert (result.exit_code, result.stderr) == (
        2, "Error: --trigger-ratio applies to no compressor of the chain — it sets trigger_context_ratio of "
           "current-round, dialogue, round-level, full and working-set\n")
    result = runner.invoke(app, ["compact", str(CHAT), "--summarizer", "openai"])
    assert (result.exit_code, result.stderr) == (
        2, "Error: --summarizer openai needs --model — e.g. --model gpt-4o-mini or your vLLM model\n")


def test_config_file_sets_settings(runner, tmp_path):
    (tmp_path / "c.toml").write_text("[truncate]\nmax_lines = 20\nhead_ratio = 0.5\n")
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "truncate", "--config", "c.toml", "--dry-run", "--json"])
    assert orjson.loads(result.stdout)["stages"][0]["settings"]["max_lines"] == 20
    (tmp_path / "bad.toml").write_text("[dialogue]\nx = 1\n")
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "truncate", "--config", "bad.toml"])
    assert (result.exit_code, result.stderr) == (
        2, "Error: bad.toml: the config has settings for 'dialogue', which is not in the chain — the chain is: "
           "truncate\n")


def test_compressors_command_lists_every_setting():
    result = CliRunner().invoke(app, ["compressors", "--json"])
    rows = orjson.loads(result.stdout)["compressors"]
    assert [r["name"] for r in rows] == ["truncate", "offload", "micro", "mask", "current-round", "dialogue",
                                        "round-level", "full", "working-set"]
    dialogue = next(r for r in rows if r["name"] == "dialogue")
    assert [(f["name"], f["default"]) for f in dialogue["settings"]] == [
        ("trigger_context_ratio", 0.8), ("min_target_context_ratio", 0.1), ("summary_max_tokens", 8000),
        ("summary_ratio", 0.13)]
    assert all(f["description"] for r in rows for f in r["settings"])
    text = CliRunner().invoke(app, ["compressors"]).stdout
    assert "dialogue: summarise completed earlier rounds into a <memory_block_dialogue> handoff (uses a summariser)" \
        in text


# ---- the openai backend against a real HTTP server ---------------------------------------------


@pytest.fixture
def server(monkeypatch):
    with FakeOpenAI() as fake:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        yield fake


def openai_args(server, *extra):
    return ["compact", str(CHAT), "-c", "dialogue", "--now", "--summarizer", "openai", "--model", "fake-model",
            "--base-url", server.base_url, "-o", "out.jsonl", "--dump-dir", "dumps", "--timeout", "5", *extra]


def test_openai_summary_with_retry_after_and_dumps(runner, tmp_path, server):
    server.enqueue(error(429, "Rate limit reached", headers={"Retry-After": "0.2"}), ok(SNAPSHOT))
    result = runner.invoke(app, openai_args(server))
    assert result.exit_code == 0, result.stderr
    first, second = dumps_in(tmp_path / "dumps")
    assert (first["call"]["status"], first["error"]["kind"], first["error"]["retry_after"]) == (
        "failed", "rate_limit", 0.2)
    assert second["response"]["extracted_summary"] == ("1. Active Task\nexport fix in rosterkit/export.py and "
                                                       "tests/test_export.py")
    assert second["response"]["usage"] == {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    assert [a["error_kind"] for a in second["attempts"]] == ["rate_limit", None]
    assert server.requests[0].body == server.requests[1].body  # the same request again
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    everything = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert KEY.encode() not in everything  # the key is never written


def test_openai_overflow_shrinks_the_span(runner, tmp_path, server):
    server.enqueue(error(400, "This model's maximum context length is 8192 tokens"), ok(SNAPSHOT))
    result = runner.invoke(app, openai_args(server, "--context-window", "12000"))
    assert result.exit_code == 0, result.stderr
    first, second = dumps_in(tmp_path / "dumps")
    assert first["error"]["kind"] == "context_overflow"
    assert second["span"]["body"]["count"] < first["span"]["body"]["count"]
    assert len(server.requests[1].body["messages"]) < len(server.requests[0].body["messages"])


def test_openai_failure_leaves_the_input_untouched_and_exits_1(runner, tmp_path, server):
    before = CHAT.read_bytes()
    server.enqueue(error(401, "Incorrect API key provided"))
    result = runner.invoke(app, openai_args(server))
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: dialogue: summariser failed: ")
    assert result.stderr.endswith(" — the input is untouched; the failed call(s) are dumped in dumps\n")
    assert "Compaction failed; the input is untouched" in result.stdout
    (dump,) = dumps_in(tmp_path / "dumps")
    assert (dump["call"]["status"], dump["error"]["kind"], dump["context_after"]) == ("failed", "authentication", None)
    assert not (tmp_path / "out.jsonl").exists() and CHAT.read_bytes() == before
    assert len(server.requests) == 1


def test_replay_summarizer_answers_from_dumps(runner, tmp_path, server):
    server.enqueue(ok(SNAPSHOT))
    assert runner.invoke(app, openai_args(server)).exit_code == 0
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "dialogue", "--now", "--summarizer", "replay",
                                 "--replay-dir", "dumps", "-o", "again.jsonl", "--dump-dir", "dumps2"])
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "again.jsonl").read_bytes() == (tmp_path / "out.jsonl").read_bytes()
    assert len(server.requests) == 1  # nothing new was sent


# the Claude sample's history before its last request is one earlier compact summary of 451 tokens: the
# dialogue summary of it would keep 2% of its facts, so the benefit check declines; current-round compacts it
@pytest.mark.parametrize(("path", "chain"), [(CHAT, "dialogue"), (CLAUDE, "current-round"), (CODEX, "dialogue")],
                         ids=["chat", "claude", "codex"])
def test_strict_passes_and_reads_back_every_sample(runner, tmp_path, path, chain):
    out = tmp_path / ("out" + path.suffix)
    result = runner.invoke(app, ["compact", str(path), "-c", chain, "--now", "--strict",
                                 "-o", str(out), "--report", "r.json"])
    assert (result.exit_code, result.stderr) == (0, "")
    report = orjson.loads((tmp_path / "r.json").read_bytes())
    assert (report["status"], report["invariants"], report["outputs"]["transcript"]) == (
        "compacted", [], str(out))


def _corrupting(monkeypatch):
    """Make the rendered output lose its last line, as a buggy writer would."""
    import dataclasses

    import tcompact.compaction.job as job

    real = job.compact_file

    def compact_file(*args, **kwargs):
        run = real(*args, **kwargs)
        data = run.output.data.rstrip(b"\n").rsplit(b"\n", 1)[0] + b"\n"
        return dataclasses.replace(run, output=dataclasses.replace(run.output, data=data))

    monkeypatch.setattr(job, "compact_file", compact_file)


def test_strict_refuses_an_output_that_does_not_read_back(runner, tmp_path, monkeypatch):
    _corrupting(monkeypatch)
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "dialogue", "--now", "--strict", "-o", "out.jsonl",
                                 "--report", "r.json"])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-2:] == [
        "Warning: invariant: the output does not read back as the compacted messages",
        "Error: the compaction breaks 1 invariant(s): the output does not read back as the compacted messages "
        "— the compacted transcript was not written (--strict)",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.dumps", "r.json"]  # the why, not the transcript
    report = orjson.loads((tmp_path / "r.json").read_bytes())
    assert (report["invariants"], report["outputs"]["transcript"]) == (
        ["the output does not read back as the compacted messages"], None)


def test_a_strict_failure_with_json_prints_the_report(runner, tmp_path, monkeypatch):
    # issue 13 item 13: stdout was empty on a --strict failure (a summariser failure prints the JSON)
    _corrupting(monkeypatch)
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "dialogue", "--now", "--strict", "-o", "out.jsonl",
                                 "--report", "r.json", "--json"])
    assert (result.exit_code, result.stderr.splitlines()[-1]) == (
        1, "Error: the compaction breaks 1 invariant(s): the output does not read back as the compacted messages "
           "— the compacted transcript was not written (--strict)")
    report = orjson.loads(result.stdout)
    (dump,) = (tmp_path / "out.dumps").iterdir()
    assert (report["status"], report["invariants"], report["written"]) == (
        "failed", ["the output does not read back as the compacted messages"], [f"out.dumps/{dump.name}", "r.json"])


def test_an_output_that_does_not_read_back_fails_and_replaces_nothing(runner, tmp_path, monkeypatch):
    _corrupting(monkeypatch)
    (tmp_path / "out.jsonl").write_bytes(b"kept\n")
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "dialogue", "--now", "--force", "-o", "out.jsonl",
                                 "--report", "r.json"])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "Warning: invariant: the output does not read back as the compacted messages",
        "Error: out.jsonl: the compaction was not written: the output does not read back as the compacted messages "
        "— nothing was replaced; the report says why (--allow-read-back-mismatch writes it anyway)",
    ]
    assert (tmp_path / "out.jsonl").read_bytes() == b"kept\n"
    report = orjson.loads((tmp_path / "r.json").read_bytes())
    assert (report["invariants"], report["outputs"]["transcript"]) == (
        ["the output does not read back as the compacted messages"], None)


FAILURES = {
    "read back": ([], "the compaction was not written: the output does not read back as the compacted messages",
                  "Error: out.jsonl: the compaction was not written: the output does not read back as the compacted "
                  "messages — nothing was replaced; the report says why (--allow-read-back-mismatch writes it anyway)"),
    "strict": (["--strict"], "the compaction breaks 1 invariant(s): the output does not read back as the compacted "
               "messages; the compacted transcript was not written (--strict)",
               "Error: the compaction breaks 1 invariant(s): the output does not read back as the compacted messages "
               "— the compacted transcript was not written (--strict)"),
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_every_output_of_a_compaction_that_was_not_written_says_it_failed(runner, tmp_path, monkeypatch, case):
    """Issue 23 item 8: exit 1 and "the report says why", but the report and --json said "compacted" with the
    reason of a success, and the terminal "Wrote … transcript: out.jsonl" though nothing was written."""
    _corrupting(monkeypatch)
    extra, reason, error_line = FAILURES[case]
    args = ["compact", str(CHAT), "-c", "dialogue", "--now", "-o", "out.jsonl", "--report", "r.json", *extra]
    shown = runner.invoke(app, args)
    assert (shown.exit_code, shown.stderr.splitlines()[-1]) == (1, error_line)
    assert "Compaction failed; the input is untouched" in shown.stdout and "transcript:" not in shown.stdout
    (dump,) = (tmp_path / "out.dumps").iterdir()
    assert shown.stdout.splitlines()[-1] == "Wrote 2 file(s): 1 dump(s) in out.dumps, the report r.json"
    report = orjson.loads((tmp_path / "r.json").read_bytes())
    assert (report["status"], report["reason"], report["outputs"]["transcript"]) == ("failed", reason, None)
    printed = runner.invoke(app, [*args, "--json", "--force"])
    assert (printed.exit_code, printed.stderr.splitlines()[-1]) == (1, error_line)
    document = orjson.loads(printed.stdout)
    assert (document["status"], document["reason"], "out.jsonl" in document["written"]) == ("failed", reason, False)
    assert not (tmp_path / "out.jsonl").exists()


def test_allow_read_back_mismatch_writes_it_with_a_warning_and_json_says_so(runner, tmp_path, monkeypatch):
    _corrupting(monkeypatch)
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "dialogue", "--now", "-o", "out.jsonl",
                                 "--allow-read-back-mismatch", "--json", "--report", "r.json"])
    assert result.exit_code == 0
    assert result.stderr == "Warning: invariant: the output does not read back as the compacted messages\n"
    assert len(read_file(tmp_path / "out.jsonl").transcripts[0].messages) == 16  # of 17: the last line is lost
    printed = orjson.loads(result.stdout)
    report = orjson.loads((tmp_path / "r.json").read_bytes())
    assert printed["invariants"] == report["invariants"] == ["the output does not read back as the compacted messages"]


def test_compact_to_another_format_warns_what_it_leaves_out_and_reports_what_it_wrote(runner, tmp_path):
    # issue 13 item 4: --to chat from Codex dropped the encrypted reasoning silently and the report's
    # "after" still counted it. The input is copied in: truncate's markers name it, and so their tokens
    # must not depend on where the checkout lies.
    shutil.copyfile(CODEX, tmp_path / "rollout.jsonl")
    result = runner.invoke(app, ["compact", "rollout.jsonl", "-c", "truncate", "--set", "max_lines=8", "--now",
                                 "--to", "chat", "-o", "out.jsonl", "--json"])
    assert result.exit_code == 0
    notes = ["24 record(s) that are not messages stay behind: event_msg/token_count ×9, event_msg/agent_reasoning "
             "×4, turn_context ×2, event_msg/task_started ×2, event_msg/user_message ×2, event_msg/agent_message ×2, "
             "event_msg/task_complete ×2, event_msg/patch_apply_end ×1",
             "4 encrypted reasoning item(s) are opaque and cannot be carried over"]
    assert result.stderr == "".join(f"Warning: {n}\n" for n in notes)
    report = orjson.loads(result.stdout)
    assert (report["notes"], report["after"], report["stages"][0]["tokens_after"]) == (
        notes, {"messages": 21, "tokens": 2454}, 3966)  # 3966: with the encrypted items' 1,512 estimated tokens
    inspected = runner.invoke(app, ["inspect", "out.jsonl", "--json"])
    assert orjson.loads(inspected.stdout)["files"][0]["transcripts"][0]["tokens"]["total"] == 2454
    same = runner.invoke(app, ["compact", "rollout.jsonl", "-c", "truncate", "--set", "max_lines=8", "--now",
                               "-o", "same.jsonl", "--json"])
    assert (same.stderr, orjson.loads(same.stdout)["notes"], orjson.loads(same.stdout)["after"]["tokens"]) == (
        "", [], 3966)


def test_options_are_checked_before_the_input_and_the_outputs(runner, tmp_path):
    # issue 13 item 14: a typo in -c was reported as "output file exists already"; one message named
    # three options; the --trigger-ratio hint left out round-level
    (tmp_path / "out.jsonl").write_text("{}\n")
    for args, message in (
        (["-c", "dialgue"], "unknown compressor 'dialgue' — use one of: truncate, offload, micro, mask, "
                            "current-round, dialogue, round-level, full, working-set"),
        (["--max-retries", "-1"], "--max-retries must be 0 or more"),
        (["--timeout", "0"], "--timeout must be a positive number of seconds"),
        (["--concurrency", "0"], "--concurrency must be 1 or more"),
        (["-c", "truncate", "--trigger-ratio", "0.5"], "--trigger-ratio applies to no compressor of the chain — it "
                                                       "sets trigger_context_ratio of current-round, dialogue, "
                                                       "round-level, full and working-set"),
        (["--context-window", "0"], "--context-window must be a positive number of tokens"),
        (["--encoding", "p50k"], "unknown encoding 'p50k' — use one of: o200k_base, cl100k_base"),
        (["--summarizer", "openai"], "--summarizer openai needs --model — e.g. --model gpt-4o-mini or your vLLM model"),
        # issue 13 item 15: options of another summariser are refused, not ignored
        (["--request-mode", "serialized"], "--request-mode is an option of the openai summariser, and the summariser "
                                           "is extractive — add --summarizer openai, or leave --request-mode out"),
        (["--replay-dir", "dumps"], "--replay-dir is an option of the replay summariser, and the summariser is "
                                    "extractive — add --summarizer replay, or leave --replay-dir out"),
    ):
        result = runner.invoke(app, ["compact", "missing.jsonl", "-o", "out.jsonl", *args])
        assert (result.exit_code, result.stderr) == (2, f"Error: {message}\n"), args
    result = runner.invoke(app, ["compact", "missing.jsonl", "-o", "out.jsonl"])  # then the input
    assert (result.exit_code, result.stderr) == (2, "Error: missing.jsonl: no such file — pass the transcript file "
                                                    "to compact\n")
    result = runner.invoke(app, ["compact", str(CHAT), "-o", "out.jsonl"])  # then the outputs
    assert (result.exit_code, result.stderr) == (2, "Error: out.jsonl: the output file exists already — pass --force "
                                                    "to overwrite it, or choose another path\n")
    assert (tmp_path / "out.jsonl").read_text() == "{}\n"


def test_now_compacts_below_the_trigger_and_force_only_overwrites(runner, tmp_path):
    # issue 23 item 16: --force both compacted below the trigger and overwrote outputs
    (tmp_path / "out.jsonl").write_bytes(b"kept\n")
    result = runner.invoke(app, ["compact", str(CHAT), "-o", "out.jsonl", "--force", "--json"])
    doc = orjson.loads(result.stdout)
    assert (result.exit_code, doc["status"], doc["reason"], doc["written"]) == (
        0, "nothing to do", "working-set: below the threshold (11,796 < 160,000 tokens); --now compacts anyway", [])
    assert (tmp_path / "out.jsonl").read_bytes() == b"kept\n"
    result = runner.invoke(app, ["compact", str(CHAT), "-o", "out.jsonl", "--now"])
    assert (result.exit_code, result.stderr) == (2, "Error: out.jsonl: the output file exists already — pass --force "
                                                    "to overwrite it, or choose another path\n")
    result = runner.invoke(app, ["compact", str(CHAT), "-o", "out.jsonl", "--now", "--force", "--json"])
    doc = orjson.loads(result.stdout)
    assert (result.exit_code, doc["status"], doc["written"][-2:]) == (0, "compacted", ["out.jsonl", "out.report.json"])
    assert any(m.text.startswith("This session is being continued from a previous")
               for m in read_file(tmp_path / "out.jsonl").transcript().messages)


def test_bad_lines_written_into_an_output_are_in_its_report(runner, tmp_path):
    # issue 23 item 2: lines skipped in reading are written back as they were (restore needs them), silently
    lines = CLAUDE.read_bytes().splitlines(keepends=True)
    source = tmp_path / "s.jsonl"
    source.write_bytes(b"".join(lines[:2]) + b"{not json\n" + b"".join(lines[2:]) + b'{"type":"user","mess')
    result = runner.invoke(app, ["compact", "s.jsonl", "-c", "current-round", "--now", "--skip-bad-lines", "-o",
                                 "out.jsonl", "--json"])
    assert result.exit_code == 0
    note = ("2 line(s) skipped in reading as unreadable (3, 46) are written into the output as they were in the input "
            "(line 3: not valid JSON (unexpected character, expected a string key at column 2))")
    assert result.stderr == ("Warning: s.jsonl: skipped 2 bad line(s) (3, 46); line 3: not valid JSON (unexpected "
                             "character, expected a string key at column 2)\n")  # the note says no more
    assert orjson.loads(result.stdout)["notes"] == orjson.loads((tmp_path / "out.report.json").read_bytes())["notes"] \
        == [note]
    out = (tmp_path / "out.jsonl").read_bytes().splitlines()
    assert (out[2], out[45]) == (b"{not json", b'{"type":"user","mess')


def test_compact_says_where_every_output_went(runner, tmp_path):
    # issue 23 item 21: compact --json had no outputs (the report had them); the terminal named the transcript only
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "dialogue", "--now", "-o", "out.jsonl", "--json"])
    doc = orjson.loads(result.stdout)
    (dump,) = (tmp_path / "out.dumps").iterdir()
    assert doc["outputs"] == orjson.loads((tmp_path / "out.report.json").read_bytes())["outputs"] == {
        "transcript": "out.jsonl", "dumps": [f"out.dumps/{dump.name}"], "offload_store": None, "state": None}
    dry = runner.invoke(app, ["compact", str(CHAT), "-c", "dialogue", "--now", "-o", "x.jsonl", "--dry-run", "--json"])
    assert orjson.loads(dry.stdout)["outputs"] == {"transcript": None, "dumps": [], "offload_store": None,
                                                   "state": None}
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "offload", "--now", "-o", "o.jsonl", "--set",
                                 "large_message_tokens=200", "--set", "protected_tools=[]"])
    originals = len(list((tmp_path / "o.offload").iterdir()))
    assert result.stdout.splitlines()[-1] == (f"Wrote {originals + 2} file(s): the transcript o.jsonl, {originals} "
                                              "offloaded original(s) in o.offload, the report o.report.json")


def test_the_default_output_paths_are_those_the_help_names(runner, tmp_path):
    # issue 23 item 21: --help said "<output>.dumps/" (out.jsonl.dumps/), compact wrote out.dumps/
    shown = " ".join(CliRunner().invoke(app, ["compact", "--help"], env={"COLUMNS": "120"}).stdout.split())
    for said in ("-o, --output FILE The compacted transcript (default: beside the input, s.compacted.jsonl for "
                 "s.jsonl).",
                 "--dump-dir DIR Folder of compression dumps (default: beside the output, out.dumps/ for out.jsonl;",
                 "--report FILE Token report JSON (default: beside the output, out.report.json for out.jsonl;",
                 "--offload-dir DIR Offload store (default: beside the output, out.offload/ for out.jsonl;"):
        assert said in shown
    (tmp_path / "s.jsonl").write_bytes(CHAT.read_bytes())
    result = runner.invoke(app, ["compact", "s.jsonl", "-c", "offload,dialogue", "--now", "--set",
                                 "large_message_tokens=200", "--set", "protected_tools=[]", "--json"])
    doc = orjson.loads(result.stdout)
    assert (doc["outputs"]["transcript"], {str(Path(p).parent) for p in doc["outputs"]["dumps"]},
            doc["outputs"]["offload_store"]) == ("s.compacted.jsonl", {"s.compacted.dumps"}, "s.compacted.offload")
    result = runner.invoke(app, ["compact", "s.jsonl", "-c", "dialogue", "--now", "-o", "out.jsonl", "--json"])
    doc = orjson.loads(result.stdout)
    assert ({str(Path(p).parent) for p in doc["outputs"]["dumps"]}, doc["written"][-1]) == ({"out.dumps"},
                                                                                           "out.report.json")
