"""render/__init__.py: --json documents, warnings on stderr, raw bytes to stdout, the figures' formats, the
progress bar's off switch, and the views imported on first use."""

from __future__ import annotations

import pytest

from tcompact import render


def test_print_json_writes_one_indented_document(capsys):
    render.print_json({"a": [1, {"b": None}], "é": "ü"})
    assert capsys.readouterr().out == '{\n  "a": [\n    1,\n    {\n      "b": null\n    }\n  ],\n  "é": "ü"\n}\n'


def test_warnings_go_to_stderr_as_one_line_each(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    render.warn("a warning longer than the forty columns of this terminal [not markup]")
    assert capsys.readouterr() == ("", "Warning: a warning longer than the forty columns of this terminal [not "
                                       "markup]\n")


@pytest.mark.parametrize(("skipped", "line"), [
    ([], ""),
    ([(3, "not valid JSON")], "Warning: f.jsonl: skipped 1 bad line(s) (3); line 3: not valid JSON\n"),
    ([(n, f"bad {n}") for n in range(1, 13)],
     "Warning: f.jsonl: skipped 12 bad line(s) (1, 2, 3, 4, 5, 6, 7, 8, 9, 10 …); line 1: bad 1\n"),
])
def test_skipped_lines_are_one_warning_per_file(capsys, skipped, line):
    render.warn_skipped_lines("f.jsonl", skipped)
    assert capsys.readouterr().err == line


def test_a_report_warns_of_its_skipped_lines_and_files_it_could_not_read(capsys):
    render.warn_skipped({"files": [{"path": "a.jsonl", "skipped_lines": [{"line": 2, "reason": "cut off"}]},
                                   {"path": "b.jsonl", "skipped_lines": []}],
                         "errors": [{"path": "c.jsonl", "error": "c.jsonl:1: not valid JSON — fix it"}]})
    assert capsys.readouterr().err == ("Warning: a.jsonl: skipped 1 bad line(s) (2); line 2: cut off\n"
                                       "Error: c.jsonl:1: not valid JSON — fix it\n")


def test_write_stdout_writes_the_bytes_as_they_are(capsysbinary):
    render.write_stdout(b'{"a":1}\r\n\xef\xbb\xbf')
    assert capsysbinary.readouterr().out == b'{"a":1}\r\n\xef\xbb\xbf'


@pytest.mark.parametrize(("fn", "args", "text"), [
    (render.thousands, (None,), "—"), (render.thousands, (1234567,), "1,234,567"), (render.thousands, (0,), "0"),
    (render.plural, (1, "file"), "1 file"), (render.plural, (2500, "token"), "2,500 tokens"),
    (render.plural, (0, "call"), "0 calls"),
    (render.percent, (1, 3), "33.3%"), (render.percent, (0, 5), "0.0%"), (render.percent, (1, 0), "—"),
])
def test_figures(fn, args, text):
    assert fn(*args) == text


def test_no_progress_bar_off_a_terminal():
    with render.file_progress(enabled=True) as on_file:  # stderr is captured here: no terminal
        assert on_file is None
    with render.file_progress(enabled=False) as on_file:
        assert on_file is None


def test_the_views_are_found_by_name_and_nothing_else_is():
    from tcompact.render import compact_view, inspect_view, replay_view

    assert (render.inspect_report, render.compact_report, render.replay_table) == (
        inspect_view.inspect_report, compact_view.compact_report, replay_view.replay_table)
    with pytest.raises(AttributeError) as exc:
        render.sessions_table  # noqa: B018 (not one of the lazily imported views)
    assert str(exc.value) == "module 'tcompact.render' has no attribute 'sessions_table'"
