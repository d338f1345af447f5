"""The appended files (tcompact.appending): whole lines, a torn tail cut off, one error for what cannot be opened."""

from __future__ import annotations

from test_artifacts import _error  # one OutputError, exit 2

from tcompact.appending import AppendLog


def test_append_log_appends_whole_lines_and_says_where_each_starts(tmp_path):
    path = tmp_path / "log.jsonl"
    log = AppendLog(path)
    assert (log.dropped, log.append(b'{"a":1}'), log.append(b"[]"), log.append(b"")) == (0, 0, 8, 11)
    log.sync()
    log.close()
    log.close()  # a second close is harmless
    assert path.read_bytes() == b'{"a":1}\n[]\n\n'
    again = AppendLog(path)  # a closed log is unlocked
    assert again.append(b"x") == 12
    again.close()


def test_a_log_that_is_one_torn_line_longer_than_a_read_is_emptied(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"a\n" + b"x" * 200_000)  # the newline is three 64 KiB reads back
    log = AppendLog(path)
    assert log.dropped == 200_000 and path.read_bytes() == b"a\n"
    log.close()
    path.write_bytes(b"y" * 70_000)
    log = AppendLog(path)
    assert log.dropped == 70_000 and path.read_bytes() == b""
    log.close()


def test_a_log_that_cannot_be_opened_is_one_error(tmp_path):
    path = tmp_path / "no" / "log.jsonl"
    assert str(_error(AppendLog, path)) == (
        f"{path}: cannot open for appending: No such file or directory — check the folder's permissions")


def test_append_line_makes_the_folder_ends_each_line_once_and_keeps_the_newer_half(tmp_path):
    from tcompact.appending import append_line

    path = tmp_path / "state" / "hooks.log"
    append_line(path, "one\n")
    append_line(path, "two")
    assert path.read_bytes() == b"one\ntwo\n"
    for i in range(6):
        append_line(path, f"line {i}", keep=30)
    # at 36 bytes (line 3) the log starts again from the first whole line of its newer half: "line 2"
    assert path.read_bytes() == b"line 2\nline 3\nline 4\nline 5\n"
