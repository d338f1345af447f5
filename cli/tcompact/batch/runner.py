"""Running a batch: sources → jobs → an engine → result lines → the summary.

The driver streams the sources, drops paths it has already queued, asks the results index
whether each path has a line for these settings (the worker then skips the file when its sha256
is unchanged), appends every new line as soon as it arrives and folds every line — new or
resumed — into the totals. It holds the index and the totals, never the results.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .. import __version__
from ..errors import InputError, Interrupted, UsageError
from ..counting.cache import enabled as cache_enabled
from .engines import Engine, make_engine
from .kinds import Kind, get_kind
from .results import RESULTS, Results, claim, path_key
from .sources import STDIN, expand, resolve_out, survey
from .worker import RESUMED, Job

__all__ = ["BatchOptions", "Progress", "Interrupted", "run_batch", "MAX_FAILURES_LISTED"]

MAX_FAILURES_LISTED = 20
_SYNC_EVERY_S = 1.0


class BatchOptions(BaseModel):
    """How and where to run a batch (validated at the boundary)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    out: Path = Field(description="the batch folder: batch.json, results.jsonl and compact's outputs")
    engine: Literal["pool", "ray"] = Field("pool", description="a local process pool, or Ray tasks")
    workers: int | None = Field(None, ge=1, description="tasks at once: pool processes, Ray CPUs (default: all)")
    address: str | None = Field(None, description="the Ray cluster (default RAY_ADDRESS, else a local Ray)")
    retry_failed: bool = Field(False, description="run again the tasks whose recorded line failed")


@dataclass(frozen=True)
class Progress:
    """Where a run stands, after each finished task."""

    done: int
    total: int | None
    ok: int
    failed: int
    resumed: int


class _Tally:
    """Counts and totals of the run's lines, and the first failures."""

    def __init__(self, kind: Kind, settings: Any) -> None:
        self.counts = {"ran": 0, "resumed": 0, "ok": 0, "failed": 0, "not_transcript": 0}
        self.sums = kind.make_totals(settings)
        self.failures: list[dict[str, str]] = []

    def add(self, line: dict[str, Any], *, resumed: bool) -> None:
        self.counts["resumed" if resumed else "ran"] += 1
        self.counts[line["status"]] += 1
        if line["status"] == "ok":
            self.sums.add(line["figures"])
        elif line["status"] == "failed" and len(self.failures) < MAX_FAILURES_LISTED:
            self.failures.append({"path": line["path"], "error": line["error"]})

    @property
    def done(self) -> int:
        return self.counts["ran"] + self.counts["resumed"]


def run_batch(kind_name: str, sources: Sequence[str], settings: Any, options: BatchOptions, *,
              on_progress: Callable[[Progress], None] | None = None) -> dict[str, Any]:
    """Run one kind over every file of ``sources`` into ``options.out``; returns the summary document."""
    kind = get_kind(kind_name)
    if kind.check is not None:
        kind.check(settings)
    out = resolve_out(options.out)
    _check_out(sources, out)
    engine = make_engine(options.engine, workers=options.workers, address=options.address)
    engine.open()
    try:
        return _run(kind, sources, settings, options, engine=engine, out=out, on_progress=on_progress)
    finally:
        engine.close()


