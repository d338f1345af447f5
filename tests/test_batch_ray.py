"""``tcompact batch --engine ray`` on a real local Ray (2 CPUs, started once for the module) against the pool.

The Ray results must equal the pool's byte for byte once sorted: on a few hundred variants of the
real sessions, and on a self-contained corpus of the samples with corrupt files among them, for
inspect and compact; for eval on variants of the real sessions with corrupt files among them; a
run interrupted on Ray goes on (inspect: on the pool, eval: on Ray) to the same results; a second
driver reaches the same cluster through ``RAY_ADDRESS`` and through ``--address`` (which wins);
``--no-cache`` in the driver holds in Ray workers that were started without it. Without Ray (the ``ray`` extra) the module is skipped and says so; with TCOMPACT_REQUIRE_RAY
set (CI, after ``.ci/install.d/40-ray.sh``) it fails instead.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from batch_corpus import NAMES, build_corpus, corrupt_files, real_sources, sorted_lines
from conftest import SAMPLES, SHARED

from tcompact.batch import BatchOptions, CompactTask, Interrupted, run_batch
from tcompact.compaction import CompactOptions
from tcompact.defaults import DEFAULT_CHAIN
from tcompact.evaluation import EvalOptions
from tcompact.inspection import InspectOptions

try:
    import ray
except ImportError:
    if os.environ.get("TCOMPACT_REQUIRE_RAY"):
        pytest.fail("Ray is not installed although TCOMPACT_REQUIRE_RAY is set: .ci/install.d/40-ray.sh failed",
                    pytrace=False)
    pytest.skip("Ray is not installed (the ray extra: pip install '.[ray]')", allow_module_level=True)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """One local Ray for the module: 2 CPUs, no dashboard, workers' logs kept off the terminal, and a token
    cache folder of its own (the workers inherit the environment Ray starts with, never the user's cache)."""
    cache = tmp_path_factory.mktemp("ray-token-cache")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("TCOMPACT_CACHE_DIR", str(cache))
        env.setenv("TCOMPACT_NO_CACHE", "")
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
                 logging_level=logging.ERROR)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def both(sources, settings, out, kind="inspect"):
    """Run on the pool and on Ray; the two results files."""
    pool = run_batch(kind, sources, settings, BatchOptions(out=out / "pool", workers=2))
    on_ray = run_batch(kind, sources, settings, BatchOptions(out=out / "ray", engine="ray"))
    assert (pool["engine"], on_ray["engine"], on_ray["workers"]) == ("pool", "ray", 2)
    assert pool["tasks"] == on_ray["tasks"] and pool["totals"] == on_ray["totals"]
    return out / "pool" / "results.jsonl", out / "ray" / "results.jsonl"


@pytest.fixture(scope="module")
def samples_corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("samples")
    files = build_corpus(root / "corpus", [SAMPLES / name for name in NAMES], 10)
    corrupt_files(root / "corpus" / "bad")
    return root, files


def test_ray_equals_the_pool_on_a_few_hundred_real_sessions(cluster, tmp_path):
    if not SHARED.is_dir():
        pytest.skip(f"real transcripts not found at {SHARED} (set TCOMPACT_SHARED_DIR); CI always has them")
    files = build_corpus(tmp_path / "corpus", real_sources(SHARED), 48)
    pool, on_ray = both([str(tmp_path / "corpus")], InspectOptions(), tmp_path)
    assert len(files) >= 200 and len(sorted_lines(pool)) == len(files)
    assert sorted_lines(pool) == sorted_lines(on_ray)
    assert {orjson.loads(line)["status"] for line in sorted_lines(on_ray)} == {"ok"}


def test_ray_equals_the_pool_with_corrupt_files_among_good_ones(cluster, samples_corpus, tmp_path):
    root, files = samples_corpus
    pool, on_ray = both([str(root / "corpus")], InspectOptions(spans="dialogue"), tmp_path)
    assert sorted_lines(pool) == sorted_lines(on_ray)
    statuses = [orjson.loads(line)["status"] for line in sorted_lines(on_ray)]
    assert (statuses.count("ok"), statuses.count("failed"), statuses.count("not_transcript")) == (len(files), 2, 2)


def test_ray_compacts_as_the_pool_does(cluster, samples_corpus, tmp_path):
    root, files = samples_corpus
    task = CompactTask(options=CompactOptions(chain="truncate,dialogue", now=True))
    pool, on_ray = both([str(root / "corpus")], task, tmp_path, kind="compact")
    assert sorted_lines(pool) == sorted_lines(on_ray)
    for line in map(orjson.loads, sorted_lines(on_ray)):
        if line["status"] == "ok" and line["figures"]["outputs"]["transcript"]:
            assert (tmp_path / "ray" / line["figures"]["outputs"]["transcript"]).is_file()
    assert sum(1 for _ in (tmp_path / "ray").rglob("*.dumps")) == sum(1 for _ in (tmp_path / "pool").rglob("*.dumps"))


def test_a_run_stopped_on_ray_goes_on_to_the_same_results(cluster, samples_corpus, tmp_path):
    root, files = samples_corpus
    ref = run_batch("inspect", [str(root / "corpus")], InspectOptions(), BatchOptions(out=tmp_path / "ref", workers=2))

    def stop(progress):
        if progress.done == 12:
            raise KeyboardInterrupt  # what Ctrl-C raises in the driver

    with pytest.raises(Interrupted):
        run_batch("inspect", [str(root / "corpus")], InspectOptions(), BatchOptions(out=tmp_path / "out", engine="ray"),
                  on_progress=stop)
    assert (tmp_path / "out" / "results.jsonl").read_bytes().count(b"\n") == 12
    again = run_batch("inspect", [str(root / "corpus")], InspectOptions(), BatchOptions(out=tmp_path / "out"))
    assert again["tasks"] == {**ref["tasks"], "ran": ref["tasks"]["ran"] - 12, "resumed": 12}
    assert sorted_lines(tmp_path / "out" / "results.jsonl") == sorted_lines(tmp_path / "ref" / "results.jsonl")


