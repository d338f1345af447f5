"""tcompact eval --metric needed: exact figures on a small Claude Code session and a Codex rollout (kept, and
recoverable through truncate's and micro's path:line and offload's handle), the same report twice, the shared
sessions' needed tokens, the command's table and errors, and a failed compaction that keeps nothing."""

from __future__ import annotations

import socket
from pathlib import Path

import orjson
import pytest
from conftest import SHARED, real_file
from needed_sessions import claude_session, codex_rollout
from session_stores import env_for, shared_home
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.evaluation import EvalOptions, evaluate_file, evaluate_paths


def _scores(entry):
    """Per cut: (at, line, tokens before, needed tokens, per chain (name, kept, recovered, lost, ratio))."""
    return [(c["at"], c["line"], c["tokens_before"], [n["token"] for n in c["needed"]],
             [(r["chain"], r["kept"], r["recovered"], r["lost"], r["ratio"]) for r in c["results"]])
            for c in entry["needed"]["cuts"]]


HEAD_TAIL_LOSES = ["45000000", "DEFAULT_TIMEOUT_MS"]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    """The sessions are written and named relative to the test's folder: markers name their path, and the
    sizes count it."""
    monkeypatch.chdir(tmp_path)


def test_claude_session_truncate_keeps_the_head_and_its_marker_names_the_rest():
    path = claude_session(Path("s.jsonl"))
    entry = evaluate_file(path, EvalOptions(metric="needed", chains=("truncate",), sets=("truncate.max_lines=8",)))
    assert (entry["needed"]["candidates"], entry["needed"]["eligible"]) == (4, 4)
    late = HEAD_TAIL_LOSES
    assert _scores(entry) == [
        (3, 4, 52, ["src/app/settings_loader.py"],
         [("truncate", 1, [], [], 1.0), ("last-20", 1, [], [], 1.0), ("head-tail-500", 1, [], [], 1.0)]),
        (5, 6, 455, ["parse_yaml_file", "load_settings", *late],
         [("truncate", 2, late, [], 0.3604), ("last-20", 4, [], [], 1.0), ("head-tail-500", 2, [], late, 0.7824)]),
        (7, 8, 495, ["load_settings", "src/app/settings_loader.py", *late],
         [("truncate", 2, late, [], 0.4121), ("last-20", 4, [], [], 1.0), ("head-tail-500", 2, [], late, 0.8)]),
        (9, 10, 546, late,
         [("truncate", 0, late, [], 0.467), ("last-20", 2, [], [], 1.0), ("head-tail-500", 0, [], late, 0.8187)])]
    assert entry["needed"]["results"] == [
        {"chain": "truncate", "reference": False, "cuts": 4, "failed": 0, "needed": 11, "kept": 5, "recoverable": 6,
         "tokens_before": 1548, "tokens_after": 675, "ratio": 0.436},
        {"chain": "last-20", "reference": True, "cuts": 4, "failed": 0, "needed": 11, "kept": 11, "recoverable": 0,
         "tokens_before": 1548, "tokens_after": 1548, "ratio": 1.0},
        {"chain": "head-tail-500", "reference": True, "cuts": 4, "failed": 0, "needed": 11, "kept": 5,
         "recoverable": 0, "tokens_before": 1548, "tokens_after": 1251, "ratio": 0.8081}]
    first = entry["needed"]["cuts"][1]["needed"][2]
    assert first == {"token": "45000000", "kind": "number", "from": {"message": 4, "line": 5, "tool": "Read"},
                     "used": {"message": 9, "line": 10, "call": 3, "tool": "Bash"}}


def test_an_offloaded_original_is_recoverable_by_its_handle():
    path = claude_session(Path("s.jsonl"))
    entry = evaluate_file(path, EvalOptions(metric="needed", chains=("offload",),
                                            sets=("offload.large_message_tokens=50",)))
    assert [(c["at"], c["results"][0]["kept"], c["results"][0]["recovered"], c["results"][0]["ratio"])
            for c in entry["needed"]["cuts"]] == [(3, 1, [], 1.0), (5, 2, HEAD_TAIL_LOSES, 0.3692),
                                                   (7, 2, HEAD_TAIL_LOSES, 0.4202), (9, 0, HEAD_TAIL_LOSES, 0.4744)]