def _run(kind: Kind, sources: Sequence[str], settings: Any, options: BatchOptions, *, engine: Engine, out: str,
         on_progress: Callable[[Progress], None] | None) -> dict[str, Any]:
    total, root = (None, os.getcwd()) if STDIN in sources else survey(sources, exclude=out)
    if total == 0:
        raise InputError("the sources name no file", path=" ".join(sources),
                         hint="pass folders, globs, transcript files or manifests that list some")
    sid, root = claim(Path(out), kind=kind.name, fingerprint=kind.fingerprint(settings), root=root)
    if kind.bind is not None:
        settings = kind.bind(settings, out, root)
    results = Results(Path(out), sid, unfinished=kind.unfinished)
    tally, seen = _Tally(kind, settings), _Seen()
    started = time.monotonic()
    jobs = _jobs(sources, out=out, kind=kind.name, settings=settings, sid=sid, results=results, seen=seen,
                 retry_failed=options.retry_failed, no_cache=not cache_enabled())
    try:
        _drive(engine, jobs, results, tally, lambda: Progress(
            tally.done, total and total - seen.duplicates, tally.counts["ok"], tally.counts["failed"],
            tally.counts["resumed"]), on_progress)
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted after {tally.done} of {total if total is not None else '?'} tasks",
                          path=str(results.path),
                          hint="every finished task's line is kept; run the same command again to go on") from None
    finally:
        results.close()
    seconds = time.monotonic() - started
    return _summary(kind.name, tally, engine=engine, out=out, sid=sid, seconds=seconds, duplicates=seen.duplicates,
                    warnings=_warnings(results))


def _drive(engine: Engine, jobs: Iterator[Job], results: Results, tally: _Tally, progress: Callable[[], Progress],
           on_progress: Callable[[Progress], None] | None) -> None:
    """Feed the jobs to the engine; append each new line as it comes and count every line."""
    synced = time.monotonic()
    with contextlib.closing(engine.map(jobs)) as outcomes:  # closing stops the engine on Ctrl-C
        for job, outcome in outcomes:
            resumed = outcome == RESUMED
            line = results.recorded(job.path) if resumed else outcome
            if not resumed:
                results.append(line)
            tally.add(line, resumed=resumed)
            if time.monotonic() - synced > _SYNC_EVERY_S:
                results.sync()
                synced = time.monotonic()
            if on_progress is not None:
                on_progress(progress())


class _Seen:
    """Paths already queued in this run (12-byte keys), so that a path listed twice runs once."""

    def __init__(self) -> None:
        self.keys: set[bytes] = set()
        self.duplicates = 0

    def first(self, path: str) -> bool:
        key = path_key(path)
        if key in self.keys:
            self.duplicates += 1
            return False
        self.keys.add(key)
        return True


def _jobs(sources: Sequence[str], *, out: str, kind: str, settings: Any, sid: str, results: Results, seen: _Seen,
          retry_failed: bool, no_cache: bool) -> Iterator[Job]:
    for found in expand(sources, exclude=out):
        if not seen.first(found.path):
            continue
        record = results.lookup(found.path)
        if record is not None and retry_failed and record[1]:
            record = None
        yield Job(path=found.path, named=found.named, recorded=record[0] if record else None,
                  has_record=record is not None, kind=kind, settings=settings, settings_id=sid, no_cache=no_cache)


def _check_out(sources: Sequence[str], out: str) -> None:
    for source in sources:
        if source != STDIN and os.path.isdir(source) and os.path.realpath(source) == os.path.realpath(out):
            raise UsageError("--out is a SOURCE folder", path=source,
                             hint="write the batch to another folder (it may lie inside the source folder)")


def _warnings(results: Results) -> list[str]:
    notes = []
    if results.dropped:
        notes.append(f"{results.path}: cut off a half-written last line ({results.dropped} bytes) left by an "
                     "interrupted run; that task ran again")
    if results.unreadable:
        notes.append(f"{results.path}: {results.unreadable} line(s) are not result lines and were ignored")
    return notes


def _summary(kind: str, tally: _Tally, *, engine: Any, out: str, sid: str, seconds: float, duplicates: int,
             warnings: list[str]) -> dict[str, Any]:
    return {
        "tool": "tcompact", "version": __version__, "schema_version": 1, "kind": kind,
        "engine": engine.name, "workers": engine.workers, "out": out, "results": str(Path(out) / RESULTS),
        "settings_id": sid,
        "tasks": {"total": tally.done, **tally.counts, "duplicates": duplicates},
        "totals": tally.sums.result(),
        "failures": tally.failures,
        "seconds": round(seconds, 3),
        "tasks_per_second": round(tally.counts["ran"] / seconds, 2) if seconds > 0 else None,
        "warnings": warnings,
    }
