"""The one error root (errors.py): what, where and what to do in one line, the exit code of each kind, and the
command line printing each kind as ``Error: …`` with that code."""

from __future__ import annotations

import pytest
from conftest import SAMPLES
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.errors import InputError, NotATranscriptError, OutputError, TcompactError, UsageError, WorkFailed


@pytest.mark.parametrize(("kwargs", "where", "text"), [
    ({}, None, "the file is empty"),
    ({"path": "s.jsonl"}, "s.jsonl", "s.jsonl: the file is empty"),
    ({"path": "s.jsonl", "line": 12}, "s.jsonl:12", "s.jsonl:12: the file is empty"),
    ({"path": "s.jsonl", "line": 0}, "s.jsonl:0", "s.jsonl:0: the file is empty"),
    ({"line": 12}, None, "the file is empty"),  # a line without a file says nothing
    ({"hint": "pass a transcript"}, None, "the file is empty — pass a transcript"),
    ({"path": "s.jsonl", "line": 3, "hint": "pass a transcript"}, "s.jsonl:3",
     "s.jsonl:3: the file is empty — pass a transcript"),
    ({"path": "", "hint": ""}, "", "the file is empty"),  # empty parts are left out
])
def test_an_error_reads_as_one_line_of_where_what_and_what_to_do(kwargs, where, text):
    err = TcompactError("the file is empty", **kwargs)
    assert (err.what, err.where, str(err)) == ("the file is empty", where, text)
    assert err.args == ("the file is empty",)


def test_line_breaks_in_any_part_become_spaces():
    err = InputError("bad record:\n  the content", path="a\nb.jsonl", hint="fix it\nor skip it")
    assert str(err) == "a b.jsonl: bad record:   the content — fix it or skip it"
    assert "\n" not in str(err)


def test_the_location_and_hint_are_keyword_only():
    with pytest.raises(TypeError):
        TcompactError("what", "s.jsonl")  # type: ignore[misc]


@pytest.mark.parametrize(("cls", "code", "parents"), [
    (TcompactError, 1, (Exception,)),
    (InputError, 2, (TcompactError,)),
    (NotATranscriptError, 2, (InputError, TcompactError)),  # a folder scan passes over these, as input errors
    (UsageError, 2, (TcompactError,)),
    (OutputError, 2, (TcompactError,)),
    (WorkFailed, 1, (TcompactError,)),
])
def test_each_kind_has_its_exit_code(cls, code, parents):
    err = cls("x")
    assert err.exit_code == code and all(isinstance(err, p) for p in parents)


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.jsonl").write_bytes((SAMPLES / "chat_tool_session.jsonl").read_bytes())
    (tmp_path / "bad.jsonl").write_bytes(b'{"role":"user","content":"hi"}\nnot json\n')
    (tmp_path / "exists.jsonl").write_bytes(b"")
    return CliRunner()


@pytest.mark.parametrize(("args", "code", "line"), [
    (["inspect", "bad.jsonl"], 2, "Error: bad.jsonl:2: not valid JSON (invalid literal, expected 'null' at column 1) "
                                  "— fix or remove that line, or pass --skip-bad-lines to read on without it"),
    (["inspect", "s.jsonl", "--encoding", "p50k"], 2,
     "Error: unknown encoding 'p50k' — use one of: o200k_base, cl100k_base"),
    (["convert", "s.jsonl", "--to", "chat", "-o", "exists.jsonl"], 2,
     "Error: exists.jsonl: the output file exists already — pass --force to overwrite it, or choose another path"),
    (["inspect", "s.jsonl", "--transcript", "nope"], 2,
     "Error: s.jsonl: no transcript 'nope' in this file — choose one of: main"),
])
def test_the_command_line_prints_one_error_line_with_the_kinds_code(runner, args, code, line):
    result = runner.invoke(app, args)
    assert (result.exit_code, result.stdout, result.stderr) == (code, "", line + "\n")


def test_work_that_failed_exits_1_and_says_the_input_is_untouched(runner, tmp_path):
    # a summariser endpoint nothing listens on (port 9, discard): the call fails at once
    before = (tmp_path / "s.jsonl").read_bytes()
    result = runner.invoke(app, ["compact", "s.jsonl", "-c", "dialogue", "--now", "--summarizer", "openai",
                                 "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0",
                                 "-o", "out.jsonl"])
    assert (result.exit_code, result.stderr) == (1, (
        "Error: dialogue: summariser failed: 127.0.0.1:9: connection failed (ConnectionRefusedError: [Errno 111] "
        "Connection refused) — is the server running and is the base URL right? retrying may help — the input is "
        "untouched; the failed call(s) are dumped in out.dumps\n"))
    assert (tmp_path / "s.jsonl").read_bytes() == before and not (tmp_path / "out.jsonl").exists()


def test_a_bad_value_is_told_in_the_words_of_the_tool_not_of_pydantic():
    # issue 23 item 21: option errors read "Input should be 'claude' or 'codex'", pydantic's phrasing
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

    from tcompact.errors import bad_value

    class Values(BaseModel):
        model_config = ConfigDict(extra="forbid")
        agent: Literal["claude", "codex"] | None = None
        last: int = Field(1, ge=1)
        ratio: float = Field(0.5, gt=0, lt=1)
        per_kind: int = Field(2, le=20)
        name: str = Field("x", min_length=1)
        tools: list[str] = []
        strict: bool = False

        @field_validator("tools")
        @classmethod
        def _known(cls, value):
            if "robot" in value:
                raise ValueError("unknown tool 'robot'")
            return value

    def told(**values):
        with pytest.raises(ValidationError) as info:
            Values(**values)
        return bad_value("--x", info.value.errors()[0])

    assert [told(agent="gemini"), told(last=0), told(last="x"), told(last=1.5), told(ratio=0), told(ratio=1),
            told(per_kind=21), told(name=""), told(tools="grep"), told(tools=["robot"]), told(strict="maybe"),
            told(colour="red"), told(name="y" * 3, last="n" * 60)] == [
        "--x must be claude or codex, not 'gemini'", "--x must be 1 or more, not 0", "--x must be a whole number, not 'x'",
        "--x must be a whole number, not 1.5", "--x must be more than 0, not 0", "--x must be less than 1, not 1",
        "--x must be 20 or less, not 21", "--x must not be empty", "--x must be a list, not 'grep'",
        "--x: unknown tool 'robot'", "--x must be true or false, not 'maybe'", "--x is not known",
        "--x must be a whole number, not 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn…"]
