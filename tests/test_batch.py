"""``tcompact batch`` on the local process pool: sources, result lines, resuming, failures, the summary.

Self-contained: the bundled samples, copied and varied in a temp folder; Ctrl-C, a kill and a
resume run on about a hundred variants of the real sessions of ``../shared/transcripts`` (of the
samples in a clone without them).
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from batch_corpus import build_corpus, corrupt_files, descendants, real_sources, sorted_lines
from conftest import SAMPLES, SHARED
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.artifacts import AppendLog
from tcompact.batch import BatchOptions, run_batch
from tcompact.batch.kinds import fold, get_kind
from tcompact.batch.results import settings_id
from tcompact.batch.sources import expand, survey
from tcompact.errors import InputError, OutputError
from tcompact.formats import read_file
from tcompact.inspection import InspectOptions

NAMES = ["chat_tool_session.jsonl", "claude_code_session.jsonl", "codex_rollout.jsonl"]


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return CliRunner()


def samples(dest: Path) -> Path:
    """The three samples in ``dest/a`` and, one line shorter, in ``dest/b/c``."""
    for name in NAMES:
        data = (SAMPLES / name).read_bytes()
        (dest / "a").mkdir(parents=True, exist_ok=True)
        (dest / "a" / name).write_bytes(data)
        (dest / "b" / "c").mkdir(parents=True, exist_ok=True)
        (dest / "b" / "c" / name).write_bytes(b"".join(data.splitlines(keepends=True)[:-1]))
    return dest


def lines(out: Path) -> list[dict]:
    return [orjson.loads(line) for line in (out / "results.jsonl").read_bytes().splitlines()]


def by_path(out: Path) -> dict[str, dict]:
    return {line["path"]: line for line in lines(out)}


def cli_error(runner, *args) -> str:
    """What the single-file command prints after ``Error: ``."""
    result = runner.invoke(app, list(args))
    assert result.exit_code != 0 and result.stderr.startswith("Error: "), result.stderr
    return result.stderr.removeprefix("Error: ").rstrip("\n")


def corpus_of_about_a_hundred(dest: Path) -> list[Path]:
    """Variants of the real sessions; in a clone without ../shared, of the samples (126 files)."""
    if SHARED.is_dir():
        return build_corpus(dest, real_sources(SHARED), 24)
    return build_corpus(dest, [SAMPLES / name for name in NAMES], 50)


# --- sources --------------------------------------------------------------------------------------

def test_sources_stream_folders_globs_and_manifests(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for rel in ("c/a.jsonl", "c/x.traj", "c/notes.txt", "c/a/1.json", "c/b/2.jsonl", "c/out/results.jsonl"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}\n")
    (tmp_path / "m.txt").write_text("# corpus\n\nc/x.traj\n  c/b/2.jsonl  \nc/a/*.json\nmissing.jsonl\n")
    out = str(tmp_path / "c" / "out")
    found = [(os.path.relpath(f.path, tmp_path), f.named) for f in expand(["c", "m.txt"], exclude=out)]
    assert found == [("c/a.jsonl", False), ("c/x.traj", False), ("c/a/1.json", False), ("c/b/2.jsonl", False),
                     ("c/x.traj", True), ("c/b/2.jsonl", True), ("c/a/1.json", False), ("missing.jsonl", True)]
    assert survey(["c/b", "c/a/*.json"], exclude=out) == (2, str(tmp_path / "c"))
    monkeypatch.setattr(sys, "stdin", io.StringIO("c/a.jsonl\n"))
    assert [f.path for f in expand(["-"])] == [str(tmp_path / "c" / "a.jsonl")]


@pytest.mark.parametrize(("source", "error"), [
    ("nope", "nope: no such file, folder or matching glob — pass folders, globs (quoted), transcript files or "
             "manifests"),
    ("empty", "empty: no transcript files in this folder — tcompact looks for *.jsonl, *.json, *.traj, *.ndjson"),
    ("c/*.traj", "c/*.traj: the glob matches no file — check the pattern (quote it for tcompact)"),
    ("latin1.txt", "latin1.txt:2: the manifest is not UTF-8 text — a manifest lists one path per line; pass "
                   "transcript files by their .jsonl/.json/.traj/.ndjson name"),
])
def test_bad_sources_are_one_error(tmp_path, monkeypatch, source, error):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "c").mkdir()
    (tmp_path / "latin1.txt").write_bytes(b"a.jsonl\n\xe9t\xe9.jsonl\n")
    with pytest.raises(InputError) as caught:
        list(expand([source]))
    assert str(caught.value) == error


# --- the results log ------------------------------------------------------------------------------

def test_a_torn_last_line_is_cut_off_and_a_second_writer_refused(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}\n{"c":')
    log = AppendLog(path)
    assert log.dropped == 5
    with pytest.raises(OutputError) as caught:
        AppendLog(path)
    assert str(caught.value) == (f"{path}: another tcompact run is writing this file — wait for it to finish, "
                                 "or use another output folder")
    assert log.append(b'{"d":4}') == 16
    log.close()
    assert path.read_bytes() == b'{"a":1}\n{"b":2}\n{"d":4}\n'
    assert AppendLog(path).dropped == 0


def test_fold_adds_numbers_counts_categories_and_leaves_out_the_rest():
    totals: dict = {}
    for figures in ({"tokens": 10, "format": "chat", "ok": True, "ratio": 0.5, "note": "x", "by": {"a": 1}},
                    {"tokens": 5, "format": "codex", "ok": False, "by": {"a": 2, "b": 3}, "list": [1]},
                    {"tokens": 1, "format": "chat", "ok": True, "by": {}}):
        fold(totals, figures, frozenset({"format"}))
    assert totals == {"tokens": 16, "format": {"chat": 2, "codex": 1}, "ok": 2, "by": {"a": 3, "b": 3}}


# --- inspect --------------------------------------------------------------------------------------

def test_inspect_lines_hold_the_figures_of_tcompact_inspect(runner, tmp_path):
    corpus = samples(tmp_path / "corpus")
    result = runner.invoke(app, ["batch", "inspect", "corpus", "--out", "out", "--workers", "2", "--json"])
    assert (result.exit_code, result.stderr) == (0, "")
    single = orjson.loads(runner.invoke(app, ["inspect", "corpus", "--json"]).stdout)
    got = by_path(tmp_path / "out")
    assert sorted(got) == sorted(str(p.resolve()) for p in corpus.rglob("*.jsonl"))
    for report in single["files"]:
        line = got[str(Path(report["path"]).resolve())]
        ts = report["transcripts"]
        assert line["status"] == "ok" and line["error"] is None
        assert line["sha256"] == __import__("hashlib").sha256(Path(report["path"]).read_bytes()).hexdigest()
        f = line["figures"]
        assert (f["format"], f["transcripts"], f["messages"], f["tool_calls"], f["tokens"]) == (
            report["format"], len(ts), sum(t["messages"] for t in ts), sum(t["tool_calls"] for t in ts),
            sum(t["tokens"]["total"] for t in ts))
        assert f["by_kind"] == {k: sum(t["tokens"]["by_kind"][k] for t in ts) for k in ts[0]["tokens"]["by_kind"]}
        assert sum(r["result_tokens"] for r in f["tools"].values()) == sum(
            r["result_tokens"] for t in ts for r in t["tools"])
    summary = orjson.loads(result.stdout)
    assert summary["tasks"] == {"total": 6, "ran": 6, "resumed": 0, "ok": 6, "failed": 0, "not_transcript": 0,
                                "duplicates": 0}
    assert summary["totals"]["tokens"] == single["totals"]["tokens"]
    assert summary["totals"]["messages"] == single["totals"]["messages"]
    assert summary["totals"]["format"] == {"chat": 2, "claude-code": 2, "codex": 2}
    assert (summary["engine"], summary["workers"], summary["failures"], summary["warnings"]) == ("pool", 2, [], [])


def test_the_summary_table(runner, tmp_path):
    samples(tmp_path / "corpus")
    result = runner.invoke(app, ["batch", "inspect", "corpus/a", "--out", "out", "--workers", "1"])
    assert (result.exit_code, result.stderr) == (0, "")
    out = result.stdout.splitlines()
    assert out[0].startswith("Batch inspect: 3 tasks in ") and out[0].endswith(
        f" on pool × 1 → {tmp_path / 'out' / 'results.jsonl'}")
    assert out[1:4] == [
        "3 ok, 0 failed, 0 from earlier runs",
        "4 transcripts (chat 1, claude-code 1, codex 1), 80 messages, 33 tool calls, 19,935 tokens; "
        "0 over the 0.8 trigger",
        "Tokens by content kind",
    ]
    assert "│ tool results        │  9,504 │ 47.7% │" in out


def test_a_corrupt_file_among_good_ones_is_one_failed_line(runner, tmp_path):
    samples(tmp_path / "corpus")
    bad = corrupt_files(tmp_path / "corpus" / "bad")
    (tmp_path / "m.txt").write_text(f"corpus\n{bad['not_transcript']}\nmissing.jsonl\n")
    result = runner.invoke(app, ["batch", "inspect", "m.txt", "--out", "out", "--json"])
    assert result.exit_code == 1 and result.stderr == ""
    got = by_path(tmp_path / "out")
    assert len(got) == 11 and sum(line["status"] == "ok" for line in got.values()) == 6
    for name in ("bad_json", "binary", "empty"):
        line = got[str(bad[name])]
        assert (line["status"], line["figures"]) == ("failed", None)
        assert line["error"] == cli_error(runner, "inspect", str(bad[name]))
    named = got[str(bad["not_transcript"])]  # named in the manifest, after the folder had it: run once
    assert (named["status"], named["error"]) == ("not_transcript", cli_error(runner, "inspect", str(bad["not_transcript"])))
    missing = got[str(tmp_path / "missing.jsonl")]
    assert (missing["status"], missing["sha256"], missing["error"]) == (
        "failed", None, cli_error(runner, "inspect", str(tmp_path / "missing.jsonl")))
    summary = orjson.loads(result.stdout)
    assert summary["tasks"] == {"total": 11, "ran": 11, "resumed": 0, "ok": 6, "failed": 4, "not_transcript": 1,
                                "duplicates": 1}
    assert sorted(f["path"] for f in summary["failures"]) == sorted(
        [str(bad["bad_json"]), str(bad["binary"]), str(bad["empty"]), str(tmp_path / "missing.jsonl")])


def test_rerun_skips_what_is_done_and_redoes_what_changed(runner, tmp_path):
    samples(tmp_path / "corpus")
    bad = corrupt_files(tmp_path / "corpus" / "bad")
    args = ["batch", "inspect", "corpus", "--out", "out", "--json"]
    assert runner.invoke(app, args).exit_code == 1
    first = (tmp_path / "out" / "results.jsonl").read_bytes()
    again = runner.invoke(app, args)
    assert again.exit_code == 1
    assert orjson.loads(again.stdout)["tasks"] == {"total": 10, "ran": 0, "resumed": 10, "ok": 6, "failed": 3,
                                                   "not_transcript": 1, "duplicates": 0}
    assert (tmp_path / "out" / "results.jsonl").read_bytes() == first
    changed = tmp_path / "corpus" / "a" / "chat_tool_session.jsonl"
    changed.write_bytes(changed.read_bytes() + b'{"role": "user", "content": "one more request"}\n')
    bad["bad_json"].write_bytes(b'{"role": "user", "content": "now it reads"}\n')
    third = runner.invoke(app, args)
    assert third.exit_code == 1
    assert orjson.loads(third.stdout)["tasks"]["ran"] == 2 and orjson.loads(third.stdout)["tasks"]["failed"] == 2
    now = lines(tmp_path / "out")
    assert len(now) == 12 and {now[10]["path"], now[11]["path"]} == {str(changed), str(bad["bad_json"])}
    assert by_path(tmp_path / "out")[str(changed)]["figures"]["messages"] == 34
    retry = runner.invoke(app, [*args, "--retry-failed"])
    assert orjson.loads(retry.stdout)["tasks"] == {"total": 10, "ran": 2, "resumed": 8, "ok": 7, "failed": 2,
                                                   "not_transcript": 1, "duplicates": 0}


def test_other_settings_are_refused_in_a_batch_folder(runner, tmp_path):
    samples(tmp_path / "corpus")
    assert runner.invoke(app, ["batch", "inspect", "corpus/a", "--out", "out"]).exit_code == 0
    before = (tmp_path / "out" / "results.jsonl").read_bytes()
    sid = orjson.loads((tmp_path / "out" / "batch.json").read_bytes())["settings_id"]
    new = settings_id("inspect", get_kind("inspect").fingerprint(InspectOptions(model="gpt-5")))
    result = runner.invoke(app, ["batch", "inspect", "corpus", "--out", "out", "--model", "gpt-5"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (f"Error: {tmp_path / 'out'}: the folder holds the results of another batch (inspect, "
                             f"settings {sid}, tcompact 0.1.0; this one is inspect, settings {new}; changed: model: "
                             "null → \"gpt-5\") — use another --out folder, or run with the same options again\n")
    assert (tmp_path / "out" / "results.jsonl").read_bytes() == before


@pytest.mark.parametrize(("args", "error"), [
    (["--engine", "pool", "--address", "x:1"], "--address is for --engine ray — add --engine ray, or leave --address out"),
    (["--workers", "0"], "--workers: Input should be greater than or equal to 1 — see 'tcompact batch --help'"),
    (["--engine", "spark"], "--engine: Input should be 'pool' or 'ray' — see 'tcompact batch --help'"),
    (["--spans", "nope"], "unknown span layout 'nope' — use one of: current-round, dialogue, round-level"),
])
def test_bad_options_are_one_error_and_write_nothing(runner, tmp_path, args, error):
    samples(tmp_path / "corpus")
    result = runner.invoke(app, ["batch", "inspect", "corpus", "--out", "out", *args])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"Error: {error}\n")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("args", "error"), [
    (["-c", "nope"], "unknown compressor 'nope' — use one of: truncate, offload, micro, current-round, dialogue, "
                     "round-level, full"),
    (["--summarizer", "openai"], "--summarizer openai needs --model — e.g. --model gpt-4o-mini or your vLLM model"),
    (["--to", "swe-agent"], "cannot write 'swe-agent' — use --to chat, claude-code, codex"),
    (["--set", "dialogue.nope=1"], "dialogue setting nope: Extra inputs are not permitted — settings of dialogue: "
                                   "trigger_context_ratio, min_target_context_ratio, summary_max_tokens"),
    (["--max-retries", "-1"], "--max-retries must be 0 or more, --timeout positive and --concurrency 1 or more"),
])
def test_bad_compact_options_are_one_error_and_write_nothing(runner, tmp_path, args, error):
    samples(tmp_path / "corpus")
    result = runner.invoke(app, ["batch", "compact", "corpus", "--out", "out", *args])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"Error: {error}\n")
    assert not (tmp_path / "out").exists()


def test_a_manifest_that_names_no_file_is_one_error(runner, tmp_path):
    (tmp_path / "m.txt").write_text("# nothing yet\n\n")
    result = runner.invoke(app, ["batch", "inspect", "m.txt", "--out", "out"])
    assert (result.exit_code, result.stderr) == (2, "Error: m.txt: the sources name no file — pass folders, globs, "
                                                    "transcript files or manifests that list some\n")
    assert not (tmp_path / "out").exists()


def test_ray_without_ray_installed_is_one_error(runner, tmp_path, monkeypatch):
    samples(tmp_path / "corpus")
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` meets where the extra is not installed
    result = runner.invoke(app, ["batch", "inspect", "corpus", "--out", "out", "--engine", "ray"])
    assert (result.exit_code, result.stderr) == (2, "Error: --engine ray needs Ray, which is not installed — "
                                                    "install it: pip install 'tcompact[ray]'\n")
    assert not (tmp_path / "out").exists()


def test_a_folder_that_is_not_a_batch_folder_is_refused(runner, tmp_path):
    samples(tmp_path / "corpus")
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.md").write_text("mine")
    result = runner.invoke(app, ["batch", "compact", "corpus", "--out", "taken"])
    assert (result.exit_code, result.stderr) == (2, f"Error: {tmp_path / 'taken'}: the output folder exists and is "
                                                    "not a batch folder (it has no batch.json) — choose a new or "
                                                    "empty folder for --out\n")
    assert sorted(p.name for p in (tmp_path / "taken").iterdir()) == ["notes.md"]
    result = runner.invoke(app, ["batch", "compact", "corpus", "--out", "corpus"])
    assert (result.exit_code, result.stderr) == (2, "Error: corpus: --out is a SOURCE folder — write the batch to "
                                                    "another folder (it may lie inside the source folder)\n")


# --- compact --------------------------------------------------------------------------------------

def test_compact_writes_what_tcompact_compact_writes_mirroring_the_tree(runner, tmp_path):
    corpus = samples(tmp_path / "corpus")
    bad = corrupt_files(corpus / "bad")
    result = runner.invoke(app, ["batch", "compact", "corpus", "--out", "out", "-c", "dialogue", "--force", "--json"])
    assert result.exit_code == 1, result.stderr
    got = by_path(tmp_path / "out")
    for name in NAMES:
        source = corpus / "b" / "c" / name
        line = got[str(source)]
        single = tmp_path / "single" / name
        one = runner.invoke(app, ["compact", str(source), "-c", "dialogue", "--force", "-o", str(single), "--json"])
        report = orjson.loads(one.stdout)
        assert line["status"] == "ok" and line["figures"]["status"] == report["status"] == "compacted"
        assert (line["figures"]["before"], line["figures"]["after"]) == (report["before"], report["after"])
        assert line["figures"]["outputs"] == {"transcript": f"b/c/{name}", "report": f"b/c/{Path(name).stem}.report.json",
                                              "dumps": 1}
        mirrored = tmp_path / "out" / "b" / "c" / name
        shape = [(m.role, m.text, m.tool_call_ids) for m in read_file(mirrored).transcript().messages]
        assert shape == [(m.role, m.text, m.tool_call_ids) for m in read_file(single).transcript().messages]
        assert len(list((tmp_path / "out" / "b" / "c" / f"{Path(name).stem}.dumps").iterdir())) == 1
    assert (tmp_path / "out" / "b" / "c" / NAMES[0]).read_bytes() == (tmp_path / "single" / NAMES[0]).read_bytes()
    for name in ("bad_json", "binary", "empty"):
        assert got[str(bad[name])]["error"] == cli_error(runner, "compact", str(bad[name]), "-o", "x.jsonl")
    assert orjson.loads(result.stdout)["totals"]["status"] == {"compacted": 6}


def test_a_summariser_failure_is_the_line_tcompact_compact_prints(runner, tmp_path, monkeypatch):
    import socket

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    with socket.socket() as s:  # a port nothing listens on: the call fails at once
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    chat = SAMPLES / NAMES[0]
    args = ["--summarizer", "openai", "--model", "m", "--base-url", f"http://127.0.0.1:{port}/v1", "--max-retries", "0",
            "--force"]
    result = runner.invoke(app, ["batch", "compact", str(chat), "--out", "out", *args])
    assert result.exit_code == 1
    single = cli_error(runner, "compact", str(chat), "-o", "single.jsonl", *args)
    (line,) = lines(tmp_path / "out")
    assert single.endswith(" dumped in single.dumps")
    assert line["error"] == single.replace("single.dumps", str(tmp_path / "out" / "chat_tool_session.dumps"))
    assert len(list((tmp_path / "out" / "chat_tool_session.dumps").iterdir())) == 1  # the failed call, dumped
    empty = runner.invoke(app, ["batch", "compact", str(chat), "--out", "out2", "--summarizer", "replay",
                                "--replay-dir", "out2-none"])
    assert (empty.exit_code, empty.stderr) == (2, "Error: " + cli_error(
        runner, "compact", str(chat), "-o", "x.jsonl", "--summarizer", "replay", "--replay-dir",
        str(tmp_path / "out2-none")) + "\n")


def test_compact_redoes_the_outputs_an_interrupted_task_left(runner, tmp_path):
    samples(tmp_path / "corpus")
    args = ["batch", "compact", "corpus/a", "--out", "out", "-c", "dialogue", "--force"]
    assert runner.invoke(app, args).exit_code == 0
    chat = tmp_path / "corpus" / "a" / NAMES[0]
    text = (tmp_path / "out" / "results.jsonl").read_bytes()
    kept = b"".join(line + b"\n" for line in text.splitlines() if str(chat).encode() not in line)
    (tmp_path / "out" / "results.jsonl").write_bytes(kept)  # as if the run had died before the chat task's line
    (tmp_path / "out" / "chat_tool_session.dumps" / "1_stale_dump.json").write_text("{}")
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0 and orjson.loads(result.stdout)["tasks"]["ran"] == 1
    assert [p.name for p in (tmp_path / "out" / "chat_tool_session.dumps").iterdir()] != ["1_stale_dump.json"]
    assert len(list((tmp_path / "out" / "chat_tool_session.dumps").iterdir())) == 1


# --- interruptions (a few hundred variants of the real sessions) ------------------------------------

def _start(args: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tcompact", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)


def _wait_for_lines(results: Path, count: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if results.exists() and results.read_bytes().count(b"\n") >= count:
            return
        time.sleep(0.02)
    pytest.fail(f"the batch run did not write {count} lines (exit {proc.poll()})")


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """About a hundred variants of real sessions, and the pool's uninterrupted results over them."""
    root = tmp_path_factory.mktemp("real")
    files = corpus_of_about_a_hundred(root / "corpus")
    summary = run_batch("inspect", [str(root / "corpus")], InspectOptions(), BatchOptions(out=root / "ref", workers=2))
    tasks = summary["tasks"]
    assert tasks["ok"] + tasks["not_transcript"] == len(files) and tasks["failed"] == 0
    return root, files


