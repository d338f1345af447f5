"""What tcompact keeps of the sessions it forks or compacts in place, listed and cleaned.

A fork or an in-place run writes its dumps, report and offload store to tcompact's state folder
(``$XDG_STATE_HOME/tcompact``, default ``~/.local/state/tcompact``), one entry per run:
``sessions/<agent>-<session id>-<UTC time>/``; an in-place run also keeps the session's bytes beside
it in the agent's store, ``<file>.tcompact-backup-<UTC time>`` and its ``.json`` note. Nothing else
removes them, so :func:`entries` lists both (what, when, how big) and :func:`clean` removes those
older than an age (``restore --list``, ``restore --clean --older-than``). The live hooks keep there
too, one folder per compaction of the agent's own (``live/<agent>-<session>/<UTC time>-<trigger>/``:
the transcript before it and the handoff, :mod:`tcompact.hooks.state`); they are listed and cleaned
the same way.
"""

from __future__ import annotations

import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from ..errors import UsageError
from ..hooks.state import state_root  # a light module: the hooks import it at every run
from .stores import CLAUDE, CODEX, Stores

__all__ = ["Entry", "state_root", "tighten", "entries", "older", "clean", "parse_age", "BACKUP_MARK"]

BACKUP_MARK = ".tcompact-backup-"
_RUN = re.compile(r"^(claude|codex)-(.+)-(\d{8}T\d{6}Z)(?:-\d+)?$")
_LIVE = re.compile(r"^(\d{8}T\d{6}Z)-")
_STAMP = re.compile(r"(\d{8}T\d{6}Z)(-current)?$")
_AGE = re.compile(r"^(\d+)([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


@dataclass(frozen=True)
class Entry:
    """One thing tcompact keeps: a run's folder in the state folder, or an in-place backup (its note with it)."""

    kind: str  # "fork", "in-place" (a run's folder; "run" when its report does not say), "backup", or
    # "pre-compaction" (what the live hooks kept of one compaction of the agent's own)
    path: Path
    agent: str
    session: str
    created: datetime
    bytes: int
    holds: str
    extra: tuple[Path, ...] = ()  # the backup's note

    def document(self) -> dict[str, object]:
        """The entry in ``restore --list --json``."""
        return {"kind": self.kind, "path": str(self.path), "agent": self.agent, "session": self.session,
                "created": self.created.isoformat().replace("+00:00", "Z"), "bytes": self.bytes, "holds": self.holds}


def tighten(root: Path) -> None:
    """tcompact's own folder is its user's only: one that an older version made wider is made 0700."""
    try:
        if stat.S_IMODE(root.stat().st_mode) & 0o077:
            root.chmod(0o700)
    except OSError:
        pass  # absent (made 0700 when first written) or not ours to change


def entries(stores: Stores, env: Mapping[str, str] | None = None) -> list[Entry]:
    """The runs in the state folder and the in-place backups in the stores, oldest first."""
    found = [_run(p) for p in _run_folders(state_root(env))]
    found += [_live(p) for p in _live_folders(state_root(env))]
    found += [_backup(p) for p in _backups(stores)]
    return sorted((e for e in found if e is not None), key=lambda e: (e.created, str(e.path)))


def older(found: list[Entry], than: timedelta, *, now: datetime | None = None) -> list[Entry]:
    """The entries created ``than`` ago or earlier (``timedelta(0)``: all of them)."""
    cutoff = (now or datetime.now(timezone.utc)) - than
    return [e for e in found if e.created <= cutoff]


def clean(gone: list[Entry]) -> None:
    """Remove these entries: a run's folder, a backup and its note."""
    from ..artifacts import remove, remove_paths

    for e in gone:
        if e.kind != "backup":
            remove_paths((e.path,))
        for path in (e.path, *e.extra) if e.kind == "backup" else ():
            remove(path)


def parse_age(text: str) -> timedelta:
    """``30d``, ``12h``, ``2w``, ``90m`` (``0d``: everything) as a timedelta; anything else is a UsageError."""
    match = _AGE.match(text.strip())
    if not match:
        raise UsageError(f"--older-than: cannot read {text!r} as an age", hint="write a number and m, h, d or w, "
                         "e.g. 30d (days) or 12h (hours); 0d is everything")
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


def _run_folders(root: Path) -> list[Path]:
    folder = root / "sessions"
    return sorted(p for p in folder.iterdir() if p.is_dir() and _RUN.match(p.name)) if folder.is_dir() else []


def _run(folder: Path) -> Entry | None:
    match = _RUN.match(folder.name)
    assert match is not None
    files = [p for p in folder.rglob("*") if p.is_file()]
    dumps = sum(1 for p in files if p.parent.name == "dumps")
    originals = sum(1 for p in files if p.parent.name == "offload")
    parts = [f"{dumps} dump(s)" if dumps else "", "the report" if (folder / "report.json").exists() else "",
             f"{originals} offloaded original(s)" if originals else ""]
    return Entry(_mode(folder / "report.json"), folder, match.group(1), match.group(2), _when(match.group(3)),
                 _size(files), ", ".join(p for p in parts if p) or "nothing")


def _live_folders(root: Path) -> list[Path]:
    sessions = [p for p in (root / "live").iterdir() if p.is_dir()] if (root / "live").is_dir() else []
    return sorted(p for s in sessions for p in s.iterdir() if p.is_dir() and _LIVE.match(p.name))


def _live(folder: Path) -> Entry:
    match = _LIVE.match(folder.name)
    assert match is not None
    agent, _, session = folder.parent.name.partition("-")
    files = [p for p in folder.rglob("*") if p.is_file()]
    kept = [p for p in files if p.suffix == ".jsonl"]
    parts = ["the transcript before the compaction" if kept else "",
             "the handoff" if (folder / "handoff.md").exists() else ""]
    return Entry("pre-compaction", folder, agent, session, _when(match.group(1)), _size(files),
                 ", ".join(p for p in parts if p) or "nothing")


def _mode(report: Path) -> str:
    """A run's kind, as its report tells: in place when the transcript was written over its source."""
    import orjson

    try:
        doc = orjson.loads(report.read_bytes())
        written, source = doc["outputs"]["transcript"], doc["source"]["path"]
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
        return "run"
    return "run" if written is None else "in-place" if written == source else "fork"


def _backups(stores: Stores) -> list[Path]:
    found: list[Path] = []
    for root in stores.claude:
        found += root.glob(f"*/*.jsonl{BACKUP_MARK}*") if root.is_dir() else []
    for root in stores.codex:
        found += root.rglob(f"rollout-*.jsonl{BACKUP_MARK}*") if root.is_dir() else []
    return sorted(p for p in found if p.is_file() and _STAMP.search(p.name))


def _backup(path: Path) -> Entry:
    session_file, _, stamp = path.name.partition(BACKUP_MARK)
    match = _STAMP.search(stamp)
    assert match is not None
    note = path.with_name(path.name + ".json")
    agent = CODEX if session_file.startswith("rollout-") else CLAUDE
    sid = session_file.removesuffix(".jsonl")
    if agent == CODEX:
        sid = sid[-36:]
    holds = "the session as the agent had left it" + (" (kept by restore --force)" if match.group(2) else
                                                       "; `tcompact restore --session ID` puts it back")
    extra = (note,) if note.exists() else ()
    return Entry("backup", path, agent, sid, _when(match.group(1)), _size([path, *extra]), holds, extra)


def _when(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)


def _size(files: list[Path]) -> int:
    total = 0
    for p in files:
        try:
            total += p.stat().st_size
        except OSError:
            pass
    return total
