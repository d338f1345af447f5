"""``tcompact inspect`` of files without the command line: the one body the command and the entry point share.

A second look at an unchanged file is a kept report printed (:mod:`tcompact.inspection.reportcache`), and
a session that grew is read on from where the last read stopped (:mod:`tcompact.inspection.growing`); in
both, importing typer and building the command took as long as the work. So the entry point
(:mod:`tcompact.launch`) hands the plainest command line — ``inspect PATH... [--json]``, every other option
at its default — to :func:`run_plain`, which runs :func:`inspect_report` and :func:`show` as the command does and imports
no typer. Bad input (a :class:`~tcompact.errors.TcompactError`) ends with its one line, as the command line
prints it; anything else, and any other error before output, goes back to the command line, which does the
same work again and says what went wrong as it always has: the output is the same bytes either way.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

__all__ = ["inspect_report", "plain_options", "run_plain", "show"]

def inspect_report(paths: list[Path], options: Any, *, json_out: bool, session: Any = None,
                   html: Path | None = None, cost: bool = True, timezone_name: str | None = None) -> tuple[Any, Any]:
    """The report of ``paths`` (or of a stored ``session``'s files) and, for a page, the transcripts as counted
    (:func:`tcompact.inspection.job.inspect_job`), with a progress bar over files on a terminal."""
    from .. import render
    from ..inspection.job import inspect_job

    with render.file_progress(enabled=not json_out) as on_file:
        return inspect_job(paths, options, session=session, html=html, cost=cost, timezone_name=timezone_name,
                           on_file=on_file)


def show(report: Any, counted: Any, options: Any, *, json_out: bool, html: Path | None = None,
         transcript: str | None = None, fold: bool = False) -> int:
    """The report on the terminal (or --json), the HTML page, the files skipped; the exit status: 2 when a
    file could not be read, else 0."""
    from .. import render

    render.inspect_outcome(report, json_out=json_out, transcript=transcript, fold=fold)
    if html is not None:
        from ..pages import write_inspect_page

        written = write_inspect_page(html, report, counted, options, wanted=transcript)
        if not json_out:
            render.console().print(f"Wrote the HTML report: {written}", markup=False)
    render.warn_skipped(report)
    return 2 if report["errors"] else 0


def plain_options() -> Any:
    """The InspectOptions of ``inspect`` with every option at its default (what the command builds then)."""
    from ..formats import ReadOptions
    from ..inspection import InspectOptions

    return InspectOptions(read=ReadOptions(format=None, full_history=False, skip_bad_lines=False, keep_raw=False),
                          encoding=None, model=None, context_window=None, spans=None, keep_recent=None, top=10)


def _plain_paths(args: list[str]) -> tuple[list[Path], bool] | None:
    """``(paths, json_out)`` of ``PATH... [--json]``; None for any other command line."""
    paths = [a for a in args if a != "--json"]
    if not paths or len(args) - len(paths) > 1 or any(not a or a.startswith("-") for a in paths):
        return None
    return [Path(a) for a in paths], len(paths) < len(args)


def run_plain(args: list[str]) -> int | None:
    """Run ``inspect`` with its arguments ``args`` when they are ``PATH... [--json]``: the exit status (bad
    input: its error line, as the command line's); None when they are not, or when the work failed otherwise
    before any output (the command line then runs)."""
    plain = _plain_paths(args)
    if plain is None:
        return None
    paths, json_out = plain
    if len(paths) == 1:
        _tokenizer_ahead(paths[0])
    options = plain_options()
    from ..errors import TcompactError

    try:
        report, counted = inspect_report(paths, options, json_out=json_out)
    except KeyboardInterrupt:
        return _interrupted()
    except TcompactError as exc:  # bad input: its one line, as the command line prints it (the file not read again)
        return _failed(str(exc), exc.exit_code)
    except Exception:  # noqa: BLE001 — the command line does it again and says what went wrong, as it always has
        return None
    try:
        return show(report, counted, options, json_out=json_out)
    except BrokenPipeError:
        return _closed_pipe()
    except KeyboardInterrupt:
        return _interrupted()


def _tokenizer_ahead(path: Path) -> None:
    """When the session grew by enough since its last read, have a copy of the process build the tokenizer for
    the appended texts from now on (:mod:`tcompact.counting.helper`), before the readers are imported and the
    kept state is loaded: building it is longer than all of that, and the read would wait for it."""
    from ..counting import cache as tokencache

    if tokencache.enabled() and tokencache.grown_by(path) >= tokencache.GROWN_FROM:
        from ..counting import helper
        from ..counting.encodings import encoding_for_model

        helper.start(encoding_for_model(None)[0])  # a plain inspect's (growing._encoding of its options)


def _closed_pipe() -> int:
    """A reader closed stdout: end quietly, as the command line does."""
    from ..launch import CLOSED_PIPE, silence_stdout

    silence_stdout()
    return CLOSED_PIPE


def _interrupted() -> int:
    from ..launch import INTERRUPTED

    return _failed("interrupted", INTERRUPTED)


def _failed(message: str, code: int) -> int:
    from ..errors import error_line

    sys.stdout.flush()
    sys.stderr.write(error_line(message) + "\n")
    sys.stderr.flush()
    return code
