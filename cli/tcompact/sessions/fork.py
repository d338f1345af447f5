"""Putting a compacted session back into the agent's own store: as a new session, or in place.

- **fork**: a new session id and the agent's own file name — Claude Code ``<project folder>/<new
  id>.jsonl`` (every line's ``sessionId`` names the new session), Codex
  ``sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<new id>.jsonl`` in local time, as Codex
  names its files, with ``session_meta`` carrying the new id (a UUIDv7, as Codex makes them)
  and ``forked_from_id`` the old one. The original is never touched.
- **in place**: the compacted file is written beside the session and read back; then, when the
  session still holds what was compacted, its bytes are kept next to it in
  ``<file>.tcompact-backup-<UTC time>`` (no agent reads that name) with a ``.json`` note of what
  replaced it, and the compacted file takes its place (:func:`keep_backup`). :func:`restore_backup`
  brings the newest back, and refuses (without ``force``) when the agent has written to the
  session since, which restoring would lose.

The dumps, report and offload store of such a run default to tcompact's state folder
(``$XDG_STATE_HOME/tcompact/sessions/<agent>-<id>-<time>/``), not the agent's store
(:mod:`tcompact.sessions.state` lists and cleans what it keeps).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import secrets
import shlex
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from ..artifacts import folder_mode, make_folder, remove, write_bytes, write_json
from ..errors import InputError, OutputError, UsageError
from .state import BACKUP_MARK, state_root, tighten
from .stores import CLAUDE, Session, read_bytes

__all__ = ["ForkPlan", "Placement", "plan", "rewrite_ids", "resume_command", "keep_backup", "restore_backup",
           "check_options", "output_paths", "with_new_ids", "finish", "kept", "changed", "BACKUP_MARK", "FORK", "IN_PLACE",
           "new_codex_id"]

FORK, IN_PLACE = "fork", "in-place"


@dataclass(frozen=True)
class ForkPlan:
    """Where a compacted session goes, under which id, where the run's other outputs go, and (in place)
    where the session's bytes are kept."""

    mode: str
    agent: str
    source: Path
    old_id: str
    new_id: str
    target: Path
    state: Path
    project: str | None
    backup: Path | None = None

    def describe(self, *, backup: Path | None = None) -> dict[str, Any]:
        """The ``session`` entry of ``compact --json`` (README)."""
        return {"mode": self.mode, "agent": self.agent, "id": self.new_id, "forked_from": self.old_id
                if self.mode == FORK else None, "path": str(self.target), "backup": str(backup) if backup else None,
                "resume": resume_command(self)}


def plan(session: Session, mode: str, *, env: dict[str, str] | None = None, now: datetime | None = None) -> ForkPlan:
    """The plan for forking (``mode="fork"``) or replacing (``"in-place"``) a session of a store."""
    env = dict(os.environ if env is None else env)
    now = now or datetime.now(timezone.utc)
    if session.main is None:
        raise InputError(f"session {session.id} has sub-agent files only, no main transcript", path=str(
            session.files[0]) if session.files else None, hint="choose another session")
    if mode == IN_PLACE:
        new_id, target = session.id, session.main
    elif session.agent == CLAUDE:
        new_id = str(uuid.uuid4())
        target = session.main.parent / f"{new_id}.jsonl"
    else:
        new_id = new_codex_id(now)
        local = now.astimezone()
        root = session.store or session.main.parent
        target = root / local.strftime("%Y/%m/%d") / f"rollout-{local.strftime('%Y-%m-%dT%H-%M-%S')}-{new_id}.jsonl"
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    state = _unused(state_root(env) / "sessions" / f"{session.agent}-{new_id}-{stamp}")
    backup = target.with_name(f"{target.name}{BACKUP_MARK}{stamp}") if mode == IN_PLACE else None
    return ForkPlan(mode=mode, agent=session.agent, source=session.main, old_id=session.id, new_id=new_id,
                    target=target, state=state, project=session.project, backup=backup)


def _unused(folder: Path) -> Path:
    """``folder``, or ``folder-2``, ``-3``… when a run of the same session in the same second has it."""
    n = 1
    while (candidate := folder if n == 1 else folder.with_name(f"{folder.name}-{n}")).exists():
        n += 1
    return candidate


