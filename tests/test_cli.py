"""The command line: exact output of inspect and convert, exit codes, files never overwritten."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson
import pytest
from conftest import REPO, SAMPLES, SESSION, jsonl, msg
from typer.testing import CliRunner

from tcompact.app import app

EXPECTED_TABLES = """\
s.jsonl · chat · main (main)
7 messages · 1 tool call · 83 tokens (o200k_base, approximate)

Context window: 83 of 200,000 tokens (0.0%; size: default)
  [····┆···························│·······] below the trigger
  trigger 160,000 (0.8) · minimum target 20,000 (0.1)

Tokens per round 0–2: ▂█▃ (peak 54 in round 1)

Tokens by content kind
┏━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━┓
┃ kind                ┃ tokens ┃ share ┃
┡━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━┩
│ system text         │     10 │ 12.0% │
│ user text           │     24 │ 28.9% │
│ assistant text      │     23 │ 27.7% │
│ tool-call arguments │      6 │  7.2% │
│ tool results        │     20 │ 24.1% │
├─────────────────────┼────────┼───────┤
│ role system         │     10 │ 12.0% │
│ role user           │     24 │ 28.9% │
│ role assistant      │     29 │ 34.9% │
│ role tool           │     20 │ 24.1% │
└─────────────────────┴────────┴───────┘
Tokens by tool
┏━━━━━━━━━━━┳━━━━━━━┳━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━┓
┃ tool      ┃ calls ┃ argument tokens ┃ result tokens ┃ errors ┃
┡━━━━━━━━━━━╇━━━━━━━╇━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━┩
│ run_tests │     1 │               6 │            20 │      0 │
└───────────┴───────┴─────────────────┴───────────────┴────────┘
Rounds
┏━━━┳━━━━━━━━━━┳━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
┃ # ┃ messages ┃ calls ┃ tokens ┃ request                            ┃
┡━━━╇━━━━━━━━━━╇━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
│ 0 │      0–0 │     0 │     10 │ (before the first request)         │
│ 1 │      1–4 │     1 │     54 │ Fix the failing test in parser.py  │
│ 2 │      5–6 │     0 │     19 │ Thanks. Now add a changelog entry. │
└───┴──────────┴───────┴────────┴────────────────────────────────────┘
Largest messages
┏━━━━━┳━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
┃   # ┃ tokens ┃ role      ┃ tool         ┃ preview                      ┃
┡━━━━━╇━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
│   3 │     20 │ tool      │ run_tests    │ FAILED test_parser.py::test… │
│   4 │     13 │ assistant │              │ The parser indexes an empty… │
│   5 │     13 │ user      │              │ Thanks. Now add a changelog… │
└─────┴────────┴───────────┴──────────────┴──────────────────────────────┘
Provider usage: none recorded in the file
"""


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    jsonl(tmp_path / "s.jsonl", SESSION)
    return CliRunner()


def test_inspect_tables(runner):
    result = runner.invoke(app, ["inspect", "s.jsonl", "--top", "3"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert [line.rstrip() for line in result.stdout.splitlines()] == EXPECTED_TABLES.splitlines()


def test_inspect_json(runner, ntok):
    result = runner.invoke(app, ["inspect", "s.jsonl", "--json", "--top", "2", "--spans", "dialogue",
                                 "--context-window", "100"])
    assert result.exit_code == 0
    report = orjson.loads(result.stdout)
    (t,) = report["files"][0]["transcripts"]
    own = [4 + ntok(m["content"]) for m in SESSION]
    args = ntok("run_tests") + ntok("{}") + 3
    total = sum(own) + args
    assert t["tokens"] == {
        "total": total,
        "estimated": 0,
        "by_role": {"system": own[0], "user": own[1] + own[5], "assistant": own[2] + own[4] + own[6] + args,
                    "tool": own[3]},
        "by_kind": {"system": own[0], "user": own[1] + own[5], "injected": 0, "assistant": own[2] + own[4] + own[6],
                    "reasoning": 0, "tool_arguments": args, "tool_results": own[3], "images": 0},
    }
    assert t["tools"] == [{"name": "run_tests", "calls": 1, "argument_tokens": args, "result_tokens": own[3],
                           "results": 1, "errors": 0}]
    assert t["rounds"] == [
        {"number": 0, "start": 0, "end": 1, "request": None, "messages": 1, "tokens": own[0], "tool_calls": 0},
        {"number": 1, "start": 1, "end": 5, "request": "Fix the failing test in parser.py", "messages": 4,
         "tokens": sum(own[1:5]) + args, "tool_calls": 1},
        {"number": 2, "start": 5, "end": 7, "request": "Thanks. Now add a changelog entry.", "messages": 2,
         "tokens": own[5] + own[6], "tool_calls": 0},
    ]
    assert [m["index"] for m in t["top_messages"]] == [3, 4]
    assert t["top_messages"][0] == {"index": 3, "role": "tool", "tool": "run_tests", "tokens": own[3],
                                    "preview": "FAILED test_parser.py::test_empty - IndexError: list index out of range"}
    assert t["window"] == {"context_window": 100, "source": "--context-window", "tokens": total,
                           "utilisation": round(total / 100, 4), "trigger_ratio": 0.8, "trigger_tokens": 80,
                           "over_trigger": True, "min_target_ratio": 0.1, "min_target_tokens": 10}
    body = sum(own[:5]) + args
    assert t["span"] == {"compressor": "dialogue", "keep_recent": None,
                         "prefix": {"start": 0, "end": 0, "messages": 0, "tokens": 0},
                         "body": {"start": 0, "end": 5, "messages": 5, "tokens": body},
                         "tail": {"start": 5, "end": 7, "messages": 2, "tokens": own[5] + own[6]},
                         "would_compact": True}
    assert (t["compactions"], t["provider_usage"], t["orphans"]) == ([], None, {"tool_results": 0,
                                                                              "unanswered_calls": 0})
    assert report["totals"] == {"files": 1, "transcripts": 1, "messages": 7, "tool_calls": 1, "tokens": total,
                                "skipped_lines": 0}


def test_inspect_spans_show_what_compact_uses(runner):
    # issue 13 item 6: --spans round-level kept 4 recent messages and used the 0.8 trigger, where
    # compact -c round-level keeps 0 and acts at trigger_total_tokens (230,000)
    def span(*args):
        result = runner.invoke(app, ["inspect", "s.jsonl", "--json", "--context-window", "100", *args])
        assert result.exit_code == 0, result.stderr
        t = orjson.loads(result.stdout)["files"][0]["transcripts"][0]["span"]
        return (t["keep_recent"], [t[p]["messages"] for p in ("prefix", "body", "tail")], t["would_compact"])

    assert span("--spans", "round-level") == (0, [0, 7, 0], False)
    compacted = runner.invoke(app, ["compact", "s.jsonl", "-c", "round-level", "--context-window", "100", "--json"])
    assert orjson.loads(compacted.stdout)["stages"][0]["reason"] == "below the threshold (83 < 230,000 tokens)"
    assert span("--spans", "round-level", "--keep-recent", "2") == (2, [0, 5, 2], False)
    assert span("--spans", "current-round") == (0, [6, 1, 0], False)  # a body of 6 tokens: under 0.1 × 100
    assert span("--spans", "full", "--keep-recent", "1") == (1, [1, 5, 1], True)
    refused = runner.invoke(app, ["inspect", "s.jsonl", "--spans", "dialogue", "--keep-recent", "2"])
    assert (refused.exit_code, refused.stderr) == (2, "Error: --keep-recent does not apply to dialogue, whose span "
                                                      "keeps no number of recent messages — leave --keep-recent out\n")
    refused = runner.invoke(app, ["inspect", "s.jsonl", "--keep-recent", "2"])
    assert (refused.exit_code, refused.stderr) == (
        2, "Error: --keep-recent sets the raw tail of a --spans layout, and no --spans was given — add --spans with "
           "one of: current-round, dialogue, round-level, full, working-set\n")


def test_inspect_model_sets_encoding_and_window(runner):
    report = orjson.loads(runner.invoke(app, ["inspect", "s.jsonl", "--json", "--model", "gpt-4"]).stdout)
    t = report["files"][0]["transcripts"][0]
    assert (t["encoding"], t["approximate"], t["window"]["context_window"], t["window"]["source"]) == (
        "cl100k_base", False, 8192, "model gpt-4")


def test_inspect_chooses_a_transcript(runner, tmp_path):
    episodes = [{"task_id": 1, "traj": SESSION[:2]}, {"task_id": 2, "traj": SESSION}]
    (tmp_path / "tau.json").write_bytes(orjson.dumps(episodes))
    result = runner.invoke(app, ["inspect", "tau.json", "--transcript", "task-2", "--top", "0"])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0] == "tau.json · tau-bench · task-2 (episode)"
    assert "Transcripts in this file" in result.stdout
    result = runner.invoke(app, ["inspect", "tau.json", "--transcript", "task-3"])
    assert (result.exit_code, result.stderr) == (
        2, "Error: tau.json: no transcript 'task-3' in this file — choose one of: task-1, task-2\n")


def test_convert_to_stdout_and_to_a_file(runner, tmp_path):
    result = runner.invoke(app, ["convert", "s.jsonl", "--to", "chat"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout_bytes == (tmp_path / "s.jsonl").read_bytes()
    result = runner.invoke(app, ["convert", "s.jsonl", "--to", "codex", "-o", "out.jsonl"])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    lines = [orjson.loads(x) for x in (tmp_path / "out.jsonl").read_bytes().splitlines()]
    assert [(x["type"], x["payload"].get("type")) for x in lines] == [
        ("session_meta", None), ("response_item", "message"), ("response_item", "function_call"),
        ("response_item", "function_call_output"), ("response_item", "message"), ("response_item", "message"),
        ("response_item", "message")]
    assert lines[0]["payload"]["base_instructions"] == {"text": "You are a coding agent."}
    assert lines[2]["payload"] == {"type": "function_call", "name": "run_tests", "arguments": "{}", "call_id": "c1"}


def test_convert_never_overwrites_without_force_nor_the_input(runner, tmp_path):
    (tmp_path / "out.jsonl").write_text("keep me")
    result = runner.invoke(app, ["convert", "s.jsonl", "--to", "chat", "-o", "out.jsonl"])
    assert (result.exit_code, result.stderr) == (
        2, "Error: out.jsonl: the output file exists already — pass --force to overwrite it, or choose another path\n")
    assert (tmp_path / "out.jsonl").read_text() == "keep me"
    result = runner.invoke(app, ["convert", "s.jsonl", "--to", "chat", "-o", "out.jsonl", "--force"])
    assert result.exit_code == 0
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "s.jsonl").read_bytes()
    result = runner.invoke(app, ["convert", "s.jsonl", "--to", "chat", "-o", "s.jsonl", "--force"])
    assert (result.exit_code, result.stderr) == (
        2, "Error: s.jsonl: the output is the input file — write to another path; tcompact never replaces its input\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl", "s.jsonl"]  # no temp files left


def test_convert_refuses_losses_unless_lossy(runner):
    result = runner.invoke(app, ["convert", "s.jsonl", "--to", "claude-code"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "Error: s.jsonl: claude-code cannot represent 1 part(s) of this transcript: message 0 (system): Claude Code "
        "sessions have no system messages — pass --lossy to convert anyway without them, or convert to chat\n")
    result = runner.invoke(app, ["convert", "s.jsonl", "--to", "claude-code", "--lossy"])
    assert result.exit_code == 0
    assert result.stderr == "Warning: dropped: message 0 (system): Claude Code sessions have no system messages\n"
    lines = [orjson.loads(x) for x in result.stdout_bytes.splitlines()]
    assert [x["type"] for x in lines] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    assert [x["parentUuid"] for x in lines[1:]] == [x["uuid"] for x in lines[:-1]]


def test_convert_names_what_stays_behind(runner):
    result = CliRunner().invoke(app, ["convert", str(SAMPLES / "claude_code_session.jsonl"), "--to", "chat"])
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        "Warning: 1 other transcript(s) in the file not included (sidechain-26dd4578); pass --transcript ID",
        "Warning: 10 message line(s) outside the active context (before a compaction, or on an abandoned branch) "
        "stay behind; pass --full-history to include what precedes a compaction",
        "Warning: 2 record(s) that are not messages stay behind: file-history-snapshot ×1, system ×1",
    ]


def test_python_dash_m_and_version():
    out = subprocess.run([sys.executable, "-m", "tcompact", "--version"], capture_output=True, text=True, cwd=REPO)
    assert (out.returncode, out.stdout, out.stderr) == (0, "tcompact 0.1.0\n", "")
    out = subprocess.run([sys.executable, "-m", "tcompact", "--help"], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0 and "inspect" in out.stdout and "convert" in out.stdout


def test_a_closed_pipe_ends_quietly_with_the_sigpipe_status():
    # issue 13 item 11: `tcompact inspect f | head -2` was an internal error and exit 1; it ends as a
    # Unix tool that SIGPIPE ended does: no output on stderr, status 141 (128 + 13)
    import os

    chat = str(SAMPLES / "chat_tool_session.jsonl")
    commands = [["inspect", chat], ["convert", chat, "--to", "codex"], ["--version"], []]  # rich, stdout, echo, help
    started = []
    for args in commands:  # all at once; each reader is closed before the command writes
        read, write = os.pipe()
        os.close(read)
        started.append(subprocess.Popen([sys.executable, "-m", "tcompact", *args], stdout=write,
                                        stderr=subprocess.PIPE, cwd=REPO))
        os.close(write)
    assert [(p.wait(), p.stderr.read()) for p in started] == [(141, b"")] * len(commands)


def test_help_does_not_import_the_heavy_modules():
    code = ("import sys; from tcompact.app import app; "
            "print(sorted(m for m in ('tiktoken', 'openai', 'tcompact.inspection', 'rich.table') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.stdout.strip() == "[]"


def test_inspect_without_spans_does_not_import_the_compressors():
    """A plain inspect needs no compressor: importing them (and the summarisers and pydantic models they
    declare) took 0.13 s of a 0.28 s cached inspect."""
    code = ("import sys; from typer.testing import CliRunner; from tcompact.app import app; "
            "r = CliRunner().invoke(app, ['inspect', 'sample_transcripts/chat_tool_session.jsonl', '--json']); "
            "print(r.exit_code, sorted(m for m in ('tcompact.compressors', 'tcompact.summarizers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.stdout.strip() == "0 []", out.stderr


#: The modules a plain ``inspect --json`` may import: its command, the readers, counting, the caches.
INSPECT_MODULES = {
    "tcompact", "tcompact.app", "tcompact.launch", "tcompact.commands", "tcompact.commands._help", "tcompact.commands._options",
    "tcompact.commands._inspect_run",
    "tcompact.commands._sessions", "tcompact.commands.inspect", "tcompact.counting", "tcompact.counting.encodings", "tcompact.errors",
    "tcompact.formats", "tcompact.formats._digest", "tcompact.formats._lines", "tcompact.formats._merge",
    "tcompact.formats._source", "tcompact.formats.family",
    "tcompact.formats.family.base", "tcompact.formats.family.chat", "tcompact.formats.family.claude_code",
    "tcompact.formats.family.codex", "tcompact.formats.family.trajectories",
    "tcompact.formats.chat", "tcompact.formats.claude_chain", "tcompact.formats.claude_code",
    "tcompact.formats.claude_messages", "tcompact.formats.codex", "tcompact.formats.codex_items",
    "tcompact.formats.codex_usage", "tcompact.formats.steps",
    "tcompact.formats.trajectories", "tcompact.inspection.growing", "tcompact.counting.images", "tcompact.inspection.job",
    "tcompact.inspection.report", "tcompact.inspection", "tcompact.markers", "tcompact.model", "tcompact.render",
    "tcompact.registry", "tcompact.inspection.reportcache", "tcompact.rounds", "tcompact.counting.cache", "tcompact.counting.pieces",
    "tcompact.counting.tokens", "tcompact.counting.table", "tcompact.counting.windows",
}


def _three_reads(tmp_path, code, *, same_as_command_line=False):
    """What ``python -c code FILE`` printed last on stderr (as JSON) for a chat session inspected a second time
    (its report kept), a copy with a line more (read whole, every text counted before) and the session with a
    line appended (read on from its kept state); with ``same_as_command_line``, each run's exit status and
    stdout are checked against the command line's from scratch (``--no-cache``)."""
    import json

    sample = (SAMPLES / "chat_tool_session.jsonl").read_bytes()
    last = sample.splitlines(keepends=True)[-1]
    session, copy = tmp_path / "s.jsonl", tmp_path / "copy.jsonl"
    session.write_bytes(sample)
    copy.write_bytes(sample + last)  # other bytes, every text counted before
    env = {**os.environ, "TCOMPACT_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("TCOMPACT_NO_CACHE", None)

    def imported(path):
        out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, cwd=REPO, env=env)
        if same_as_command_line:
            whole = subprocess.run([sys.executable, "-m", "tcompact", "inspect", str(path), "--json", "--no-cache"],
                                   capture_output=True, text=True, cwd=REPO, env=env)
            assert (out.returncode, out.stdout) == (whole.returncode, whole.stdout) and whole.stdout
        return json.loads(out.stderr.splitlines()[-1])

    imported(session)  # counts the texts, keeps the report and the state
    runs = {"the report kept": imported(session), "read whole": imported(copy)}
    with open(session, "ab") as fh:  # then read on from the kept state: a line appended, its texts counted before
        fh.write(sample.splitlines(keepends=True)[-2])
    runs["read on"] = imported(session)
    assert "tcompact.inspection.growing" in runs["read on"][1] and "tcompact.formats.steps" in runs["read on"][1]
    return runs