def test_codex_rollout_micro_clears_a_result_whose_line_it_names():
    path = codex_rollout(Path("r.jsonl"))
    entry = evaluate_file(path, EvalOptions(metric="needed", chains=("micro",),
                                            sets=("micro.keep_recent_per_tool=0",)))
    assert _scores(entry) == [
        (6, 9, 118, ["lib/net/retry_policy.rs"],
         [("micro", 1, [], [], 1.0), ("last-20", 1, [], [], 1.0), ("head-tail-500", 1, [], [], 1.0)]),
        (8, 11, 480, ["MAX_RETRY_LIMIT", "lib/net/retry_policy.rs", "backoff_millis"],
         [("micro", 1, ["MAX_RETRY_LIMIT", "backoff_millis"], [], 0.4417), ("last-20", 3, [], [], 1.0),
          ("head-tail-500", 3, [], [], 0.9792)]),
        (10, 13, 557, ["backoff_millis"],
         [("micro", 0, ["backoff_millis"], [], 0.5189), ("last-20", 1, [], [], 1.0),
          ("head-tail-500", 1, [], [], 0.982)])]
    assert [c["results"][0]["status"] for c in entry["needed"]["cuts"]] == ["nothing to do", "compacted", "compacted"]


def test_the_cap_of_cuts_and_the_same_report_twice(tmp_path):
    path = claude_session(tmp_path / "s.jsonl")
    options = EvalOptions(metric="needed", chains=("truncate", "micro"), cuts=2)
    first = evaluate_paths([path], options)
    assert [c["at"] for c in first["files"][0]["needed"]["cuts"]] == [5, 9]
    assert evaluate_paths([path], options) == first
    copy = tmp_path / "elsewhere" / "other-name.jsonl"  # the cuts and needed tokens do not depend on the path
    copy.parent.mkdir()
    copy.write_bytes(path.read_bytes())
    moved = evaluate_file(copy, options)["needed"]
    assert [c["needed"] for c in moved["cuts"]] == [c["needed"] for c in first["files"][0]["needed"]["cuts"]]


SHARED_CUTS = {  # per shared session: the cut points and the needed tokens at each
    "ccviewer": [(14, 8), (16, 8), (18, 8), (20, 30)],
    "codemie": [(41, 100), (75, 74), (105, 63), (139, 63)],
    "drmaciver": [(11, 20), (29, 17), (45, 11), (65, 9)],
    "codex": [(28, 5), (32, 6), (44, 12), (54, 5)],
    "sweagent": [(4, 1), (20, 2)],
}


@pytest.mark.parametrize("key", SHARED_CUTS)
def test_the_needed_tokens_of_each_shared_session(key):
    entry = evaluate_file(real_file(key), EvalOptions(metric="needed", chains=("micro",)))
    assert [(c["at"], len(c["needed"])) for c in entry["needed"]["cuts"]] == SHARED_CUTS[key]


