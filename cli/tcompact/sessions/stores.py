"""Where Claude Code and Codex keep their sessions on this machine, and what each session is.

This module is the discovery edge: it lists the two agents' store folders and reads the head and
the tail of each session file (never the whole file) for what selecting a session needs — its id,
the working directory it recorded, its first and last activity, its parent for a sub-agent.

- Claude Code: ``$CLAUDE_CONFIG_DIR/projects`` (a comma-separated list is accepted, as ccusage
  does), else ``~/.claude/projects`` and ``~/.config/claude/projects`` when present. A session is
  ``<project>/<id>.jsonl``; its sub-agents are ``<project>/<id>/subagents/agent-*.jsonl`` (2.1)
  or flat ``<project>/agent-*.jsonl`` files whose lines name the parent's ``sessionId`` (older).
- Empty files (Claude Code leaves them for sessions that never started) are passed over.
- Codex: ``$CODEX_HOME/sessions`` (default ``~/.codex/sessions``), ``YYYY/MM/DD/rollout-*.jsonl``;
  the id is the first line's ``session_meta`` id; a rollout whose ``source`` names a
  ``thread_spawn`` parent is a sub-agent of that session.
- A fork names the session it came from: Codex ``session_meta.forked_from_id``, Claude Code's
  ``forkedFrom.sessionId`` on the lines it copied (:attr:`Session.origin`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

__all__ = ["Session", "Stores", "stores_from_env", "discover", "read_bytes", "CLAUDE", "CODEX", "AGENTS",
           "FORMATS"]

CLAUDE = "claude"
CODEX = "codex"
AGENTS = (CLAUDE, CODEX)
#: The transcript format of each agent's session files.
FORMATS = {CLAUDE: "claude-code", CODEX: "codex"}
_HEAD_LINES = 64
_CHUNK = 256 * 1024
_MAX_PEEK = 8 * 1024 * 1024


@dataclass(frozen=True)
class Stores:
    """The folders searched: Claude Code ``projects`` folders and Codex ``sessions`` folders."""

    claude: tuple[Path, ...]
    codex: tuple[Path, ...]


@dataclass(frozen=True)
class Session:
    """One session: its main file (None when only sub-agent files are left) and its sub-agent files."""

    agent: str
    id: str
    main: Path | None
    subagents: tuple[Path, ...] = ()
    project: str | None = None
    first: datetime | None = None
    last: datetime | None = None
    store: Path | None = None
    parent: str | None = field(default=None, compare=False)
    #: the session this one was forked from, when it says so (Codex ``forked_from_id``, Claude Code ``forkedFrom``)
    origin: str | None = field(default=None, compare=False)

    @property
    def files(self) -> tuple[Path, ...]:
        """Every file of the session, the main file first."""
        return ((self.main,) if self.main else ()) + self.subagents


def stores_from_env(env: Mapping[str, str] | None = None) -> Stores:
    """The store folders named by the environment (``HOME``, ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``)."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    configured = [p.strip() for p in (env.get("CLAUDE_CONFIG_DIR") or "").split(",") if p.strip()]
    claude_dirs = [Path(p).expanduser() for p in configured] or [home / ".claude", home / ".config" / "claude"]
    codex_home = Path(env["CODEX_HOME"]).expanduser() if env.get("CODEX_HOME") else home / ".codex"
    return Stores(claude=tuple(dict.fromkeys(d / "projects" for d in claude_dirs)), codex=(codex_home / "sessions",))


def discover(stores: Stores) -> list[Session]:
    """Every session in the stores (unordered; :mod:`tcompact.sessions.select` orders and filters)."""
    sessions: list[Session] = []
    for root in stores.claude:
        if root.is_dir():
            sessions += _claude_sessions(root)
    for root in stores.codex:
        if root.is_dir():
            sessions += _codex_sessions(root)
    return sessions


# ---- Claude Code


def _claude_sessions(root: Path) -> list[Session]:
    out: list[Session] = []
    for project in sorted(p for p in root.iterdir() if p.is_dir()):
        mains: dict[str, Path] = {}
        nested: dict[str, list[Path]] = {}
        flat: list[Path] = []
        for entry in sorted(project.iterdir()):
            if entry.is_file() and entry.suffix == ".jsonl" and _has_bytes(entry):
                if entry.name.startswith("agent-"):
                    flat.append(entry)
                else:
                    mains[entry.stem] = entry
            elif entry.is_dir() and (entry / "subagents").is_dir():
                nested[entry.name] = sorted(p for p in (entry / "subagents").glob("*.jsonl") if _has_bytes(p))
        peeks = {path: _peek(path) for path in [*mains.values(), *flat, *(p for ps in nested.values() for p in ps)]}
        by_parent: dict[str, list[Path]] = {sid: list(files) for sid, files in nested.items()}
        for path in flat:
            by_parent.setdefault(str(peeks[path].get("session") or path.stem), []).append(path)
        for sid in sorted(set(mains) | set(by_parent)):
            files = ([mains[sid]] if sid in mains else []) + by_parent.get(sid, [])
            out.append(_claude_session(sid, mains.get(sid), tuple(by_parent.get(sid, ())), root,
                                       [peeks[p] for p in files]))
    return out


def _claude_session(sid: str, main: Path | None, subagents: tuple[Path, ...], root: Path,
                    peeks: list[dict[str, Any]]) -> Session:
    project = next((p["cwd"] for p in peeks if p.get("cwd")), None)
    return Session(agent=CLAUDE, id=sid, main=main, subagents=subagents, project=project,
                   first=_earliest(p.get("first") for p in peeks), last=_latest(p.get("last") for p in peeks),
                   store=root, origin=peeks[0].get("origin") if main is not None and peeks else None)