def test_a_plain_inspect_imports_only_what_it_needs(tmp_path):
    """issue 26 item 3: start-up is most of a small file's inspect, and the status line and hooks read a
    session on every refresh. A plain ``inspect --json`` imports none of the other commands, no writer, no
    compressor or summariser, no rich and no pydantic; with every text counted before, not the tokenizer
    either — whether the report is kept, the file is read whole, or read on from its kept state."""
    code = ("import json, sys; from tcompact.app import main; sys.argv = ['tcompact', 'inspect', sys.argv[1], '--json']\n"
            "try:\n    main()\nexcept SystemExit as end:\n    status = end.code\n"
            "print(json.dumps([status, sorted(m for m in sys.modules if m.startswith('tcompact')), "
            "sorted({m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names))]), file=sys.stderr)")
    runs = _three_reads(tmp_path, code)
    for what, (status, modules, others) in runs.items():
        assert status in (0, None), what
        assert set(modules) - INSPECT_MODULES == set(), what
        assert set(others) - {"__main__", "_distutils_hack", "annotated_doc", "orjson", "shellingham", "tcompact",
                              "typer"} == set(), what
    # a second look at an unchanged file finds its report without a reader, a message or a count
    assert set(runs["the report kept"][1]) == INSPECT_MODULES - {
        "tcompact.formats.chat", "tcompact.formats.claude_chain", "tcompact.formats.claude_code", "tcompact.counting.images",
        "tcompact.formats._lines", "tcompact.formats.codex_items",
        "tcompact.formats.claude_messages", "tcompact.formats.codex", "tcompact.formats.steps", "tcompact.model",
        "tcompact.formats.codex_usage",
        "tcompact.formats.trajectories", "tcompact.formats._merge", "tcompact.inspection.report", "tcompact.markers",
        "tcompact.rounds", "tcompact.counting.pieces", "tcompact.counting.tokens", "tcompact.counting.windows"}


