"""Compacting a transcript file: the library side of ``tcompact compact``.

:func:`compact_file` reads the file, runs the chain of compressors (each re-evaluating its own
trigger on the previous one's output), and prepares — without writing anything — the compacted
transcript, one dump per summariser call, the offloaded originals and the token report
(:mod:`.chain`); :func:`write_run` writes them (:mod:`.writing`, where :mod:`.paths` says).
:func:`run_job` is the whole command: the checks in their order, a stored session, the run, its
outputs and the HTML report (:mod:`.job`). What the command can be told is :class:`CompactOptions`
(:mod:`.options`), a value checked when it is made and trusted here; what a run did is a
:class:`Status`.
"""

from __future__ import annotations

from .chain import CompactionRun, Status, Stage, compact_file, compact_source, locate
from .job import CompactJob, JobOutcome, run_failure, run_job, strict_failure
from .options import CompactOptions
from .paths import OutputPaths, check_paths, default_paths
from .writing import as_written, write_run

__all__ = ["CompactOptions", "Status", "Stage", "CompactionRun", "compact_file",
           "compact_source", "locate", "OutputPaths", "default_paths", "check_paths", "write_run", "CompactJob", "JobOutcome",
           "run_job", "strict_failure", "run_failure", "as_written"]
