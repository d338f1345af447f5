"""File-system faults: an unwritable folder, an existing output, a write failing midway, output = input.

Each gives one error line and exit 2, the input is untouched, and no partial or temporary file is
left where the output would have gone.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from conftest import SAMPLES
from typer.testing import CliRunner

from tcompact.app import app

CHAT = SAMPLES / "chat_tool_session.jsonl"


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    return CliRunner()


def _compact(runner, *args):
    return runner.invoke(app, ["compact", str(CHAT), "-c", "micro,dialogue", "--now", "--force", *args])


def _unwritable_folder() -> Path:
    """A folder even root cannot create files in (sysfs refuses them); skipped where it lets us."""
    folder = Path("/sys")
    try:
        fd = os.open(folder / "tcompact-probe", os.O_CREAT | os.O_WRONLY, 0o600)
    except OSError:
        return folder
    os.close(fd)
    os.unlink(folder / "tcompact-probe")
    pytest.skip("/sys accepts new files on this machine; no unwritable folder to test with")


def test_an_unwritable_output_folder_is_one_error_and_writes_nothing(runner, tmp_path):
    folder = _unwritable_folder()
    before = CHAT.read_bytes()
    result = _compact(runner, "-o", str(folder / "out.jsonl"))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (f"Error: {folder}: cannot write here: Permission denied — choose another output "
                             "folder or fix its permissions\n")  # found before any compaction work
    assert CHAT.read_bytes() == before and list(tmp_path.iterdir()) == []


def test_an_existing_output_is_kept_without_force(runner, tmp_path):
    (tmp_path / "out.jsonl").write_bytes(b"precious\n")
    result = runner.invoke(app, ["compact", str(CHAT), "-c", "micro,dialogue", "-o", "out.jsonl"])
    assert result.exit_code == 2
    assert result.stderr == ("Error: out.jsonl: the output file exists already — pass --force to overwrite it, "
                             "or choose another path\n")
    assert (tmp_path / "out.jsonl").read_bytes() == b"precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_the_input_is_never_the_output_even_with_force(runner, tmp_path):
    source = tmp_path / "s.jsonl"
    source.write_bytes(CHAT.read_bytes())
    result = runner.invoke(app, ["compact", "s.jsonl", "-c", "micro,dialogue", "--now", "-o", "./s.jsonl"])
    assert result.exit_code == 2
    assert result.stderr == ("Error: s.jsonl: the output is the input file — write to another path; "
                             "tcompact never replaces its input\n")
    assert source.read_bytes() == CHAT.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


@pytest.mark.parametrize("failing", ["write", "fsync"])
def test_a_write_failing_midway_leaves_no_partial_file_and_the_old_output(runner, tmp_path, monkeypatch, failing):
    """The disk fills up while the transcript is written: the previous output stays whole."""
    (tmp_path / "out.jsonl").write_bytes(b"the previous output\n")
    import tcompact.artifacts as artifacts

    real_fdopen = os.fdopen

    class Full:
        """A file object whose writes stop after 100 bytes, like a disk filling up."""

        def __init__(self, fh):
            self.fh, self.left = fh, 100

        def write(self, data):
            if failing == "write" and len(data) > self.left:
                self.fh.write(data[: self.left])
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return self.fh.write(data)

        def __getattr__(self, name):
            return getattr(self.fh, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self.fh.__exit__(*exc)

    def fsync(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(artifacts.os, "fdopen", lambda *a, **k: Full(real_fdopen(*a, **k)))
    if failing == "fsync":
        monkeypatch.setattr(artifacts.os, "fsync", fsync)
    result = _compact(runner, "-o", "out.jsonl", "--dump-dir", "dumps")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1].endswith(
        ": cannot write: No space left on device — check free space and permissions")
    assert (tmp_path / "out.jsonl").read_bytes() == b"the previous output\n"
    left = sorted(p.name for p in tmp_path.iterdir())
    assert [n for n in left if n.startswith(".") or n.endswith(".tmp")] == []  # no temporary file left behind


def test_outputs_get_the_permissions_of_a_plain_write_and_keep_those_of_a_replaced_file(runner, tmp_path):
    old = os.umask(0o027)
    try:
        assert _compact(runner, "-o", "out.jsonl").exit_code == 0
        modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.rglob("*") if p.is_file()}
        assert set(modes.values()) == {0o640} and len(modes) == 3  # transcript, report, dump (not mkstemp's 0600)
        (tmp_path / "out.jsonl").chmod(0o604)
        assert _compact(runner, "-o", "out.jsonl").exit_code == 0
        assert (tmp_path / "out.jsonl").stat().st_mode & 0o777 == 0o604
    finally:
        os.umask(old)


def test_outputs_made_from_a_private_session_are_as_private(runner, tmp_path):
    # issue 23 item 14: -o outputs, dump folders, offload stores, pages and the token cache were made at the
    # umask's default (0644 files, 0755 folders) from a session only its owner could read
    old = os.umask(0o022)
    try:
        source = tmp_path / "s.jsonl"
        source.write_bytes(CHAT.read_bytes())
        source.chmod(0o600)
        assert runner.invoke(app, ["compact", "s.jsonl", "-c", "dialogue", "--now", "-o", "out/o.jsonl",
                                   "--dump-dir", "d"]).exit_code == 0
        offload = runner.invoke(app, ["compact", "s.jsonl", "-c", "offload", "--now", "-o", "off.jsonl",
                                      "--set", "large_message_tokens=200", "--set", "protected_tools=[]"])
        assert offload.exit_code == 0, offload.stderr
        assert runner.invoke(app, ["restore", "off.jsonl", "-o", "back.jsonl"]).exit_code == 0
        assert runner.invoke(app, ["convert", "s.jsonl", "--to", "codex", "-o", "c.jsonl"]).exit_code == 0
        assert runner.invoke(app, ["inspect", "s.jsonl", "--html", "p.html"]).exit_code == 0
        modes = {str(p.relative_to(tmp_path)): p.stat().st_mode & 0o777 for p in tmp_path.rglob("*")
                 if "cache" not in p.name}
        assert {m for p, m in modes.items() if (tmp_path / p).is_dir()} == {0o700}
        assert {m for p, m in modes.items() if (tmp_path / p).is_file()} == {0o600}
        assert len(modes) == 17 and "off.offload" in modes and "d" in modes and "out" in modes
        cache = tmp_path / "own-cache"
        result = runner.invoke(app, ["inspect", "s.jsonl"], env={"TCOMPACT_CACHE_DIR": str(cache / "tcompact")})
        assert result.exit_code == 0 and (cache / "tcompact").stat().st_mode & 0o777 == 0o700
    finally:
        os.umask(old)
