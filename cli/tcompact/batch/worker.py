"""One batch task, as a worker runs it: hash the file, run its kind, and make the result line.

This is the only code that runs in the pool's processes and on Ray's workers, and both call the
same :func:`execute`, so the two engines give the same lines. A line holds nothing that depends
on where or when it ran (no timings, hosts or worker ids), which is what makes their results
byte-identical once sorted. A file that fails is a line with the error text the single-file
command would print after ``Error:``; nothing a file does makes the task itself raise.

``--no-cache`` (or ``TCOMPACT_NO_CACHE=1`` in the driver) travels with each job rather than
through the environment: a pool's forkserver or a Ray worker started before the run (a cluster,
a notebook's Ray) never saw the driver's variable. It holds for the task only, since workers
are reused.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .. import forked
from ..errors import NotATranscriptError, TcompactError
from .kinds import get_kind

__all__ = ["Job", "execute", "error_text", "internal_error_text", "RESUMED", "file_sha256"]

#: What ``execute`` returns instead of a line when the file is unchanged since its recorded line.
RESUMED = "resumed"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Job:
    """What a worker needs for one task: the file, whether it was named (not found in a folder),
    the sha256 of its recorded result (skip when unchanged), the kind, the settings, and whether
    the token cache is off."""

    path: str
    named: bool
    recorded: str | None
    has_record: bool
    kind: str
    settings: Any
    settings_id: str
    no_cache: bool = False


def file_sha256(path: str) -> str | None:
    """The sha256 of the file's bytes; None when it cannot be read (the task's own error says why)."""
    try:
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError:
        return None


def error_text(exc: TcompactError) -> str:
    """The error as the command line prints it after ``Error: `` (one line, spaces collapsed)."""
    return " ".join(str(exc).split())


def internal_error_text(exc: BaseException) -> str:
    """An unexpected exception (a bug), worded as ``app.py`` words it."""
    return " ".join(f"internal error ({type(exc).__name__}: {exc}) — please report it with the command you ran; "
                    "set TCOMPACT_DEBUG=1 to see the traceback".split())


@contextlib.contextmanager
def _cache_off(off: bool) -> Iterator[None]:
    """``TCOMPACT_NO_CACHE=1`` while the task runs (when ``off``), and the worker's own value again after."""
    from ..counting.cache import NO_CACHE_ENV

    was = os.environ.get(NO_CACHE_ENV)
    if off:
        os.environ[NO_CACHE_ENV] = "1"
    try:
        yield
    finally:
        if off and was is None:
            os.environ.pop(NO_CACHE_ENV, None)
        elif off:
            os.environ[NO_CACHE_ENV] = was


def execute(job: Job) -> dict[str, Any] | str:
    """The result line of one task, or :data:`RESUMED` when its recorded line still holds."""
    with _cache_off(job.no_cache), forked.disabled():  # (the other cores run the other tasks)
        return _execute(job)


def _execute(job: Job) -> dict[str, Any] | str:
    sha = file_sha256(job.path)
    if job.has_record and sha == job.recorded:
        return RESUMED
    line: dict[str, Any] = {"path": job.path, "sha256": sha, "kind": job.kind, "settings": job.settings_id,
                            "status": "ok", "figures": None, "error": None}
    try:
        if not os.path.exists(job.path):  # as `find_files` words it for a path on the command line
            from ..errors import InputError

            raise InputError("no such file or folder", path=job.path, hint="check the path")
        line["figures"] = get_kind(job.kind).run(job.path, job.settings)
    except NotATranscriptError as exc:
        line["status"] = "failed" if job.named else "not_transcript"
        line["error"] = error_text(exc)
    except TcompactError as exc:
        line["status"], line["error"] = "failed", error_text(exc)
    except Exception as exc:  # a bug must cost one line, not the run
        line["status"], line["error"] = "failed", internal_error_text(exc)
        if os.environ.get("TCOMPACT_DEBUG"):
            import traceback

            line["traceback"] = traceback.format_exc()
    return line
