"""``tcompact batch``: one kind of task (inspect, compact) over thousands of files, on a pool or Ray.

:func:`run_batch` streams the files of folders, globs and manifests to an engine (a local process
pool, or Ray tasks on a cluster), appends one JSON line per file to ``results.jsonl`` in the
batch folder and returns the summary; a re-run with the same settings skips the files whose line
is there and whose bytes have not changed. A kind is a name, a function of (path, settings) and
its fingerprint (:mod:`~tcompact.batch.kinds`).
"""

from __future__ import annotations

from .kinds import KINDS, CompactTask, Kind, get_kind
from .runner import BatchOptions, Interrupted, Progress, run_batch

__all__ = ["run_batch", "BatchOptions", "Progress", "Interrupted", "KINDS", "Kind", "get_kind", "CompactTask"]
