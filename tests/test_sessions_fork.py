"""compact --session ID --fork / --in-place and restore --session: where the agent finds the result, read back."""

from __future__ import annotations

import uuid
from datetime import datetime

import orjson
import pytest
from session_stores import A, D, env_for, project_folder, small_home
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.formats import read_file


@pytest.fixture
def home(tmp_path):
    return small_home(tmp_path / "home")


def run(home, *args):
    return CliRunner().invoke(app, list(args), env=env_for(home))


def compact(home, *args):
    result = run(home, "compact", "-c", "truncate", "--json", *args)
    assert result.exit_code == 0, result.stderr
    return orjson.loads(result.stdout)


def snapshot(home):
    return {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}


def test_a_claude_fork_is_a_new_session_in_the_project_folder(home):
    before = snapshot(home)
    d = compact(home, "--session", A, "--fork")
    fork = d["session"]
    new = fork["id"]
    folder = home / ".claude" / "projects" / project_folder("/home/dev/app")
    assert uuid.UUID(new).version == 4 and new != A
    assert fork == {"mode": "fork", "agent": "claude", "id": new, "forked_from": A, "path": str(folder / f"{new}.jsonl"),
                    "backup": None, "resume": f"cd /home/dev/app && claude --resume {new}"}
    after = snapshot(home)
    assert {p: b for p, b in after.items() if p in before} == before  # nothing of the store changed
    assert [p for p in after if p not in before and ".claude" in str(p)] == [folder / f"{new}.jsonl"]
    lines = [orjson.loads(x) for x in (folder / f"{new}.jsonl").read_bytes().splitlines()]
    assert {x["sessionId"] for x in lines if "sessionId" in x} == {new}
    back = read_file(folder / f"{new}.jsonl").transcript()
    assert len(back.messages) == d["after"]["messages"] and back.messages[-1].text == "Done: the login page is added."
    assert "src/module_0000.py" in back.messages[2].text and "src/module_0600.py" not in back.messages[2].text
    state = home / ".local" / "state" / "tcompact" / "sessions"
    assert sorted(d["written"]) == sorted([str(folder / f"{new}.jsonl"), *(str(p) for p in state.rglob("*.json"))])
    listed = orjson.loads(run(home, "inspect", "--json", "--session", new[:8]).stdout)
    assert listed["session"]["id"] == new and listed["session"]["project"] == "/home/dev/app"


def test_a_codex_fork_is_a_new_rollout_in_the_dated_folder(home):
    before = snapshot(home)
    fork = compact(home, "--session", "019b", "--fork")["session"]
    new = fork["id"]
    assert uuid.UUID(new).version == 7 and fork["forked_from"] == D
    path = home / ".codex" / "sessions" / datetime.now().strftime("%Y/%m/%d")
    (written,) = path.glob(f"rollout-*-{new}.jsonl")
    assert fork["path"] == str(written) and fork["resume"] == f"cd /home/dev/app && codex resume {new}"
    assert len(written.name) == len("rollout-2026-01-09T08-00-00-") + 36 + len(".jsonl")
    first = orjson.loads(written.read_bytes().splitlines()[0])
    assert first["type"] == "session_meta" and first["payload"]["id"] == new
    assert first["payload"]["forked_from_id"] == D and first["payload"]["cwd"] == "/home/dev/app"
    assert {p: b for p, b in snapshot(home).items() if p in before} == before
    assert read_file(written).transcript().messages[-1].text == "Two files: a.py, b.py."
    rows = orjson.loads(run(home, "inspect", "--json", "--agent", "codex").stdout)["sessions"]
    assert [r["id"] for r in rows] == [new, D]
    assert rows[0]["usage"]["copied_requests"] == 2  # the fork holds its parent's history: not charged twice


