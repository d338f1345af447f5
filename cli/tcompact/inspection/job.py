"""``tcompact inspect`` as one library call: the report of the files (or of a stored session's files,
with its row), and what an HTML page of it needs, checked before any work.

:mod:`tcompact.inspection` makes the report of files; this adds what the command asks beyond it —
the page's path checked first (a page is a view: it replaces an older page, never an input), the
transcripts as counted for that page, and a stored session's usage and cost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..errors import NotATranscriptError
from . import SCHEMA_VERSION, Counted, InspectOptions, inspect_counted

if TYPE_CHECKING:
    from .shapes import InspectReport

__all__ = ["inspect_job"]


def inspect_job(paths: Sequence[str | Path], options: InspectOptions, *, session: Any = None,
                html: Path | None = None, cost: bool = True, timezone_name: str | None = None,
                on_file: Callable[[int, int, Path], None] | None = None
                ) -> tuple[InspectReport, dict[str, Counted] | None]:
    """The report of ``paths`` (the files of ``session`` when it is given, its row added under
    ``session``, read as the sessions view reads them: bad lines skipped and reported, an unfinished
    last line left out), and — for an HTML page at ``html`` — the one file's transcripts as counted."""
    if html is not None:
        from ..pages import check_html

        check_html(html, force=True, keep=paths)
    if session is not None:  # read as the sessions view reads the agents' files
        from ..sessions.report import live

        options = replace(options, read=live(options.read))
    try:
        report, counted = inspect_counted(paths, options, on_file=on_file, counted=html is not None)
    except NotATranscriptError as exc:
        if session is None:
            raise
        report, counted = _usage_only(exc), None  # a stored session whose one file holds usage and no message
    if session is not None:
        from ..sessions import discover, stores_from_env
        from ..sessions.report import session_detail

        report = session_detail(session, report, read=options.read, cost=cost, timezone_name=timezone_name,
                                others=discover(stores_from_env()))
    return report, counted


def _usage_only(exc: NotATranscriptError) -> InspectReport:
    """The report of a session file with no transcript: no file, the reason under ``not_transcripts``."""
    return {"tool": "tcompact", "version": __version__, "schema_version": SCHEMA_VERSION, "files": [], "errors": [],
            "not_transcripts": [{"path": exc.path, "reason": exc.what}],
            "totals": {"files": 0, "transcripts": 0, "messages": 0, "tool_calls": 0, "tokens": 0, "skipped_lines": 0}}
