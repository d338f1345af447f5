"""compact --session ID --fork / --in-place and restore --session: where the agent finds the result, read back."""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime, timezone
from pathlib import Path

import orjson
import pytest
from session_stores import A, D, env_for, project_folder, small_home
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.errors import InputError, OutputError, UsageError
from tcompact.formats import read_file
from tcompact.sessions.fork import (
    ForkPlan,
    check_options,
    new_codex_id,
    output_paths,
    plan,
    replace_in_place,
    restore_backup,
    resume_command,
    rewrite_ids,
)
from tcompact.sessions.stores import Session


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


@pytest.mark.parametrize("json_out", [False, True])
def test_an_in_place_run_refused_because_the_session_changed_says_it_failed_everywhere(home, monkeypatch, json_out):
    """Issue 23 item 8: the error came alone (no --json document) and the report said "compacted"."""
    import tcompact.compaction.job as job

    main = home / ".claude" / "projects" / project_folder("/home/dev/app") / f"{A}.jsonl"
    real = job.compact_file

    def compact_file(*args, **kwargs):  # the agent writes a line while tcompact compacts
        run = real(*args, **kwargs)
        with main.open("ab") as fh:
            fh.write(b'{"type":"summary","summary":"the agent went on","leafUuid":"x"}\n')
        return run

    monkeypatch.setattr(job, "compact_file", compact_file)
    result = run(home, "compact", "-c", "truncate", "--session", A, "--in-place", *(["--json"] if json_out else []))
    why = "the session file changed while it was being compacted (is the agent running?)"
    assert (result.exit_code, result.stderr.splitlines()[-1]) == (
        2, f"Error: {main}: {why} — nothing was replaced; run the command again")
    (report_path,) = (home / ".local" / "state" / "tcompact" / "sessions").rglob("report.json")
    report = orjson.loads(report_path.read_bytes())
    assert (report["status"], report["reason"]) == ("failed", why)
    if json_out:
        printed = orjson.loads(result.stdout)
        assert (printed["status"], printed["reason"], printed["session"]) == ("failed", why, None)
    else:
        assert "Compaction failed; the input is untouched" in result.stdout and "resume" not in result.stdout
    assert list(main.parent.glob("*tcompact-backup*")) == []


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


# ---- the library side: sessions/fork.py -----------------------------------------------------------


def claude_session(tmp_path, sid="s-old", project="/home/dev/my app"):
    main = tmp_path / "projects" / "p" / f"{sid}.jsonl"
    main.parent.mkdir(parents=True, exist_ok=True)
    main.write_bytes(b'{"type":"user","sessionId":"s-old","x":"sessionId s-old"}\n')
    return Session(agent="claude", id=sid, main=main, project=project, store=tmp_path / "projects")