#: What the entry point's fast path for ``inspect PATH --json`` may import: no command line (typer, click), no
#: rich, no pydantic, no tiktoken (every text was counted before), no other command.
FAST_INSPECT_MODULES = INSPECT_MODULES - {"tcompact.app", "tcompact.commands._help", "tcompact.commands._options",
                                          "tcompact.commands._sessions", "tcompact.commands.inspect"}


def test_the_entry_points_plain_inspect_imports_no_command_line(tmp_path):
    """issue 26 item 3: ``tcompact inspect PATH --json`` runs from the entry point without typer (whose import
    and command building were most of a second look at a small file): with its kept report, read whole, and
    read on from its kept state; its output the command line's, byte for byte."""
    code = ("import json, sys; import tcompact.launch as launch; sys.argv = ['tcompact', 'inspect', sys.argv[1], '--json']\n"
            "def end(status):\n"
            "    print(json.dumps([status, sorted(m for m in sys.modules if m.startswith('tcompact')), "
            "sorted({m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names))]), file=sys.stderr)\n"
            "    exit_now(status)\n"
            "launch.exit_now, exit_now = end, launch.exit_now\n"
            "launch.main()\n")
    runs = _three_reads(tmp_path, code, same_as_command_line=True)
    for what, (status, modules, others) in runs.items():
        assert status == 0, what
        assert set(modules) - FAST_INSPECT_MODULES == set(), (what, set(modules) - FAST_INSPECT_MODULES)
        assert set(others) - {"__main__", "_distutils_hack", "orjson", "tcompact"} == set(), what
    assert "tcompact.formats.claude_code" not in runs["the report kept"][1]


