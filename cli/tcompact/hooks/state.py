"""Where the live hooks keep what they save: tcompact's state folder.

``$XDG_STATE_HOME/tcompact`` (default ``~/.local/state/tcompact``) holds, for the hooks:

- ``live/<agent>-<session>/<UTC time>-<trigger>/``: one folder per compaction — ``payload.json``
  (what the agent's PreCompact hook got, with when and from where), a byte copy of the transcript
  as it stood under its own file name (a session file ``inspect``, ``eval`` and ``compact`` read
  like any other), and ``handoff.md``, the handoff injected after that compaction (or
  ``handoff.failed``, why there is none);
- ``live/<agent>-<session>/pending.json``: a handoff still to be given to a Claude Code that does
  not keep hook context across processes (see :mod:`.events`);
- ``hooks.log``: one line per hook run (what it did, or why it did nothing);
- ``hooks/installs.json`` and ``hooks/backups/``: what ``hooks install`` changed, and each settings
  file as it was before (:mod:`.install`).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from pathlib import Path

__all__ = ["state_root", "session_dir", "snapshots", "new_snapshot_dir", "log_path", "log", "stamp",
           "SNAPSHOT_PAYLOAD", "HANDOFF_FILE", "PENDING_FILE", "FAILED_FILE"]

SNAPSHOT_PAYLOAD = "payload.json"
HANDOFF_FILE = "handoff.md"
PENDING_FILE = "pending.json"
FAILED_FILE = "handoff.failed"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def state_root(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/tcompact``, else ``~/.local/state/tcompact``."""
    env = os.environ if env is None else env
    if env.get("XDG_STATE_HOME"):
        return Path(env["XDG_STATE_HOME"]) / "tcompact"
    return Path(env.get("HOME") or Path.home()) / ".local" / "state" / "tcompact"


def session_dir(agent: str, session: str, *, env: Mapping[str, str] | None = None) -> Path:
    """The folder of one session's compactions."""
    return state_root(env) / "live" / f"{agent}-{_UNSAFE.sub('_', session)[:120]}"


def stamp() -> str:
    """Now in UTC, as folder names and log lines give it (``20261201T231500Z``)."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


def new_snapshot_dir(agent: str, session: str, trigger: str, *, env: Mapping[str, str] | None = None) -> Path:
    """A new, not yet existing folder for a compaction of ``session`` (not created here)."""
    base = session_dir(agent, session, env=env) / f"{stamp()}-{_UNSAFE.sub('_', trigger or 'unknown')[:20]}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def snapshots(agent: str, session: str, *, env: Mapping[str, str] | None = None) -> list[Path]:
    """The session's compaction folders, oldest first."""
    folder = session_dir(agent, session, env=env)
    try:
        found = [p for p in folder.iterdir() if p.is_dir() and (p / SNAPSHOT_PAYLOAD).exists()]
    except OSError:
        return []
    return sorted(found, key=lambda p: p.name)


def log_path(env: Mapping[str, str] | None = None) -> Path:
    """The hooks' log file."""
    return state_root(env) / "hooks.log"


def log(event: str, agent: str, session: str | None, outcome: str, *, env: Mapping[str, str] | None = None) -> None:
    """One line in the log: time, event, agent, session, what happened (never raises)."""
    from ..appending import append_line
    from ..errors import TcompactError

    line = f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {event} {agent} {session or '-'} {outcome}"
    try:
        append_line(log_path(env), " ".join(line.split()))
    except (OSError, TcompactError):
        pass
