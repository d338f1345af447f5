"""``tcompact batch eval`` on the local process pool, against ``tcompact eval`` on the same files.

The lines hold eval's own entry per file and the totals eval's own per-chain summary; the bad
files give eval's errors; the settings that decide a result decide resuming; a chain that failed
is run again by --retry-failed; a run stopped part way goes on to the uninterrupted results (on
variants of the real sessions of ``../shared/transcripts``, of the samples in a clone without
them); ``--no-cache`` holds in the workers. The same on Ray: tests/test_batch_ray.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from batch_corpus import NAMES, build_corpus, by_path, cli_error, corrupt_files, lines, real_sources, samples
from batch_corpus import sorted_lines
from conftest import SAMPLES, SHARED

from tcompact.app import app
from tcompact.batch import BatchOptions, Interrupted, get_kind, run_batch
from tcompact.batch.results import settings_id
from tcompact.batch.worker import Job, execute
from tcompact.defaults import DEFAULT_CHAIN
from tcompact.evaluation import EvalOptions, evaluate_file
from tcompact.summarizers import RunSettings


def test_lines_totals_and_errors_are_those_of_tcompact_eval(runner, tmp_path):
    corpus = samples(tmp_path / "corpus")
    bad = corrupt_files(corpus / "bad")
    good = sorted(str(p) for p in corpus.rglob("*.jsonl") if p.parent.name != "bad")
    result = runner.invoke(app, ["batch", "eval", "corpus", "--out", "out", "--json", "--workers", "2"])
    assert result.exit_code == 1, result.stderr  # two files fail
    summary = orjson.loads(result.stdout)
    assert summary["tasks"] == {"total": 10, "ran": 10, "resumed": 0, "ok": 6, "failed": 2, "not_transcript": 2,
                                "duplicates": 0}
    single = runner.invoke(app, ["eval", *good, "--json"])
    assert single.exit_code == 0, single.stderr
    doc = orjson.loads(single.stdout)
    got = by_path(tmp_path / "out")
    assert [got[p]["figures"] for p in good] == doc["files"]  # each line: eval's entry for the file
    totals = summary["totals"]
    assert totals["summary"] == doc["summary"]  # eval's own per-chain table
    assert {k: totals[k] for k in ("seed", "per_kind", "kinds", "chains", "default_chain")} == {
        k: doc[k] for k in ("seed", "per_kind", "kinds", "chains", "default_chain")}
    assert (totals["sessions"], totals["canaries"]) == (6, sum(len(f["canaries"]) for f in doc["files"]))
    assert totals["skipped_kinds"] == {k: 0 for k in doc["kinds"]}
    for name in ("bad_json", "binary"):
        line = got[str(bad[name])]
        assert (line["status"], line["figures"]) == ("failed", None)
        assert line["error"] == cli_error(runner, "eval", str(bad[name]))
    assert {got[str(bad[n])]["status"] for n in ("empty", "not_transcript")} == {"not_transcript"}
    table = runner.invoke(app, ["batch", "eval", "corpus", "--out", "out"])  # resumed: the same table as eval's
    shown = runner.invoke(app, ["eval", *good])
    assert table.exit_code == 1 and shown.exit_code == 0
    legend = shown.stdout.index("tokens: after / before")
    ours = table.stdout.splitlines()
    assert ours[1] == "6 ok, 2 failed, 10 from earlier runs, 2 not transcripts"
    assert "\n".join(ours[2:]).startswith(shown.stdout[:shown.stdout.index("\n", legend)])


def test_the_settings_that_decide_a_result_decide_resuming(runner, tmp_path):
    samples(tmp_path / "corpus")
    args = ["batch", "eval", "corpus/a", "--out", "out", "-c", "micro", "--per-kind", "1", "--json"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.stderr
    again = runner.invoke(app, [*args, "--workers", "1", "--no-cache"])  # neither decides a result
    assert again.exit_code == 0, again.stderr
    assert orjson.loads(again.stdout)["tasks"]["resumed"] == 3
    assert orjson.loads(again.stdout)["totals"] == orjson.loads(first.stdout)["totals"]
    refused = runner.invoke(app, [*args, "--seed", "2"])
    assert refused.exit_code == 2 and "changed: seed: 1 → 2" in refused.stderr
    assert "changed: chains.micro.settings: " in runner.invoke(app, [*args, "--set", "micro.min_tokens=10"]).stderr

    def sid(**changes):
        options = EvalOptions(chains=("micro",), default_chain=DEFAULT_CHAIN).model_copy(update=changes)
        return settings_id("eval", get_kind("eval").fingerprint(options))

    config = tmp_path / "c.toml"
    config.write_text("[micro]\nmin_tokens = 20\n")
    ids = [sid(), sid(seed=2), sid(per_kind=3), sid(chains=("micro", "full")), sid(chains=("full", "micro")),
           sid(chains=()), sid(sets=("micro.min_tokens=10",)), sid(config=config), sid(preserve="the API"),
           sid(encoding="cl100k_base"), sid(context_window=50_000), sid(model="gpt-4o"), sid(transcript="main"),
           sid(format="chat"), sid(full_history=True), sid(skip_bad_lines=True)]
    assert len(set(ids)) == len(ids) == 16
    config.write_text("[micro]\nmin_tokens = 30\n")  # the config's content counts, not only its path
    assert sid(config=config) not in ids
    run = RunSettings(timeout=5.0, retries=0, concurrency=1)
    assert sid(api_key="sk-test", run=run, dump_dir=tmp_path) == sid()  # the key, the calls, the dumps decide nothing
    needed = [sid(metric="needed"), sid(metric="both"), sid(metric="needed", cuts=2)]
    assert len(set(needed)) == 3 and not set(needed) & set(ids)
    assert sid(cuts=2) == sid()  # the canaries alone: the cuts decide nothing


def test_a_failed_chain_exits_1_and_is_run_again_by_retry_failed(runner, tmp_path):
    samples(tmp_path / "corpus")
    made = runner.invoke(app, ["compact", str(SAMPLES / NAMES[0]), "-c", "full", "--now", "-o", "x.jsonl"])
    assert made.exit_code == 0, made.stderr  # x.dumps/: a recording of another request than eval's
    options = ["-c", "micro", "-c", "full", "--summarizer", "replay", "--replay-dir", "x.dumps", "--per-kind", "1"]
    args = ["batch", "eval", "corpus/a", "--out", "out", "--json", *options]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert result.stderr == ("Error: 3 compaction(s) failed (full first) — their rows count nothing as kept; "
                             "--retry-failed runs those files again\n")
    summary = orjson.loads(result.stdout)
    assert (summary["tasks"]["ok"], summary["tasks"]["failed"]) == (3, 0)
    single = runner.invoke(app, ["eval", *sorted(str(p) for p in (tmp_path / "corpus" / "a").iterdir()), "--json",
                                 *options])
    assert single.exit_code == 1 and summary["totals"]["summary"] == orjson.loads(single.stdout)["summary"]
    micro, full = summary["totals"]["summary"]
    assert (micro["failed"], full["failed"], full["overall"]["kept"]) == (0, 3, 0)
    assert all(line["figures"]["results"][1]["status"] == "failed" for line in lines(tmp_path / "out"))
    resumed = runner.invoke(app, args)
    assert resumed.exit_code == 1 and orjson.loads(resumed.stdout)["tasks"]["resumed"] == 3
    retried = runner.invoke(app, [*args, "--retry-failed"])
    assert retried.exit_code == 1 and orjson.loads(retried.stdout)["tasks"]["ran"] == 3


def test_bad_options_are_one_error_before_any_task(runner, tmp_path):
    for extra, message in ((["-c", "full,nope"], "Error: unknown compressor 'nope' — use one of: "),
                           (["--per-kind", "0"], "Error: --per-kind must be 1 or more, not 0 — "
                                                 "see tcompact batch eval --help\n"),
                           (["--summarizer", "replay", "--replay-dir", "none"],
                            f"Error: {tmp_path / 'none'}: no dumps to replay from — pass --replay-dir with dump files\n")):
        result = runner.invoke(app, ["batch", "eval", str(SAMPLES), "--out", "out", *extra])
        assert result.exit_code == 2 and result.stderr.startswith(message), result.stderr
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def variants(tmp_path_factory):
    """Variants of the real sessions (of the samples without ../shared), and the pool's uninterrupted eval of them."""
    root = tmp_path_factory.mktemp("variants")
    sources = real_sources(SHARED) if SHARED.is_dir() else [SAMPLES / name for name in NAMES]
    files = build_corpus(root / "corpus", sources, 4 if SHARED.is_dir() else 6)
    options = EvalOptions(chains=("truncate", "full"), default_chain=DEFAULT_CHAIN, per_kind=1)
    ref = run_batch("eval", [str(root / "corpus")], options, BatchOptions(out=root / "ref", workers=2))
    assert ref["tasks"]["ok"] == len(files) >= 18 and ref["tasks"]["failed"] == 0
    return root, files, options, ref