def new_codex_id(now: datetime) -> str:
    """A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, the version, then random bits."""
    ms = int(now.timestamp() * 1000) & ((1 << 48) - 1)
    rand = secrets.randbits(74)
    value = (ms << 80) | (0x7 << 76) | ((rand >> 62) << 64) | (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


def rewrite_ids(data: bytes, p: ForkPlan) -> bytes:
    """The compacted bytes with the fork's new session id where the agent keeps it."""
    if p.mode != FORK:
        return data
    if p.agent == CLAUDE:
        return data.replace(orjson.dumps({"sessionId": p.old_id})[1:-1], orjson.dumps({"sessionId": p.new_id})[1:-1])
    lines = data.split(b"\n")
    for n, line in enumerate(lines):
        if b'"session_meta"' not in line:
            continue
        rec = orjson.loads(line)
        payload = rec.get("payload") if rec.get("type") == "session_meta" else None
        if isinstance(payload, dict) and payload.get("id") == p.old_id:
            rec["payload"] = {**payload, "id": p.new_id, "forked_from_id": p.old_id}
            lines[n] = orjson.dumps(rec)
    return b"\n".join(lines)


def resume_command(p: ForkPlan) -> str:
    """The one command that resumes the session (in its working directory when one is recorded)."""
    command = f"claude --resume {p.new_id}" if p.agent == CLAUDE else f"codex resume {p.new_id}"
    return f"cd {shlex.quote(p.project)} && {command}" if p.project else command


def keep_backup(p: ForkPlan, *, original: bytes) -> Callable[[Path], None]:
    """The last step before a compacted file (written beside the session, read back) takes the session's
    place: the session must still hold ``original`` — what the compaction read; a session the agent
    wrote to meanwhile is left alone — and its bytes are kept in ``p.backup`` with a note."""
    assert p.backup is not None

    def check(written: Path) -> None:
        refused = changed(p, original=original)
        if refused is not None:
            raise refused
        write_bytes(p.backup, original, inputs=(p.target,))  # as private as the session
        write_json(_note_of(p.backup), {
            "tool": "tcompact", "session": p.old_id, "agent": p.agent, "session_file": str(p.target),
            "original": _digest(original), "compacted": _digest(read_bytes(written))}, inputs=(p.target,))

    return check


def changed(p: ForkPlan, *, original: bytes) -> OutputError | None:
    """The refusal of an in-place run whose session no longer holds what the compaction read (the agent
    wrote to it meanwhile, and replacing it would lose that), or None."""
    if read_bytes(p.target) == original:
        return None
    return OutputError("the session file changed while it was being compacted (is the agent running?)",
                       path=str(p.target), hint="nothing was replaced; run the command again")


def _note_of(backup: Path) -> Path:
    return backup.with_name(backup.name + ".json")


def restore_backup(session: Session, *, force: bool) -> tuple[Path, Path]:
    """Put the newest in-place backup of the session back; returns (session file, backup used)."""
    main = session.main
    backups = sorted(main.parent.glob(f"{main.name}{BACKUP_MARK}*[0-9]Z")) if main else []
    if main is None or not backups:
        raise InputError(f"session {session.id} has no backup of an in-place compaction", path=str(main),
                         hint="only `tcompact compact --in-place` keeps one")
    backup = backups[-1]
    note_path = _note_of(backup)
    note = orjson.loads(read_bytes(note_path)) if note_path.exists() else {}
    current = read_bytes(main)
    if note.get("compacted") and _digest(current) != note["compacted"] and not force:
        raise OutputError("the session changed since tcompact compacted it in place (the agent went on in it); "
                          "restoring would drop those turns", path=str(main),
                          hint="pass --force to restore anyway (the current file is kept as another backup)")
    if force and note.get("compacted") and _digest(current) != note["compacted"]:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        write_bytes(main.with_name(f"{main.name}{BACKUP_MARK}{stamp}-current"), current, inputs=(main,))
    write_bytes(main, read_bytes(backup), force=True)
    for used in (backup, note_path):
        remove(used)
    return main, backup


def _digest(data: bytes) -> dict[str, Any]:
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def check_options(p: ForkPlan, *, output: Path | None, to: str | None) -> None:
    """--fork / --in-place write where the agent reads: no -o, and the session's own format."""
    flag = "--fork" if p.mode == FORK else "--in-place"
    if output is not None:
        raise UsageError(f"{flag} and -o/--output exclude each other", hint=f"{flag} writes into the agent's store")
    own = "claude-code" if p.agent == CLAUDE else "codex"
    if to is not None and to != own:
        raise UsageError(f"{flag} writes a {own} session; --to {to} cannot be resumed by the agent",
                         hint=f"leave out --to, or write elsewhere with -o instead of {flag}")


def output_paths(p: ForkPlan, *, dump_dir: Path | None, report: Path | None, offload_dir: Path | None,
                 dry_run: bool = False) -> tuple[Path, Path, Path, Path]:
    """(transcript, dumps, report, offload store): the new file for a fork, the session file itself in
    place; the rest in the state folder. The folder a fork goes to is made here (Codex's dated folder
    may be new; a run stopped later takes it back: :class:`tcompact.journal.Journal`)."""
    if not dry_run and p.mode == FORK:
        make_folder(p.target.parent, mode=folder_mode((p.source,)))
    if not dry_run:
        tighten(p.state.parent.parent)
    return (p.target, dump_dir or p.state / "dumps", report or p.state / "report.json",
            offload_dir or p.state / "offload")


def with_new_ids(run: Any, p: ForkPlan) -> Any:
    """The compaction run with its output carrying the fork's session id."""
    if run.output is None or p.mode != FORK:
        return run
    return dataclasses.replace(run, output=dataclasses.replace(run.output, data=rewrite_ids(run.output.data, p)))


def finish(p: ForkPlan, run: Any, written: list[Path]) -> dict[str, Any] | None:
    """After the run's outputs are written: what to tell the user, or None when no session was written
    (nothing to do, failed, or refused by --strict)."""
    if run.output is None or p.target not in written:
        return None
    return p.describe(backup=p.backup)


def kept(p: ForkPlan) -> list[Path]:
    """The files an in-place run keeps beside the session: the backup and its note."""
    return [p.backup, _note_of(p.backup)] if p.backup is not None else []


@dataclass(frozen=True)
class Placement:
    """A compaction run put into the agent's store — forked, or in place of the session that held
    ``original`` —, as what it adds around the run: the settings (it compacts whatever the trigger
    says), the output's session id, the last check and the backup of an in-place run, and what to
    tell the user once the outputs are written. ``compact`` without --fork / --in-place has a
    placement that adds nothing (:class:`tcompact.compaction.job.InAFile`)."""

    plan: ForkPlan
    original: bytes
    stored = True

    @property
    def state(self) -> Path:
        """The entry of tcompact's state folder the run's other outputs go to."""
        return self.plan.state

    @property
    def in_place(self) -> bool:
        """The result replaces the session itself."""
        return self.plan.mode == IN_PLACE

    def options(self, options: Any) -> Any:
        """The run's settings: a session named to be forked or replaced is compacted below the trigger too."""
        return options.placed(now=True, into_session=self.plan.mode)

    def adopt(self, run: Any) -> Any:
        """The run with its output carrying the fork's session id."""
        return with_new_ids(run, self.plan)

    def refusal(self) -> OutputError | None:
        """In place: the refusal of a session the agent wrote to while it was compacted."""
        return changed(self.plan, original=self.original) if self.in_place else None

    def settle(self) -> Callable[[Path], None] | None:
        """In place: the step that keeps the session's backup before the compacted file takes its place."""
        return keep_backup(self.plan, original=self.original) if self.in_place else None

    def finish(self, run: Any, written: list[Path]) -> tuple[dict[str, Any] | None, list[Path]]:
        """(the ``session`` entry, the files kept beside it), once the outputs are written."""
        session = finish(self.plan, run, written)
        return session, kept(self.plan) if session is not None else []
