"""The Artifact Trail: which files were touched and how, what they are about, and where they sit.

Files outlive the messages that touched them, so they are ranked (changed, then read, then only
searched; newest first) and shown as status lines, notes with their gist and symbols, and a tree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..scan.extraction import MAX_FILES, FileState
from ..text import quote

if TYPE_CHECKING:
    from ..scan.extraction import Scan

_STATUS_OPS = ("created", "written", "edited", "deleted", "moved", "read", "searched")


def _file_status(info: FileState) -> str:
    """A file's operations: created, edited ×3, read, a failed op that never succeeded, …"""
    parts = []
    for op in _STATUS_OPS:
        n = info.ops.get(op, 0)
        if n:
            parts.append(op + (f" ×{n}" if n > 1 else ""))
    for op, n in sorted(info.failed.items()):
        if not info.ops.get(op):
            parts.append(f"{op} failed" + (f" ×{n}" if n > 1 else ""))
    return ", ".join(parts) or "touched"


def _weight(info: FileState) -> int:
    """0 for changed files, 1 for read ones, 2 for ones only searched."""
    ops = info.ops
    if ops.get("created") or ops.get("written") or ops.get("edited") or ops.get("deleted"):
        return 0
    if ops.get("read"):
        return 1
    return 2 if not info.failed else 1


def _ranked_files(x: Scan, rounds: set[int] | None = None, *, searched: bool = True) -> list[FileState]:
    """Files by importance: changed ones first, then read, then only searched; newest first."""
    files = [f for f in x.files.values()
             if (rounds is None or f.rounds & rounds) and (searched or set(f.ops) - {"searched"} or f.failed)]
    files.sort(key=lambda f: (_weight(f), -f.last))
    return files[:MAX_FILES]


def _file_lines(x: Scan, rounds: set[int] | None = None, *, exclude: set[str] | frozenset[str] = frozenset()
                ) -> list[tuple[str, int]]:
    """One Artifact Trail line per file: its path and what was done to it."""
    files = [f for f in _ranked_files(x, rounds) if f.path not in exclude]
    return [(f"{f.path} — {_file_status(f)}", rank) for rank, f in enumerate(files)]


def _noted_paths(x: Scan) -> set[str]:
    """Paths that get a note (a gist or symbols), so a plain status line for them would repeat it."""
    return {f.path for f in _ranked_files(x, searched=False) if f.gist or f.symbols}


def _file_notes(x: Scan, rounds: set[int] | None = None) -> list[tuple[str, int]]:
    """What a file is about: its doc line and the symbols it defines or got."""
    out = []
    for f in _ranked_files(x, rounds, searched=False):
        if not f.gist and not f.symbols:
            continue
        text = f"{f.path} ({_file_status(f)})"
        if f.gist:
            text += f": {quote(f.gist)}"
        if f.symbols:
            text += "; symbols: " + ", ".join(f"`{s}`" for s in f.symbols)
        out.append((text, len(out)))
    return out


def _tree(x: Scan, rounds: set[int] | None = None) -> list[tuple[str, int]]:
    """The touched files as an indented tree under their common folders."""
    files = _ranked_files(x, rounds, searched=False)
    if not files:
        return []
    groups = _nested(files)
    lines: list[str] = []
    for root in sorted(groups):
        prefix, node = _merged(root, groups[root])  # the common prefix
        lines.append(prefix if prefix != "./" else "(relative paths)")
        lines += _render(node, 1)
    return [(line, n) for n, line in enumerate(lines)]


def _nested(files: Sequence[FileState]) -> dict[str, dict[str, Any]]:
    """Files as nested dicts under their root ('/', '~/' or './'): folders end with '/', files map to status."""
    groups: dict[str, dict[str, Any]] = {}
    for f in sorted(files, key=lambda f: f.path):
        path = f.path
        root = "/" if path.startswith("/") else ("~/" if path.startswith("~/") else "./")
        parts = [p for p in path[len(root) if root != "./" or path.startswith("./") else 0:].split("/") if p]
        node = groups.setdefault(root, {})
        for part in parts[:-1]:
            node = node.setdefault(part + "/", {})
        node[parts[-1] if parts else path] = _file_status(f)
    return groups


def _merged(label: str, node: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    """A folder label with its chain of single-child subfolders merged into it, and the last of them."""
    while len(node) == 1 and isinstance(next(iter(node.values())), dict):
        key = next(iter(node))
        label, node = label + key, node[key]
    return label, node


def _render(node: Mapping[str, Any], depth: int) -> list[str]:
    """Tree lines of a nested dict (dirs end with '/'; single-child dir chains merged)."""
    dirs = sorted(k for k, v in node.items() if isinstance(v, dict))
    files = sorted(k for k, v in node.items() if not isinstance(v, dict))
    indent = "  " * depth
    lines = [f"{indent}{name} — {node[name]}" for name in files]
    for name in dirs:
        label, child = _merged(name, node[name])
        lines.append(f"{indent}{label}")
        lines += _render(child, depth + 1)
    return lines