def test_a_stopped_eval_goes_on_to_the_uninterrupted_results(variants, tmp_path):
    root, files, options, ref = variants

    def stop(progress):
        if progress.done == 7:
            raise KeyboardInterrupt  # what Ctrl-C raises in the driver

    with pytest.raises(Interrupted):
        run_batch("eval", [str(root / "corpus")], options, BatchOptions(out=tmp_path / "out", workers=2),
                  on_progress=stop)
    assert (tmp_path / "out" / "results.jsonl").read_bytes().count(b"\n") == 7
    again = run_batch("eval", [str(root / "corpus")], options, BatchOptions(out=tmp_path / "out", workers=2))
    assert again["tasks"] == {**ref["tasks"], "ran": len(files) - 7, "resumed": 7}
    assert sorted_lines(tmp_path / "out" / "results.jsonl") == sorted_lines(root / "ref" / "results.jsonl")
    assert again["totals"] == ref["totals"]
    line = by_path(root / "ref")[str(files[-1])]
    assert line["figures"] == evaluate_file(files[-1], options)  # what a worker wrote is what eval computes


def _cache_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_no_cache_holds_in_the_pool_workers(tmp_path):
    env = {**os.environ, "TCOMPACT_CACHE_DIR": str(tmp_path / "cache"), "TCOMPACT_NO_CACHE": ""}
    done = subprocess.run([sys.executable, "-m", "tcompact", "batch", "eval", str(SAMPLES / NAMES[2]), "--out",
                           str(tmp_path / "out"), "-c", "micro", "--workers", "1", "--no-cache"], env=env,
                          capture_output=True)
    assert done.returncode == 0, done.stderr
    assert _cache_files(tmp_path / "cache") == []  # neither the counts nor the tokenizer tables


def test_no_cache_travels_with_the_job_and_holds_for_it_only(tmp_path, monkeypatch):
    settings = EvalOptions(chains=("micro",))
    for n, off in enumerate((True, False)):
        monkeypatch.setenv("TCOMPACT_CACHE_DIR", str(tmp_path / f"cache{n}"))
        job = Job(path=str(SAMPLES / NAMES[1]), named=True, recorded=None, has_record=False, kind="eval",
                  settings=settings, settings_id="x", no_cache=off)
        assert execute(job)["status"] == "ok" and os.environ["TCOMPACT_NO_CACHE"] == ""
    assert _cache_files(tmp_path / "cache0") == []
    assert "tokens-v1.bin" in _cache_files(tmp_path / "cache1")  # the same task with the cache on writes it
