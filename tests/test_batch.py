"""``tcompact batch`` on the local process pool: sources, the results log, inspect lines, resuming,
failures, refused options and the summary. Self-contained: the bundled samples, copied and varied
in a temp folder (compact and interruptions: ``test_batch_runs.py``).
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import orjson
import pytest
from batch_corpus import by_path, cli_error, corrupt_files, lines, samples


from tcompact.app import app
from tcompact.appending import AppendLog
from tcompact.batch.kinds import fold, get_kind
from tcompact.batch.results import settings_id
from tcompact.batch.sources import expand, survey
from tcompact.errors import InputError, OutputError
from tcompact.inspection import InspectOptions


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
        # issue 23 item 21: the parenthesis counts files, and said transcripts
        "3 files (chat 1, claude-code 1, codex 1): 4 transcripts, 80 messages, 33 tool calls, 19,935 tokens; "
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
    for name in ("bad_json", "binary", "empty"):  # an empty file found in a folder is passed over, as inspect does
        line = got[str(bad[name])]
        assert (line["status"], line["figures"]) == ("not_transcript" if name == "empty" else "failed", None)
        assert line["error"] == cli_error(runner, "inspect", str(bad[name]))
    named = got[str(bad["not_transcript"])]  # named in the manifest, after the folder had it: run once
    assert (named["status"], named["error"]) == ("not_transcript", cli_error(runner, "inspect", str(bad["not_transcript"])))
    missing = got[str(tmp_path / "missing.jsonl")]
    assert (missing["status"], missing["sha256"], missing["error"]) == (
        "failed", None, cli_error(runner, "inspect", str(tmp_path / "missing.jsonl")))
    summary = orjson.loads(result.stdout)
    assert summary["tasks"] == {"total": 11, "ran": 11, "resumed": 0, "ok": 6, "failed": 3, "not_transcript": 2,
                                "duplicates": 1}
    assert sorted(f["path"] for f in summary["failures"]) == sorted(
        [str(bad["bad_json"]), str(bad["binary"]), str(tmp_path / "missing.jsonl")])


def test_rerun_skips_what_is_done_and_redoes_what_changed(runner, tmp_path):
    samples(tmp_path / "corpus")
    bad = corrupt_files(tmp_path / "corpus" / "bad")
    args = ["batch", "inspect", "corpus", "--out", "out", "--json"]
    assert runner.invoke(app, args).exit_code == 1
    first = (tmp_path / "out" / "results.jsonl").read_bytes()
    again = runner.invoke(app, args)
    assert again.exit_code == 1
    assert orjson.loads(again.stdout)["tasks"] == {"total": 10, "ran": 0, "resumed": 10, "ok": 6, "failed": 2,
                                                   "not_transcript": 2, "duplicates": 0}
    assert (tmp_path / "out" / "results.jsonl").read_bytes() == first
    changed = tmp_path / "corpus" / "a" / "chat_tool_session.jsonl"
    changed.write_bytes(changed.read_bytes() + b'{"role": "user", "content": "one more request"}\n')
    bad["bad_json"].write_bytes(b'{"role": "user", "content": "now it reads"}\n')
    third = runner.invoke(app, args)
    assert third.exit_code == 1
    assert orjson.loads(third.stdout)["tasks"]["ran"] == 2 and orjson.loads(third.stdout)["tasks"]["failed"] == 1
    now = lines(tmp_path / "out")
    assert len(now) == 12 and {now[10]["path"], now[11]["path"]} == {str(changed), str(bad["bad_json"])}
    assert by_path(tmp_path / "out")[str(changed)]["figures"]["messages"] == 34
    retry = runner.invoke(app, [*args, "--retry-failed"])
    assert orjson.loads(retry.stdout)["tasks"] == {"total": 10, "ran": 1, "resumed": 9, "ok": 7, "failed": 1,
                                                   "not_transcript": 2, "duplicates": 0}


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
    (["--workers", "0"], "--workers must be 1 or more, not 0 — see 'tcompact batch --help'"),
    (["--engine", "spark"], "--engine must be pool or ray, not 'spark' — see 'tcompact batch --help'"),
    (["--spans", "nope"], "unknown span layout 'nope' — use one of: current-round, dialogue, round-level, full, working-set"),
])
def test_bad_options_are_one_error_and_write_nothing(runner, tmp_path, args, error):
    samples(tmp_path / "corpus")
    result = runner.invoke(app, ["batch", "inspect", "corpus", "--out", "out", *args])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"Error: {error}\n")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("args", "error"), [
    (["-c", "nope"], "unknown compressor 'nope' — use one of: truncate, offload, micro, mask, current-round, "
                     "dialogue, round-level, full, working-set"),
    (["--summarizer", "openai"], "--summarizer openai needs --model — e.g. --model gpt-4o-mini or your vLLM model"),
    (["--to", "swe-agent"], "cannot write 'swe-agent' — use --to chat, claude-code, codex"),
    (["-c", "dialogue", "--set", "dialogue.nope=1"], "dialogue setting nope is not known — settings of dialogue: "
                                   "trigger_context_ratio, min_target_context_ratio, summary_max_tokens, "
                                   "summary_ratio"),
    (["--max-retries", "-1"], "--max-retries must be 0 or more"),
    (["--timeout", "0"], "--timeout must be a positive number of seconds"),
    (["--request-mode", "serialized"], "--request-mode is an option of the openai summariser, and the summariser is "
                                       "extractive — add --summarizer openai, or leave --request-mode out"),
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
