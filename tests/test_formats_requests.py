"""formats/requests.py: the provider usage of one API request, the same value for every format."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from codex_lines import ln

from tcompact.formats.requests import ANTHROPIC, OPENAI, Request, parse_time, requests_of
from tcompact.model import Record
from tcompact.sessions import usage


def test_a_requests_prompt_is_its_uncached_input_its_cache_writes_and_reads():
    r = Request(key=("k",), model="m", provider=ANTHROPIC, at=None, input=3, output=9, cache_write=40, cache_read=500)
    assert (r.prompt, r.cache_write_1h, r.speed, r.cost_usd) == (543, 0, None, None)


def test_a_format_without_provider_usage_has_no_requests_and_an_unknown_one_is_an_error():
    assert requests_of("tau-bench", [Record(line=1, data={"traj": []})]) is None
    with pytest.raises(Exception, match="unknown format 'xml'"):
        requests_of("xml", [])


def test_a_rollout_without_token_counts_records_none_never_zero():
    records = [Record(line=1, data=ln("turn_context", {"model": "gpt-5"}))]
    assert requests_of("codex", records) is None


def test_the_sessions_view_prices_the_same_values():
    assert (usage.Request, usage.requests_of, usage.ANTHROPIC, usage.OPENAI) == (Request, requests_of, ANTHROPIC, OPENAI)


@pytest.mark.parametrize(("value", "parsed"), [
    ("2026-01-05T10:00:00.000Z", datetime(2026, 1, 5, 10, tzinfo=UTC)),
    ("2026-01-05T10:00:00", datetime(2026, 1, 5, 10, tzinfo=UTC)),  # no offset: UTC
    ("2026-01-05T12:00:00+02:00", datetime(2026, 1, 5, 12, tzinfo=timezone(timedelta(hours=2)))),
    ("yesterday", None), (1767607200, None), (None, None),
])
def test_parse_time(value, parsed):
    assert parse_time(value) == parsed
