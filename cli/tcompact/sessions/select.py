"""Choosing sessions: the selectors ``inspect``, ``compact`` and ``eval`` share, validated once.

A :class:`Selector` holds the options as given (``--session ID|last``, ``--last N``, ``--project
PATH``, ``--agent``, ``--since`` / ``--until`` with ``--timezone``); :func:`select` applies it to
discovered sessions: filters first, newest last activity first, then ``--session`` (a unique
prefix of the id, or ``last``) or ``--last N``. Filters that match nothing give an empty listing (as
``git log --since`` does); a command that works on a session, or a ``--session`` that names none, is an
error. A session matches a date range when its activity
overlaps it: it was last active at or after ``--since`` and first active at or before ``--until``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from datetime import datetime, time, timedelta, timezone, tzinfo
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InputError, UsageError, bad_value
from .stores import Session

__all__ = ["Selector", "make_selector", "select", "nothing_matches", "parse_bound", "zone"]

_DAY = re.compile(r"^(\d{4})-?(\d{2})-?(\d{2})$")
_OLDEST = datetime.min.replace(tzinfo=timezone.utc)


class Selector(BaseModel):
    """Which sessions: every field None means all of them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session: str | None = Field(None, min_length=1, description="a unique prefix of a session id, or 'last'")
    last: int | None = Field(None, ge=1, description="the newest N sessions")
    project: str | None = Field(None, min_length=1, description="sessions whose working directory is in PATH")
    agent: Literal["claude", "codex"] | None = Field(None, description="only this agent's sessions")
    since: str | None = Field(None, description="active at or after: YYYYMMDD or ISO 8601")
    until: str | None = Field(None, description="active at or before: YYYYMMDD or ISO 8601 (a day: all of it)")
    timezone: str | None = Field(None, description="IANA time zone of dates and days (default: local)")

    @property
    def narrows(self) -> bool:
        """True when any selector is set."""
        return any(v is not None for k, v in self.model_dump().items() if k != "timezone")


def make_selector(**values: object) -> Selector:
    """A Selector from option values; a bad value is a UsageError naming the option."""
    try:
        sel = Selector(**values)
    except ValidationError as exc:
        err = exc.errors()[0]
        name = "--" + str(err["loc"][0]).replace("_", "-") if err.get("loc") else "a selector"
        raise UsageError(bad_value(name, err), hint="see --help for the accepted values") from None
    if sel.session is not None and sel.last is not None:
        raise UsageError("--session and --last exclude each other", hint="use one of them")
    tz = zone(sel.timezone)
    since = parse_bound(sel.since, tz, option="--since") if sel.since else None
    until = parse_bound(sel.until, tz, option="--until", end=True) if sel.until else None
    if since and until and since > until:
        raise UsageError(f"--since {sel.since} is after --until {sel.until}", hint="swap them")
    return sel


def zone(name: str | None) -> tzinfo:
    """The time zone named (IANA, or UTC), or the machine's local zone for None / 'local'."""
    if name is None or name == "local":
        return datetime.now().astimezone().tzinfo or timezone.utc
    if name.upper() in ("UTC", "Z"):
        return timezone.utc
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"--timezone: unknown time zone {name!r}",
                         hint="use an IANA name such as UTC, Europe/Paris or America/New_York") from None


def parse_bound(text: str, tz: tzinfo, *, option: str, end: bool = False) -> datetime:
    """A date bound: a day (YYYYMMDD, YYYY-MM-DD) is its start, or with ``end`` the last instant of
    it; an ISO 8601 time without an offset is read in ``tz``."""
    day = _DAY.match(text.strip())
    try:
        if day:
            start = datetime.combine(datetime(*map(int, day.groups())).date(), time(), tzinfo=tz)
            return start + timedelta(days=1) - timedelta(microseconds=1) if end else start
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"{option}: cannot read {text!r} as a date",
                         hint="use YYYYMMDD or ISO 8601, e.g. 20260105 or 2026-01-05T10:00:00Z") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=tz)


def select(sessions: Sequence[Session], sel: Selector, *, cwd: str | None = None,
           empty_ok: bool = False) -> list[Session]:
    """The sessions the selector names, newest last activity first. Filters that leave none are an
    empty list with ``empty_ok`` (a listing), else an InputError; ``--session`` naming none is always one."""
    tz = zone(sel.timezone)
    since = parse_bound(sel.since, tz, option="--since") if sel.since else None
    until = parse_bound(sel.until, tz, option="--until", end=True) if sel.until else None
    project = _norm(sel.project, cwd) if sel.project else None
    rows = [s for s in sessions
            if (sel.agent is None or s.agent == sel.agent)
            and (project is None or _inside(s.project, project))
            and (since is None or (s.last is not None and s.last >= since))
            and (until is None or (s.first is not None and s.first <= until))]
    rows.sort(key=lambda s: (s.last or _OLDEST, s.id), reverse=True)
    if sel.session is not None:
        if not rows and sel.session == "last":
            raise nothing_matches(sessions, sel)
        return [_one(rows, sel.session)]
    if not rows and not empty_ok:
        raise nothing_matches(sessions, sel)
    return rows[: sel.last] if sel.last else rows


def nothing_matches(sessions: Sequence[Session], sel: Selector) -> InputError:
    """The error of a command that needs a session when the selectors leave none."""
    return InputError(_none_left(sessions, sel), hint="run `tcompact inspect` to list the sessions")


def _one(rows: Sequence[Session], wanted: str) -> Session:
    if wanted == "last":
        return rows[0]
    key = wanted.lower()
    exact = [s for s in rows if s.id.lower() == key]
    found = exact or [s for s in rows if s.id.lower().startswith(key)]
    if not found:
        raise InputError(f"no session id starts with {wanted!r} ({len(rows)} session(s) searched)",
                         hint="run `tcompact inspect` to list the sessions and their ids")
    if len(found) > 1:
        shown = ", ".join(s.id for s in found[:5]) + (", …" if len(found) > 5 else "")
        raise UsageError(f"--session {wanted} matches {len(found)} sessions ({shown})",
                         hint="give more characters of the id")
    return found[0]


def _none_left(sessions: Sequence[Session], sel: Selector) -> str:
    if not sessions:
        return "no Claude Code or Codex sessions found on this machine"
    given = " ".join(f"--{k} {v}" for k, v in sel.model_dump().items() if v is not None and k != "session")
    return f"no session matches {given or 'the selection'} ({len(sessions)} session(s) on this machine)"


def _norm(path: str, cwd: str | None) -> str:
    expanded = os.path.expanduser(path)
    return os.path.normpath(expanded if os.path.isabs(expanded) else os.path.join(cwd or os.getcwd(), expanded))


def _inside(recorded: str | None, project: str) -> bool:
    if not recorded:
        return False
    here = os.path.normpath(recorded)
    return here == project or here.startswith(project.rstrip(os.sep) + os.sep)
