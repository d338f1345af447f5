"""The only writer of output files, and the one check of an output path.

Every file is written atomically (temp file + rename), never over an existing file unless forced,
never over an input it was made from, and never more readable than those inputs: a session holds
code, paths and often secrets, so what is made from a 0600 session is 0600 too (a folder made for
it 0700). The same check runs before any work (:func:`check_target`, :func:`check_page`,
:func:`probe_folders`), so that a run that cannot write its outputs fails before it starts, with
the words the writer would use.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from functools import cached_property
from pathlib import Path

from .errors import OutputError
from .journal import record as _record

__all__ = ["write_bytes", "write_json", "write_json_all", "write_page", "make_folder", "remove", "remove_paths",
           "check_target", "check_page", "probe_folders", "folder_mode", "PRIVATE"]

#: The mode of tcompact's own folders (the state folder, the cache, offload stores): its user's only.
PRIVATE = 0o700
# Files are written in pieces of this size: one write() of a whole 86 MB dump took 0.2-0.7 s of CPU and
# 1-5 s of wall time in the kernel on a loaded 2-core Linux 6.18 machine, in 256 KiB (or 64-512 KiB) pieces
# 0.03 s and 0.2 s; pieces of 1 MiB or more are as slow as one write (likely the page cache's large folios,
# whose allocation has to compact memory).
_PIECE = 256 * 1024

Paths = Iterable["str | Path | None"]


def _same(a: Path, b: Path) -> bool:
    """The same file: by identity when both exist, else by resolved path (an output not written yet)."""
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def check_target(target: Path, *, force: bool, inputs: Paths = (), same: bool = False) -> None:
    """An output path is never one of ``inputs``, never a folder, and never an existing file unless ``force``
    (``same``: the caller found it is one of its inputs already)."""
    if same or any(p is not None and _same(target, Path(p)) for p in inputs):
        raise OutputError("the output is the input file", path=str(target),
                          hint="write to another path; tcompact never replaces its input")
    if target.is_dir():
        raise OutputError("the output path is a folder", path=str(target), hint="name a file, not a folder")
    if target.exists() and not force:
        raise OutputError("the output file exists already", path=str(target),
                          hint="pass --force to overwrite it, or choose another path")


def check_page(path: Path, *, force: bool, keep: Paths = ()) -> None:
    """An HTML report can be written at ``path``: not a folder, in a folder that exists, not one of
    ``keep`` (the inputs and the run's other outputs), not an existing file unless ``force``."""
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise OutputError("the HTML report path is a folder", path=str(path), hint="name a file, e.g. report.html")
    if not folder.is_dir():
        raise OutputError("the output folder does not exist", path=str(folder), hint="create it first")
    if any(p is not None and _same(path, Path(p)) for p in keep):
        raise OutputError("the HTML report would replace the input or another output", path=str(path),
                          hint="choose another path for --html")
    check_target(path, force=force)


def probe_folders(targets: Iterable[Path]) -> None:
    """Refuse a target that lands in a folder no file can be created in: the nearest existing folder of
    each is probed with a temporary file, removed at once."""
    probed: set[Path] = set()
    for target in targets:
        folder = target.parent if str(target.parent) else Path(".")
        while not folder.exists() and folder.parent != folder:
            folder = folder.parent  # the folder that would have to take the new file or folder
        if folder in probed:  # a file where a folder should be fails the probe too (Not a directory)
            continue
        probed.add(folder)
        try:
            fd, probe = tempfile.mkstemp(prefix=".tcompact-probe.", dir=folder)
        except OSError as exc:
            raise OutputError(f"cannot write here: {exc.strerror}", path=str(folder),
                              hint="choose another output folder or fix its permissions") from None
        os.close(fd)
        os.unlink(probe)


def write_bytes(path: str | Path, data: bytes, *, force: bool = False, inputs: tuple[str | Path, ...] = (),
                sync: bool = True, check: Callable[[Path], None] | None = None) -> Path:
    """Write ``data`` to ``path`` atomically; refuses to overwrite without ``force`` and refuses an input path.

    ``sync`` flushes the file to disk before the rename; many small files (dumps, offloaded
    originals) skip it — the rename keeps them atomic, and thousands of fsyncs take seconds.
    ``check`` is called on the written temporary file before it takes the target's place; when it
    raises, the temporary file is removed and the target is left as it was.
    """
    return _Writes(inputs).write(Path(path), data, force=force, sync=sync, check=check)


class _Writes:
    """Files written from the same ``inputs``, and what they share, looked up once: the umask, the inputs'
    modes and identities, the folders made and found writable (a compaction writes thousands of offloaded
    outputs into one folder: each looked all of it up again, 0.6 ms a file — issue 26)."""

    def __init__(self, inputs: tuple[str | Path | None, ...]) -> None:
        self.inputs = inputs
        self._made: set[Path] = set()
        self._writable: set[Path] = set()

    @cached_property
    def umask(self) -> int:
        return _umask()

    @cached_property
    def ceiling(self) -> int:
        return _ceiling(self.inputs)

    @cached_property
    def identities(self) -> tuple[set[tuple[int, int]], list[Path]]:
        """The identities of the inputs that exist, and the inputs that do not (compared by resolved path)."""
        found = [(p, _identity(p)) for p in map(Path, filter(None, self.inputs))]
        return {known for _, known in found if known is not None}, [p for p, known in found if known is None]

    def json(self, target: Path, document: object, *, force: bool, sync: bool) -> Path:
        """:func:`write_json`."""
        import orjson

        if target.parent not in self._made:
            make_folder(target.parent, mode=self.folder_mode() if self.inputs else None)
            self._made.add(target.parent)
        data = orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)  # (no copy to add it)
        return self.write(target, data, force=force, sync=sync)

    def folder_mode(self) -> int:
        """:func:`folder_mode`."""
        readable = self.ceiling
        return sum(0o7 << shift for shift in (6, 3, 0) if readable & (0o4 << shift)) & ~self.umask

    def write(self, target: Path, data: bytes, *, force: bool, sync: bool,
              check: Callable[[Path], None] | None = None) -> Path:
        """:func:`write_bytes`."""
        self.check(target, force=force)
        folder = target.parent if str(target.parent) else Path(".")
        if folder not in self._writable:
            if not folder.is_dir():
                raise OutputError("the output folder does not exist", path=str(folder), hint="create it first")
            if not os.access(folder, os.W_OK):
                raise OutputError("the output folder is not writable", path=str(folder),
                                  hint="choose another folder or fix its permissions")
            self._writable.add(folder)
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
        except OSError as exc:
            raise OutputError(f"cannot write here: {exc.strerror}", path=str(folder),
                              hint="check the folder's permissions") from None
        try:
            os.chmod(tmp, self.mode(target) & self.ceiling)
            _write_pieces(fd, data, sync=sync)
            if check is not None:
                check(Path(tmp))
            _replace(tmp, target)
        except OSError as exc:
            _remove(tmp)
            raise OutputError(f"cannot write: {exc.strerror}", path=str(target),
                              hint="check free space and permissions") from None
        except BaseException:
            _remove(tmp)
            raise
        return target

    def mode(self, target: Path) -> int:
        """The permissions a plain ``open(target, "w")`` would give: the replaced file's own, else 0666 less the
        umask (a temporary file is made 0600, which the rename would otherwise keep)."""
        try:
            return stat.S_IMODE(target.stat().st_mode)
        except OSError:
            return 0o666 & ~self.umask

    def check(self, target: Path, *, force: bool) -> None:
        """:func:`check_target`, each input looked at once: an input that exists is the target only by identity
        (a target that does not exist is none of them: the resolved path of one that exists is an existing
        file's), one that does not is left to :func:`check_target`."""
        existing, missing = self.identities
        check_target(target, force=force, inputs=missing,
                     same=bool(existing) and _identity(target) in existing)


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of an existing file, which :func:`os.path.samefile` compares; None when there is none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _write_pieces(fd: int, data: bytes, *, sync: bool) -> None:
    """``data`` into the open file ``fd`` (closed after) in pieces of ``_PIECE`` bytes, flushed to disk when ``sync``."""
    with os.fdopen(fd, "wb") as fh:
        view = memoryview(data)
        for start in range(0, len(view), _PIECE):
            fh.write(view[start:start + _PIECE])
        fh.flush()
        if sync:
            os.fsync(fh.fileno())


