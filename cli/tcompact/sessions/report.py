"""The data behind ``tcompact inspect`` with no PATH: one row per session, group-bys and totals.

Each session's files are read and counted as ``inspect FILE`` counts them; the row adds up its
transcripts (sub-agents included), takes the context-window use of its main transcript at the
end, and sums the provider-reported usage of its requests (:mod:`tcompact.sessions.usage`)
with their cost (:mod:`tcompact.sessions.pricing`). A file that holds usage and no message is counted for
its usage alone (a session of such files is listed with no messages). A request found in several
sessions (a fork or a resumed copy holds its original's history) is counted once, in the session it
was made in (:mod:`tcompact.sessions.copies`); the others count it under ``copied_requests``.
Files are read as an agent may be writing them (:func:`live`). The result is a JSON-ready dict
(README, "Sessions --json schema"); :mod:`tcompact.render.sessions_view` draws it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__
from ..errors import NotATranscriptError, TcompactError, UsageError
from ..formats import ReadOptions, read_file, read_records
from ..inspection import InspectOptions, inspect_source
from .select import zone
from .copies import owned, peers
from .stores import FORMATS, Session
from .groups import GROUPS, group_rows, usage_sums
from .usage import Request, requests_of

if TYPE_CHECKING:
    from ..inspection.shapes import FileError, FileReport, InspectReport, PassedOver, TranscriptReport
    from .shapes import Context, Prices, SessionRow, SessionSkippedLine, SessionsReport

__all__ = ["SessionsOptions", "sessions_report", "session_row", "session_detail", "live", "GROUPS", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class SessionsOptions:
    """How to count and show the sessions."""

    inspect: InspectOptions = field(default_factory=InspectOptions)
    group_by: str = "session"
    cost: bool = True
    timezone: str | None = None

    def __post_init__(self) -> None:
        if self.group_by not in GROUPS:
            raise UsageError(f"--group-by: unknown grouping {self.group_by!r}", hint=f"use one of: {', '.join(GROUPS)}")


@dataclass
class _Read:
    """One session read: its file reports and requests, or why a file could not be read."""

    session: Session
    files: list[FileReport]
    requests: list[Request]
    errors: list[FileError]
    passed_over: list[PassedOver]
    copied: int = 0
    skipped: list[SessionSkippedLine] = field(default_factory=list)


def sessions_report(sessions: Sequence[Session], options: SessionsOptions,
                    on_file: Callable[[int, int, Path], None] | None = None, *,
                    others: Sequence[Session] = ()) -> SessionsReport:
    """The sessions listing: rows newest first, the chosen group-by, totals, errors. ``others`` are
    the sessions of the stores not listed, among which a listed fork's original may be."""
    tz = zone(options.timezone)
    inspect = replace(options.inspect, top=0, spans=None, read=live(options.inspect.read))
    reads = _read_all(sessions, inspect, on_file)
    kept = [r for r in reads if r.files or r.requests]
    _drop_copies(reads, peers(sessions, others), inspect.read)
    rows = [session_row(r.session, r.files, r.requests, tz=tz, cost=options.cost, copied=r.copied) for r in kept]
    prices = _prices() if options.cost else None
    doc: SessionsReport = {
        "tool": "tcompact", "version": __version__, "schema_version": SCHEMA_VERSION, "view": "sessions",
        "group_by": options.group_by, "timezone": _zone_name(tz), "prices": prices, "sessions": rows,
        "groups": None, "totals": None,
        "errors": [e for r in reads for e in r.errors],
        "not_transcripts": [p for r in reads for p in r.passed_over],
        "skipped_lines": [x for r in reads for x in r.skipped],
    }
    doc["groups"], doc["totals"] = group_rows(options.group_by, rows, kept, tz=tz, cost=options.cost)
    return doc


def _read_all(sessions: Sequence[Session], inspect: InspectOptions,
              on_file: Callable[[int, int, Path], None] | None) -> list[_Read]:
    total = sum(len(s.files) for s in sessions)
    done = 0
    reads = []
    for s in sessions:
        read = _Read(s, [], [], [], [])
        for path in s.files:
            if on_file:
                on_file(done, total, path)
            done += 1
            _read_file(read, path, inspect)
        reads.append(read)
    if on_file and total:
        on_file(total, total, sessions[-1].files[-1])
    return reads