def test_a_fork_plan_says_where_each_agent_keeps_the_new_session(tmp_path):
    now = datetime(2026, 1, 9, 8, 0, 0, tzinfo=timezone.utc)
    env = {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    claude = plan(claude_session(tmp_path), "fork", env=env, now=now)
    assert uuid.UUID(claude.new_id).version == 4
    assert (claude.mode, claude.agent, claude.old_id, claude.target, claude.state, claude.project) == (
        "fork", "claude", "s-old", tmp_path / "projects" / "p" / f"{claude.new_id}.jsonl",
        tmp_path / "state" / "tcompact" / "sessions" / f"claude-{claude.new_id}-20260109T080000Z", "/home/dev/my app")
    rollout = tmp_path / "sessions" / "2026" / "01" / "01" / "rollout-x.jsonl"
    codex = plan(Session(agent="codex", id="019b", main=rollout, store=tmp_path / "sessions"), "fork",
                 env={"HOME": str(tmp_path)}, now=now)
    local = now.astimezone()
    assert codex.target == (tmp_path / "sessions" / local.strftime("%Y/%m/%d") /
                            f"rollout-{local.strftime('%Y-%m-%dT%H-%M-%S')}-{codex.new_id}.jsonl")
    assert codex.state == (tmp_path / ".local" / "state" / "tcompact" / "sessions" /
                           f"codex-{codex.new_id}-20260109T080000Z")
    in_place = plan(claude_session(tmp_path), "in-place", env=env, now=now)
    assert (in_place.new_id, in_place.target) == ("s-old", tmp_path / "projects" / "p" / "s-old.jsonl")


def test_a_session_of_sub_agent_files_only_cannot_be_forked(tmp_path):
    s = Session(agent="claude", id="s9", main=None, subagents=(tmp_path / "agent-a.jsonl",))
    with pytest.raises(InputError) as exc:
        plan(s, "fork", env={"HOME": str(tmp_path)})
    assert str(exc.value) == (f"{tmp_path / 'agent-a.jsonl'}: session s9 has sub-agent files only, no main transcript "
                              "— choose another session")


def test_a_codex_id_is_a_uuid7_of_its_time():
    now = datetime(2026, 1, 9, 8, 0, 0, 123000, tzinfo=timezone.utc)
    ids = {new_codex_id(now) for _ in range(20)}
    assert len(ids) == 20
    for value in map(uuid.UUID, ids):
        assert (value.version, value.variant) == (7, uuid.RFC_4122)
        assert value.int >> 80 == int(now.timestamp() * 1000)


def test_rewrite_ids_puts_the_new_id_where_the_agent_keeps_it(tmp_path):
    def p(agent, mode="fork"):
        return ForkPlan(mode=mode, agent=agent, source=tmp_path, old_id="old-1", new_id="new-2", target=tmp_path,
                        state=tmp_path, project=None)

    claude = b'{"sessionId":"old-1","text":"sessionId old-1 \\"sessionId\\":\\"old-1\\""}\n{"sessionId":"old-10"}\n'
    assert rewrite_ids(claude, p("claude")) == (b'{"sessionId":"new-2","text":"sessionId old-1 \\"sessionId\\":'
                                                b'\\"old-1\\""}\n{"sessionId":"old-10"}\n')
    codex = (b'{"type":"session_meta","payload":{"id":"old-1","cwd":"/r"}}\n'
             b'{"type":"session_meta","payload":{"id":"other"}}\n{"type":"event_msg","payload":{"id":"old-1"}}\n')
    assert rewrite_ids(codex, p("codex")) == (
        b'{"type":"session_meta","payload":{"id":"new-2","cwd":"/r","forked_from_id":"old-1"}}\n'
        b'{"type":"session_meta","payload":{"id":"other"}}\n{"type":"event_msg","payload":{"id":"old-1"}}\n')
    assert rewrite_ids(codex, p("codex", "in-place")) == codex


def test_the_resume_command_quotes_the_project(tmp_path):
    def p(agent, project):
        return ForkPlan(mode="fork", agent=agent, source=tmp_path, old_id="o", new_id="n1", target=tmp_path,
                        state=tmp_path, project=project)

    assert resume_command(p("claude", "/home/dev/my app")) == "cd '/home/dev/my app' && claude --resume n1"
    assert resume_command(p("codex", "/srv/x")) == "cd /srv/x && codex resume n1"
    assert resume_command(p("codex", None)) == "codex resume n1"


def test_replace_in_place_keeps_a_backup_and_refuses_a_session_that_changed(tmp_path):
    s = claude_session(tmp_path)
    p = plan(s, "in-place", env={"HOME": str(tmp_path)})
    original = s.main.read_bytes()
    with pytest.raises(OutputError) as exc:
        replace_in_place(p, b"compacted\n", original=b"what was read before the agent wrote more\n")
    assert str(exc.value) == (f"{s.main}: the session file changed while it was being compacted (is the agent "
                              "running?) — nothing was replaced; run the command again")
    backup = replace_in_place(p, b"compacted\n", original=original)
    assert backup.name.startswith("s-old.jsonl.tcompact-backup-") and backup.name.endswith("Z")
    assert (s.main.read_bytes(), backup.read_bytes()) == (b"compacted\n", original)
    note = orjson.loads(backup.with_name(backup.name + ".json").read_bytes())
    assert note == {"tool": "tcompact", "session": "s-old", "agent": "claude", "session_file": str(s.main),
                    "original": {"sha256": hashlib.sha256(original).hexdigest(), "bytes": len(original)},
                    "compacted": {"sha256": hashlib.sha256(b"compacted\n").hexdigest(), "bytes": 10}}
    assert restore_backup(s, force=False) == (s.main, backup)
    assert s.main.read_bytes() == original and sorted(p.name for p in s.main.parent.iterdir()) == ["s-old.jsonl"]


def test_restore_without_a_backup_says_so(tmp_path):
    s = claude_session(tmp_path)
    with pytest.raises(InputError) as exc:
        restore_backup(s, force=False)
    assert str(exc.value) == (f"{s.main}: session s-old has no backup of an in-place compaction — only `tcompact "
                              "compact --in-place` keeps one")


@pytest.mark.parametrize(("mode", "agent", "output", "to", "error"), [
    ("fork", "claude", "x.jsonl", None, "--fork and -o/--output exclude each other — --fork writes into the agent's "
                                        "store"),
    ("in-place", "codex", "x.jsonl", None, "--in-place and -o/--output exclude each other — --in-place writes into "
                                           "the agent's store"),
    ("in-place", "codex", None, "chat", "--in-place writes a codex session; --to chat cannot be resumed by the agent — "
                                        "leave out --to, or write elsewhere with -o instead of --in-place"),
    ("fork", "claude", None, "claude-code", None),
    ("fork", "codex", None, "codex", None),
])
def test_fork_options_that_cannot_go_together(tmp_path, mode, agent, output, to, error):
    p = ForkPlan(mode=mode, agent=agent, source=tmp_path, old_id="o", new_id="n", target=tmp_path, state=tmp_path,
                 project=None)
    if error is None:
        check_options(p, output=None, to=to)
        return
    with pytest.raises(UsageError) as exc:
        check_options(p, output=Path(output) if output else None, to=to)
    assert str(exc.value) == error


def test_output_paths_of_a_fork_and_of_an_in_place_run(tmp_path):
    def p(mode):
        return ForkPlan(mode=mode, agent="codex", source=tmp_path / "s.jsonl", old_id="o", new_id="n",
                        target=tmp_path / "2026" / "01" / "09" / "rollout-n.jsonl", state=tmp_path / "state",
                        project=None)

    assert output_paths(p("fork"), dump_dir=None, report=None, offload_dir=None, dry_run=True) == (
        tmp_path / "2026" / "01" / "09" / "rollout-n.jsonl", tmp_path / "state" / "dumps",
        tmp_path / "state" / "report.json", tmp_path / "state" / "offload")
    assert not (tmp_path / "2026").exists()  # a dry run makes no folder
    assert output_paths(p("in-place"), dump_dir=tmp_path / "d", report=tmp_path / "r.json",
                        offload_dir=tmp_path / "o") == (tmp_path / "state" / "compacted.jsonl", tmp_path / "d",
                                                        tmp_path / "r.json", tmp_path / "o")
    assert (tmp_path / "state").is_dir()
