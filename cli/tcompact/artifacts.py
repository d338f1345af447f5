"""The only writer of output files: atomic (temp file + rename), never over an existing file
unless forced, never over the input it was made from."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from .errors import OutputError

__all__ = ["write_bytes", "write_json", "make_folder", "remove"]


def write_bytes(path: str | Path, data: bytes, *, force: bool = False, inputs: tuple[str | Path, ...] = (),
                sync: bool = True, check: Callable[[Path], None] | None = None) -> Path:
    """Write ``data`` to ``path`` atomically; refuses to overwrite without ``force`` and refuses an input path.

    ``sync`` flushes the file to disk before the rename; many small files (dumps, offloaded
    originals) skip it — the rename keeps them atomic, and thousands of fsyncs take seconds.
    ``check`` is called on the written temporary file before it takes the target's place; when it
    raises, the temporary file is removed and the target is left as it was.
    """
    target = Path(path)
    for src in inputs:
        if Path(src).exists() and target.exists() and os.path.samefile(src, target):
            raise OutputError("the output is the input file", path=str(target),
                              hint="write to another path; tcompact never replaces its input")
    if target.exists() and not force:
        raise OutputError("the output file exists already", path=str(target),
                          hint="pass --force to overwrite it, or choose another path")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError("the output folder does not exist", path=str(folder), hint="create it first")
    if not os.access(folder, os.W_OK):
        raise OutputError("the output folder is not writable", path=str(folder),
                          hint="choose another folder or fix its permissions")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OutputError(f"cannot write here: {exc.strerror}", path=str(folder),
                          hint="check the folder's permissions") from None
    try:
        os.chmod(tmp, _mode(target))
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        if check is not None:
            check(Path(tmp))
        os.replace(tmp, target)
    except OSError as exc:
        _remove(tmp)
        raise OutputError(f"cannot write: {exc.strerror}", path=str(target),
                          hint="check free space and permissions") from None
    except BaseException:
        _remove(tmp)
        raise
    return target


def _mode(target: Path) -> int:
    """The permissions a plain ``open(target, "w")`` would give: the replaced file's own, else
    0666 less the umask (a temporary file is made 0600, which the rename would otherwise keep)."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


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


def write_json(path: str | Path, document: object, *, force: bool = False, sync: bool = True) -> Path:
    """One JSON document, indented, written atomically (folders created as needed)."""
    import orjson

    target = Path(path)
    make_folder(target.parent)
    return write_bytes(target, orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n", force=force, sync=sync)


def make_folder(folder: str | Path) -> Path:
    """Create a folder (and its parents) for outputs."""
    path = Path(folder)
    try:
        path.mkdir(parents=True, exist_ok=True)
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
