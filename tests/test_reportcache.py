"""The kept inspect reports: a kept report is the report a run would make, never another file's or another
option's, never one made from bytes the file no longer holds; damaged ones are misses; the folder is bounded."""

from __future__ import annotations

import hashlib
import os

import orjson
import pytest
from conftest import REAL_FILES, SAMPLES, SESSION, jsonl, msg, real_file
from typer.testing import CliRunner

from tcompact.inspection import reportcache
from tcompact.counting import cache as tokencache
from tcompact.app import app
from tcompact.formats import ReadOptions, read_file
from tcompact.inspection import InspectOptions, inspect_file
from tcompact.counting.tokens import TokenCounter


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(tokencache.CACHE_ENV, str(folder))
    return folder


def _kept(folder):
    return sorted(p.name for p in (folder / reportcache.FOLDER).glob("*.json"))


def _runs(path, monkeypatch, *args):
    """``inspect --json`` and the terminal view: made (and kept), kept, and without any cache."""
    runner = CliRunner()
    out = []
    for extra in ([], [], ["--no-cache"]):
        for view in (["--json"], []):
            result = runner.invoke(app, ["inspect", str(path), *view, *args, *extra])
            assert result.exit_code == 0, result.output
            out.append((result.stdout, result.stderr))
    monkeypatch.setenv(tokencache.NO_CACHE_ENV, "")  # --no-cache set it for the rest of the process
    return out


@pytest.mark.parametrize("key", sorted(REAL_FILES))
def test_a_kept_report_prints_what_a_fresh_run_prints_on_every_shared_session(key, own_cache, monkeypatch):
    made_json, made_view, kept_json, kept_view, bare_json, bare_view = _runs(real_file(key), monkeypatch,
                                                                             "--spans", "dialogue")
    assert made_json == kept_json == bare_json and made_view == kept_view == bare_view
    assert len(_kept(own_cache)) == 1


def test_a_kept_report_of_a_file_with_skipped_lines_warns_as_a_fresh_one(tmp_path, own_cache, monkeypatch):
    path = jsonl(tmp_path / "s.jsonl", [*SESSION[:3], b'{"role": "user", "content": ', *SESSION[3:]])
    runs = _runs(path, monkeypatch, "--skip-bad-lines", "--top", "3")
    assert len(set(runs[0::2])) == 1 and len(set(runs[1::2])) == 1
    assert "line 4" in runs[0][1] and orjson.loads(runs[0][0])["files"][0]["skipped_lines"][0]["line"] == 4


def test_a_kept_report_is_found_without_reading_or_counting(tmp_path, own_cache, monkeypatch):
    path = jsonl(tmp_path / "s.jsonl", SESSION)
    made = inspect_file(path)
    monkeypatch.setattr("tcompact.inspection.read_file", None)  # a kept report needs neither
    monkeypatch.setattr(TokenCounter, "prime", None)
    assert inspect_file(path) == made


def test_other_options_other_bytes_and_other_code_have_reports_of_their_own(tmp_path, own_cache, monkeypatch):
    path = jsonl(tmp_path / "s.jsonl", SESSION)
    top1 = inspect_file(path, InspectOptions(top=1))
    top2 = inspect_file(path, InspectOptions(top=2))
    assert len(top1["transcripts"][0]["top_messages"]) == 1 and len(top2["transcripts"][0]["top_messages"]) == 2
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(path.read_bytes())
    assert inspect_file(copy, InspectOptions(top=1)) == {**top1, "path": str(copy)}  # the same bytes: one report
    assert len(_kept(own_cache)) == 2
    jsonl(path, [*SESSION, msg("user", "And the docs.")])
    grown = inspect_file(path, InspectOptions(top=1))
    assert grown["transcripts"][0]["messages"] == top1["transcripts"][0]["messages"] + 1
    before = reportcache.slot(path, InspectOptions(top=1))
    monkeypatch.setattr(reportcache, "_code", lambda: b"another release")
    assert reportcache.slot(path, InspectOptions(top=1)).name != before.name


