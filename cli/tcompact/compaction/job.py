"""``tcompact compact`` as one library call: the checks in their order, the session of a store, the
output paths, the run, its outputs, the HTML report, and the failure the command reports once it has
shown the result.

Options are refused before the input is looked at, and the input before the outputs are probed, so
that each error names its own cause (a typo in ``-c`` is not reported as an output that exists).
A stored session (``--session``, ``--fork``, ``--in-place``: README, "Sessions on this machine") is
compacted from its file, and its result forked into a new session or put in its place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError, Interrupted, TcompactError, UsageError, WorkFailed
from ..journal import Journal, journal
from ..sessions import Selector
from ..summarizers import calls_model
from ..counting.windows import unknown_model
from .bad_lines import kept_note
from .chain import CompactionRun, Status, compact_file
from .options import CompactOptions
from .paths import OutputPaths, check_paths, default_paths
from .writing import as_failed, as_written, outputs_of, write_run

__all__ = ["CompactJob", "JobOutcome", "InAFile", "run_job", "strict_failure", "run_failure"]


@dataclass(frozen=True)
class CompactJob:
    """What a ``compact`` command line asks for: the transcript (or the stored session the selector
    names), the options, where to write, and how (``force``: existing outputs may be overwritten)."""

    path: Path | None
    options: CompactOptions
    force: bool = False
    output: Path | None = None
    dump_dir: Path | None = None
    report: Path | None = None
    offload_dir: Path | None = None
    html: Path | None = None
    dry_run: bool = False
    strict: bool = False
    allow_mismatch: bool = False
    fork: bool = False
    in_place: bool = False
    selector: Selector | None = None


@dataclass(frozen=True)
class JobOutcome:
    """What the job did: the run, the files written and where each kind went (``outputs``), the invariants
    broken, the session written (fork or in place), the HTML report, and the failure to report after the
    result (None: exit 0)."""

    run: CompactionRun
    paths: OutputPaths
    written: tuple[Path, ...]
    outputs: dict[str, Any]
    problems: tuple[str, ...]
    dry_run: bool
    stored: bool
    session: dict[str, Any] | None
    page: Path | None
    failure: TcompactError | None

    def document(self) -> dict[str, Any]:
        """``compact --json`` (printed when the run fails, too)."""
        return {**self.run.report, "outputs": self.outputs, "invariants": list(self.problems),
                "written": [str(p) for p in self.written], "dry_run": self.dry_run,
                **({"session": self.session} if self.stored else {})}


def run_job(job: CompactJob, *, warn: Callable[[str], None],
            warn_skipped: Callable[[str, Sequence[tuple[int, str]]], None]) -> JobOutcome:
    """Check, compact, write; ``warn`` and ``warn_skipped`` hear what the user should know as it happens.

    A job stopped part way — Ctrl-C, an error while writing, an in-place run refused because the agent
    wrote to the session — takes back the files and folders it made (:class:`tcompact.journal.Journal`),
    unless it had replaced a file already (which cannot be given back: it says so)."""
    with journal() as record:
        try:
            return _run_job(job, warn=warn, warn_skipped=warn_skipped)
        except KeyboardInterrupt:
            raise _interrupted(record) from None
        except BaseException:
            if not record.replaced:
                record.undo()
            raise


def _interrupted(record: Journal) -> Interrupted:
    if record.replaced:
        return Interrupted(f"interrupted once {record.replaced[0]} was replaced", hint="what was written is kept "
                           f"({len(record.made) + len(record.replaced)} file(s)); the report may be missing")
    record.undo()
    return Interrupted.nothing_written()


def _run_job(job: CompactJob, *, warn: Callable[[str], None],
             warn_skipped: Callable[[str, Sequence[tuple[int, str]]], None]) -> JobOutcome:
    _say_unknown_model(job.options, warn)
    path, place, paths = _targets(job)
    _check_targets(job, path, paths, in_place=place.in_place)
    run = place.adopt(compact_file(path, place.options(job.options.placed(offload_dir=str(paths.store.resolve()))),
                                   dumps_ahead=not job.dry_run))
    _warn_read(run, path, warn=warn, warn_skipped=warn_skipped)
    refused = None if job.dry_run else place.refusal()
    if refused is not None:  # the agent wrote to the session meanwhile: the run failed, and says so everywhere
        run = as_failed(run, refused.what)
    written, problems = ([], list(run.report.get("invariants") or [])) if job.dry_run else \
        write_run(run, paths, force=job.force, source=path, strict=job.strict, allow_mismatch=job.allow_mismatch,
                  private=place.state, settle=place.settle())
    for problem in problems:
        warn(f"invariant: {problem}")
    failure = refused or _failure(job, run, paths, written, problems)
    if not job.dry_run:  # every output says what happened: a transcript not written is a failed run
        run = as_written(run, written=written, output=paths.output, problems=problems, strict=job.strict)
    session, kept = (None, []) if job.dry_run else place.finish(run, written)
    written += kept
    page = _page(job, run, paths, written=written, problems=problems)
    outputs = outputs_of(run, paths, written, state=place.state)
    return JobOutcome(run, paths, tuple(written + ([page] if page is not None else [])), outputs, tuple(problems),
                      job.dry_run, place.stored, session, page, failure)


def _say_unknown_model(o: CompactOptions, warn: Callable[[str], None]) -> None:
    note = unknown_model(o.model, context_window=o.context_window, encoding=o.encoding, called=calls_model(o.summarizer))
    if note:
        warn(note)


def _failure(job: CompactJob, run: CompactionRun, paths: OutputPaths, written: Sequence[Path],
             problems: Sequence[str]) -> WorkFailed | None:
    """The failure to report once the result is shown: --strict, a transcript not written, the summariser."""
    return (strict_failure(problems) if job.strict else None) or \
        _unwritten(run, paths, written, problems, dry_run=job.dry_run) or run_failure(run, paths, dry_run=job.dry_run)


def _warn_read(run: CompactionRun, path: Path, *, warn: Callable[[str], None],
               warn_skipped: Callable[[str, Sequence[tuple[int, str]]], None]) -> None:
    """The lines skipped in reading, then the report's notes (but its note of where those lines went,
    which the first warning has just said)."""
    warn_skipped(str(path), run.source.skipped)
    said = kept_note(run.source, run.output_format)
    for note in run.report["notes"]:
        if note not in said:
            warn(note)


class InAFile:
    """Where a run goes without --fork / --in-place: files only, nothing added around the run (what a
    :class:`tcompact.sessions.fork.Placement` adds for a session of the agent's store)."""

    state = None
    in_place = False
    stored = False

    def options(self, options: CompactOptions) -> CompactOptions:
        return options

    def adopt(self, run: CompactionRun) -> CompactionRun:
        return run

    def refusal(self) -> None:
        return None

    def settle(self) -> None:
        return None

    def finish(self, run: CompactionRun, written: list[Path]) -> tuple[None, list[Path]]:
        return None, []


def _check_targets(job: CompactJob, path: Path, paths: OutputPaths, *, in_place: bool) -> None:
    """Before any work: the input is a file, the outputs can be written (not for a dry run), and the page."""
    if not path.is_file():
        raise InputError("no such file" if not path.exists() else "is a folder", path=str(path),
                         hint="pass the transcript file to compact")
    if not job.dry_run:
        check_paths(paths, source=path, force=job.force, in_place=in_place)
    if job.html is not None:
        from ..pages import check_html

        check_html(job.html, force=job.force,
                   keep=(path, paths.output, paths.report, paths.dump_dir, paths.store))


def _page(job: CompactJob, run: CompactionRun, paths: OutputPaths, *, written: list[Path],
          problems: Sequence[str]) -> Path | None:
    """The HTML report (--html), written after the run's outputs so that it links them; a dry run writes
    only the page."""
    if job.html is None:
        return None
    from ..pages import write_compact_page

    return write_compact_page(job.html, run, paths, written=written, problems=problems, dry_run=job.dry_run,
                              force=job.force)


def _targets(job: CompactJob) -> tuple[Path, Any, OutputPaths]:
    """The file to compact, where the run goes (a :class:`~tcompact.sessions.fork.Placement`, or
    :class:`InAFile`), and the output paths."""
    path, output, dump_dir, report, store = job.path, job.output, job.dump_dir, job.report, job.offload_dir
    place: Any = InAFile()
    if job.fork or job.in_place or path is None or (job.selector is not None and job.selector.narrows):
        path, place, output = _stored(job)
        if place.stored:
            from ..sessions.fork import output_paths

            output, dump_dir, report, store = output_paths(place.plan, dump_dir=dump_dir, report=report,
                                                           offload_dir=store, dry_run=job.dry_run)
    assert path is not None
    return path, place, default_paths(path, output=output, dump_dir=dump_dir, store=store, report=report)


def _stored(job: CompactJob) -> tuple[Path, Any, Path | None]:
    """(the session's file, where the run goes, the output).

    A session compacted without --fork / --in-place is written to the current folder unless -o
    says otherwise, never into the agent's store (where the agent would list it as a session)."""
    from ..sessions import make_selector, one_session
    from ..sessions.fork import FORK, IN_PLACE, Placement, check_options as check_fork, plan
    from ..sessions.stores import read_bytes

    selector = job.selector or make_selector()
    if job.fork and job.in_place:
        raise UsageError("--fork and --in-place exclude each other", hint="choose one of them")
    if job.path is not None and selector.narrows:
        raise UsageError("a PATH and --session (or the other selectors) exclude each other",
                         hint="name the session one way")
    session = one_session(job.path, selector)
    if not (job.fork or job.in_place):
        return session.files[0], InAFile(), job.output or Path(f"{session.id}.compacted.jsonl")
    into = plan(session, FORK if job.fork else IN_PLACE)
    check_fork(into, output=job.output, to=job.options.to)
    return into.source, Placement(into, read_bytes(into.source)), None


def strict_failure(problems: Sequence[str]) -> WorkFailed | None:
    """Under ``--strict``: the failure of a compaction that breaks an invariant (its transcript was not written)."""
    if not problems:
        return None
    return WorkFailed(f"the compaction breaks {len(problems)} invariant(s): {problems[0]}",
                      hint="the compacted transcript was not written (--strict)")


def _unwritten(run: CompactionRun, paths: OutputPaths, written: Sequence[Path], problems: Sequence[str], *,
               dry_run: bool) -> WorkFailed | None:
    if run.status == Status.COMPACTED and not dry_run and paths.output not in written:
        return WorkFailed(f"the compaction was not written: {problems[-1]}", path=str(paths.output),
                          hint="nothing was replaced; the report says why (--allow-read-back-mismatch writes it anyway)")
    return None


def run_failure(run: CompactionRun, paths: OutputPaths, *, dry_run: bool) -> WorkFailed | None:
    """The failure of a run whose summariser could not summarise (the input is untouched)."""
    if run.status != Status.FAILED:
        return None
    where = "" if dry_run or not run.calls else f"; the failed call(s) are dumped in {paths.dump_dir}"
    return WorkFailed(f"{run.message}", hint=f"the input is untouched{where}")
