"""sessions/stores.py: where the agents keep their sessions, and what the head and tail of each file say."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import jsonl

from tcompact.errors import InputError
from tcompact.sessions.stores import Session, Stores, discover, read_bytes, stores_from_env

UTC = timezone.utc


def at(minute: int, second: int = 0) -> str:
    return f"2026-01-05T10:{minute:02d}:{second:02d}.000Z"


def when(minute: int, second: int = 0) -> datetime:
    return datetime(2026, 1, 5, 10, minute, second, tzinfo=UTC)


def claude_line(sid: str, ts: str, *, cwd: str = "/home/dev/app", **extra) -> dict:
    return {"type": "user", "sessionId": sid, "cwd": cwd, "timestamp": ts, "uuid": f"u-{ts}",
            "message": {"role": "user", "content": "x"}, **extra}


def codex_meta(sid: str, ts: str, *, cwd: str = "/home/dev/app", source: object = "cli") -> dict:
    return {"timestamp": ts, "type": "session_meta", "payload": {"id": sid, "timestamp": ts, "cwd": cwd,
                                                                "source": source}}


def test_the_stores_named_by_the_environment(tmp_path):
    home = tmp_path
    assert stores_from_env({"HOME": str(home)}) == Stores(
        claude=(home / ".claude" / "projects", home / ".config" / "claude" / "projects"),
        codex=(home / ".codex" / "sessions",))
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": f" {home}/a , ,{home}/b,{home}/a", "CODEX_HOME": "~/cx"}
    assert stores_from_env(env) == Stores(claude=(home / "a" / "projects", home / "b" / "projects"),
                                          codex=(Path("~/cx").expanduser() / "sessions",))


def test_claude_sessions_with_their_sub_agents_of_both_layouts(tmp_path):
    project = tmp_path / "projects" / "-home-dev-app"
    project.mkdir(parents=True)
    jsonl(project / "s1.jsonl", [{"type": "summary", "summary": "t", "leafUuid": "x"},  # no cwd, no time
                                 claude_line("s1", at(0)), claude_line("s1", at(5))])
    (project / "s1" / "subagents").mkdir(parents=True)
    jsonl(project / "s1" / "subagents" / "agent-a.jsonl", [claude_line("s1", at(9), isSidechain=True)])
    (project / "s1" / "subagents" / "agent-empty.jsonl").write_bytes(b"")
    jsonl(project / "agent-b.jsonl", [claude_line("s2", at(1), isSidechain=True)])  # older Claude Code: flat
    jsonl(project / "agent-c.jsonl", [{"type": "summary", "summary": "no session id"}])
    (project / "empty.jsonl").write_bytes(b"")  # a session that never started
    (project / "notes.txt").write_text("not a session")
    (tmp_path / "projects" / "stray.jsonl").write_text("{}")  # outside a project folder
    sessions = discover(Stores(claude=(tmp_path / "projects",), codex=()))
    assert sessions == [
        Session(agent="claude", id="agent-c", main=None, subagents=(project / "agent-c.jsonl",), project=None,
                store=tmp_path / "projects"),
        Session(agent="claude", id="s1", main=project / "s1.jsonl",
                subagents=(project / "s1" / "subagents" / "agent-a.jsonl",), project="/home/dev/app",
                first=when(0), last=when(9), store=tmp_path / "projects"),
        Session(agent="claude", id="s2", main=None, subagents=(project / "agent-b.jsonl",), project="/home/dev/app",
                first=when(1), last=when(1), store=tmp_path / "projects")]
    assert sessions[1].files == (project / "s1.jsonl", project / "s1" / "subagents" / "agent-a.jsonl")
    assert sessions[2].files == (project / "agent-b.jsonl",)


def test_codex_sessions_and_the_sub_agents_they_spawned(tmp_path):
    day = tmp_path / "sessions" / "2026" / "01" / "05"
    day.mkdir(parents=True)
    parent = day / "rollout-2026-01-05T10-00-00-019b-p.jsonl"
    jsonl(parent, [codex_meta("019b-p", at(0)), {"timestamp": at(7), "type": "event_msg", "payload": {}}])
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": "019b-p", "depth": 1}}}
    child = day / "rollout-2026-01-05T10-01-00-019b-c.jsonl"
    jsonl(child, [codex_meta("019b-c", at(1), source=spawn), {"timestamp": at(9), "type": "event_msg", "payload": {}}])
    orphan = day / "rollout-2026-01-05T10-02-00-019b-o.jsonl"  # its parent is not in the store: its own session
    jsonl(orphan, [codex_meta("019b-o", at(2), cwd="/elsewhere",
                              source={"subagent": {"thread_spawn": {"parent_thread_id": "gone"}}})])
    nameless = day / "rollout-2026-01-05T10-03-00-019b-n.jsonl"  # no session_meta: the id of its name
    jsonl(nameless, [{"timestamp": at(3), "type": "event_msg", "payload": {}}])
    (day / "rollout-2026-01-05T10-04-00-019b-e.jsonl").write_bytes(b"")
    (day / "other.jsonl").write_text("{}")
    store = tmp_path / "sessions"
    assert discover(Stores(claude=(), codex=(store,))) == [
        Session(agent="codex", id="019b-n", main=nameless, first=when(3), last=when(3), store=store),
        Session(agent="codex", id="019b-o", main=orphan, project="/elsewhere", first=when(2), last=when(2),
                store=store, parent="gone"),
        Session(agent="codex", id="019b-p", main=parent, subagents=(child,), project="/home/dev/app",
                first=when(0), last=when(9), store=store)]


def test_only_the_head_and_the_tail_of_a_file_are_read(tmp_path):
    project = tmp_path / "projects" / "p"
    project.mkdir(parents=True)
    head = [claude_line("s", at(0), cwd=""), *(claude_line("s", at(1), cwd="/head") for _ in range(63))]
    middle = [claude_line("s", "2019-01-01T00:00:00Z", cwd="/middle"), claude_line("s", "2030-01-01T00:00:00Z")]
    last = claude_line("s", at(30), data="x" * 300_000)  # longer than the first tail read: it grows to hold it
    untimed = [{"type": "progress", "sessionId": "s"}] * 70
    jsonl(project / "s.jsonl", [*head, *middle, *untimed, last, b"{not json", b"[1]"])
    (s,) = discover(Stores(claude=(tmp_path / "projects",), codex=()))
    # the head gives the first activity and the first cwd it records (an empty one is none), the tail the last
    assert (s.project, s.first, s.last) == ("/head", when(0), when(30))


def test_stores_that_do_not_exist_give_no_sessions(tmp_path):
    assert discover(Stores(claude=(tmp_path / "a",), codex=(tmp_path / "b",))) == []


def test_read_bytes_names_the_file_it_cannot_read(tmp_path):
    (tmp_path / "s.jsonl").write_bytes(b"abc")
    assert read_bytes(tmp_path / "s.jsonl") == b"abc"
    with pytest.raises(InputError) as exc:
        read_bytes(tmp_path / "gone.jsonl")
    assert str(exc.value) == (f"{tmp_path / 'gone.jsonl'}: cannot read the session file: No such file or directory "
                              "— check that it exists and is readable")