def test_the_entry_points_plain_inspect_leaves_the_rest_to_the_command_line(tmp_path):
    """What the fast path does not take (another option, no PATH, a file that cannot be read) is the command
    line's, its error line and exit status as ever."""
    from pathlib import Path

    from tcompact.commands._inspect_run import _plain_paths, plain_options
    from tcompact.commands.inspect import inspect_options

    assert _plain_paths(["a.jsonl", "--json"]) == ([Path("a.jsonl")], True)
    assert _plain_paths(["a.jsonl", "./b"]) == ([Path("a.jsonl"), Path("b")], False)
    assert _plain_paths(["--json", "a.jsonl"]) == ([Path("a.jsonl")], True)
    for args in ([], ["--json"], ["a.jsonl", "--top", "3"], ["a.jsonl", "--json", "--json"], ["-"], [""], ["a", "-h"]):
        assert _plain_paths(args) is None, args
    # the kept reports are keyed by the options' repr: the fast path's must be the command's with no option
    assert repr(plain_options()) == repr(inspect_options(no_cache=False, encoding=None, model=None,
                                                         context_window=None, spans=None, keep_recent=None, top=10,
                                                         fmt=None, full_history=False, skip_bad_lines=False))
    env = {**os.environ, "TCOMPACT_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-m", "tcompact", "inspect", str(tmp_path / "missing.jsonl"), "--json"],
                         capture_output=True, text=True, cwd=REPO, env=env)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == f"Error: {tmp_path / 'missing.jsonl'}: no such file or folder — check the path\n"


