"""What the hooks have kept and done, for ``tcompact hooks status``: the state folder in figures."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import state

__all__ = ["state_summary"]


def state_summary(env: Mapping[str, str] | None = None, *, recent: int = 5) -> dict[str, Any]:
    """The state folder, its sessions and compactions (with and without a handoff), the newest compaction
    folder, and the last lines of the hooks' log."""
    live = state.state_root(env) / "live"
    sessions = sorted(p for p in live.iterdir() if p.is_dir()) if live.is_dir() else []
    folders = [f for s in sessions for f in s.iterdir() if (f / state.SNAPSHOT_PAYLOAD).exists()]
    newest = max(folders, key=lambda f: f.name, default=None)
    try:
        lines = state.log_path(env).read_text(encoding="utf-8", errors="replace").splitlines()[-recent:]
    except OSError:
        lines = []
    return {"folder": str(state.state_root(env)), "log": str(state.log_path(env)), "sessions": len(sessions),
            "compactions": len(folders), "handoffs": sum((f / state.HANDOFF_FILE).exists() for f in folders),
            "newest": str(newest) if newest else None, "recent": lines}
