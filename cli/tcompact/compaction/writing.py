"""Writing what a compaction prepared: dumps, offloaded originals, the transcript (read back before it
takes its place) and the report, every file atomically by :mod:`tcompact.artifacts`.

Nothing existing is overwritten without ``force`` (dumps have unique names, so a dump folder can be
reused).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from ..artifacts import make_folder, write_bytes, write_json
from ..errors import TcompactError, WorkFailed
from .chain import CompactionRun
from .paths import OutputPaths

__all__ = ["write_run", "write_report", "as_written", "as_failed"]


def write_run(run: CompactionRun, paths: OutputPaths, *, force: bool, source: Path, strict: bool = False,
              allow_mismatch: bool = False) -> tuple[list[Path], list[str]]:
    """Write what the run produced, and say which invariants it breaks (README, "Invariants").

    Failed runs write their dumps and report only; so do runs that break an invariant under
    ``strict``. "Nothing to do" writes nothing but the dumps of the summariser calls it made (a
    result refused as no smaller), so that the same command can run again. The transcript is read
    back before it takes its place: an output that does not read as the compacted messages is a
    violation too, and it is not written (nothing replaced) unless ``allow_mismatch``; the caller
    tells by ``paths.output`` missing from what was written. A transcript not written makes the run
    failed in the report (:func:`as_written`), as in the command's exit code and its other outputs.
    """
    written: list[Path] = []
    problems = list(run.report.get("invariants") or [])
    if run.calls:
        folder = make_folder(paths.dump_dir)
        written += [write_json(folder / name, doc, force=force, sync=False) for name, doc in run.dumps()]
    transcript = run.status == "compacted" and not (strict and problems)
    if transcript:
        for path, doc in run.blobs:
            written.append(write_json(Path(path), doc, force=force, sync=False))
        assert run.output is not None

        def reads_back(tmp: Path) -> None:
            problem = _read_back(tmp, run)
            if problem:
                problems.append(problem)
                if strict or not allow_mismatch:
                    raise WorkFailed(problem, path=str(paths.output), hint="nothing was written in its place")

        try:
            written.append(write_bytes(paths.output, run.output.data, force=force, inputs=(source,),
                                       check=reads_back))
        except WorkFailed:  # the run fails on ``problems`` (:func:`as_written`)
            pass
    settled = as_written(run, written=written, output=paths.output, problems=problems, strict=strict)
    report = write_report(settled, paths, written=written, problems=problems, force=force)
    return written + ([report] if report is not None else []), problems


def write_report(run: CompactionRun, paths: OutputPaths, *, written: Sequence[Path], problems: Sequence[str],
                 force: bool) -> Path | None:
    """The report file (none for "nothing to do"): the run's report, what was written, the invariants broken."""
    if paths.report is None or run.status == "nothing to do":
        return None
    report = {**run.report, "outputs": {"transcript": str(paths.output) if paths.output in written else None,
                                        "dumps": [str(p) for p in written if p.parent == paths.dump_dir],
                                        "offload_store": str(paths.store) if run.blobs else None}}
    return write_json(paths.report, {**report, "invariants": list(problems)}, force=force)


def as_written(run: CompactionRun, *, written: Sequence[Path], output: Path, problems: Sequence[str],
               strict: bool) -> CompactionRun:
    """The run as its outputs left it: a compaction whose transcript was not written (it does not read back,
    or breaks an invariant under ``strict``) failed, and says why; any other run as it was."""
    if run.status != "compacted" or output in written:
        return run
    if strict and problems:
        return as_failed(run, f"the compaction breaks {len(problems)} invariant(s): {problems[0]}; the compacted "
                              "transcript was not written (--strict)")
    return as_failed(run, f"the compaction was not written: {problems[-1] if problems else 'no output'}")


def as_failed(run: CompactionRun, reason: str) -> CompactionRun:
    """The run failed for ``reason`` (its report says so: status "failed", the reason); the input is untouched."""
    return dataclasses.replace(run, status="failed", message=reason,
                               report={**run.report, "status": "failed", "reason": reason})


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
