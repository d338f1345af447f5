"""``tcompact restore --session ID --pre-compaction``: the session as it stood before the agent compacted it.

The agent's own compaction leaves its session going on from the summary. The pre-compact hook kept
the transcript as it was just before (:mod:`.state`); this writes the newest such copy back into the
agent's store as a **new** session — a fork, the way ``compact --fork`` writes one (new id, the
agent's own file name; :mod:`tcompact.sessions.fork`) — so that it can be resumed from before the
compaction, or compacted with tcompact instead. The session itself is never touched.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from ..errors import InputError
from . import state

__all__ = ["newest_snapshot", "fork_snapshot"]


def newest_snapshot(agent: str, session: str, *, env: Mapping[str, str] | None = None) -> Path:
    """The newest transcript the pre-compact hook kept of ``session`` (an InputError when there is none)."""
    for folder in reversed(state.snapshots(agent, session, env=env)):
        name = orjson.loads((folder / state.SNAPSHOT_PAYLOAD).read_bytes()).get("snapshot")
        if name and (folder / name).is_file():
            return folder / name
    raise InputError(f"no transcript kept before a compaction of session {session}",
                     path=str(state.session_dir(agent, session, env=env)),
                     hint="the pre-compact hook keeps one per compaction: `tcompact hooks install`")


def fork_snapshot(session: Any, *, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Write the newest pre-compaction copy of ``session`` (a :class:`~tcompact.sessions.Session`) as a
    new session of its agent; returns what ``compact --fork --json`` says of a fork."""
    from ..artifacts import make_folder, write_bytes
    from ..sessions.fork import FORK, plan, rewrite_ids

    source = newest_snapshot(session.agent, session.id, env=env)
    p = plan(session, FORK, env=dict(env) if env is not None else None)
    make_folder(p.target.parent)
    write_bytes(p.target, rewrite_ids(source.read_bytes(), p))
    return {**p.describe(), "snapshot": str(source)}
