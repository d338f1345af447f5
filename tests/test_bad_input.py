"""Bad input: one error line naming file:line and what to do, exit code 2, never a traceback."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.errors import InputError
from tcompact.formats import ReadOptions, read_file

SKIP_HINT = "fix or remove that line, or pass --skip-bad-lines to read on without it"
GOOD = b'{"role":"user","content":"hi"}\n'

CASES = {
    "malformed.jsonl": (GOOD + b'{"role":"assistant","content": oops}\n' + GOOD,
                        f"malformed.jsonl:2: not valid JSON (unexpected character, expected a JSON value at column 32) — {SKIP_HINT}"),
    "empty.jsonl": (b"", "empty.jsonl: the file is empty — pass a transcript with at least one record"),
    "blank.jsonl": (b"\n \r\n\t\n", "blank.jsonl: the file is empty — pass a transcript with at least one record"),
    "truncated.jsonl": (GOOD + b'{"role":"assistant","content":"cut',
                        "truncated.jsonl:2: the last line is cut off (truncated JSON) — the file may still be being "
                        "written; pass --skip-bad-lines to read the complete lines"),
    "latin1.jsonl": (b'{"role":"user","content":"caf\xe9"}\n',
                     "latin1.jsonl:1: bytes that are not UTF-8 (0xe9 at byte 30) — re-encode the file as UTF-8 "
                     "(e.g. iconv -f LATIN1 -t UTF-8)"),
    "garbage.bin": (b"\x7fELF\x02\x01\x01\x00\x00\x00\xff\xfe\x03\x00" * 20,
                    "garbage.bin:1: binary data, not JSON text — this does not look like a transcript; pass a JSONL "
                    "or JSON file"),
    "utf16.jsonl": ('{"role":"user","content":"hi"}\n'.encode("utf-16"),
                    "utf16.jsonl: the file is UTF-16 text, tcompact reads UTF-8 — convert it first: iconv -f UTF-16 "
                    "-t UTF-8 FILE > FILE.utf8.jsonl"),
    "array_line.jsonl": (GOOD + b"[1, 2]\n", f"array_line.jsonl:2: expected a JSON object, got an array — {SKIP_HINT}"),
    "string_line.jsonl": (GOOD + b'"hello"\n', f"string_line.jsonl:2: expected a JSON object, got a string — {SKIP_HINT}"),
    "number.jsonl": (b"42\n", f"number.jsonl:1: expected a JSON object, got a number — {SKIP_HINT}"),
    "nan.jsonl": (b'{"role":"user","content":NaN}\n',
                  f"nan.jsonl:1: not valid JSON (unexpected character, expected a JSON value at column 26) — {SKIP_HINT}"),
    "shape.jsonl": (b'{"role":"user","content":5}\n',
                    f'shape.jsonl:1: chat message: "content" must be a string, a list of parts or null, not int — {SKIP_HINT}'),
    "tool_calls.jsonl": (b'{"role":"assistant","content":"","tool_calls":{"id":"x"}}\n',
                         f'tool_calls.jsonl:1: chat message: "tool_calls" must be a list — {SKIP_HINT}'),
    "unknown.jsonl": (b'{"a": 1}\n{"b": 2}\n',
                      "unknown.jsonl:1: cannot tell the format (first record has keys: a) — pass --format chat, "
                      "claude-code or codex"),
    "doc.json": (b'{\n  "history": [\n    {"role": "user", "content": "hi"},\n',
                 "doc.json:3: the last line is cut off (truncated JSON) — the file may still be being written; "
                 "read it again once it is complete"),
    "foreign.json": (b'[\n {"x": 1}\n]\n',
                     'foreign.json: a JSON array that is no transcript tcompact knows — expected a chat message array, '
                     '{"messages": [...]}, a SWE-agent .traj or tau-bench results'),
}


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return CliRunner()


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_file_gives_one_error_line_and_exit_2(runner, tmp_path, name):
    data, expected = CASES[name]
    (tmp_path / name).write_bytes(data)
    result = runner.invoke(app, ["inspect", name])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"Error: {expected}\n"


def test_missing_path_and_empty_folder(runner, tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not a transcript")
    result = runner.invoke(app, ["inspect", "nothere.jsonl"])
    assert (result.exit_code, result.stderr) == (2, "Error: nothere.jsonl: no such file or folder — check the path\n")
    result = runner.invoke(app, ["inspect", "empty"])
    assert (result.exit_code, result.stderr) == (
        2, "Error: empty: no transcript files in this folder — tcompact looks for *.jsonl, *.json, *.traj, *.ndjson\n")


def test_skip_bad_lines_reads_on_and_says_so(runner, tmp_path):
    (tmp_path / "m.jsonl").write_bytes(CASES["malformed.jsonl"][0] + b"\xff\xfe\n" + GOOD)
    result = runner.invoke(app, ["inspect", "m.jsonl", "--skip-bad-lines", "--json"])
    assert result.exit_code == 0
    assert result.stderr == (
        "Warning: m.jsonl: skipped 2 bad line(s) (2, 4); line 2: not valid JSON (unexpected character, expected a "
        "JSON value at column 32)\n")
    import orjson

    report = orjson.loads(result.stdout)
    assert report["files"][0]["skipped_lines"] == [
        {"line": 2, "reason": "not valid JSON (unexpected character, expected a JSON value at column 32)"},
        {"line": 4, "reason": "bytes that are not UTF-8 (0xff at byte 1)"},
    ]
    assert report["files"][0]["transcripts"][0]["messages"] == 3
    assert report["totals"]["skipped_lines"] == 2


def test_skipped_lines_are_kept_when_writing_back(tmp_path):
    from tcompact.formats import serialize

    path = tmp_path / "m.jsonl"
    path.write_bytes(CASES["malformed.jsonl"][0])
    sf = read_file(path, ReadOptions(skip_bad_lines=True))
    assert serialize(sf.transcripts[0], "chat", source=sf).data == path.read_bytes()


def test_one_bad_file_among_many_is_reported_and_the_rest_inspected(runner, tmp_path):
    (tmp_path / "good.jsonl").write_bytes(GOOD)
    (tmp_path / "bad.jsonl").write_bytes(b"{oops\n")
    result = runner.invoke(app, ["inspect", "good.jsonl", "bad.jsonl", "--json"])
    assert result.exit_code == 2
    assert result.stderr == ("Error: bad.jsonl:1: not valid JSON (unexpected character, expected a string key at "
                             f"column 2) — {SKIP_HINT}\n")
    import orjson

    report = orjson.loads(result.stdout)
    assert [f["path"] for f in report["files"]] == ["good.jsonl"]
    assert report["errors"] == [{"path": "bad.jsonl", "error": result.stderr[len("Error: "):-1]}]


def test_orphan_results_and_unknown_records_are_kept_and_reported(runner, tmp_path):
    (tmp_path / "o.jsonl").write_bytes(b'{"role":"tool","content":"x","tool_call_id":"nope"}\n{"type":"note"}\n' + GOOD)
    result = runner.invoke(app, ["inspect", "o.jsonl", "--json"])
    assert result.exit_code == 0
    import orjson

    f = orjson.loads(result.stdout)["files"][0]
    assert f["unknown_records"] == {"note": 1}
    assert f["transcripts"][0]["orphans"] == {"tool_results": 1, "unanswered_calls": 0}
    assert f["transcripts"][0]["messages"] == 2


def test_over_long_line(tmp_path):
    path = tmp_path / "long.jsonl"
    path.write_bytes(GOOD + b'{"role":"user","content":"' + b"x" * 5000 + b'"}\n' + GOOD)
    with pytest.raises(InputError) as err:
        read_file(path, ReadOptions(max_line_bytes=1000))
    assert str(err.value) == f"{path}:2: line is longer than 1000 bytes — {SKIP_HINT}"
    sf = read_file(path, ReadOptions(max_line_bytes=1000, skip_bad_lines=True))
    assert sf.skipped == ((2, "line is longer than 1000 bytes"),)
    assert len(sf.transcripts[0].messages) == 2
    assert sf.records[1].raw == path.read_bytes().splitlines(keepends=True)[1]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["inspect", "x.jsonl", "--bogus"], "Error: No such option: --bogus (see 'tcompact inspect --help')\n"),
        (["inspect", "x.jsonl", "--spans", "everything"],
         "Error: unknown span layout 'everything' — use one of: current-round, dialogue, round-level, full, working-set\n"),
        (["inspect", "x.jsonl", "--encoding", "p50k"],
         "Error: unknown encoding 'p50k' — use one of: o200k_base, cl100k_base\n"),
        (["inspect", "x.jsonl", "--keep-recent", "-1"], "Error: --keep-recent must be 0 or more\n"),
        (["inspect", "x.jsonl", "--context-window", "0"],
         "Error: --context-window must be a positive number of tokens\n"),
        (["inspect", "x.jsonl", "--format", "yaml"],
         "Error: unknown format 'yaml' — use one of: chat, claude-code, codex, swe-agent, tau-bench\n"),
        (["convert", "x.jsonl", "--to", "html"], "Error: cannot convert to 'html' — use --to chat, claude-code, codex\n"),
        (["convert", "x.jsonl"], "Error: Missing option '--to'. (see 'tcompact convert --help')\n"),
        (["frobnicate"], "Error: No such command 'frobnicate'. (see 'tcompact --help')\n"),
        (["--bogus"], "Error: No such option: --bogus (see 'tcompact --help')\n"),
    ],
)
def test_bad_options_give_one_error_line(runner, tmp_path, args, expected):
    (tmp_path / "x.jsonl").write_bytes(GOOD)
    result = runner.invoke(app, args)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", expected)


def test_parser_errors_keep_our_one_line_shape(runner, tmp_path):
    # the middle of the message is the parser's own wording, which varies between typer releases
    (tmp_path / "x.jsonl").write_bytes(GOOD)
    result = runner.invoke(app, ["inspect", "x.jsonl", "--top", "many"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith("Error: Invalid value for '--top': ")
    assert result.stderr.endswith(" (see 'tcompact inspect --help')\n")
    assert result.stderr.count("\n") == 1