def test_a_second_driver_reaches_the_cluster_by_its_address(cluster, samples_corpus, tmp_path):
    root, files = samples_corpus
    args = [sys.executable, "-m", "tcompact", "batch", "inspect", str(root / "corpus" / "bad"), str(SAMPLES),
            "--out", str(tmp_path / "out"), "--engine", "ray", "--json"]
    env = {**os.environ, "RAY_ADDRESS": cluster}
    done = subprocess.run(args, capture_output=True, env=env, timeout=120)
    assert (done.returncode, done.stderr.decode()) == (1, "")
    summary = orjson.loads(done.stdout)
    assert (summary["engine"], summary["workers"]) == ("ray", 2)
    assert summary["tasks"] == {"total": 7, "ran": 7, "resumed": 0, "ok": 3, "failed": 2, "not_transcript": 2,
                                "duplicates": 0}
    env["RAY_ADDRESS"] = "127.0.0.1:1"  # --address wins over RAY_ADDRESS
    again = subprocess.run([*args, "--address", cluster], capture_output=True, env=env, timeout=120)
    assert (again.returncode, again.stderr.decode()) == (1, "")
    assert orjson.loads(again.stdout)["tasks"]["resumed"] == 7
    assert ray.is_initialized()  # the second driver left the cluster running


def test_an_unreachable_ray_address_is_one_error_at_once(tmp_path):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = subprocess.run([sys.executable, "-m", "tcompact", "batch", "inspect", str(SAMPLES), "--out", "out",
                           "--engine", "ray", "--address", f"127.0.0.1:{port}"], cwd=tmp_path, capture_output=True,
                          timeout=60)
    assert (done.returncode, done.stderr.decode()) == (2, f"Error: cannot reach the Ray cluster at 127.0.0.1:{port}: "
                                                          "Connection refused — check --address / RAY_ADDRESS and "
                                                          "that the cluster is up\n")
    assert not (tmp_path / "out").exists()


# --- eval ------------------------------------------------------------------------------------------

EVAL = EvalOptions(chains=("truncate", DEFAULT_CHAIN), default_chain=DEFAULT_CHAIN, per_kind=1)


@pytest.fixture(scope="module")
def eval_corpus(tmp_path_factory):
    """Variants of the real sessions (of the samples in a clone without ../shared), corrupt files among them."""
    root = tmp_path_factory.mktemp("eval")
    sources = real_sources(SHARED) if SHARED.is_dir() else [SAMPLES / name for name in NAMES]
    files = build_corpus(root / "corpus", sources, 3 if SHARED.is_dir() else 5)
    corrupt_files(root / "corpus" / "bad")
    return root, files


def test_ray_evaluates_as_the_pool_does(cluster, eval_corpus, tmp_path):
    root, files = eval_corpus
    pool, on_ray = both([str(root / "corpus")], EVAL, tmp_path, kind="eval")  # equal counts and totals too
    assert sorted_lines(pool) == sorted_lines(on_ray)
    statuses = [orjson.loads(line)["status"] for line in sorted_lines(on_ray)]
    assert (statuses.count("ok"), statuses.count("failed"), statuses.count("not_transcript")) == (len(files), 2, 2)


def test_an_eval_stopped_on_ray_goes_on_to_the_same_results(cluster, eval_corpus, tmp_path):
    root, files = eval_corpus
    ref = run_batch("eval", [str(root / "corpus")], EVAL, BatchOptions(out=tmp_path / "ref", workers=2))

    def stop(progress):
        if progress.done == 6:
            raise KeyboardInterrupt  # what Ctrl-C raises in the driver

    with pytest.raises(Interrupted):
        run_batch("eval", [str(root / "corpus")], EVAL, BatchOptions(out=tmp_path / "out", engine="ray"),
                  on_progress=stop)
    assert (tmp_path / "out" / "results.jsonl").read_bytes().count(b"\n") == 6
    again = run_batch("eval", [str(root / "corpus")], EVAL, BatchOptions(out=tmp_path / "out", engine="ray"))
    assert again["tasks"] == {**ref["tasks"], "ran": ref["tasks"]["ran"] - 6, "resumed": 6}
    assert again["totals"] == ref["totals"]
    assert sorted_lines(tmp_path / "out" / "results.jsonl") == sorted_lines(tmp_path / "ref" / "results.jsonl")


def test_no_cache_reaches_ray_workers_started_without_it(cluster, tmp_path, monkeypatch):
    table = _cluster_cache() / "tokens-v1.bin"
    for seed, off in ((11, "1"), (12, "")):  # new canaries each time: texts the cache has never seen
        before = table.read_bytes() if table.exists() else b""
        monkeypatch.setenv("TCOMPACT_NO_CACHE", off)  # in the driver only: the workers started long before
        summary = run_batch("eval", [str(SAMPLES / NAMES[0])], EVAL.model_copy(update={"seed": seed}),
                            BatchOptions(out=tmp_path / f"out{seed}", engine="ray"))
        assert summary["tasks"]["ok"] == 1
        after = table.read_bytes() if table.exists() else b""
        assert (after == before) is (off == "1"), off  # untouched with --no-cache; written to without


def _cluster_cache():
    """The token cache folder the cluster's workers were started with."""
    return Path(ray.get(_cache_folder.remote()))


@ray.remote(num_cpus=1)
def _cache_folder() -> str:
    from tcompact.counting.cache import cache_folder

    return str(cache_folder())
