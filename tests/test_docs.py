"""The README documents every command, option, format and --json key, and CI runs its test command."""

from __future__ import annotations

import re

import orjson
import pytest
from conftest import REPO, SAMPLES
from typer.main import get_command
from typer.testing import CliRunner

from tcompact.app import app

README = (REPO / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    start = README.index(title)
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else None]


def test_ci_runs_exactly_the_readme_test_command():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    command = ci[-1]
    assert command == "pip install '.[dev]' && python -m pytest -q"
    assert f"```\n{command}\n```" in README


def test_readme_main_job_command_runs_on_the_samples(monkeypatch):
    assert "```\npip install . && tcompact inspect sample_transcripts/\n```" in README
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(app, ["inspect", "sample_transcripts/"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("Transcripts in sample_transcripts/")
    assert "codex_rollout.jsonl" in result.stdout and "3 files, 4 transcripts" in result.stdout


def _commands():
    return get_command(app).commands  # type: ignore[attr-defined]


def _title(name):
    return next(t for t in (f"### `tcompact {name} ", f"### `tcompact {name}`") if t in README)


def test_every_command_has_a_section():
    assert sorted(_commands()) == ["batch", "compact", "compressors", "convert", "eval", "hook", "hooks", "inspect",
                                   "replay", "restore", "statusline"]
    for name in _commands():
        assert _title(name), name


@pytest.mark.parametrize("name", ["inspect", "compact", "replay", "compressors", "restore", "convert", "eval",
                                  "hooks install", "hooks status", "hooks uninstall", "hook pre-compact",
                                  "hook session-start", "hook prompt-submit", "statusline"])
def test_every_option_is_documented(name):
    section = README[README.index(_title(name.split()[0])):]
    section = section[: section.find("\n### ", 1)]
    command = _commands()[name.split()[0]]
    for word in name.split()[1:]:
        command = command.commands[word]  # type: ignore[attr-defined]
    for param in command.params:
        for opt in getattr(param, "opts", []):
            if opt.startswith("-") and opt not in ("--help", "-h"):
                assert f"`{opt}" in section or f"{opt}`" in section or f", {opt}" in section, (name, opt)


def test_every_format_has_a_section():
    from tcompact.formats import FORMATS

    titles = {"chat": "### chat", "claude-code": "### Claude Code session", "codex": "### Codex rollout",
              "swe-agent": "### SWE-agent trajectory", "tau-bench": "### tau-bench results"}
    assert set(titles) == set(FORMATS)
    for title in titles.values():
        assert title in README


def _keys(value, out):
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(k)
            _keys(v, out)
    elif isinstance(value, list):
        for v in value:
            _keys(v, out)
    return out


def test_every_json_key_is_in_the_schema(monkeypatch):
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(app, ["inspect", str(SAMPLES), "--json", "--spans", "dialogue"])
    keys = _keys(orjson.loads(result.stdout), set())
    schema = _section("## `inspect --json` schema")
    dynamic = {"user", "assistant", "tool", "system", "developer"}  # by_role keys are role names
    missing = sorted(k for k in keys - dynamic if not re.search(rf'"{re.escape(k)}"|`{re.escape(k)}`', schema))
    assert missing == []


def test_library_example_names_exist():
    import tcompact

    example = _section("## Using it as a library")
    imported = re.search(r"from tcompact import (.+)", example).group(1).split(", ")
    for name in imported:
        assert name in tcompact.__all__
        assert getattr(tcompact, name) is not None


@pytest.mark.parametrize("kind", ["inspect", "compact", "eval"])
def test_every_batch_option_is_documented(kind):
    section = README[README.index(_title("batch")):]
    section = section[: section.find("\n### ", 1)]
    for param in _commands()["batch"].commands[kind].params:
        for opt in getattr(param, "opts", []):
            if opt.startswith("-") and opt not in ("--help", "-h"):
                assert f"`{opt}" in section or f"{opt}`" in section or f", {opt}" in section, (kind, opt)


def test_every_batch_json_key_is_documented(tmp_path, monkeypatch):
    """Every key of the summary and of the result lines is named in code in the batch section; the keys
    that are values (tool names, roles, category values such as formats and models) are left out."""
    monkeypatch.chdir(REPO)
    section = README[README.index(_title("batch")):]
    section = section[: section.find("\n### ", 1)]
    named = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", " ".join(re.findall(r"`[^`]*`", section))))
    from tcompact.evaluation import KINDS

    extra = {"inspect": ["--spans", "dialogue"], "compact": [], "eval": ["-c", "full"]}
    for kind in ("inspect", "compact", "eval"):
        result = CliRunner().invoke(app, ["batch", kind, str(SAMPLES), "--out", str(tmp_path / kind), "--json",
                                          "--workers", "1", *extra[kind]])
        assert result.exit_code == 0, result.stderr
        keys = _keys(orjson.loads(result.stdout), set())
        values = {"user", "assistant", "tool", "system", "developer", *KINDS}  # eval: canary kinds are keys
        for raw in (tmp_path / kind / "results.jsonl").read_bytes().splitlines():
            line = orjson.loads(raw)
            _keys(line, keys)
            f = line["figures"]
            values |= set(f.get("tools", {})) | {f["format"], f.get("status"), f.get("output_format")}
            values |= {f["main"]["model"], f["main"]["encoding"]} if "main" in f else set()
        by_kind = {"system", "user", "injected", "assistant", "reasoning", "tool_arguments", "tool_results", "images"}
        assert sorted(k for k in keys - values - by_kind if k not in named) == [], kind
