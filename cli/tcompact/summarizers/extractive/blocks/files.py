"""The files of a block's Artifact Trail: which were touched and how, the most important first.

Files outlive the messages that touched them, so they are ranked (changed, then read, then only
searched; newest first) and shown as status lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..scan import MAX_FILES, FileState

if TYPE_CHECKING:
    from ..scan import Scan, Work



def _weight(info: FileState) -> int:
    """0 for changed files, 1 for read ones, 2 for ones only searched."""
    ops = info.ops
    if ops.get("created") or ops.get("written") or ops.get("edited") or ops.get("deleted"):
        return 0
    if ops.get("read"):
        return 1
    return 2 if not info.failed else 1


def _ranked_files(work: Work, rounds: set[int] | None = None, *, searched: bool = True) -> list[FileState]:
    """Files by importance: changed ones first, then read, then only searched; newest first."""
    files = [f for f in work.files.values()
             if (rounds is None or f.rounds & rounds) and (searched or set(f.ops) - {"searched"} or f.failed)]
    files.sort(key=lambda f: (_weight(f), -f.last))
    return files[:MAX_FILES]


def file_lines(x: Scan, rounds: set[int] | None = None, *, exclude: set[str] | frozenset[str] = frozenset()
                ) -> list[tuple[str, int]]:
    """One Artifact Trail line per file: its path and what was done to it."""
    files = [f for f in _ranked_files(x.work, rounds) if f.path not in exclude]
    return [(f"{f.path} — {f.status()}", rank) for rank, f in enumerate(files)]
