"""``inspect`` without a PATH: the sessions on this machine (a listing, or one session in detail)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from ..sessions import Selector


def check_no_path(paths: list[Path] | None, selector: Selector, *, group_by: str | None, what: str) -> None:
    """Selectors name sessions of the stores: refuse them next to a PATH (``group_by`` None: the
    command has no --group-by)."""
    if paths and (selector.narrows or selector.timezone or group_by not in (None, "session")):
        from ..errors import UsageError

        grouping = "" if group_by is None else ", --group-by"
        raise UsageError(f"{what} and the session selectors (--session, --last, --project, --agent, --since, "
                         f"--until, --timezone{grouping}) exclude each other",
                         hint="leave out the PATH to select among the sessions on this machine "
                              "(CLAUDE_CONFIG_DIR and CODEX_HOME point at other stores)")


def paths_or_sessions(paths: list[Path] | None, selector: Selector, *, before_search=None) -> list[Path]:
    """The files a command without --group-by works on: the PATHs, or else the selected sessions' files
    (``before_search`` is called first: bad options are the error before the stores are searched)."""
    check_no_path(paths, selector, group_by=None, what="PATH")
    if paths:
        return paths
    if before_search is not None:
        before_search()
    from ..sessions import session_files

    return session_files(selector)


def paths_or_session(paths: list[Path] | None, selector: Selector, options, *, group_by: str, cost: bool,
                     json_out: bool, transcript: str | None, html: Path | None):
    """(the files to inspect, the stored session they are or None); None when the selected sessions
    were listed instead (no PATH, and no one session named)."""
    check_no_path(paths, selector, group_by=group_by, what="PATH")
    if paths:
        return list(paths), None
    session = list_or_pick(selector, options, group_by=group_by, cost=cost, json_out=json_out,
                           transcript=transcript, html=html)
    return None if session is None else (list(session.files), session)


def list_or_pick(selector: Selector, options, *, group_by: str, cost: bool, json_out: bool,
                 transcript: str | None, html: Path | None):
    """List the selected sessions (returns None), or return the one ``--session`` names, for the
    detailed view that ``inspect FILE`` draws."""
    from .. import render
    from ..errors import UsageError
    from ..render.sessions_view import sessions_table, warn_skipped_lines
    from ..sessions import select_sessions
    from ..sessions.report import SessionsOptions, sessions_report

    sessions, every = select_sessions(selector, empty_ok=True)
    if selector.session is not None and group_by == "session":
        return sessions[0]
    if html is not None or transcript is not None:
        raise UsageError("--html and --transcript show one session in detail",
                         hint="name it with --session ID (or --session last)")
    listing = SessionsOptions(inspect=options, group_by=group_by, cost=cost, timezone=selector.timezone)
    with render.file_progress(enabled=not json_out) as on_file:
        doc = sessions_report(sessions, listing, on_file=on_file, others=every)
    if json_out:
        render.print_json(doc)
    else:
        sessions_table(doc)
    warn_skipped_lines(doc["skipped_lines"])
    for e in doc["errors"]:
        render.warn(e["error"])
    if doc["errors"]:
        raise typer.Exit(2)
    return None


def restore_session(path: Path | None, selector: Selector, *, output: Path | None, force: bool) -> None:
    """``restore --session ID``: the newest in-place backup of the session goes back in its place."""
    from .. import render
    from ..errors import UsageError
    from ..sessions import one_session
    from ..sessions.fork import restore_backup

    if path is not None or output is not None:
        raise UsageError("--session restores an in-place compaction where it was: PATH and -o do not apply",
                         hint="leave them out, or restore an offload with `tcompact restore FILE -o OUT`")
    main, backup = restore_backup(one_session(None, selector), force=force)
    render.console().print(f"Restored {main} from {backup.name}", markup=False)
