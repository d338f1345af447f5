"""Writing what a compaction prepared: dumps, offloaded originals, the transcript (read back before it
takes its place) and the report, every file atomically by :mod:`tcompact.artifacts`.

Nothing existing is overwritten without ``force`` (dumps have unique names, so a dump folder can be
reused).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..artifacts import PRIVATE, folder_mode, make_folder, write_bytes, write_json, write_json_all
from ..errors import TcompactError, WorkFailed
from .chain import CompactionRun, Status
from .paths import OutputPaths

__all__ = ["write_run", "write_report", "outputs_of", "as_written", "as_failed"]


def write_run(run: CompactionRun, paths: OutputPaths, *, force: bool, source: Path, strict: bool = False,
              allow_mismatch: bool = False, private: Path | None = None,
              settle: Callable[[Path], None] | None = None) -> tuple[list[Path], list[str]]:
    """Write what the run produced, and say which invariants it breaks (README, "Invariants").

    Failed runs write their dumps and report only; so do runs that break an invariant under
    ``strict``. "Nothing to do" writes nothing but the dumps of the summariser calls it made (a
    result refused as no smaller), so that the same command can run again. The transcript is read
    back before it takes its place: an output that does not read as the compacted messages is a
    violation too, and it is not written (nothing replaced) unless ``allow_mismatch``; the caller
    tells by ``paths.output`` missing from what was written. A transcript not written makes the run
    failed in the report (:func:`as_written`), as in the command's exit code and its other outputs.

    Nothing is more readable than ``source``: the files get no permission it lacks, the folders made
    for them as little (:func:`tcompact.artifacts.folder_mode`); the offload store and ``private`` (a
    folder of tcompact's own the outputs go into, made once there is something to write) are 0700.

    ``settle`` (``compact --in-place``): the transcript replaces ``source`` itself, and ``settle`` is
    called on it, written and read back, before it takes the session's place (it keeps the backup, or
    refuses, which leaves the session as it was).
    """
    problems = list(run.report.get("invariants") or [])
    mode = _modes(source, private)
    if private is not None and (run.calls or run.status != Status.NOTHING_TO_DO):
        make_folder(private, mode=PRIVATE)
    written = _dumps(run, paths.dump_dir, mode, force=force, source=source)
    if run.status == Status.COMPACTED and not (strict and problems):
        written += _blobs(run, paths.store, force=force, source=source)
        make_folder(paths.output.parent, mode=mode(paths.output.parent))
        written += _transcript(run, paths, problems, source=source, force=force, settle=settle,
                               allow=allow_mismatch and not strict)
    settled = as_written(run, written=written, output=paths.output, problems=problems, strict=strict)
    report = write_report(settled, paths, written=written, problems=problems, force=force, source=source,
                          state=private)
    return written + ([report] if report is not None else []), problems


def _modes(source: Path, private: Path | None) -> Callable[[Path], int]:
    """The mode of a folder made for the outputs: as private as ``source``, and inside tcompact's own
    folder ``private``, as private as it."""
    shared = folder_mode((source,))
    return lambda folder: PRIVATE if private is not None and folder.resolve().is_relative_to(private.resolve()) \
        else shared


def _dumps(run: CompactionRun, folder: Path, mode: Callable[[Path], int], *, force: bool, source: Path) -> list[Path]:
    """One dump per summariser call the run made (none: no folder made)."""
    if not run.calls:
        return []
    made = make_folder(folder, mode=mode(folder))
    return write_json_all(((made / name, doc) for name, doc in run.dumps()), force=force, sync=False, inputs=(source,))


def _blobs(run: CompactionRun, store: Path, *, force: bool, source: Path) -> list[Path]:
    """The offloaded originals, in the store (0700)."""
    if run.blobs:
        make_folder(store, mode=PRIVATE)
    return write_json_all(run.blobs, force=force, sync=False, inputs=(source,))


def write_report(run: CompactionRun, paths: OutputPaths, *, written: Sequence[Path], problems: Sequence[str],
                 force: bool, source: Path, state: Path | None = None) -> Path | None:
    """The report file (none for "nothing to do"): the run's report, where its outputs went, the invariants
    broken; as private as ``source``."""
    if paths.report is None or run.status == Status.NOTHING_TO_DO:
        return None
    report = {**run.report, "outputs": outputs_of(run, paths, [*written, paths.report], state=state)}
    return write_json(paths.report, {**report, "invariants": list(problems)}, force=force, inputs=(source,))


def as_written(run: CompactionRun, *, written: Sequence[Path], output: Path, problems: Sequence[str],
               strict: bool) -> CompactionRun:
    """The run as its outputs left it: a compaction whose transcript was not written (it does not read back,
    or breaks an invariant under ``strict``) failed, and says why; any other run as it was."""
    if run.status != Status.COMPACTED or output in written:
        return run
    if strict and problems:
        return as_failed(run, f"the compaction breaks {len(problems)} invariant(s): {problems[0]}; the compacted "
                              "transcript was not written (--strict)")
    return as_failed(run, f"the compaction was not written: {problems[-1] if problems else 'no output'}")


def as_failed(run: CompactionRun, reason: str) -> CompactionRun:
    """The run failed for ``reason`` (its report says so: status "failed", the reason); the input is untouched."""
    return dataclasses.replace(run, status=Status.FAILED, message=reason,
                               report={**run.report, "status": Status.FAILED.value, "reason": reason})


def _transcript(run: CompactionRun, paths: OutputPaths, problems: list[str], *, source: Path, force: bool,
                settle: Callable[[Path], None] | None, allow: bool) -> list[Path]:
    """The compacted transcript, read back before it takes its place ([] when it does not read back and
    ``allow`` is false: the run fails on ``problems``)."""
    assert run.output is not None

    def reads_back(tmp: Path) -> None:
        problem = _read_back(tmp, run)
        if problem:
            problems.append(problem)
            if not allow:
                raise WorkFailed(problem, path=str(paths.output), hint="nothing was written in its place")
        if settle is not None:
            settle(tmp)

    try:
        return [write_bytes(paths.output, run.output.data, force=force or settle is not None,
                            inputs=() if settle is not None else (source,), check=reads_back)]
    except WorkFailed:
        return []


def outputs_of(run: CompactionRun, paths: OutputPaths, written: Sequence[Path], *,
               state: Path | None = None) -> dict[str, Any]:
    """Where the run's outputs went: the report's ``outputs``, and ``compact --json``'s. ``state``: the
    entry of tcompact's state folder a fork or an in-place run writes to."""
    transcript = paths.output in written
    return {"transcript": str(paths.output) if transcript else None,
            "dumps": [str(p) for p in written if p.parent == paths.dump_dir],
            "offload_store": str(paths.store) if run.blobs and transcript else None,
            "state": str(state) if state is not None and any(p.is_relative_to(state) for p in written) else None}


def _read_back(path: Path, run: CompactionRun) -> str | None:
    """A violation when the written file does not read back as the compacted messages."""
    from ..formats import ReadOptions, read_file

    # lines skipped in the input as unreadable (--skip-bad-lines) are written back as they were
    try:
        again = read_file(path, ReadOptions(format=run.output_format, keep_raw=False,
                                            skip_bad_lines=bool(run.source.skipped)))
        (back,) = [t for t in again.transcripts if t.id == run.transcript.id] or again.transcripts[:1]
    except (TcompactError, ValueError) as exc:
        return f"the output does not read back: {exc}"
    def shape(messages):  # what a reader must give back: roles, texts, tool pairing
        return [(m.role, m.text, tuple(c.id for c in m.tool_calls), m.tool_call_ids) for m in messages]

    held = run.output.written.messages if run.output is not None and run.output.written is not None else run.messages
    if shape(back.messages) != shape(held):
        return "the output does not read back as the compacted messages"
    return None
