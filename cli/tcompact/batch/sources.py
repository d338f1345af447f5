"""What a batch runs over: folders, globs and manifests, streamed one path at a time.

A SOURCE is a folder (every transcript-looking file below it: ``*.jsonl``, ``*.json``, ``*.traj``,
``*.ndjson``), a glob (``runs/**/*.traj``; quoted, so that tcompact expands it), a transcript
file, a manifest (any other file: one path per line, relative to the manifest's folder; blank
lines and ``#`` comments skipped; a line naming a folder or glob is expanded like a SOURCE), or
``-`` for a manifest on standard input. Nothing is collected into a list: folders are walked
in sorted order one directory at a time, globs and manifests are read as they go, so the driver's
memory does not grow with the corpus. :func:`survey` walks everything once to count the tasks
(for the progress bar's ETA) and find the folder they all lie in (the root compact mirrors).
"""

from __future__ import annotations

import glob
import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

__all__ = ["Found", "expand", "survey", "resolve_out", "TRANSCRIPT_SUFFIXES", "STDIN"]

TRANSCRIPT_SUFFIXES = (".jsonl", ".json", ".traj", ".ndjson")
STDIN = "-"
_MAGIC = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class Found:
    """One file to run: its absolute path, and whether it was named (in a manifest or as a SOURCE)
    rather than found in a folder — found files that hold no transcript are passed over."""

    path: str
    named: bool


def expand(sources: Iterable[str], *, exclude: str | None = None) -> Iterator[Found]:
    """Every file of the sources, in order (duplicates included; the runner drops them)."""
    for source in sources:
        yield from _expand_one(source, base=os.getcwd(), exclude=exclude, depth=0)


def _expand_one(source: str, *, base: str, exclude: str | None, depth: int) -> Iterator[Found]:
    if source == STDIN and depth == 0:
        yield from _manifest(sys.stdin, where="standard input", base=base, exclude=exclude, depth=depth)
        return
    path = os.path.normpath(os.path.join(base, os.path.expanduser(source)))
    if os.path.isdir(path):
        yield from _walk(path, source, exclude)
    elif os.path.isfile(path):
        if path.lower().endswith(TRANSCRIPT_SUFFIXES) or depth > 0:
            yield Found(path, named=True)
        else:
            yield from _read_manifest(path, shown=source, exclude=exclude, depth=depth)
    elif _MAGIC & set(source):
        yield from _glob(path, source, exclude)
    elif depth > 0:  # a manifest line naming a missing file: that task fails with the command's error
        yield Found(path, named=True)
    else:
        raise InputError("no such file, folder or matching glob", path=source,
                         hint="pass folders, globs (quoted), transcript files or manifests")


def _walk(folder: str, source: str, exclude: str | None) -> Iterator[Found]:
    found = False
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not _excluded(os.path.join(top, d), exclude))
        for name in sorted(files):
            if name.lower().endswith(TRANSCRIPT_SUFFIXES):
                found = True
                yield Found(os.path.join(top, name), named=False)
    if not found:
        raise InputError("no transcript files in this folder", path=source,
                         hint=f"tcompact looks for {', '.join('*' + s for s in TRANSCRIPT_SUFFIXES)}")


def _glob(pattern: str, source: str, exclude: str | None) -> Iterator[Found]:
    found = False
    for match in glob.iglob(pattern, recursive=True):
        if os.path.isfile(match) and not _excluded(match, exclude):
            found = True
            yield Found(os.path.abspath(match), named=False)
    if not found:
        raise InputError("the glob matches no file", path=source, hint="check the pattern (quote it for tcompact)")


def _read_manifest(path: str, *, shown: str, exclude: str | None, depth: int) -> Iterator[Found]:
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot read the manifest: {exc.strerror}", path=shown, hint="check the path") from None
    with fh:
        yield from _manifest(fh, where=shown, base=os.path.dirname(path), exclude=exclude, depth=depth)


def _manifest(lines: Iterable[str | bytes], *, where: str, base: str, exclude: str | None,
              depth: int) -> Iterator[Found]:
    for n, line in enumerate(lines, 1):
        try:
            entry = (line.decode("utf-8") if isinstance(line, bytes) else line).strip()
        except UnicodeDecodeError:
            raise InputError("the manifest is not UTF-8 text", path=where, line=n,
                             hint="a manifest lists one path per line; pass transcript files by their "
                                  f"{'/'.join(TRANSCRIPT_SUFFIXES)} name") from None
        if entry and not entry.startswith("#"):
            yield from _expand_one(entry, base=base, exclude=exclude, depth=depth + 1)


def _excluded(path: str, exclude: str | None) -> bool:
    return exclude is not None and (path == exclude or path.startswith(exclude + os.sep))


def survey(sources: Iterable[str], *, exclude: str | None = None) -> tuple[int, str]:
    """How many files the sources name (duplicates counted) and the deepest folder holding all of them."""
    count, root = 0, None
    for f in expand(sources, exclude=exclude):
        count += 1
        folder = os.path.dirname(f.path)
        root = folder if root is None else os.path.commonpath((root, folder))
    return count, root or os.getcwd()


def resolve_out(out: str | Path) -> str:
    """The output folder as an absolute path (what the walks leave out)."""
    return str(Path(out).expanduser().resolve())
