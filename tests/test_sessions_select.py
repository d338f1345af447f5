"""sessions/select.py: the selectors — validated once, each error one exact line — and how they choose."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from tcompact.errors import TcompactError
from tcompact.sessions.select import make_selector, parse_bound, select, zone
from tcompact.sessions.stores import Session

UTC = timezone.utc
HELP = "see --help for the accepted values"


def s(sid, agent="claude", project="/home/dev/app", first=None, last=None):
    return Session(agent=agent, id=sid, main=None, project=project, first=first, last=last)


def day(d, h=12):
    return datetime(2026, 1, d, h, tzinfo=UTC)


SESSIONS = [s("aaa111", first=day(5), last=day(5, 14)), s("aab222", "codex", "/home/dev/lib", day(6), day(7)),
            s("bbb333", project="/home/dev/application", first=day(8), last=day(8)),
            s("ccc444", project=None, first=None, last=None)]


def error(fn, *args, **kw):
    with pytest.raises(TcompactError) as exc:
        fn(*args, **kw)
    return type(exc.value).__name__, str(exc.value)


@pytest.mark.parametrize(("values", "message"), [
    ({"last": 0}, f"--last must be 1 or more, not 0 — {HELP}"),
    ({"last": "x"}, f"--last must be a whole number, not 'x' — {HELP}"),
    ({"session": ""}, f"--session must not be empty — {HELP}"),
    ({"project": ""}, f"--project must not be empty — {HELP}"),
    ({"agent": "gemini"}, f"--agent must be claude or codex, not 'gemini' — {HELP}"),
    ({"session": "a", "last": 2}, "--session and --last exclude each other — use one of them"),
    ({"since": "2026-13-01"}, "--since: cannot read '2026-13-01' as a date — use YYYYMMDD or ISO 8601, e.g. 20260105 "
                              "or 2026-01-05T10:00:00Z"),
    ({"until": "soon"}, "--until: cannot read 'soon' as a date — use YYYYMMDD or ISO 8601, e.g. 20260105 or "
                        "2026-01-05T10:00:00Z"),
    ({"since": "20260110", "until": "20260105", "timezone": "UTC"}, "--since 20260110 is after --until 20260105 — "
                                                                    "swap them"),
    ({"timezone": "Mars/Base"}, "--timezone: unknown time zone 'Mars/Base' — use an IANA name such as UTC, "
                                "Europe/Paris or America/New_York"),
])
def test_a_bad_selector_is_one_usage_error_naming_the_option(values, message):
    assert error(make_selector, **values) == ("UsageError", message)


def test_a_selector_narrows_when_anything_but_the_time_zone_is_set():
    assert make_selector().narrows is False
    assert make_selector(timezone="UTC").narrows is False
    assert make_selector(agent="codex").narrows is True
    assert make_selector(since="20260101", until="2026-01-01", timezone="UTC").since == "20260101"


def test_zones():
    assert zone("UTC") is UTC and zone("z") is UTC
    assert zone("Europe/Paris") == ZoneInfo("Europe/Paris")


@pytest.mark.parametrize(("text", "end", "bound"), [
    ("20260105", False, datetime(2026, 1, 5, tzinfo=ZoneInfo("Europe/Paris"))),
    ("2026-01-05", True, datetime(2026, 1, 5, 23, 59, 59, 999999, tzinfo=ZoneInfo("Europe/Paris"))),
    (" 2026-01-05T10:30:00 ", False, datetime(2026, 1, 5, 10, 30, tzinfo=ZoneInfo("Europe/Paris"))),
    ("2026-01-05T10:30:00Z", True, datetime(2026, 1, 5, 10, 30, tzinfo=UTC)),  # a time is not widened to its day
    ("2026-01-05T10:30:00-05:00", False, datetime(2026, 1, 5, 10, 30, tzinfo=timezone(timedelta(hours=-5)))),
])
def test_parse_bound(text, end, bound):
    assert parse_bound(text, ZoneInfo("Europe/Paris"), option="--since", end=end) == bound


@pytest.mark.parametrize(("values", "ids"), [
    ({}, ["bbb333", "aab222", "aaa111", "ccc444"]),  # newest last activity first, undated last
    ({"agent": "codex"}, ["aab222"]),
    ({"project": "/home/dev/app"}, ["aaa111"]),  # not /home/dev/application
    ({"project": "/home/dev/"}, ["bbb333", "aab222", "aaa111"]),
    ({"project": "lib"}, ["aab222"]),  # relative to the working directory given
    ({"since": "20260107", "timezone": "UTC"}, ["bbb333", "aab222"]),  # active at or after: overlaps
    ({"until": "20260106", "timezone": "UTC"}, ["aab222", "aaa111"]),  # the whole day 6: aab222 began then
    ({"since": "2026-01-05T15:00:00Z", "until": "2026-01-06T11:00:00Z"}, []),
    ({"last": 2}, ["bbb333", "aab222"]),
    ({"session": "AAB"}, ["aab222"]),  # a prefix, any case
    ({"session": "last", "agent": "claude"}, ["bbb333"]),
])
def test_select(values, ids):
    sel = make_selector(**values)
    if not ids:
        assert select(SESSIONS, sel, cwd="/home/dev", empty_ok=True) == []  # a listing: empty
        assert error(select, SESSIONS, sel, cwd="/home/dev") == (
            "InputError", "no session matches --since 2026-01-05T15:00:00Z --until 2026-01-06T11:00:00Z (4 session(s) "
                          "on this machine) — run `tcompact inspect` to list the sessions")
        return
    assert [x.id for x in select(SESSIONS, sel, cwd="/home/dev")] == ids


def test_an_exact_id_wins_over_longer_ids_it_starts():
    sessions = [s("abc", last=day(5)), s("abcdef", last=day(6))]
    assert [x.id for x in select(sessions, make_selector(session="abc"))] == ["abc"]


def test_what_matches_no_session_or_several_says_so():
    assert error(select, SESSIONS, make_selector(session="zzz")) == (
        "InputError", "no session id starts with 'zzz' (4 session(s) searched) — run `tcompact inspect` to list the "
                      "sessions and their ids")
    assert error(select, SESSIONS, make_selector(session="aa")) == (
        "UsageError", "--session aa matches 2 sessions (aab222, aaa111) — give more characters of the id")
    many = [s(f"x{n}", last=day(5 + n)) for n in range(7)]
    assert error(select, many, make_selector(session="x")) == (
        "UsageError", "--session x matches 7 sessions (x6, x5, x4, x3, x2, …) — give more characters of the id")
    assert error(select, [], make_selector()) == (
        "InputError", "no Claude Code or Codex sessions found on this machine — run `tcompact inspect` to list the "
                      "sessions")
    assert error(select, SESSIONS, make_selector(session="last", agent="codex", project="/srv"), empty_ok=True) == (
        "InputError", "no session matches --project /srv --agent codex (4 session(s) on this machine) — run `tcompact "
                      "inspect` to list the sessions")
    assert error(select, SESSIONS, make_selector(agent="codex", project="/srv")) == (
        "InputError", "no session matches --project /srv --agent codex (4 session(s) on this machine) — run `tcompact "
                      "inspect` to list the sessions")
