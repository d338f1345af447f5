"""compact --session ID --fork / --in-place and restore --session: where the agent finds the result, read back."""

from __future__ import annotations

import hashlib
import os
import uuid
from datetime import datetime, timezone
from pathlib import Path

import orjson
import pytest
from session_stores import A, B, D, E, env_for, project_folder, small_home
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.artifacts import write_bytes
from tcompact.errors import InputError, OutputError, UsageError
from tcompact.formats import read_file
from tcompact.sessions.fork import (
    ForkPlan,
    Placement,
    check_options,
    new_codex_id,
    output_paths,
    plan,
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


def test_an_in_place_placement_keeps_a_backup_and_refuses_a_session_that_changed(tmp_path):
    s = claude_session(tmp_path)
    p = plan(s, "in-place", env={"HOME": str(tmp_path)})
    original = s.main.read_bytes()
    with pytest.raises(OutputError) as exc:
        write_bytes(p.target, b"compacted\n", force=True,
                    check=Placement(p, b"what was read before the agent wrote more\n").settle())
    assert str(exc.value) == (f"{s.main}: the session file changed while it was being compacted (is the agent "
                              "running?) — nothing was replaced; run the command again")
    assert s.main.read_bytes() == original
    write_bytes(p.target, b"compacted\n", force=True, check=Placement(p, original).settle())
    backup = p.backup
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
    # in place: the session file itself (issue 23 item 18: no copy of it in the state folder)
    assert output_paths(p("in-place"), dump_dir=tmp_path / "d", report=tmp_path / "r.json",
                        offload_dir=tmp_path / "o") == (tmp_path / "2026" / "01" / "09" / "rollout-n.jsonl",
                                                        tmp_path / "d", tmp_path / "r.json", tmp_path / "o")
    assert not (tmp_path / "state").exists() and not (tmp_path / "2026").exists()
    assert output_paths(p("fork"), dump_dir=None, report=None, offload_dir=None)[0].parent.is_dir()


def test_the_everyday_fork_compacts_a_session_below_the_trigger(home):
    # issue 23 item 16: README's `tcompact compact --session last --fork` did nothing on every real session (all
    # under the 0.8 trigger): a fork or an in-place run the user asks for compacts whatever the trigger says
    result = run(home, "compact", "--session", "last", "--fork")
    assert (result.exit_code, result.stderr) == (0, "")
    (fork,) = [p for p in (home / ".codex" / "sessions").rglob("rollout-*.jsonl") if D not in p.name and E not in p.name]
    lines = result.stdout.splitlines()
    new = fork.stem[-36:]
    (state,) = (home / ".local" / "state" / "tcompact" / "sessions").iterdir()
    (dump,) = (state / "dumps").iterdir()
    # the default chain's working-set index names the original output by its path, so the figure after depends
    # on where the test's home is: it is the report's, and the line says it as compact says every figure
    after = orjson.loads((state / "report.json").read_bytes())["after"]
    assert (after["messages"], lines[1]) == (4, f"Compacted: 8,437 → {after['tokens']:,} tokens "
                                                f"({(8437 - after['tokens']) / 8437:.1%} saved), 4 → 4 messages")
    # issue 23 items 18 and 19: where the fork's dumps and report went was not said
    assert lines[-5:] == [f"Wrote 3 file(s): the transcript {fork}, 1 dump(s) in {state / 'dumps'}, the report "
                          f"{state / 'report.json'}",
                          f"Kept in tcompact's state folder: {state} (`tcompact restore --list` lists what it keeps, "
                          "`--clean --older-than AGE` removes it)",
                          f"Forked as a new codex session {new}: {fork}", "Resume it with:",
                          f"  cd /home/dev/app && codex resume {new}"]
    d = compact(home, "--session", A, "--in-place", "-c", "full")
    assert (d["status"], d["session"]["mode"]) == ("compacted", "in-place")
    (state,) = [p for p in (home / ".local" / "state" / "tcompact" / "sessions").iterdir() if A in p.name]
    assert d["outputs"] == {"transcript": d["session"]["path"], "dumps": [str(p) for p in (state / "dumps").iterdir()],
                            "offload_store": None, "state": str(state)}
    result = run(home, "compact", "--session", B, "--json")  # into the current folder: the trigger holds
    assert orjson.loads(result.stdout)["reason"].endswith("; --now compacts anyway")


TORN = b'{"parentUuid":"a-a2","isSidechain":false,"type":"user","message":{"role":"user","content":"and the'


def _every_line_is_json(path):
    return all(orjson.loads(line) is not None for line in path.read_bytes().splitlines())


@pytest.mark.parametrize("mode", ["fork", "in-place"])
def test_a_cut_off_last_line_is_left_out_of_a_fork_and_of_an_in_place_result(home, mode):
    # issue 23 item 2: with --skip-bad-lines the line the agent was still writing went into the new session
    # (line 75 of 79 of a real one was the cut JSON, the boundary and the summary after it)
    main = home / ".claude" / "projects" / project_folder("/home/dev/app") / f"{A}.jsonl"
    main.write_bytes(main.read_bytes() + TORN)
    original = main.read_bytes()
    result = run(home, "compact", "--session", A, f"--{mode}", "-c", "full", "--skip-bad-lines", "--json")
    assert result.exit_code == 0, result.stderr
    what = "the fork" if mode == "fork" else "the compacted session"
    note = f"{main}: line 6 is cut off (the agent may still be writing it): left out of {what}"
    assert result.stderr == f"Warning: {note}\n"
    d = orjson.loads(result.stdout)
    written = Path(d["session"]["path"])
    assert (d["status"], d["notes"]) == ("compacted", [note])
    assert _every_line_is_json(written) and TORN not in written.read_bytes()
    assert written.read_bytes().startswith(original[:-len(TORN)].replace(A.encode(), d["session"]["id"].encode()))
    report = orjson.loads(Path(next(p for p in d["written"] if p.endswith("report.json"))).read_bytes())
    assert report["notes"] == [note]
    if mode == "in-place":
        assert Path(d["session"]["backup"]).read_bytes() == original  # the backup keeps the line


def _modes(root):
    return {str(p.relative_to(root)): p.stat().st_mode & 0o777 for p in sorted(root.rglob("*"))}


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_nothing_written_from_a_private_session_is_more_readable_than_it(home, umask_022):
    # issue 23 item 14: a 0600 session gave a 0644 fork, backup and note, and 0644 dumps in 0755 state folders
    main = home / ".claude" / "projects" / project_folder("/home/dev/app") / f"{A}.jsonl"
    main.chmod(0o600)
    fork = compact(home, "--session", A, "--fork", "-c", "full")["session"]
    assert Path(fork["path"]).stat().st_mode & 0o777 == 0o600
    state = home / ".local" / "state"
    (run_folder,) = (state / "tcompact" / "sessions").iterdir()
    (dump,) = (run_folder / "dumps").iterdir()
    assert _modes(state) == {"tcompact": 0o700, "tcompact/sessions": 0o700, f"tcompact/sessions/{run_folder.name}": 0o700,
                             f"tcompact/sessions/{run_folder.name}/dumps": 0o700,
                             f"tcompact/sessions/{run_folder.name}/dumps/{dump.name}": 0o600,
                             f"tcompact/sessions/{run_folder.name}/report.json": 0o600}
    backup = Path(compact(home, "--session", A, "--in-place", "-c", "full")["session"]["backup"])
    assert [p.stat().st_mode & 0o777 for p in (main, backup, backup.with_name(backup.name + ".json"))] == [0o600] * 3
    (public,) = (home / ".codex" / "sessions").rglob(f"rollout-*-{D}.jsonl")
    fork = compact(home, "--session", D, "--fork", "-c", "full")["session"]  # a 0644 session: its own folders stay 0700
    assert (Path(fork["path"]).stat().st_mode & 0o777, public.stat().st_mode & 0o777) == (0o644, 0o644)
    assert {m for p, m in _modes(state).items() if (state / p).is_dir()} == {0o700}


def test_an_in_place_run_keeps_no_copy_of_the_session_refused_or_not(home, monkeypatch):
    # issue 23 item 18: each in-place run left a whole copy of the compacted session in the state folder
    # (26 MB for a 16.7 MB session), and a run refused because the agent wrote meanwhile left it too; a refused
    # run keeps its dumps and its report, which says it failed (item 8)
    import tcompact.compaction.job as job

    main = home / ".claude" / "projects" / project_folder("/home/dev/app") / f"{A}.jsonl"
    before, session = _tree(home), main.read_bytes()
    real = job.compact_file

    def the_agent_writes_meanwhile(*args, **kwargs):
        run = real(*args, **kwargs)
        with main.open("ab") as fh:
            fh.write(b'{"type":"summary","summary":"the agent went on","leafUuid":"x"}\n')
        return run

    monkeypatch.setattr(job, "compact_file", the_agent_writes_meanwhile)
    result = run(home, "compact", "--session", A, "--in-place", "-c", "full", "--summarizer", "extractive")
    assert (result.exit_code, result.stderr) == (2, f"Error: {main}: the session file changed while it was being "
                                                    "compacted (is the agent running?) — nothing was replaced; run "
                                                    "the command again\n")
    (refused,) = (home / ".local" / "state" / "tcompact" / "sessions").iterdir()
    assert sorted(p.name for p in refused.iterdir()) == ["dumps", "report.json"]
    assert [p for p in _tree(home) if p not in before] == [str(p.relative_to(home)) for p in sorted(
        [home / ".local", home / ".local" / "state", *(home / ".local" / "state").rglob("*")])]
    assert main.read_bytes().startswith(session) and main.read_bytes() != session
    monkeypatch.setattr(job, "compact_file", real)
    compact(home, "--session", A, "--in-place", "-c", "full")
    (done,) = [p for p in (home / ".local" / "state" / "tcompact" / "sessions").iterdir() if p != refused]
    assert sorted(p.name for p in done.iterdir()) == ["dumps", "report.json"]


def _tree(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_restore_lists_what_tcompact_keeps_and_cleans_what_is_older(home):
    # issue 23 item 18: ~/.local/state/tcompact grew without bound, and nothing listed or cleaned it
    root = home / ".local" / "state" / "tcompact"
    root.mkdir(parents=True, mode=0o755)  # as an older tcompact made it
    empty = run(home, "restore", "--list")
    assert (empty.exit_code, empty.stdout) == (0, f"tcompact keeps nothing: {root} holds no run, and no session has "
                                                  "an in-place backup\n")
    fork = compact(home, "--session", D, "--fork", "-c", "full")["session"]["id"]
    backup = Path(compact(home, "--session", A, "--in-place", "-c", "full")["session"]["backup"])
    assert root.stat().st_mode & 0o777 == 0o700  # tcompact's own folder, made private as it is used
    doc = orjson.loads(run(home, "restore", "--list", "--json").stdout)
    runs = {e.name.split("-")[0]: e for e in (root / "sessions").iterdir()}
    assert sorted((e["kind"], e["agent"], e["session"], e["path"], e["holds"]) for e in doc["entries"]) == [
        ("backup", "claude", A, str(backup), "the session as the agent had left it; `tcompact restore --session ID` "
                                             "puts it back"),
        ("fork", "codex", fork, str(runs["codex"]), "1 dump(s), the report"),
        ("in-place", "claude", A, str(runs["claude"]), "1 dump(s), the report")]
    sizes = {e["path"]: e["bytes"] for e in doc["entries"]}
    assert sizes[str(backup)] == backup.stat().st_size + backup.with_name(backup.name + ".json").stat().st_size
    assert sizes[str(runs["codex"])] == sum(p.stat().st_size for p in runs["codex"].rglob("*") if p.is_file())
    assert (doc["state"], doc["total_bytes"]) == (str(root), sum(sizes.values()))
    text = run(home, "restore", "--list").stdout
    assert text.splitlines()[0] == (f"tcompact keeps 2 run(s) in {root} and 1 in-place backup(s) beside their "
                                    f"sessions: {sum(sizes.values()):,} bytes")
    assert text.splitlines()[-1] == ("`tcompact restore --clean --older-than AGE` removes what is older than AGE "
                                     "(30d, 12h); a removed backup can no longer be restored")
    kept = run(home, "restore", "--clean", "--older-than", "1d")
    assert (kept.exit_code, kept.stdout) == (0, "Removed nothing: no entry is older than 1 day(s)\n")
    gone = run(home, "restore", "--clean", "--older-than", "0d", "--json")
    assert (gone.exit_code, orjson.loads(gone.stdout)["removed_bytes"]) == (0, sum(sizes.values()))
    assert list((root / "sessions").iterdir()) == [] and not backup.exists()
    assert orjson.loads(run(home, "restore", "--list", "--json").stdout)["entries"] == []


@pytest.mark.parametrize(("args", "error"), [
    (("--clean",), "--clean needs --older-than AGE — e.g. --older-than 30d; --older-than 0d removes everything"),
    (("--list", "--older-than", "3x"), "--older-than: cannot read '3x' as an age — write a number and m, h, d or w, "
                                       "e.g. 30d (days) or 12h (hours); 0d is everything"),
    (("--older-than", "3d"), "--older-than goes with --list or --clean"),
    (("--list", "--clean", "--older-than", "3d"), "--list and --clean exclude each other — --list --older-than AGE "
                                                  "shows what --clean would remove"),
    (("x.jsonl", "--list"), "--list and --clean work on what tcompact keeps: PATH, -o, --store and the session "
                            "selectors do not apply"),
])
def test_listing_and_cleaning_options_are_checked(home, args, error):
    result = run(home, "restore", *args)
    assert (result.exit_code, result.stderr) == (2, f"Error: {error}\n")


def test_tcompact_knows_its_own_backup_note(home):
    # issue 23 item 21: inspecting a project folder passed over the in-place backup's note as "no transcript
    # tcompact knows"
    backup = Path(compact(home, "--session", A, "--in-place", "-c", "full")["session"]["backup"])
    note = backup.with_name(backup.name + ".json")
    doc = orjson.loads(run(home, "inspect", str(main_folder(home)), "--json").stdout)
    assert doc["not_transcripts"] == [{"path": str(note), "reason": "tcompact's note of an in-place backup, not a "
                                                                    "transcript"}]
    named = run(home, "inspect", str(note))
    assert (named.exit_code, named.stderr) == (2, f"Error: {note}: tcompact's note of an in-place backup, not a "
                                                  f"transcript — `tcompact restore --session {A}` puts the session "
                                                  "back; `tcompact restore --list` lists the backups\n")


def main_folder(home):
    return home / ".claude" / "projects" / project_folder("/home/dev/app")