def test_the_entry_points_plain_inspect_says_what_is_wrong_with_a_file_as_the_command_line_does(runner, tmp_path):
    """Bad input ends the fast path with the command line's error line and status (the file is not read a
    second time by the command line to say so)."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "content": "hi"}\n{"role": "assistant", "content": \n', encoding="utf-8")
    env = {**os.environ, "TCOMPACT_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-m", "tcompact", "inspect", str(bad), "--json"],
                         capture_output=True, text=True, cwd=REPO, env=env)
    typer_run = runner.invoke(app, ["inspect", str(bad), "--json"])
    assert (out.returncode, out.stdout, out.stderr) == (typer_run.exit_code, typer_run.stdout, typer_run.stderr)
    timed = subprocess.run([sys.executable, "-X", "importtime", "-m", "tcompact", "inspect", str(bad), "--json"],
                           capture_output=True, text=True, cwd=REPO, env=env)
    imported = {line.rsplit("|", 1)[-1].strip() for line in timed.stderr.splitlines() if line.startswith("import time:")}
    assert ("tcompact.commands._inspect_run" in imported, "typer" in imported) == (True, False)
    assert timed.stderr.splitlines()[-1] == out.stderr.rstrip("\n")
    assert (out.returncode, out.stderr) == (2, f"Error: {bad}:2: not valid JSON (unexpected end of data at column "
                                               "34) — fix or remove that line, or pass --skip-bad-lines to read on "
                                               "without it\n")


def test_the_entry_point_ends_a_command_with_its_exit_functions_run_and_its_output_flushed(tmp_path):
    """After a command the process ends without the interpreter's teardown (``launch.finish``), but as it would
    have ended: the status, what was printed (buffered, into a pipe), the exit functions run — and with them a
    copy of the process still working is stopped and waited for, not left running after the command."""
    script = ("import atexit, os, sys, time\n"
              "from tcompact import launch\n"
              "from tcompact.forked import Forked\n"
              "copy = Forked(lambda: time.sleep(60))\n"
              "atexit.register(lambda: print('exit function ran', flush=True))\n"
              "print(copy._pid or 0)\n"  # (none on a machine of one CPU: no copy is made)
              "sys.stdout.write('printed, not flushed')\n"
              "launch.finish(eval(sys.argv[1]))\n"
              "print('not reached')\n")
    for given, status, err in (("3", 3, ""), ("None", 0, ""), ("'a message'", 1, "a message\n")):
        out = subprocess.run([sys.executable, "-c", script, given], capture_output=True, text=True, cwd=REPO,
                             env={**os.environ, "TCOMPACT_CACHE_DIR": str(tmp_path / "cache")}, timeout=30)
        pid, rest = out.stdout.split("\n", 1)
        assert (out.returncode, rest, out.stderr) == (status, "printed, not flushedexit function ran\n", err), given
        if int(pid):
            with pytest.raises(ProcessLookupError):  # stopped and reaped, not orphaned
                os.kill(int(pid), 0)


def test_folder_scan_passes_over_files_that_are_no_transcripts(runner, tmp_path):
    (tmp_path / "proj").mkdir()
    jsonl(tmp_path / "proj" / "a.jsonl", SESSION)
    (tmp_path / "proj" / "package.json").write_text('{"name": "demo", "version": "1.0.0"}')
    jsonl(tmp_path / "proj" / "session_index.jsonl", [{"id": "x", "thread_name": "t", "updated_at": "2026"}])
    result = runner.invoke(app, ["inspect", "proj", "--json"])
    assert (result.exit_code, result.stderr) == (0, "")
    report = orjson.loads(result.stdout)
    assert [f["path"] for f in report["files"]] == ["proj/a.jsonl"]
    assert report["not_transcripts"] == [
        {"path": "proj/package.json", "reason": "cannot tell the format (first record has keys: name, version)"},
        {"path": "proj/session_index.jsonl", "reason": "cannot tell the format (first record has keys: id, "
                                                      "thread_name, updated_at)"},
    ]
    result = runner.invoke(app, ["inspect", "proj"])
    assert result.stdout.splitlines()[-1] == (
        "Passed over 2 file(s) that hold no transcript: proj/package.json (cannot tell the format (first record "
        "has keys: name, version)); proj/session_index.jsonl (cannot tell the format (first record has keys: id, "
        "thread_name, updated_at))")
    result = runner.invoke(app, ["inspect", "proj/package.json", "proj/a.jsonl"])
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: proj/package.json:1: cannot tell the format (first record has keys: name")
    result = runner.invoke(app, ["inspect", "proj", "s.jsonl", "--transcript", "main"])
    assert (result.exit_code, result.stderr) == (
        2, "Error: --transcript needs a single file — pass the one file that holds that transcript\n")
    (tmp_path / "proj" / "a.jsonl").unlink()
    result = runner.invoke(app, ["inspect", "proj"])
    assert (result.exit_code, result.stderr) == (
        2, "Error: no transcripts found: 2 file(s) are not transcripts (first: proj/package.json: cannot tell the "
           "format (first record has keys: name, version)) — pass transcript files or folders that hold them\n")


def test_folder_scan_inside_the_folder_with_an_offload_store_and_a_missing_path(runner, tmp_path):
    # issue 13 item 12: `inspect . --json > report.json` met the shell's new empty file; an offload
    # store's blobs were read as chat transcripts; one missing path aborted the run
    import shutil

    shutil.copy(SAMPLES / "claude_code_session.jsonl", tmp_path / "claude.jsonl")
    assert runner.invoke(app, ["compact", "claude.jsonl", "-c", "offload", "--now", "-o", "off.jsonl",
                               "--set", "large_message_tokens=200", "--set", "protected_tools=[]"]).exit_code == 0
    (tmp_path / "off.report.json").unlink()
    (tmp_path / "report.json").write_bytes(b"")  # what `> report.json` leaves while inspect runs
    result = runner.invoke(app, ["inspect", ".", "--json"])
    assert (result.exit_code, result.stderr) == (0, "")
    report = orjson.loads(result.stdout)
    blobs = sorted(p.name for p in (tmp_path / "off.offload").iterdir())
    assert [f["path"] for f in report["files"]] == ["claude.jsonl", "off.jsonl", "s.jsonl"]
    assert report["not_transcripts"] == [
        *({"path": f"off.offload/{name}", "reason": "an original that `tcompact compact -c offload` moved out, not "
                                                    "a transcript"} for name in blobs),
        {"path": "report.json", "reason": "the file is empty"}]
    assert len(blobs) == 3
    result = runner.invoke(app, ["inspect", "s.jsonl", "gone.jsonl", "claude.jsonl", "--json"])
    assert (result.exit_code, result.stderr) == (2, "Error: gone.jsonl: no such file or folder — check the path\n")
    report = orjson.loads(result.stdout)
    assert [f["path"] for f in report["files"]] == ["s.jsonl", "claude.jsonl"]
    assert report["errors"] == [{"path": "gone.jsonl", "error": "gone.jsonl: no such file or folder — check the path"}]
    # one row per context: a sub-agent has its own window, so its row has its own figures
    result = runner.invoke(app, ["inspect", "s.jsonl", "claude.jsonl"])
    assert [line.rstrip() for line in result.stdout.splitlines()] == [
        "Transcripts",
        "┏━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━┳━━━━━━━┳━━━━━━━━┳━━━━━━━━┓",
        "┃ file                   ┃ format      ┃ msgs ┃ calls ┃ tokens ┃ window ┃",
        "┡━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━╇━━━━━━━╇━━━━━━━━╇━━━━━━━━┩",
        "│ s.jsonl                │ chat        │    7 │     1 │     83 │   0.0% │",
        "│ claude.jsonl           │ claude-code │   18 │     8 │  2,928 │   1.5% │",
        "│   + sidechain-26dd4578 │   subagent  │    8 │     3 │    783 │   0.4% │",
        "├────────────────────────┼─────────────┼──────┼───────┼────────┼────────┤",
        "│ 2 files, 3 transcripts │             │   33 │    12 │  3,794 │        │",
        "└────────────────────────┴─────────────┴──────┴───────┴────────┴────────┘",
    ]


def test_provider_usage_that_predates_a_compaction_says_so(runner, tmp_path):
    # issue 13 item 16: after a compaction, inspect compared the new context with the file's stale
    # usage ("130,533 reported vs 10,557 counted") as if they were figures of the same context
    assert runner.invoke(app, ["compact", str(SAMPLES / "codex_rollout.jsonl"), "-c", "dialogue", "--now",
                               "-o", "out.jsonl"]).exit_code == 0
    lines = (tmp_path / "out.jsonl").read_bytes().splitlines()
    assert [orjson.loads(lines[n - 1])["payload"]["type"] for n in (48, 51)] == ["token_count", "context_compacted"]
    compacted = 50  # the compacted line; its context_compacted event (51) is the same compaction

    def usage():
        result = runner.invoke(app, ["inspect", "out.jsonl", "--json"])
        t = orjson.loads(result.stdout)["files"][0]["transcripts"][0]
        tail = runner.invoke(app, ["inspect", "out.jsonl"]).stdout.splitlines()[-1]
        return t["provider_usage"]["last_line"], t["provider_usage"]["predates_compaction"], tail

    assert usage() == (48, compacted, "  context at the last request: 15,652 reported, before the compaction at line "
                                      f"{compacted}; 1,615 counted by tcompact now (the usage predates the compaction)")
    # Codex resumed and reported a request after the compaction: the figures are of the new context
    event = {"timestamp": "2099-01-01T00:00:00.000Z", "type": "event_msg", "payload": {"type": "token_count", "info": {
        "last_token_usage": {"input_tokens": 2500, "output_tokens": 10}, "total_token_usage": {"input_tokens": 9}}}}
    (tmp_path / "out.jsonl").write_bytes(b"\n".join(lines) + b"\n" + orjson.dumps(event) + b"\n")
    assert usage() == (len(lines) + 1, None, "  context at the last request: 2,500 reported vs 1,615 counted by "
                                             "tcompact (the provider also counts the system prompt and tool "
                                             "definitions)")


def test_memory_blocks_of_earlier_compactions_are_listed(runner, tmp_path):
    block = "<memory_block_dialogue>\n<meaning>\nThis is a compressed handoff.\n</meaning>"
    jsonl(tmp_path / "m.jsonl", [SESSION[0], msg("user", block), *SESSION[5:]])
    report = orjson.loads(runner.invoke(app, ["inspect", "m.jsonl", "--json"]).stdout)
    t = report["files"][0]["transcripts"][0]
    assert t["compactions"] == [{"index": 1, "line": 2, "kind": "memory_block_dialogue", "trigger": None,
                                 "pre_tokens": None}]
    assert t["tokens"]["by_kind"]["injected"] > 0


@pytest.mark.parametrize(("compressor", "kind"), [("full", "continuation_summary"),
                                                 ("dialogue", "memory_block_dialogue")])
def test_a_chat_output_inspected_again_lists_its_compaction(runner, tmp_path, compressor, kind):
    source = REPO / "sample_transcripts" / "chat_tool_session.jsonl"
    result = runner.invoke(app, ["compact", str(source), "-c", compressor, "-o", "out.jsonl", "--context-window", "12000"])
    assert result.exit_code == 0, result.stderr
    report = orjson.loads(runner.invoke(app, ["inspect", "out.jsonl", "--json"]).stdout)
    (t,) = report["files"][0]["transcripts"]
    summary_line = next(n for n, line in enumerate((tmp_path / "out.jsonl").read_bytes().splitlines(), 1)
                        if orjson.loads(line)["content"].lstrip().startswith(("This session is being", "<memory")))
    assert [(c["kind"], c["line"], c["index"]) for c in t["compactions"]] == [(kind, summary_line, summary_line - 1)]


def test_a_file_named_again_inside_a_named_folder_is_inspected_once(runner):
    alone = orjson.loads(runner.invoke(app, ["inspect", "s.jsonl", "--json"]).stdout)
    result = runner.invoke(app, ["inspect", ".", "s.jsonl", "./s.jsonl", "--json"])
    assert result.exit_code == 0, result.stderr
    both = orjson.loads(result.stdout)
    assert [f["path"] for f in both["files"]] == ["s.jsonl"]
    assert both["totals"] == alone["totals"]


def test_fold_gives_a_file_of_many_episodes_one_row(runner, tmp_path):
    # issue 23 item 21: a tau-bench file in a folder printed one row per episode (200), with no way to fold them
    (tmp_path / "runs").mkdir()
    episodes = [{"task_id": n, "trial": 0, "reward": 1.0, "traj": SESSION} for n in range(30)]
    (tmp_path / "runs" / "tau.json").write_bytes(orjson.dumps(episodes))
    jsonl(tmp_path / "runs" / "s.jsonl", SESSION)
    listed = runner.invoke(app, ["inspect", "runs"])
    assert listed.exit_code == 0 and len([x for x in listed.stdout.splitlines() if "+ task-" in x]) == 29
    assert listed.stdout.splitlines()[-1] == "(--fold shows one row per file)"
    folded = runner.invoke(app, ["inspect", "runs", "--fold"])
    one = next(t for t in orjson.loads(runner.invoke(app, ["inspect", "runs", "--json"]).stdout)["files"]
               if t["format"] == "chat")["transcripts"][0]
    rows = {x.split("│")[1].strip(): [c.strip() for c in x.split("│")[2:-1]] for x in folded.stdout.splitlines()
            if x.startswith("│ ") and "files," not in x}
    assert rows == {"s.jsonl": ["chat", str(one["messages"]), str(one["tool_calls"]), f"{one['tokens']['total']:,}",
                                f"{100 * one['window']['utilisation']:.1f}%"],
                    "tau.json (+29 episodes)": ["tau-bench", str(30 * one["messages"]), str(30 * one["tool_calls"]),
                                                f"{30 * one['tokens']['total']:,}", "—"]}
    assert "+ task-" not in folded.stdout and "(--fold" not in folded.stdout
    detail = runner.invoke(app, ["inspect", "runs/tau.json", "--fold", "--top", "0"])
    assert detail.stdout.splitlines()[-1] == "29 more transcript(s) in this file (episode); --transcript ID shows one"
    assert "Transcripts in this file" in runner.invoke(app, ["inspect", "runs/tau.json", "--top", "0"]).stdout
    refused = runner.invoke(app, ["inspect", "runs", "--fold", "--json"])
    assert (refused.exit_code, refused.stderr) == (2, "Error: --fold shapes the tables; --json gives every "
                                                      "transcript — leave one of them out\n")


def test_skipped_lines_are_listed_in_the_order_of_the_file(runner, tmp_path):
    # issue 23 item 21: lines of the wrong shape were listed after the lines that are no JSON ("(4, 2); line 4")
    jsonl(tmp_path / "o.jsonl", [{"role": "user", "content": "hi"},
                                 {"role": "assistant", "content": None,
                                  "tool_calls": [{"id": "x", "type": "function", "function": {}}]},
                                 {"role": "assistant", "content": "ok"}, "not json", {"role": "user", "content": "bye"}])
    result = runner.invoke(app, ["inspect", "o.jsonl", "--skip-bad-lines", "--json"])
    assert [s["line"] for s in orjson.loads(result.stdout)["files"][0]["skipped_lines"]] == [2, 4]
    assert result.stderr == ('Warning: o.jsonl: skipped 2 bad line(s) (2, 4); line 2: chat message: "tool_calls"[0] '
                             "has no function name\n")


def test_an_unknown_model_is_said_not_ignored(runner):
    # issue 23 item 21: `--model` of a model no table knows was silently ignored (o200k_base and the file's window)
    result = runner.invoke(app, ["inspect", "s.jsonl", "--model", "acme-9", "--json"])
    t = orjson.loads(result.stdout)["files"][0]["transcripts"][0]
    assert (t["encoding"], t["approximate"], t["window"]["source"]) == ("o200k_base", True, "default")
    assert result.stderr == ("Warning: --model acme-9: tcompact knows no such model, so the context window is the "
                             "file's (its model's, or the one it recorded, else 200,000 tokens) and tokens are counted "
                             "with o200k_base, approximately — --context-window N sets the window, --encoding NAME "
                             "the tokenizer\n")
    result = runner.invoke(app, ["inspect", "s.jsonl", "--model", "acme-9", "--context-window", "50000", "--json"])
    assert result.stderr == ("Warning: --model acme-9: tcompact knows no such model, so tokens are counted with "
                             "o200k_base, approximately — --encoding NAME sets the tokenizer\n")
    for known in (["--model", "gpt-5"], ["--model", "claude-sonnet-4-5"], ["--model", "acme-9", "--encoding",
                                                                          "cl100k_base", "--context-window", "9000"]):
        assert runner.invoke(app, ["inspect", "s.jsonl", "--json", *known]).stderr == "", known
    result = runner.invoke(app, ["compact", "s.jsonl", "-c", "truncate", "--model", "acme-9", "--dry-run"])
    assert result.stderr.startswith("Warning: --model acme-9: tcompact knows no such model, so the context window")