def test_ctrl_c_then_a_kill_then_a_resume_give_the_uninterrupted_results(real, tmp_path):
    root, files = real
    args = ["batch", "inspect", str(root / "corpus"), "--out", str(tmp_path / "out"), "--workers", "2"]
    results = tmp_path / "out" / "results.jsonl"
    proc = _start(args, tmp_path)
    _wait_for_lines(results, 20, proc)
    below = descendants(proc.pid)  # the forkserver, the two workers, the resource tracker
    os.kill(proc.pid, signal.SIGINT)  # Ctrl-C
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert stderr.decode().startswith(f"Error: {results}: interrupted after ")
    assert stderr.decode().endswith(f" of {len(files)} tasks — every finished task's line is kept; run the same "
                                    "command again to go on\n")
    deadline = time.monotonic() + 10  # the forkserver and the resource tracker leave when they see the driver gone
    while any(map(_alive, below)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(below) >= 3 and [p for p in below if _alive(p)] == []
    first = results.read_bytes().count(b"\n")
    proc = _start(args, tmp_path)  # go on, and be killed with the workers, as a lost node would be
    _wait_for_lines(results, first + 30, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = results.read_bytes()
    assert first + 30 <= done.count(b"\n") < len(files)
    torn = sorted_lines(root / "ref" / "results.jsonl")[-1][:150]  # a write cut short, as a crash would leave it
    results.write_bytes(done + torn)
    resumed = subprocess.run([sys.executable, "-m", "tcompact", *args, "--json"], cwd=tmp_path, capture_output=True)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stderr.decode() == (f"Warning: {results}: cut off a half-written last line ({len(torn)} bytes) "
                                       "left by an interrupted run; that task ran again\n")
    tasks = orjson.loads(resumed.stdout)["tasks"]
    assert tasks["resumed"] == done.count(b"\n") and tasks["ran"] == len(files) - tasks["resumed"]
    assert sorted_lines(results) == sorted_lines(root / "ref" / "results.jsonl")


def test_a_killed_worker_costs_no_result(tmp_path):
    build_corpus(tmp_path / "corpus", [SAMPLES / name for name in NAMES], 12)
    ref = run_batch("inspect", [str(tmp_path / "corpus")], InspectOptions(), BatchOptions(out=tmp_path / "ref", workers=2))
    killed = []

    def kill_a_worker(progress):
        if progress.done == 8 and not killed:
            workers = [p for p in descendants(os.getpid()) if _is_pool_worker(p)]
            killed.append(workers[0])
            os.kill(workers[0], signal.SIGKILL)

    summary = run_batch("inspect", [str(tmp_path / "corpus")], InspectOptions(),
                        BatchOptions(out=tmp_path / "out", workers=2), on_progress=kill_a_worker)
    assert killed and summary["tasks"] == {**ref["tasks"], "ran": 36, "ok": 36}
    assert sorted_lines(tmp_path / "out" / "results.jsonl") == sorted_lines(tmp_path / "ref" / "results.jsonl")


def _is_pool_worker(pid: int) -> bool:
    """A process forked by the forkserver (whose parent is the forkserver itself)."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        return b"forkserver" in cmd and b"forkserver" in Path(f"/proc/{parent}/cmdline").read_bytes()
    except OSError:
        return False


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
