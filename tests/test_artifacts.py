"""tcompact.artifacts: the one output-path check (check_target, check_page, probe_folders) and the only
writer of output files (atomic, never over an input, never over a file unless forced)."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from test_fs_faults import _unwritable_folder  # a folder even root cannot create files in

from tcompact import artifacts
from tcompact.artifacts import (check_page, check_target, make_folder, probe_folders, remove, remove_paths,
                                write_bytes, write_json, write_json_all, write_page)
from tcompact.errors import OutputError

EXISTS = "the output file exists already — pass --force to overwrite it, or choose another path"
IS_INPUT = "the output is the input file — write to another path; tcompact never replaces its input"


def _error(call, *args, **kwargs) -> OutputError:
    with pytest.raises(OutputError) as exc:
        call(*args, **kwargs)
    assert exc.value.exit_code == 2
    return exc.value


# check_target ------------------------------------------------------------------------------------

def test_check_target_allows_a_new_path_and_an_existing_one_when_forced(tmp_path):
    (tmp_path / "old.jsonl").write_bytes(b"x")
    check_target(tmp_path / "new.jsonl", force=False, inputs=(tmp_path / "in.jsonl", None))
    check_target(tmp_path / "old.jsonl", force=True)
    assert str(_error(check_target, tmp_path / "old.jsonl", force=False)) == f"{tmp_path / 'old.jsonl'}: {EXISTS}"


def _inputs_named_as_outputs(tmp_path: Path, source: Path) -> list[tuple[Path, tuple[str | Path, ...]]]:
    """(an output path, the inputs it is one of): the input by identity, spelt another way, not made yet (run
    from ``tmp_path``)."""
    (tmp_path / "link.jsonl").symlink_to(source)
    (tmp_path / "sub").mkdir()
    return [(source, (source,)), (tmp_path / "link.jsonl", (source,)),  # the same file by identity
            (Path("sub/../in.jsonl"), (str(source),)),  # the same path spelt another way
            (tmp_path / "not-yet.jsonl", (Path("sub/../not-yet.jsonl"),))]  # neither exists yet


def test_the_input_is_never_the_output_even_forced(tmp_path, monkeypatch):
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"x")
    monkeypatch.chdir(tmp_path)
    for target, inputs in _inputs_named_as_outputs(tmp_path, source):
        assert str(_error(check_target, target, force=True, inputs=inputs)) == f"{target}: {IS_INPUT}"


def test_a_folder_is_never_an_output_even_forced(tmp_path):
    # it was called "the output file exists already" and, with --force, failed only once the work was done
    for force in (False, True):
        assert str(_error(check_target, tmp_path, force=force)) == (
            f"{tmp_path}: the output path is a folder — name a file, not a folder")
        assert str(_error(write_bytes, tmp_path, b"x", force=force)) == (
            f"{tmp_path}: the output path is a folder — name a file, not a folder")


# check_page --------------------------------------------------------------------------------------

def test_check_page(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"x")
    check_page(Path("report.html"), force=False, keep=(source, None))  # a bare name: the current folder
    assert str(_error(check_page, tmp_path, force=True)) == (
        f"{tmp_path}: the HTML report path is a folder — name a file, e.g. report.html")
    assert str(_error(check_page, tmp_path / "no" / "r.html", force=True)) == (
        f"{tmp_path / 'no'}: the output folder does not exist — create it first")
    assert str(_error(check_page, Path("in.jsonl"), force=True, keep=(source,))) == (
        "in.jsonl: the HTML report would replace the input or another output — choose another path for --html")
    (tmp_path / "r.html").write_text("old")
    assert str(_error(check_page, Path("r.html"), force=False)) == f"r.html: {EXISTS}"
    check_page(Path("r.html"), force=True, keep=(source, Path("out.jsonl")))


# probe_folders -----------------------------------------------------------------------------------

def test_probe_folders_finds_the_folder_that_would_take_the_file_and_leaves_nothing(tmp_path, monkeypatch):
    made = []
    real = artifacts.tempfile.mkstemp
    monkeypatch.setattr(artifacts.tempfile, "mkstemp", lambda **kw: made.append(kw["dir"]) or real(**kw))
    (tmp_path / "a").mkdir()
    (tmp_path / "file").write_bytes(b"x")
    probe_folders([tmp_path / "a" / "out.jsonl", tmp_path / "a" / "b" / "c" / "d.json", tmp_path / "new" / "x",
                   tmp_path / "a" / "y"])
    assert made == [tmp_path / "a", tmp_path]  # each folder once
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "file"]


def test_probe_folders_refuses_a_file_where_a_folder_would_have_to_be(tmp_path):
    # the probe passed over it: the run did its work, wrote the transcript and its dumps, and then failed
    # on the report (--report file/r.json) or on the dumps (--dump-dir file)
    (tmp_path / "file").write_bytes(b"x")
    for target in (tmp_path / "file" / "r.json", tmp_path / "file" / "sub" / "d.json"):
        assert str(_error(probe_folders, [tmp_path / "ok.json", target])) == (
            f"{tmp_path / 'file'}: cannot write here: Not a directory — choose another output folder or fix its "
            "permissions")
    assert (tmp_path / "file").read_bytes() == b"x" and sorted(tmp_path.iterdir()) == [tmp_path / "file"]


def test_probe_folders_refuses_a_folder_no_file_can_be_created_in(tmp_path):
    folder = _unwritable_folder()
    err = _error(probe_folders, [tmp_path / "ok.json", folder / "new" / "out.jsonl"])
    assert str(err) == f"{folder}: cannot write here: Permission denied — choose another output folder or fix its permissions"


# write_bytes -------------------------------------------------------------------------------------

def test_write_bytes_writes_atomically_and_refuses_to_overwrite(tmp_path):
    target = tmp_path / "out.jsonl"
    assert write_bytes(target, b"one\n") == target and target.read_bytes() == b"one\n"
    assert str(_error(write_bytes, target, b"two\n")) == f"{target}: {EXISTS}"
    assert write_bytes(str(target), b"two\n", force=True, sync=False) == target
    assert target.read_bytes() == b"two\n" and sorted(tmp_path.iterdir()) == [target]


@pytest.mark.parametrize("size", [0, 1, artifacts._PIECE, 2 * artifacts._PIECE + 123])
def test_write_bytes_writes_every_byte_of_a_file_written_in_pieces(tmp_path, size):
    data = os.urandom(size)
    assert artifacts.write_bytes(tmp_path / "f.bin", data).read_bytes() == data


def test_write_json_ends_the_indented_document_with_one_newline(tmp_path):
    doc = {"a": [1, "x" * artifacts._PIECE], "b": None}
    written = artifacts.write_json(tmp_path / "d.json", doc).read_bytes()
    assert written == orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"


def test_write_bytes_refuses_an_input_and_a_missing_or_unwritable_folder(tmp_path, monkeypatch):
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"keep")
    assert str(_error(write_bytes, source, b"x", force=True, inputs=(source,))) == f"{source}: {IS_INPUT}"
    assert source.read_bytes() == b"keep"
    assert str(_error(write_bytes, tmp_path / "no" / "out", b"x")) == (
        f"{tmp_path / 'no'}: the output folder does not exist — create it first")
    folder = _unwritable_folder()
    assert str(_error(write_bytes, folder / "out", b"x")) == (
        f"{folder}: cannot write here: Permission denied — check the folder's permissions")
    # a folder whose mode forbids writing (root ignores the mode: a non-root user's view of it stands in)
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    monkeypatch.setattr(artifacts.os, "access", lambda p, mode: Path(p) != locked and os.path.exists(p))
    assert str(_error(write_bytes, locked / "out", b"x")) == (
        f"{locked}: the output folder is not writable — choose another folder or fix its permissions")
    assert list(locked.iterdir()) == []


def test_a_failing_check_leaves_the_target_as_it_was_and_no_temporary_file(tmp_path):
    target = tmp_path / "out.jsonl"
    target.write_bytes(b"old")
    seen = []

    def check(tmp: Path) -> None:
        seen.append((tmp.parent, tmp.name.startswith(".out.jsonl."), tmp.suffix, tmp.read_bytes()))
        raise ValueError("does not read back")

    with pytest.raises(ValueError, match="does not read back"):
        write_bytes(target, b"new", force=True, check=check)
    assert seen == [(tmp_path, True, ".tmp", b"new")]
    assert target.read_bytes() == b"old" and sorted(tmp_path.iterdir()) == [target]
    write_bytes(target, b"new", force=True, check=lambda tmp: None)
    assert target.read_bytes() == b"new"


def test_a_new_file_gets_the_mode_of_a_plain_open_and_a_replaced_one_keeps_its_own(tmp_path):
    mask = os.umask(0o027)
    try:
        assert write_bytes(tmp_path / "new", b"x").stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(mask)
    old = tmp_path / "old"
    old.write_bytes(b"x")
    old.chmod(0o600)
    assert write_bytes(old, b"y", force=True).stat().st_mode & 0o777 == 0o600


# write_page, write_json, make_folder -------------------------------------------------------------

def test_write_page_is_utf8_and_needs_its_folder(tmp_path):
    page = write_page(tmp_path / "r.html", "<p>é \udcff</p>")
    assert page.read_bytes() == "<p>é ?</p>".encode()
    assert str(_error(write_page, tmp_path / "r.html", "again")) == f"{tmp_path / 'r.html'}: {EXISTS}"
    assert str(_error(write_page, tmp_path / "in.html", "x", force=True, inputs=(tmp_path / "in.html",))) == (
        f"{tmp_path / 'in.html'}: {IS_INPUT}")
    assert str(_error(write_page, tmp_path / "no" / "r.html", "x")) == (
        f"{tmp_path / 'no'}: the output folder does not exist — create it first")


def test_write_json_makes_its_folders_and_writes_indented_json(tmp_path):
    path = write_json(tmp_path / "a" / "b" / "r.json", {"b": [1, {"c": None}], "a": "é"})
    assert path.read_bytes() == b'{\n  "b": [\n    1,\n    {\n      "c": null\n    }\n  ],\n  "a": "\xc3\xa9"\n}\n'
    assert orjson.loads(path.read_bytes()) == {"b": [1, {"c": None}], "a": "é"}
    assert str(_error(write_json, path, {})) == f"{path}: {EXISTS}"
    write_json(path, [], force=True, sync=False)
    assert path.read_bytes() == b"[]\n"


def test_files_written_together_are_made_and_refused_as_each_alone(tmp_path, monkeypatch):
    """write_json_all (a compaction's dumps and offloaded outputs) looks up once what the files share, and
    writes and refuses what write_json would, one at a time: the folders made and their modes, the files' modes,
    an existing file (those before it written), the input itself however it is named."""
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"x")
    source.chmod(0o640)
    docs = [(tmp_path / "store" / f"{n}.json", {"n": n}) for n in range(3)] + [(tmp_path / "o" / "p" / "q.json", [])]
    mask = os.umask(0o022)
    try:
        written = write_json_all(iter(docs), sync=False, inputs=(source,))
    finally:
        os.umask(mask)
    assert written == [path for path, _ in docs]
    assert [p.read_bytes() for p in written] == [b'{\n  "n": 0\n}\n', b'{\n  "n": 1\n}\n', b'{\n  "n": 2\n}\n', b"[]\n"]
    assert [p.stat().st_mode & 0o777 for p in written] == [0o640] * 4  # 0666 less the umask, within the input's
    assert [(tmp_path / f).stat().st_mode & 0o777 for f in ("store", "o", "o/p")] == [0o750] * 3
    written[1].chmod(0o600)
    assert str(_error(write_json_all, [(tmp_path / "store" / "9.json", {}), (written[1], {})], inputs=(source,))) == (
        f"{written[1]}: {EXISTS}")
    assert (tmp_path / "store" / "9.json").exists() and written[1].read_bytes() == b'{\n  "n": 1\n}\n'
    assert write_json_all([(written[1], "new")], force=True, inputs=(source,)) == [written[1]]
    assert (written[1].read_bytes(), written[1].stat().st_mode & 0o777) == (b'"new"\n', 0o600)  # its own mode kept
    monkeypatch.chdir(tmp_path)
    for target, inputs in _inputs_named_as_outputs(tmp_path, source):
        assert str(_error(write_json_all, [(tmp_path / "store" / "ok.json", {}), (target, {})], force=True,
                          inputs=inputs)) == f"{target}: {IS_INPUT}"
        assert str(_error(write_bytes, target, b"x", force=True, inputs=inputs)) == f"{target}: {IS_INPUT}"
    assert source.read_bytes() == b"x" and not (tmp_path / "not-yet.jsonl").exists()


def test_make_folder(tmp_path):
    assert make_folder(tmp_path / "x" / "y") == tmp_path / "x" / "y" and (tmp_path / "x" / "y").is_dir()
    assert make_folder(str(tmp_path / "x")) == tmp_path / "x"  # existing is fine
    (tmp_path / "f").write_bytes(b"")
    assert str(_error(make_folder, tmp_path / "f")) == (
        f"{tmp_path / 'f'}: cannot create the folder: File exists — choose another place or fix the permissions")
    assert str(_error(make_folder, tmp_path / "f" / "sub")) == (
        f"{tmp_path / 'f' / 'sub'}: cannot create the folder: Not a directory — choose another place or fix the "
        "permissions")
    assert str(_error(write_json, tmp_path / "f" / "r.json", {})) == (
        f"{tmp_path / 'f'}: cannot create the folder: File exists — choose another place or fix the permissions")


# remove, remove_paths ----------------------------------------------------------------------------

def test_remove(tmp_path):
    (tmp_path / "a").write_bytes(b"x")
    remove(tmp_path / "a")
    remove(str(tmp_path / "a"))  # already gone
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "d").mkdir()
    assert str(_error(remove, tmp_path / "d")) == f"{tmp_path / 'd'}: cannot remove: Is a directory — check the folder's permissions"


def test_remove_paths_removes_files_and_folders_and_a_link_not_what_it_points_at(tmp_path):
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "k").write_bytes(b"k")
    out = tmp_path / "out"
    (out / "nested").mkdir(parents=True)
    (out / "nested" / "d.json").write_bytes(b"{}")
    (tmp_path / "r.json").write_bytes(b"{}")
    (tmp_path / "link").symlink_to(keep)
    remove_paths((out, tmp_path / "r.json", tmp_path / "link", tmp_path / "absent", str(tmp_path / "absent-dir")))
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["keep", "keep/k"]


def test_remove_paths_says_which_folder_it_could_not_remove(tmp_path):
    folder = Path("/sys/kernel")  # sysfs: its entries cannot be removed, even by root
    if not folder.is_dir():
        pytest.skip("no /sys/kernel to fail on")
    err = _error(remove_paths, (folder,))
    assert err.path == str(folder) and err.what.startswith("cannot remove an earlier output: ")
    assert err.hint == "check the folder's permissions" and folder.is_dir()