def test_the_table(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    paths = [str(claude_session(Path("s.jsonl"))), str(codex_rollout(Path("r.jsonl")))]
    result = CliRunner().invoke(app, ["eval", *paths, "--metric", "needed", "-c", "micro", "-c", "truncate",
                                      "--set", "micro.keep_recent_per_tool=0", "--set", "truncate.max_lines=8"])
    assert result.exit_code == 0, result.stderr
    assert "".join(line.rstrip() + "\n" for line in result.stdout.splitlines()) == TABLE


TABLE = """\
Needed tokens: 16 at 7 cut point(s) in 2 session(s) (at most 4 a session, uses within the next 40 calls); every chain compacted with --now
Needed tokens kept, per chain (baselines below the line)

                 kept   recoverable   size
 ─────────────────────────────────────────
 micro            25%           75%   0.44
 truncate         44%           56%   0.50

 last-20         100%            0%   1.00
 head-tail-500    62%            0%   0.88

micro keeps fewer needed tokens (25%) than the baselines last-20 (100%) and head-tail-500 (62%).
truncate keeps fewer needed tokens (44%) than the baselines last-20 (100%) and head-tail-500 (62%).
kept: standing verbatim in what the model sees after compaction; recoverable: not kept, but in an original the context names (an offloaded message, a path:line); size: tokens after / before, all cuts together; last-20: the last 20 messages + system + last request; head-tail-500: every tool result cut to its first and last 500 characters
Per session: needed tokens, and how many each chain keeps (+ recoverable; sessions listed below)

                   1     2
 ─────────────────────────
 needed           11     5

 micro           2+9   2+3
 truncate        5+6   2+3
 last-20          11     5
 head-tail-500     5     5

1: s.jsonl (cuts before messages 3, 5, 7, 9)
2: r.jsonl (cuts before messages 6, 8, 10)
"""


@pytest.mark.parametrize(("args", "message"), [
    (["--metric", "all"], "Error: unknown --metric 'all' — use one of: canaries, needed, both\n"),
    (["--cuts", "0"], "Error: --cuts must be 1 or more, not 0 — see tcompact eval --help\n"),
    (["--timeout", "0"], "Error: --timeout must be a positive number of seconds\n"),
    (["--max-retries", "-1"], "Error: --max-retries must be 0 or more\n"),
    (["--concurrency", "0"], "Error: --concurrency must be 1 or more\n"),
    (["--request-mode", "chat"], "Error: unknown --request-mode 'chat' — use conversation or serialized\n"),
    (["--summarizer-window", "0"], "Error: --summarizer-window must be 1 or more\n"),
])
def test_bad_options_are_one_line_and_exit_2(tmp_path, args, message):
    for command in (["eval"], ["batch", "eval", "--out", str(tmp_path / "out")]):
        result = CliRunner().invoke(app, [*command, str(claude_session(Path("s.jsonl"))), *args])
        assert (result.exit_code, result.stderr) == (2, message.replace(
            "tcompact eval --help", "tcompact batch eval --help" if command != ["eval"] else "tcompact eval --help"))
    assert not (tmp_path / "out").exists()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_failed_compaction_keeps_nothing_not_even_the_last_request(monkeypatch):
    """Issue 23 item 15: every `full` failed against a closed port, yet eval said "last request 1/1" and
    "tokens 1.00" (the input's, since nothing was written)."""
    monkeypatch.setenv("COLUMNS", "80")
    path = str(claude_session(Path("s.jsonl")))
    down = ["-c", "full", "--summarizer", "openai", "--model", "m", "--base-url",
            f"http://127.0.0.1:{_closed_port()}/v1", "--max-retries", "0", "--timeout", "5"]
    run = CliRunner(env={"OPENAI_API_KEY": "sk-test"}).invoke
    result = run(app, ["eval", path, *down, "--metric", "both"])
    assert (result.exit_code, result.stderr) == (1, "Error: 5 compaction(s) failed (full first) — their rows count "
                                                    "nothing as kept; see the reasons with --json\n")
    assert "".join(line.rstrip() + "\n" for line in result.stdout.splitlines()) == FAILED
    doc = orjson.loads(run(app, ["eval", path, *down, "--json"]).stdout)
    (one,) = doc["files"][0]["results"]
    assert (one["status"], one["tokens_after"], one["ratio"], one["last_request_kept"]) == ("failed", None, None, False)
    assert doc["summary"][0]["last_request_kept"] == {"kept": 0, "of": 1}
    assert (doc["summary"][0]["tokens_after"], doc["summary"][0]["ratio"]) == (0, None)


FAILED = """\
Canaries: 14 planted in 1 session(s), 2 of each kind per session, seed 1; every chain compacted with --now
Kept verbatim, per chain

                full (1 failed)
 ──────────────────────────────
 error line                  0%
 file written                0%
 command                     0%
 constraint                  0%
 preference                  0%
 decision                    0%
 early fact                  0%
 all kinds                   0%

 tokens                       —
 worst                        —
 pairing                      0
 last request               0/1

tokens: after / before, all sessions together; worst: the highest of one session; pairing: tool calls or results left without their partner; last request: sessions whose last real request is kept verbatim
Needed tokens: 11 at 4 cut point(s) in 1 session(s) (at most 4 a session, uses within the next 40 calls); every chain compacted with --now
Needed tokens kept, per chain (baselines below the line)

                   kept   recoverable   size
 ───────────────────────────────────────────
 full (4 failed)     0%            0%      —

 last-20           100%            0%   1.00
 head-tail-500      45%            0%   0.81

kept: standing verbatim in what the model sees after compaction; recoverable: not kept, but in an original the context names (an offloaded message, a path:line); size: tokens after / before, all cuts together; last-20: the last 20 messages + system + last request; head-tail-500: every tool result cut to its first and last 500 characters
"""


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/transcripts")
def test_the_shared_sessions_through_batch_eval_give_eval_s_needed_totals(tmp_path):
    options = ["--metric", "needed", "-c", "truncate", "-c", "micro"]
    batch = CliRunner().invoke(app, ["batch", "eval", str(SHARED), "--out", str(tmp_path / "out"), "--json",
                                     "--workers", "1", *options])
    assert batch.exit_code == 0, batch.stderr
    single = orjson.loads(CliRunner().invoke(app, ["eval", str(SHARED), "--json", *options]).stdout)
    totals = orjson.loads(batch.stdout)["totals"]
    assert totals["needed"] == single["needed"] and totals["metric"] == "needed" and "summary" not in totals
    assert (totals["needed"]["sessions"], totals["needed"]["cuts"], totals["needed"]["needed"]) == (5, 18, 442)


def test_a_session_of_this_machine_is_measured_as_the_file_itself(tmp_path):
    home = shared_home(tmp_path / "home")
    result = CliRunner().invoke(app, ["eval", "--session", "5c03", "--metric", "needed", "-c", "micro", "--json"],
                                env=env_for(home))
    assert result.exit_code == 0, result.stderr
    (stored,) = orjson.loads(result.stdout)["files"]
    direct = evaluate_file(real_file("ccviewer"), EvalOptions(metric="needed", chains=("micro",)))
    assert stored["needed"] == direct["needed"] and [len(c["needed"]) for c in stored["needed"]["cuts"]] == [8, 8, 8, 30]
