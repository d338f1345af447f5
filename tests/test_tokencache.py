"""The persistent token cache: figures never change with it, it is found again, bounded, shared and repaired."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
import sys

import orjson
import pytest
from conftest import REAL_FILES, SAMPLES, SESSION, call, jsonl, msg, real_file

from tcompact import reportcache, tokencache
from tcompact.compaction import CompactOptions, compact_file
from tcompact.inspection import InspectOptions, inspect_paths
from tcompact.tokencache import TABLE, WAYS, TokenCache, text_keys
from tcompact.tokens import TokenCounter, texts_of


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    """A cache folder of the test's own (empty at first); its shared TokenCache instance."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(tokencache.CACHE_ENV, str(folder))
    return folder


def _inspect(path, monkeypatch, *, cache: bool):
    monkeypatch.setenv(tokencache.NO_CACHE_ENV, "" if cache else "1")
    return inspect_paths([path], InspectOptions(spans="round-level"))


def _figures(run):
    """A compaction's figures, without the summariser's measured latencies."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "latency_s"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(run.report), [m.text for m in run.messages]


def _same_without_cache(path, monkeypatch, *, chain="round-level"):
    cold = _inspect(path, monkeypatch, cache=True)  # fills the empty caches (counts and reports)
    shared = tokencache.shared_cache()
    assert shared is not None and shared.added > 0
    shutil.rmtree(tokencache.cache_folder() / reportcache.FOLDER)  # the counts alone, next
    asked, found = shared.looked_up, shared.found
    warm = _inspect(path, monkeypatch, cache=True)  # every count from the cache
    assert shared.found - found == shared.looked_up - asked > 0
    asked = shared.looked_up
    kept = _inspect(path, monkeypatch, cache=True)  # the report kept whole: no text even looked up
    assert shared.looked_up == asked
    uncached = _inspect(path, monkeypatch, cache=False)
    assert cold == warm == kept == uncached
    options = CompactOptions(chain=chain, force=True)
    monkeypatch.setenv(tokencache.NO_CACHE_ENV, "")
    with_cache = compact_file(path, options)
    monkeypatch.setenv(tokencache.NO_CACHE_ENV, "1")
    without = compact_file(path, options)
    assert with_cache.status == without.status == "compacted"
    assert _figures(with_cache) == _figures(without)


@pytest.mark.parametrize("key", sorted(REAL_FILES))
def test_every_figure_is_the_same_with_and_without_the_cache_on_real_sessions(key, monkeypatch, own_cache):
    _same_without_cache(real_file(key), monkeypatch)


def _session_of(rounds: int) -> list[dict]:
    """A chat session of ``rounds`` requests, each with a tool call and a long result."""
    out = [msg("system", "You are a coding agent.")]
    for r in range(rounds):
        out += [msg("user", f"Step {r}: fix test_{r} in parser.py"),
                msg("assistant", "", tool_calls=[call(f"c{r}", "run_tests", {"k": f"test_{r}"})]),
                msg("tool", "\n".join(f"line {i} of the log of step {r}: assertion failed" for i in range(80)),
                    tool_call_id=f"c{r}"),
                msg("assistant", f"Fixed test_{r}: the parser indexed an empty list.")]
    return out


def test_every_figure_is_the_same_with_and_without_the_cache_on_a_small_session(tmp_path, monkeypatch, own_cache):
    path = jsonl(tmp_path / "s.jsonl", _session_of(6))
    _same_without_cache(path, monkeypatch, chain="full")


def test_a_cached_run_never_loads_the_tokenizer(own_cache):
    path = SAMPLES / "claude_code_session.jsonl"
    code = ("import sys; from tcompact.inspection import inspect_paths; r = inspect_paths([sys.argv[1]]); "
            "print(r['totals']['tokens'], 'tiktoken' in sys.modules)")
    env = {**os.environ, tokencache.CACHE_ENV: str(own_cache)}
    first, second = (subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                                    env=env, check=True).stdout.split() for _ in range(2))
    assert first[1] == "True" and second == [first[0], "False"]


def test_a_grown_session_counts_only_its_new_texts(tmp_path, monkeypatch, own_cache):
    path = jsonl(tmp_path / "grows.jsonl", SESSION)
    before = _inspect(path, monkeypatch, cache=True)
    shared = tokencache.shared_cache()
    added = shared.added
    more = [msg("user", "Now bump the version."), msg("assistant", "", tool_calls=[call("c9", "edit", {"v": 2})]),
            msg("tool", "edited pyproject.toml", tool_call_id="c9"), msg("assistant", "Added.")]  # "Added." is old
    with path.open("ab") as fh:
        fh.write(b"".join(orjson.dumps(m) + b"\n" for m in more))
    after = _inspect(path, monkeypatch, cache=True)
    new_texts = {"Now bump the version.", "edit", '{"v":2}', "edited pyproject.toml"}
    assert shared.added - added == len(new_texts)
    assert after["totals"]["tokens"] > before["totals"]["tokens"]


def test_counts_are_keyed_by_encoding(own_cache):
    texts = ["hello world", "привет мир"]
    o200k = TokenCounter("o200k_base")
    o200k.prime(texts)
    cl100k = TokenCounter("cl100k_base")
    cl100k.prime(texts)
    assert cl100k.tokenized == 2  # none of o200k's counts answered for cl100k
    bare = TokenCounter("cl100k_base", cache=False)
    assert [cl100k.count(t) for t in texts] == [bare.count(t) for t in texts]
    again = TokenCounter("cl100k_base")
    again.prime(texts)
    assert again.tokenized == 0 and again._encoding is None


def _keys(n, prefix="k"):
    return text_keys(b"test", [f"{prefix}{i}" for i in range(n)])


def test_a_full_bucket_gives_up_its_least_recently_used_count(tmp_path):
    hour = [0]
    cache = TokenCache(tmp_path, buckets=1, clock=lambda: hour[0] * 3600)  # one bucket: every key shares it
    keys = _keys(WAYS + 3)
    for i, key in enumerate(keys[:WAYS]):
        hour[0] = i
        assert cache.store([(key, i)]) == 1
    hour[0] = 100
    assert cache.lookup([keys[0], keys[1]]) == [0, 1]  # used again: now the most recent
    hour[0] = 101
    assert cache.store([(k, 50 + j) for j, k in enumerate(keys[WAYS:])]) == 3
    assert cache.lookup(keys) == [0, 1, None, None, None, 5, 6, 7, 50, 51, 52]
    assert os.path.getsize(tmp_path / TABLE) == 4096 + WAYS * 32  # the size never grows


def test_a_damaged_table_is_replaced_silently(tmp_path):
    keys = _keys(40)
    TokenCache(tmp_path, buckets=4).store([(k, i) for i, k in enumerate(keys)])
    table = tmp_path / TABLE
    data = bytearray(table.read_bytes())
    data[:8] = b"garbage!"
    table.write_bytes(bytes(data))
    again = TokenCache(tmp_path, buckets=4)
    assert again.lookup(keys[:3]) == [None, None, None] and again.rebuilt == 1
    assert again.store([(keys[0], 7)]) == 1 and again.lookup(keys[:1]) == [7]
    table.write_bytes(table.read_bytes()[:1000])  # cut short
    third = TokenCache(tmp_path, buckets=4)
    assert third.lookup(keys[:1]) == [None] and third.rebuilt == 1 and table.stat().st_size == 4096 + 4 * WAYS * 32


def test_a_damaged_slot_is_a_miss_and_the_others_still_answer(tmp_path):
    keys = _keys(2)
    cache = TokenCache(tmp_path, buckets=1)
    cache.store([(keys[0], 11), (keys[1], 22)])
    table = tmp_path / TABLE
    data = bytearray(table.read_bytes())
    at = data.find(keys[0])
    data[at + 16] ^= 0xFF  # its count, as a torn write or a bad sector would leave it
    table.write_bytes(bytes(data))
    assert TokenCache(tmp_path, buckets=1).lookup(keys) == [None, 22]


def test_a_cache_folder_that_cannot_be_used_means_a_run_without_the_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv(tokencache.CACHE_ENV, str(blocker))
    path = SAMPLES / "chat_tool_session.jsonl"
    assert tokencache.shared_cache() is None
    assert _inspect(path, monkeypatch, cache=True) == _inspect(path, monkeypatch, cache=False)


def test_damaged_tokenizer_tables_are_rebuilt(own_cache):
    code = "from tcompact.tokens import TokenCounter; print(TokenCounter(cache=False).count('hello there'))"
    env = {**os.environ, tokencache.CACHE_ENV: str(own_cache)}

    def run():
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)

    expected = run().stdout
    (blob,) = own_cache.glob("ranks-o200k_base-*.marshal")
    blob.write_bytes(blob.read_bytes()[:-10] + b"0123456789")
    assert tokencache.read_blob(blob.name) is None
    assert run().stdout == expected and tokencache.read_blob(blob.name) is not None


def test_no_cache_neither_reads_nor_writes_it(own_cache):
    from typer.testing import CliRunner

    from tcompact.app import app

    path = str(SAMPLES / "codex_rollout.jsonl")
    uncached = CliRunner().invoke(app, ["inspect", path, "--json", "--no-cache"])
    assert uncached.exit_code == 0 and not own_cache.exists()
    os.environ[tokencache.NO_CACHE_ENV] = ""  # --no-cache holds for the process; the fixture undoes it
    cached = CliRunner().invoke(app, ["inspect", path, "--json"])
    assert cached.exit_code == 0 and (own_cache / TABLE).exists()
    assert cached.stdout == uncached.stdout


def _worker(args):
    folder, seed, rounds = args
    import random

    rng = random.Random(seed)
    cache = TokenCache(folder, buckets=8)
    wrong = 0
    for _ in range(rounds):
        ids = rng.sample(range(400), 60)
        keys = text_keys(b"test", [f"k{i}" for i in ids])
        cache.store([(k, i * 7) for k, i in zip(keys, ids)])
        found = cache.lookup(keys)
        wrong += sum(1 for n, i in zip(found, ids) if n is not None and n != i * 7)
    return wrong, cache.added


def test_several_processes_share_one_table(tmp_path):
    """Four writers and readers at once on a table too small for them (eviction all the time): every
    count read back is the right one, and the table is sound afterwards."""
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        results = pool.map(_worker, [(tmp_path, seed, 40) for seed in range(4)])
    assert [wrong for wrong, _ in results] == [0, 0, 0, 0]
    assert all(added > 0 for _, added in results)
    keys = text_keys(b"test", [f"k{i}" for i in range(400)])
    final = TokenCache(tmp_path, buckets=8)
    found = final.lookup(keys)
    assert final.rebuilt == 0 and sum(n is not None for n in found) == 8 * WAYS
    assert all(n == i * 7 for i, n in enumerate(found) if n is not None)


def test_concurrent_inspect_runs_give_the_uncached_figures(own_cache):
    path = str(real_file("codemie"))
    env = {**os.environ, tokencache.CACHE_ENV: str(own_cache)}
    cmd = [sys.executable, "-m", "tcompact", "inspect", path, "--json"]
    runs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env) for _ in range(3)]
    outputs = [p.communicate()[0] for p in runs]
    uncached = subprocess.run([*cmd, "--no-cache"], capture_output=True, env=env, check=True).stdout
    assert [p.returncode for p in runs] == [0, 0, 0]
    assert outputs == [uncached] * 3


def test_the_cache_holds_every_text_of_a_session(monkeypatch, own_cache):
    from tcompact.formats import read_file

    source = read_file(SAMPLES / "claude_code_session.jsonl")
    texts = {t for tr in source.transcripts for t in texts_of(tr.messages) if t}
    _inspect(SAMPLES / "claude_code_session.jsonl", monkeypatch, cache=True)
    from tcompact.encodings import fingerprint

    found = tokencache.shared_cache().lookup(text_keys(fingerprint("o200k_base"), sorted(texts)))
    bare = TokenCounter(cache=False)
    assert found == [bare.count(t) for t in sorted(texts)]