def _replace(tmp: str, target: Path) -> None:
    """The rename that puts a written file in place, noted in the open journals (:mod:`tcompact.journal`):
    a new file before it exists (a Ctrl-C between the two leaves none unnoted), a replaced one after."""
    existed = os.path.lexists(target)
    if not existed:
        _record("made", target)
    os.replace(tmp, target)
    if existed:
        _record("replaced", target)


def _ceiling(inputs: Paths) -> int:
    """The permission bits every input allows (a file is never more readable than what it was made from)."""
    bits = 0o777
    for p in inputs:
        if p is not None:
            with contextlib.suppress(OSError):
                bits &= stat.S_IMODE(os.stat(p).st_mode) | 0o7000  # the special bits are not the inputs' to give
    return bits


def folder_mode(inputs: Paths) -> int:
    """The mode of a folder made for files made from ``inputs``: read, write and search for each class
    of user (owner, group, others) that may read every input, less the umask (0700 for a 0600 session)."""
    return _Writes(tuple(inputs)).folder_mode()


def _umask() -> int:
    """The process umask, read without changing it where Linux tells it (``/proc/self/status``)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)  # elsewhere reading the umask means setting it: put it straight back
    os.umask(mask)
    return mask


def _remove(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def write_page(path: str | Path, document: str, *, force: bool = False, inputs: tuple[str | Path, ...] = ()) -> Path:
    """One HTML page (UTF-8), written atomically; folders must exist."""
    return write_bytes(path, document.encode("utf-8", "replace"), force=force, inputs=inputs)


def write_json(path: str | Path, document: object, *, force: bool = False, sync: bool = True,
               inputs: tuple[str | Path, ...] = ()) -> Path:
    """One JSON document, indented, written atomically (folders created as needed, as private as ``inputs``)."""
    return _Writes(inputs).json(Path(path), document, force=force, sync=sync)


def write_json_all(documents: Iterable[tuple[str | Path, object]], *, force: bool = False, sync: bool = True,
                   inputs: tuple[str | Path, ...] = ()) -> list[Path]:
    """:func:`write_json` of each ``(path, document)``, in order (the documents taken one at a time): the same
    files, modes and refusals, with what they share looked up once."""
    writes = _Writes(inputs)
    return [writes.json(Path(path), document, force=force, sync=sync) for path, document in documents]


def make_folder(folder: str | Path, *, mode: int | None = None) -> Path:
    """Create a folder (and its parents) for outputs; those it creates get ``mode`` (None: the umask's
    default). A folder that exists is left as it is."""
    path = Path(folder)
    missing = [p for p in (path, *path.parents) if not os.path.lexists(p)]
    try:
        for created in reversed(missing):  # made with its mode, never wider for a moment
            created.mkdir(mode=0o777 if mode is None else mode, exist_ok=True)
            _record("folders", created)
        path.mkdir(parents=True, exist_ok=True)  # a file in the way is an error
    except OSError as exc:
        raise OutputError(f"cannot create the folder: {exc.strerror}", path=str(path),
                          hint="choose another place or fix the permissions") from None
    return path


def remove(path: str | Path) -> None:
    """Delete a file tcompact wrote (a restored backup); a file already gone is fine."""
    try:
        Path(path).unlink(missing_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot remove: {exc.strerror}", path=str(path), hint="check the folder's permissions") \
            from None


def remove_paths(paths: tuple[str | Path, ...]) -> None:
    """Remove files and folders tcompact wrote before (a batch task redoing its outputs); absent ones are fine."""
    import shutil

    for p in map(Path, paths):
        if not (p.is_dir() and not p.is_symlink()):
            remove(p)
            continue
        try:
            shutil.rmtree(p)
        except OSError as exc:
            raise OutputError(f"cannot remove an earlier output: {exc.strerror}", path=str(p),
                              hint="check the folder's permissions") from None