def test_in_place_keeps_a_backup_that_restore_brings_back(home):
    (main,) = (home / ".codex" / "sessions").rglob(f"rollout-*-{D}.jsonl")
    original = main.read_bytes()
    fork = compact(home, "--session", D, "--in-place")["session"]
    (backup,) = main.parent.glob(f"{main.name}.tcompact-backup-*Z")
    assert fork["mode"] == "in-place" and fork["id"] == D and fork["backup"] == str(backup)
    assert fork["resume"] == f"cd /home/dev/app && codex resume {D}"
    assert backup.read_bytes() == original and main.read_bytes() != original
    assert read_file(main).transcript().messages[-1].text == "Two files: a.py, b.py."
    assert [r["id"] for r in orjson.loads(run(home, "inspect", "--json", "--agent", "codex").stdout)["sessions"]] \
        == [D]  # the backup is no session
    result = run(home, "restore", "--session", "019b")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"Restored {main} from {backup.name}\n"
    assert main.read_bytes() == original and list(main.parent.glob("*tcompact-backup*")) == []
    again = run(home, "restore", "--session", "019b")
    assert again.exit_code == 2 and "has no backup of an in-place compaction" in again.stderr


def test_restore_refuses_to_drop_turns_the_agent_added_since(home):
    main = home / ".claude" / "projects" / project_folder("/home/dev/app") / f"{A}.jsonl"
    original = main.read_bytes()
    compact(home, "--session", A, "--in-place")
    with main.open("ab") as fh:
        fh.write(b'{"type":"summary","summary":"the agent went on","leafUuid":"x"}\n')
    current = main.read_bytes()
    refused = run(home, "restore", "--session", A)
    assert refused.exit_code == 2 and "the session changed since tcompact compacted it in place" in refused.stderr
    assert main.read_bytes() == current
    assert run(home, "restore", "--session", A, "--force").exit_code == 0
    assert main.read_bytes() == original
    (kept,) = main.parent.glob(f"{A}.jsonl.tcompact-backup-*-current")
    assert kept.read_bytes() == current


def test_a_dry_run_fork_writes_nothing(home):
    before = snapshot(home)
    result = run(home, "compact", "--session", A, "--fork", "-c", "truncate", "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert snapshot(home) == before


def test_without_fork_a_session_is_compacted_into_the_current_folder(home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = snapshot(home)
    d = compact(home, "--session", A)
    assert d["written"] == [f"{A}.compacted.jsonl", f"{A}.compacted.report.json"]
    assert (tmp_path / f"{A}.compacted.jsonl").exists()
    assert snapshot(home) == before


@pytest.mark.parametrize(("args", "error"), [
    (("--session", A, "--fork", "--in-place"), "Error: --fork and --in-place exclude each other"),
    (("--session", A, "--fork", "-o", "x.jsonl"), "Error: --fork and -o/--output exclude each other"),
    (("--session", A, "--fork", "--to", "chat"), "Error: --fork writes a claude-code session; --to chat cannot"),
    ((), "Error: name the session: a PATH, or --session ID (or --session last)"),
    (("--agent", "claude"), "Error: 3 sessions match (c3c3c3c3, a1b2b2b2, a1a1a1a1); this command works on one"),
    (("x.jsonl", "--session", A), "Error: a PATH and --session (or the other selectors) exclude each other"),
])
def test_bad_combinations_are_one_error_line(home, args, error):
    before = snapshot(home)
    result = run(home, "compact", *args)
    assert result.exit_code == 2 and result.stderr.startswith(error) and result.stderr.count("\n") == 1
    assert snapshot(home) == before


def test_a_file_outside_the_stores_cannot_be_forked(home, tmp_path):
    loose = tmp_path / "loose.jsonl"
    loose.write_bytes((home / ".claude" / "projects" / project_folder("/home/dev/app") / f"{A}.jsonl").read_bytes())
    result = run(home, "compact", str(loose), "--fork")
    assert result.exit_code == 2
    assert "this file is not a session of the Claude Code or Codex stores on this machine" in result.stderr