# ---- Codex


def _codex_sessions(root: Path) -> list[Session]:
    found: list[tuple[Path, dict[str, Any]]] = [(p, _peek(p)) for p in sorted(root.rglob("rollout-*.jsonl"))
                                                if p.is_file() and _has_bytes(p)]
    ids = {str(meta.get("session") or _codex_id_from_name(path)): path for path, meta in found}
    children: dict[str, list[Path]] = {}
    sessions: dict[str, tuple[Path, dict[str, Any]]] = {}
    for path, meta in found:
        sid = str(meta.get("session") or _codex_id_from_name(path))
        parent = meta.get("parent")
        if parent and parent in ids and parent != sid:
            children.setdefault(parent, []).append(path)
        else:
            sessions[sid] = (path, meta)
    out = []
    for sid, (path, meta) in sorted(sessions.items()):
        subs = tuple(children.get(sid, ()))
        peeks = [meta, *(_peek(p) for p in subs)]
        out.append(Session(agent=CODEX, id=sid, main=path, subagents=subs, project=meta.get("cwd"),
                           first=_earliest(p.get("first") for p in peeks), last=_latest(p.get("last") for p in peeks),
                           store=root, parent=meta.get("parent"), origin=meta.get("origin")))
    return out


def _codex_id_from_name(path: Path) -> str:
    """``rollout-YYYY-MM-DDTHH-MM-SS-<id>.jsonl`` → ``<id>`` (a rollout without a session_meta line)."""
    stem = path.stem.removeprefix("rollout-")
    return stem[20:] if len(stem) > 20 and stem[19] == "-" else stem


def _has_bytes(path: Path) -> bool:
    """Empty files are passed over: Claude Code leaves one behind for sessions that never started."""
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def read_bytes(path: Path) -> bytes:
    """The whole of a session file (a fork's or backup's source)."""
    try:
        return path.read_bytes()
    except OSError as exc:
        from ..errors import InputError

        raise InputError(f"cannot read the session file: {exc.strerror}", path=str(path),
                         hint="check that it exists and is readable") from None


# ---- peeking at a file's head and tail


def _peek(path: Path) -> dict[str, Any]:
    """What the head and the tail of one session file tell: ids, working directory, activity."""
    info: dict[str, Any] = {}
    try:
        with path.open("rb") as fh:
            head = list(_head_records(fh))
            tail = list(_tail_records(fh))
    except OSError:
        return info
    for rec in head:
        _note(info, rec)
    info["first"] = _earliest(_timestamp(r) for r in head)
    info["last"] = _latest(_timestamp(r) for r in tail + head)
    return info


def _note(info: dict[str, Any], rec: Mapping[str, Any]) -> None:
    if rec.get("type") == "session_meta" and isinstance(rec.get("payload"), dict):
        p = rec["payload"]
        info.setdefault("session", p.get("id") if isinstance(p.get("id"), str) else None)
        if isinstance(p.get("cwd"), str):
            info.setdefault("cwd", p["cwd"])
        spawn = ((p.get("source") or {}).get("subagent") or {}) if isinstance(p.get("source"), dict) else {}
        spawn = spawn.get("thread_spawn") if isinstance(spawn, dict) else None
        if isinstance(spawn, dict) and isinstance(spawn.get("parent_thread_id"), str):
            info.setdefault("parent", spawn["parent_thread_id"])
        if isinstance(p.get("forked_from_id"), str):
            info.setdefault("origin", p["forked_from_id"])
    elif isinstance(rec.get("sessionId"), str):
        info.setdefault("session", rec["sessionId"])
        if isinstance(rec.get("cwd"), str) and rec["cwd"]:
            info.setdefault("cwd", rec["cwd"])
        origin = rec["forkedFrom"].get("sessionId") if isinstance(rec.get("forkedFrom"), dict) else None
        if isinstance(origin, str) and origin != rec["sessionId"]:
            info.setdefault("origin", origin)


def _head_records(fh: Any) -> Iterator[dict[str, Any]]:
    read = 0
    for n, line in enumerate(fh):
        read += len(line)
        if n >= _HEAD_LINES or read > _MAX_PEEK:
            return
        rec = _parse(line)
        if rec is not None:
            yield rec


def _tail_records(fh: Any) -> list[dict[str, Any]]:
    """The complete lines at the end of the file (up to ``_HEAD_LINES`` of them)."""
    end = fh.seek(0, os.SEEK_END)
    size = min(end, _CHUNK)
    while True:
        fh.seek(end - size)
        lines = fh.read(size).split(b"\n")
        if size < end:
            lines = lines[1:]  # the first piece may start mid-line
        records = [r for r in (_parse(x) for x in lines[-_HEAD_LINES:]) if r is not None]
        if records or size >= min(end, _MAX_PEEK):
            return records
        size = min(end, size * 4)


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        rec = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return rec if isinstance(rec, dict) else None


def _timestamp(rec: Mapping[str, Any]) -> datetime | None:
    from ..formats.requests import parse_time  # (the hooks and the status line start without the readers)

    return parse_time(rec.get("timestamp"))


def _earliest(values: Iterator[datetime | None] | Any) -> datetime | None:
    present = [v for v in values if v is not None]
    return min(present) if present else None


def _latest(values: Iterator[datetime | None] | Any) -> datetime | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None
