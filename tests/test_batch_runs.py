"""``tcompact batch`` on the local process pool: compact against ``tcompact compact``, Ctrl-C, a killed
run and a killed worker.

Ctrl-C, the kill and the resume run on about a hundred variants of the real sessions of
``../shared/transcripts`` (of the samples in a clone without them); the rest on the samples.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from batch_corpus import (
    NAMES,
    build_corpus,
    by_path,
    cli_error,
    corpus_of_about_a_hundred,
    corrupt_files,
    descendants,
    lines,
    samples,
    sorted_lines,
)
from conftest import SAMPLES


from tcompact.app import app
from tcompact.batch import BatchOptions, run_batch
from tcompact.formats import read_file
from tcompact.inspection import InspectOptions


# --- compact --------------------------------------------------------------------------------------

def test_compact_writes_what_tcompact_compact_writes_mirroring_the_tree(runner, tmp_path):
    corpus = samples(tmp_path / "corpus")
    bad = corrupt_files(corpus / "bad")
    result = runner.invoke(app, ["batch", "compact", "corpus", "--out", "out", "-c", "current-round", "--now",
                                 "--json"])
    assert result.exit_code == 1, result.stderr
    got = by_path(tmp_path / "out")
    for name in NAMES:
        source = corpus / "b" / "c" / name
        line = got[str(source)]
        single = tmp_path / "single" / name
        one = runner.invoke(app, ["compact", str(source), "-c", "current-round", "--now", "-o", str(single),
                                  "--json"])
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
            "--now"]
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
    args = ["batch", "compact", "corpus/a", "--out", "out", "-c", "dialogue", "--now"]
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


# --- interruptions -------------------------------------------------------------------------------

def _start(args: list[str], cwd: Path) -> subprocess.Popen:
    """A batch run in the background, with a token cache of the test's own: the session's cache holds the
    reports of the reference run, which would finish the run before it could be interrupted."""
    return subprocess.Popen([sys.executable, "-m", "tcompact", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True,
                            env={**os.environ, "TCOMPACT_CACHE_DIR": str(cwd / "token-cache")})


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