def _read_file(read: _Read, path: Path, inspect: InspectOptions) -> None:
    """One file of a session into ``read``: its report and requests; a file with usage and no message
    (a Codex rollout of token counts only, Claude lines of usage without a type) its requests only."""
    try:
        source = read_file(path, inspect.read)
    except NotATranscriptError as exc:
        requests = _usage_only(path, read.session.agent, inspect.read)
        if requests:
            read.requests.extend(requests)
        else:
            read.passed_over.append({"path": str(path), "reason": exc.what})
        return
    except TcompactError as exc:
        read.errors.append({"path": str(path), "error": str(exc)})
        return
    read.files.append(inspect_source(source, inspect))
    read.requests.extend(requests_of(source.format, source.records) or ())
    read.skipped.extend({"path": str(path), "line": line, "reason": why} for line, why in source.skipped)


def live(read: ReadOptions) -> ReadOptions:
    """How the sessions view reads the agents' files: a session being written ends in a line not
    finished yet (left out), and a bad line elsewhere must not hide the session (skipped, reported)."""
    return replace(read, skip_bad_lines=True)


def _usage_only(path: Path, agent: str, read: ReadOptions) -> list[Request]:
    """The requests of a session file that holds no transcript (none when it cannot be read either)."""
    try:
        return list(requests_of(FORMATS[agent], read_records(path, read)) or ())
    except TcompactError:
        return []


def _drop_copies(reads: list[_Read], others: Sequence[Session], read: ReadOptions) -> None:
    """Count each request once, in the session it was made in (:mod:`tcompact.sessions.copies`); the
    sessions ``others`` are read for their requests only."""
    held = [(r.session, r.requests) for r in reads] + [(s, session_requests(s, read)) for s in others]
    for r, (requests, copied) in zip(reads, owned(held)):
        r.requests, r.copied = requests, copied


def session_requests(session: Session, read: ReadOptions) -> list[Request]:
    """The requests of every file of a session, read for its usage alone (a file that cannot be read: none)."""
    return [req for path in session.files for req in _usage_only(path, session.agent, read)]


def session_row(s: Session, files: Sequence[FileReport], requests: Sequence[Request], *, tz: tzinfo,
                cost: bool, copied: int = 0) -> SessionRow:
    """One session's row (README, "Sessions --json schema")."""
    transcripts = [t for f in files for t in f["transcripts"]]
    main = next((t for t in transcripts if t["kind"] == "main"), transcripts[0] if transcripts else None)
    models: dict[str, int] = {}
    for req in requests:
        if req.model:
            models[req.model] = models.get(req.model, 0) + 1
    for t in transcripts:
        if t["model"] and t["model"] not in models:
            models[t["model"]] = 0
    row: SessionRow = {
        "agent": s.agent, "id": s.id, "project": s.project,
        "first_activity": _iso(s.first, tz), "last_activity": _iso(s.last, tz),
        "models": sorted(models, key=lambda m: (-models[m], m)),
        "files": [str(p) for p in s.files], "transcripts": len(transcripts),
        "messages": sum(t["messages"] for t in transcripts),
        "tool_calls": sum(t["tool_calls"] for t in transcripts),
        "tokens": sum(t["tokens"]["total"] for t in transcripts),
        "context": _context(main),
        "usage": {**usage_sums(requests), "copied_requests": copied} if requests or copied else None,
    }
    if cost:
        from .pricing import price

        row["cost"] = price(requests).as_dict() if requests else None
    return row


def _context(main: TranscriptReport | None) -> Context | None:
    if main is None:
        return None
    w = main["window"]
    return {"tokens": w["tokens"], "context_window": w["context_window"], "utilisation": w["utilisation"]}


def _iso(when: datetime | None, tz: tzinfo) -> str | None:
    return when.astimezone(tz).isoformat(timespec="milliseconds") if when else None


def _zone_name(tz: tzinfo) -> str:
    return getattr(tz, "key", None) or datetime.now(tz).tzname() or "local"


def _prices() -> Prices:
    from .pricing import PRICES_PACKAGE, prices_version

    return {"package": PRICES_PACKAGE, "version": prices_version()}


def session_detail(session: Session, report: InspectReport, *, read: ReadOptions, cost: bool,
                   timezone_name: str | None, others: Sequence[Session] = ()) -> InspectReport:
    """An ``inspect`` report of the session's files with the session's row under ``session`` (its own
    requests: those a fork copied from a session of ``others`` are counted there)."""
    held = [(s, session_requests(s, read)) for s in (session, *peers([session], others))]
    requests, copied = owned(held)[0]
    row = session_row(session, report["files"], requests, tz=zone(timezone_name), cost=cost, copied=copied)
    return {**report, "session": row, "prices": _prices() if cost else None}
