"""The sessions on this machine for the commands: ``inspect`` without a PATH (a listing, or one session
in detail), ``restore --session``, and what tcompact keeps of the sessions it forked or replaced
(``restore --list`` / ``--clean``)."""

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
    given = [name for name, value in (("--html", html), ("--transcript", transcript)) if value is not None]
    if given:
        raise UsageError(f"{' and '.join(given)} show{'s' if len(given) == 1 else ''} one session in detail",
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


def kept_by_tcompact(*, listing: bool, clean: bool, older_than: str | None, json_out: bool, other: bool) -> None:
    """``restore --list [--older-than AGE]`` and ``restore --clean --older-than AGE``."""
    from .. import render
    from ..render.state_view import cleaned_view, kept_view
    from ..sessions import stores_from_env
    from ..sessions.state import clean as remove, entries, older, parse_age, state_root

    _check_kept_options(listing=listing, clean=clean, older_than=older_than, other=other)
    found = entries(stores_from_env())
    if older_than is not None:
        found = older(found, parse_age(older_than))
    doc = {"state": str(state_root()), "older_than": older_than}
    if clean:
        remove(found)
        doc.update(removed=[e.document() for e in found], removed_bytes=sum(e.bytes for e in found))
        return render.print_json(doc) if json_out else cleaned_view(doc)
    doc.update(entries=[e.document() for e in found], total_bytes=sum(e.bytes for e in found))
    return render.print_json(doc) if json_out else kept_view(doc)


def _check_kept_options(*, listing: bool, clean: bool, older_than: str | None, other: bool) -> None:
    from ..errors import UsageError
    from ..sessions.state import parse_age

    if other:
        raise UsageError("--list and --clean work on what tcompact keeps: PATH, -o, --store and the session "
                         "selectors do not apply")
    if listing and clean:
        raise UsageError("--list and --clean exclude each other", hint="--list --older-than AGE shows what --clean "
                         "would remove")
    if not (listing or clean):
        raise UsageError("--older-than goes with --list or --clean")
    if clean and older_than is None:
        raise UsageError("--clean needs --older-than AGE", hint="e.g. --older-than 30d; --older-than 0d removes "
                         "everything")
    if older_than is not None:
        parse_age(older_than)  # a bad age is the error before anything is searched


def restore_pre_compaction(path: Path | None, selector: Selector, *, output: Path | None) -> None:
    """``restore --session ID --pre-compaction``: the transcript kept before the agent's compaction, as a new
    session of the agent."""
    from ..errors import UsageError
    from ..hooks.restore import fork_snapshot
    from ..render.sessions_view import resume_lines
    from ..sessions import one_session

    if path is not None or output is not None or not selector.narrows:
        raise UsageError("--pre-compaction writes a stored session's pre-compaction transcript as a new session",
                         hint="name the session with --session ID (no PATH, no -o)")
    fork = fork_snapshot(one_session(None, selector))
    resume_lines(fork)
