"""The bundled encodings (encodings.py): they equal tiktoken's own, load without the network and are checked
against their sha256; which encoding a model uses; the decoded rank tables kept in the cache folder; and the
fingerprint cached counts are keyed by."""

from __future__ import annotations

import marshal
import socket
import sys
from importlib import resources
from importlib.metadata import version

import pytest
from conftest import EDGE_TEXTS

from tcompact.counting import encodings, cache as tokencache
from tcompact.counting.encodings import ENCODINGS, encoding_for_model, fingerprint, load_encoding
from tcompact.errors import InputError, UsageError
from tcompact.counting.tokens import TokenCounter



@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """Encodings loaded afresh, with a cache folder of the test's own (the process's loads are restored after)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(tokencache.CACHE_ENV, str(folder))
    load_encoding.cache_clear()
    yield folder
    load_encoding.cache_clear()


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_bundled_encoding_equals_tiktoken_built_from_the_same_file(name, tmp_path, monkeypatch):
    import tiktoken
    import tiktoken.load
    import tiktoken_ext.openai_public as public

    path = str(resources.files("tcompact").joinpath("data", f"{name}.tiktoken"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(public, "load_tiktoken_bpe",
                        lambda url, expected_hash: tiktoken.load.load_tiktoken_bpe(path, expected_hash=expected_hash))
    theirs = tiktoken.Encoding(**getattr(public, name)())
    ours = load_encoding(name)
    assert ours._pat_str == theirs._pat_str
    assert ours._special_tokens == theirs._special_tokens
    assert ours._mergeable_ranks == theirs._mergeable_ranks
    for text in EDGE_TEXTS:
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_loading_never_touches_the_network(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    load_encoding.cache_clear()
    try:
        assert TokenCounter("cl100k_base").count("hello world") == 2
        assert TokenCounter("o200k_base").count("hello world") == 2
    finally:
        load_encoding.cache_clear()
    assert list(cache.iterdir()) == []  # tiktoken's download cache is never used


def test_a_damaged_rank_file_is_refused_with_what_to_do(fresh, monkeypatch):
    spec = ENCODINGS["cl100k_base"]
    monkeypatch.setitem(ENCODINGS, "cl100k_base", encodings._EncodingSpec(spec.file, "0" * 64, spec.pat_str,
                                                                           spec.special_tokens))
    with pytest.raises(InputError) as info:
        load_encoding("cl100k_base")
    assert str(info.value) == ("tokenizer file cl100k_base.tiktoken is damaged (sha256 223921b76ee9…, expected "
                               "000000000000…) — reinstall tcompact")
    assert info.value.exit_code == 2


@pytest.mark.parametrize("name", ["p50k_base", "", "O200K_BASE"])
def test_an_unknown_encoding_is_a_usage_error_naming_the_known_ones(name):
    for make in (load_encoding, fingerprint, TokenCounter):
        with pytest.raises(UsageError) as info:
            make(name)
        assert str(info.value) == f"unknown encoding {name!r} — use one of: o200k_base, cl100k_base"


def test_an_encoding_is_loaded_once_per_process():
    assert load_encoding("cl100k_base") is load_encoding("cl100k_base")


@pytest.mark.parametrize(("model", "expected"), [
    ("gpt-4o-mini", ("o200k_base", False)),
    ("gpt-5-codex", ("o200k_base", False)),
    ("openai/gpt-4.1", ("o200k_base", False)),
    ("gpt-4.5-preview", ("o200k_base", False)),
    ("chatgpt-4o-latest", ("o200k_base", False)),
    ("codex-mini-latest", ("o200k_base", False)),
    ("gpt-oss-20b", ("o200k_base", False)),
    ("o1", ("o200k_base", False)),
    ("o3-mini", ("o200k_base", False)),
    ("o4-mini-high", ("o200k_base", False)),
    ("  GPT-4O  ", ("o200k_base", False)),
    ("gpt-4", ("cl100k_base", False)),
    ("gpt-4-turbo", ("cl100k_base", False)),
    ("gpt-4-0613", ("cl100k_base", False)),
    ("gpt-3.5-turbo-0125", ("cl100k_base", False)),
    ("azure/gpt-35-turbo", ("cl100k_base", False)),
    ("text-embedding-3-small", ("cl100k_base", False)),
    ("text-embedding-ada-002", ("cl100k_base", False)),
    # any other model is counted with o200k_base and labelled approximate
    ("claude-sonnet-4-5-20250929", ("o200k_base", True)),
    ("deepseek-chat", ("o200k_base", True)),
    ("my-gpt-4o", ("o200k_base", True)),
    ("", ("o200k_base", True)),
    (None, ("o200k_base", True)),
])
def test_encoding_for_model(model, expected):
    assert encoding_for_model(model) == expected


# ---- the decoded rank tables in the cache folder ---------------------------------------------------------


def _blobs(folder):
    return sorted(p.name for p in folder.glob("ranks-*"))


def test_the_decoded_ranks_are_kept_and_used_again(fresh):
    blob = f"ranks-cl100k_base-{ENCODINGS['cl100k_base'].sha256[:16]}-{sys.implementation.cache_tag}.marshal"
    first = load_encoding("cl100k_base")
    assert _blobs(fresh) == [blob]
    kept = (fresh / blob).read_bytes()
    load_encoding.cache_clear()
    again = load_encoding("cl100k_base")
    assert again is not first and again._mergeable_ranks == first._mergeable_ranks
    assert (fresh / blob).read_bytes() == kept  # read, not written again


def test_a_kept_table_that_is_no_table_is_decoded_again(fresh):
    load_encoding("cl100k_base")
    (name,) = _blobs(fresh)
    for junk in (b"not marshal data", marshal.dumps({})):  # a valid checksum over a useless body
        tokencache.write_blob(name, junk)
        load_encoding.cache_clear()
        assert load_encoding("cl100k_base").encode_ordinary("hello world") == [15339, 1917]
        assert tokencache.read_blob(name) not in (junk, None)  # replaced by the real table


def test_no_table_is_kept_when_caching_is_off(fresh, monkeypatch):
    monkeypatch.setenv(tokencache.NO_CACHE_ENV, "1")
    assert load_encoding("cl100k_base").encode_ordinary("hello world") == [15339, 1917]
    assert not fresh.exists()


# ---- the fingerprint of cached counts ----------------------------------------------------------------------


def test_the_fingerprint_is_per_encoding_and_follows_what_a_count_depends_on(monkeypatch):
    o200k, cl100k = fingerprint("o200k_base"), fingerprint("cl100k_base")
    assert len(o200k) == len(cl100k) == 32 and o200k != cl100k
    assert fingerprint("o200k_base") is o200k
    spec = ENCODINGS["o200k_base"]
    changed = {"pattern": encodings._EncodingSpec(spec.file, spec.sha256, spec.pat_str + "|x", spec.special_tokens),
               "special tokens": encodings._EncodingSpec(spec.file, spec.sha256, spec.pat_str,
                                                         {**spec.special_tokens, "<|extra|>": 5}),
               "rank file": encodings._EncodingSpec(spec.file, "1" * 64, spec.pat_str, spec.special_tokens)}
    seen = {o200k}
    try:
        for what, other in changed.items():
            monkeypatch.setitem(ENCODINGS, "o200k_base", other)
            fingerprint.cache_clear()
            assert fingerprint("o200k_base") not in seen, what
            seen.add(fingerprint("o200k_base"))
    finally:
        monkeypatch.undo()
        fingerprint.cache_clear()
    assert fingerprint("o200k_base") == o200k


def test_the_fingerprint_names_the_installed_tiktoken_release():
    # counts cached with one tiktoken are not trusted by another (its regex engine's Unicode tables may differ)
    assert encodings._tiktoken_release() == version("tiktoken")
