"""The persistent token cache (tokencache.py): where it lives and when it is on, the keys, the blobs kept beside it,
and, through inspect and compact, that no figure ever changes with it. (The table itself: test_tokentable.py.)"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from conftest import REAL_FILES, SAMPLES, SESSION, call, jsonl, msg, real_file
from platformdirs import user_cache_dir

from tcompact.inspection import reportcache
from tcompact.counting import cache as tokencache
from tcompact.compaction import CompactOptions, compact_file
from tcompact.inspection import InspectOptions, inspect_paths
from tcompact.counting.cache import TABLE, text_keys
from tcompact.counting.tokens import TokenCounter, texts_of


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
    options = CompactOptions(chain=chain, now=True)
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


def test_a_cache_folder_that_cannot_be_used_means_a_run_without_the_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv(tokencache.CACHE_ENV, str(blocker))
    path = SAMPLES / "chat_tool_session.jsonl"
    assert tokencache.shared_cache() is None
    assert _inspect(path, monkeypatch, cache=True) == _inspect(path, monkeypatch, cache=False)


def test_damaged_tokenizer_tables_are_rebuilt(own_cache):
    code = "from tcompact.counting.tokens import TokenCounter; print(TokenCounter(cache=False).count('hello there'))"
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


def test_concurrent_inspect_runs_give_the_uncached_figures(tmp_path, own_cache):
    path = str(jsonl(tmp_path / "s.jsonl", _session_of(60)))
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
    from tcompact.counting.encodings import fingerprint

    found = tokencache.shared_cache().lookup(text_keys(fingerprint("o200k_base"), sorted(texts)))
    bare = TokenCounter(cache=False)
    assert found == [bare.count(t) for t in sorted(texts)]


# ---- where the cache lives and when it is on ---------------------------------------------------------


def test_the_cache_folder_is_the_variable_else_the_users_cache_folder(monkeypatch, tmp_path):
    monkeypatch.setenv(tokencache.CACHE_ENV, "~/counts")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert tokencache.cache_folder() == tmp_path / "counts"
    monkeypatch.setenv(tokencache.CACHE_ENV, "")
    assert tokencache.cache_folder() == Path(user_cache_dir("tcompact", appauthor=False))
    monkeypatch.delenv(tokencache.CACHE_ENV)
    assert tokencache.cache_folder() == Path(user_cache_dir("tcompact", appauthor=False))


@pytest.mark.parametrize(("value", "on"), [(None, True), ("", True), ("0", True), ("1", False), ("yes", False),
                                           ("true", False), ("false", False)])
def test_caching_is_on_unless_the_variable_is_set_to_anything_but_0(monkeypatch, own_cache, value, on):
    if value is None:
        monkeypatch.delenv(tokencache.NO_CACHE_ENV)
    else:
        monkeypatch.setenv(tokencache.NO_CACHE_ENV, value)
    assert tokencache.enabled() is on
    assert (tokencache.shared_cache() is not None) is on


def test_the_shared_cache_is_one_per_folder(monkeypatch, tmp_path):
    monkeypatch.setenv(tokencache.CACHE_ENV, str(tmp_path / "a"))
    a = tokencache.shared_cache()
    assert tokencache.shared_cache() is a and a.folder == tmp_path / "a"
    monkeypatch.setenv(tokencache.CACHE_ENV, str(tmp_path / "b"))
    assert tokencache.shared_cache() is not a


# ---- keys -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "hello", "日本語 🎉", "lone \ud800 surrogate"])
def test_a_key_is_16_bytes_of_sha1_over_the_salt_and_the_utf8(text):
    expected = hashlib.sha1(b"salt" + text.encode("utf-8", "surrogatepass")).digest()[:16]
    assert text_keys(b"salt", [text]) == [expected]
    assert text_keys(b"other", [text]) != [expected]


def test_a_huge_text_hashed_in_pieces_has_the_key_of_the_whole():
    text = ("é" * 1_000_003 + "x") * 5  # over the 4 Mi-character piece, pieces cut inside runs of two-byte characters
    assert len(text) > 1 << 22
    assert text_keys(b"s", [text, "a"]) == [hashlib.sha1(b"s" + text.encode()).digest()[:16],
                                            hashlib.sha1(b"sa").digest()[:16]]


# ---- blobs kept beside the counts -------------------------------------------------------------------


def test_a_blob_reads_back_as_written(own_cache):
    tokencache.write_blob("tables.bin", b"\x00derived data\xff")
    assert tokencache.read_blob("tables.bin") == b"\x00derived data\xff"
    assert sorted(p.name for p in own_cache.iterdir()) == ["tables.bin"]  # no temporary file left
    assert tokencache.read_blob("missing.bin") is None


@pytest.mark.parametrize("damage", ["body", "checksum", "cut to the checksum", "empty"])
def test_a_damaged_blob_reads_as_none(own_cache, damage):
    tokencache.write_blob("tables.bin", b"derived data")
    path = own_cache / "tables.bin"
    data = path.read_bytes()
    path.write_bytes({"body": data[:-1] + b"X", "checksum": b"\x00" + data[1:], "cut to the checksum": data[:32],
                      "empty": b""}[damage])
    assert tokencache.read_blob("tables.bin") is None


def test_blobs_are_neither_read_nor_written_when_caching_is_off(own_cache, monkeypatch):
    tokencache.write_blob("tables.bin", b"kept")
    monkeypatch.setenv(tokencache.NO_CACHE_ENV, "1")
    assert tokencache.read_blob("tables.bin") is None
    tokencache.write_blob("other.bin", b"data")
    assert not (own_cache / "other.bin").exists()


def test_a_blob_that_cannot_be_written_is_no_error(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv(tokencache.CACHE_ENV, str(tmp_path / "file"))
    tokencache.write_blob("tables.bin", b"data")
    assert tokencache.read_blob("tables.bin") is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
