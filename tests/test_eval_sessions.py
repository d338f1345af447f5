"""``tcompact eval`` without a PATH: the sessions of this machine, chosen with the selectors inspect and
compact take (test homes of tests/session_stores.py, never the machine's own stores), and ``--no-cache``."""

from __future__ import annotations

import orjson
import pytest
from conftest import SAMPLES, real_file
from session_stores import A, B, C, D, env_for, shared_home, small_home
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.sessions import make_selector, session_files


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return small_home(tmp_path_factory.mktemp("home"))


def evaluated(home, *args):
    """The session ids (from the file names) ``tcompact eval`` evaluated, in its order."""
    result = CliRunner().invoke(app, ["eval", "-c", "micro", "--per-kind", "1", "--json", *args], env=env_for(home))
    assert result.exit_code == 0, result.stderr
    return [f["path"].rsplit("/", 1)[-1].removesuffix(".jsonl")[-36:] for f in orjson.loads(result.stdout)["files"]]


def test_no_path_evaluates_every_session_of_this_machine_newest_first(home):
    assert evaluated(home) == [D, C, B, A]
    expected = [str(p) for p in session_files(make_selector(), env=env_for(home))]
    result = CliRunner().invoke(app, ["eval", "-c", "micro", "--json"], env=env_for(home))
    assert [f["path"] for f in orjson.loads(result.stdout)["files"]] == expected


@pytest.mark.parametrize(("args", "ids"), [
    (["--agent", "codex"], [D]),
    (["--agent", "claude", "--last", "2"], [C, B]),
    (["--session", "last"], [D]),
    (["--session", "a1b"], [B]),
    (["--project", "/home/dev/lib"], [C]),
    (["--since", "20260107", "--timezone", "UTC"], [D, C, B]),
    (["--until", "2026-01-06", "--timezone", "UTC"], [B, A]),
])
def test_the_selectors_choose_the_sessions(home, args, ids):
    assert evaluated(home, *args) == ids


def test_selector_errors_are_one_line(home, tmp_path):
    run = CliRunner().invoke
    result = run(app, ["eval", str(SAMPLES / "codex_rollout.jsonl"), "--last", "1"], env=env_for(home))
    assert (result.exit_code, result.stderr) == (2, "Error: PATH and the session selectors (--session, --last, "
                                                    "--project, --agent, --since, --until, --timezone) exclude each "
                                                    "other — leave out the PATH to select among the sessions on this "
                                                    "machine (CLAUDE_CONFIG_DIR and CODEX_HOME point at other "
                                                    "stores)\n")
    result = run(app, ["eval", "--session", "zzz"], env=env_for(home))
    assert (result.exit_code, result.stderr) == (2, "Error: no session id starts with 'zzz' (4 session(s) searched) "
                                                    "— run `tcompact inspect` to list the sessions and their ids\n")
    empty = env_for(tmp_path)
    result = run(app, ["eval"], env=empty)
    assert result.exit_code == 2 and result.stderr.startswith("Error: no Claude Code or Codex sessions found (looked in ")
    result = run(app, ["eval", "--per-kind", "0"], env=empty)  # a bad option is the error, before any search
    assert (result.exit_code, result.stderr) == (
        2, "Error: --per-kind must be 1 or more, not 0 — see tcompact eval --help\n")


def test_a_stored_copy_of_a_real_session_is_evaluated_as_the_file_itself(tmp_path):
    home = shared_home(tmp_path / "home")
    result = CliRunner().invoke(app, ["eval", "--session", "5c03", "-c", "full", "--json"], env=env_for(home))
    assert result.exit_code == 0, result.stderr
    (stored,) = orjson.loads(result.stdout)["files"]
    direct = orjson.loads(CliRunner().invoke(app, ["eval", str(real_file("ccviewer")), "-c", "full", "--json"]).stdout)
    assert stored["path"].endswith("/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
    assert {**stored, "path": None} == {**direct["files"][0], "path": None}


def _cache_files(folder):
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_no_cache_neither_reads_nor_writes_the_token_cache(tmp_path, monkeypatch):
    for n, extra in enumerate((["--no-cache"], [])):
        monkeypatch.setenv("TCOMPACT_CACHE_DIR", str(tmp_path / f"cache{n}"))
        result = CliRunner().invoke(app, ["eval", str(SAMPLES / "chat_tool_session.jsonl"), "-c", "micro", *extra])
        assert result.exit_code == 0, result.stderr
        monkeypatch.setenv("TCOMPACT_NO_CACHE", "")
    assert _cache_files(tmp_path / "cache0") == []
    assert "tokens-v1.bin" in _cache_files(tmp_path / "cache1")