def test_the_code_fingerprint_follows_every_file_of_the_package(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub" / "__pycache__").mkdir(parents=True)
    (package / "a.py").write_text("x = 1\n")
    (package / "sub" / "b.md").write_text("prompt\n")
    (package / "sub" / "__pycache__" / "b.pyc").write_bytes(b"\0")
    files = reportcache._package_files(package)
    assert [f.split("\0")[0] for f in files] == ["a.py", os.path.join("sub", "b.md")]
    os.utime(package / "a.py", ns=(1, 1))
    assert reportcache._package_files(package) != files


def test_a_file_written_to_while_it_is_read_keeps_no_report(tmp_path, own_cache):
    path = jsonl(tmp_path / "s.jsonl", SESSION)
    where = reportcache.slot(path, InspectOptions())
    jsonl(path, [*SESSION, msg("user", "One more.")])  # after the hash, before the read
    read = where.hasher()
    report = {"path": str(path), "records": len(read_file(path, digest=read).records)}
    reportcache.put(where, report, read)
    assert _kept(own_cache) == [] and reportcache.get(where, path) is None
    same = reportcache.slot(path, InspectOptions())
    read = same.hasher()
    read_file(path, digest=read)
    assert read.digest() == same.digest == hashlib.sha256(path.read_bytes()).digest()


@pytest.mark.parametrize("body", [
    b'{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}\n',  # JSON Lines
    b'\xef\xbb\xbf[{"role": "user", "content": "hi"},\n {"role": "assistant", "content": "hello"}]\n',  # a document
    b'{"messages": [\n {"role": "user", "content": "hi"}]}\n',  # an object over lines: a document after a look
    b'{"messages": []}\n{"role": "user", "content": "hi"}\n',  # not one document after all: read again as lines
    b'\n\n{"role": "user", "content": "hi"}',  # blank lines first, no final newline
])
def test_the_digest_of_a_read_is_the_digest_of_the_file_whatever_the_reader_reads_again(tmp_path, body):
    path = tmp_path / "t.jsonl"
    path.write_bytes(body)
    read = hashlib.sha256()
    read_file(path, ReadOptions(skip_bad_lines=True), digest=read)
    assert read.digest() == hashlib.sha256(body).digest()


def test_a_damaged_report_is_a_miss_and_is_made_again(tmp_path, own_cache):
    path = jsonl(tmp_path / "s.jsonl", SESSION)
    made = inspect_file(path)
    (kept,) = (own_cache / reportcache.FOLDER).glob("*.json")
    kept.write_bytes(kept.read_bytes()[:-5])
    assert reportcache.get(reportcache.slot(path, InspectOptions()), path) is None
    assert inspect_file(path) == made and reportcache.get(reportcache.slot(path, InspectOptions()), path) == made


def test_no_cache_keeps_and_reads_no_report(tmp_path, own_cache, monkeypatch):
    monkeypatch.setenv(tokencache.NO_CACHE_ENV, "1")
    path = jsonl(tmp_path / "s.jsonl", SESSION)
    assert reportcache.slot(path, InspectOptions()) is None
    inspect_file(path)
    assert not (own_cache / reportcache.FOLDER).exists()


def test_the_least_recently_used_reports_go_first(tmp_path, own_cache):
    folder = own_cache / reportcache.FOLDER
    folder.mkdir(parents=True)
    for n in range(6):
        (folder / f"{n}.json").write_bytes(b"x" * 100)
        os.utime(folder / f"{n}.json", ns=(n * 10**9, n * 10**9))
    (folder / "other.tmp").write_bytes(b"")
    assert reportcache.evict(folder, max_reports=4) == 2
    assert _kept(own_cache) == ["2.json", "3.json", "4.json", "5.json"]
    assert reportcache.evict(folder, max_bytes=250) == 2
    assert _kept(own_cache) == ["4.json", "5.json"] and (folder / "other.tmp").exists()


def test_a_hit_makes_a_report_the_most_recently_used(tmp_path, own_cache):
    old, new = (jsonl(tmp_path / f"{n}.jsonl", [msg("user", n)]) for n in ("old", "new"))
    inspect_file(old)
    inspect_file(new)
    folder = own_cache / reportcache.FOLDER
    for p in folder.glob("*.json"):
        os.utime(p, ns=(10**9, 10**9))
    inspect_file(old)  # a hit
    assert reportcache.evict(folder, max_reports=1) == 1
    assert inspect_file(old) is not None and reportcache.get(reportcache.slot(old, InspectOptions()), old) is not None
    assert reportcache.get(reportcache.slot(new, InspectOptions()), new) is None


def test_a_sample_folder_reads_the_same_twice_over_the_command_line(own_cache):
    runner = CliRunner()
    first, second = (runner.invoke(app, ["inspect", str(SAMPLES), "--json"]) for _ in range(2))
    assert first.exit_code == second.exit_code == 0 and first.stdout == second.stdout
    assert len(_kept(own_cache)) == len(list(SAMPLES.glob("*.jsonl")))
