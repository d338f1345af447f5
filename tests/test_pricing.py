"""Dollars for provider-reported usage (pricing.py), against the genai-prices table pinned in pyproject.toml: each
kind of token at its price, tiers chosen by each request's own prompt, the price at the request's time and speed,
and requests that cannot be priced named, never costed at $0."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal
from importlib.metadata import version

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcompact.sessions.pricing import PRICES_PACKAGE, Cost, price, prices_version
from tcompact.sessions.usage import ANTHROPIC, OPENAI, Request

AT = datetime(2025, 11, 1, tzinfo=timezone.utc)


def R(model="claude-sonnet-4-5", provider=ANTHROPIC, at=AT, **tokens) -> Request:
    return Request(key=("k",), model=model, provider=provider, at=at, **tokens)


def usd(*requests: Request) -> float | None:
    return price(requests).usd


def test_the_table_is_the_pinned_release():
    assert prices_version() == version(PRICES_PACKAGE) == "0.2.3"


@pytest.mark.parametrize(("tokens", "dollars"), [
    # Claude Sonnet 4.5: $3 input, $15 output, $0.30 cache read, $3.75 cache write, $6 one-hour cache write per MTok
    ({"input": 1000}, 0.003),
    ({"output": 1000}, 0.015),
    ({"cache_read": 1000}, 0.0003),
    ({"cache_write": 1000}, 0.00375),
    ({"cache_write": 1000, "cache_write_1h": 1000}, 0.006),  # the one-hour writes are part of the writes
    ({"cache_write": 1000, "cache_write_1h": 400}, 0.00465),
    ({"input": 1000, "output": 1000, "cache_read": 1000, "cache_write": 1000}, 0.02205),
])
def test_each_kind_of_token_at_its_price(tokens, dollars):
    assert usd(R(**tokens)) == dollars


@pytest.mark.parametrize(("tokens", "dollars"), [
    ({"input": 100_000, "cache_read": 100_000}, 0.33),  # a prompt of exactly 200k: the base price
    ({"input": 100_000, "cache_read": 100_001}, 0.6600006),  # past 200k: the tier's price on all of it
    ({"input": 150_000, "cache_read": 60_000}, 0.936),
    ({"input": 1_000, "cache_write": 199_001}, 1.4985075),  # cache writes are part of the prompt ($7.50 above)
    ({"input": 100, "output": 300_000}, 4.5003),  # output is not: it stays at the base price here
])
def test_a_request_whose_own_prompt_passes_a_tier_pays_the_tier_on_all_its_tokens(tokens, dollars):
    assert usd(R(**tokens)) == dollars


def test_tiers_are_chosen_per_request_not_per_total():
    half = R(input=150_000)
    assert usd(half) == 0.45 and usd(R(input=300_000)) == 1.8
    assert usd(half, half) == 0.9  # two requests below the tier, summed in one group
    assert usd(half, R(input=210_000)) == 1.71  # one below, one above


def test_the_price_is_the_one_of_the_requests_time_and_speed():
    # Claude Opus 4.6 dropped its long-context tier on 2026-03-13; Opus 4.8's fast mode costs twice as much
    assert usd(R("claude-opus-4-6", input=300_000, at=datetime(2026, 3, 1, tzinfo=timezone.utc))) == 3.0
    assert usd(R("claude-opus-4-6", input=300_000, at=datetime(2026, 3, 20, tzinfo=timezone.utc))) == 1.5
    assert usd(R("claude-opus-4-8", input=1_000_000)) == 5.0
    assert usd(R("claude-opus-4-8", input=1_000_000, speed="fast")) == 10.0
    assert usd(R(input=1000, at=None)) == 0.003  # no time recorded: today's price


def test_openai_requests_are_priced_with_their_cached_input():
    assert usd(R("gpt-4o", OPENAI, input=1_000_000, cache_read=1_000_000, output=1_000_000)) == 13.75
    assert usd(R("gpt-5-2025-08-07", OPENAI, input=1_000_000)) == 1.25


#: 1,000 input, 2,000 cache-write, 3,000 cache-read and 400 output tokens
_MIXED = {"input": 1000, "cache_write": 2000, "cache_read": 3000, "output": 400}


@pytest.mark.parametrize(("model", "dollars"), [
    # Claude Haiku 4.5 at Anthropic: $1 input, $1.25 cache write, $0.10 cache read, $5 output per MTok
    ("claude-haiku-4-5-20251001", 0.0058),
    # Bedrock: geographic (us., eu., jp., au., apac.) and in-region ids pay the regional price, 10% above
    # Anthropic's for Claude 4.5 and later; a global. id pays Anthropic's; a route prefix (converse/) is dropped
    ("converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0", 0.00638),
    ("us.anthropic.claude-haiku-4-5-20251001-v1:0", 0.00638),
    ("bedrock/eu.anthropic.claude-haiku-4-5-20251001-v1:0", 0.00638),
    ("apac.anthropic.claude-haiku-4-5-20251001-v1:0", 0.00638),
    ("anthropic.claude-haiku-4-5-20251001-v1:0", 0.00638),
    ("global.anthropic.claude-haiku-4-5-20251001-v1:0", 0.0058),
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", 0.01914),
    ("us.anthropic.claude-3-5-haiku-20241022-v1:0", 0.00464),  # older models: no regional premium
    ("ca.anthropic.claude-haiku-4-5-20251001-v1:0", 0.0058),  # a region the table lacks: the Anthropic model
    # other providers' routes and Vertex's @date ids: the Anthropic model
    ("vertex_ai/claude-sonnet-4-5@20250929", 0.0174),
    ("anthropic/claude-sonnet-4-5-20250929", 0.0174),
    ("openrouter/anthropic/claude-sonnet-4.5", 0.0174),
])
def test_provider_prefixed_and_regional_ids_are_priced_as_their_model(model, dollars):
    assert usd(R(model, **_MIXED)) == pytest.approx(dollars, rel=1e-12)


def test_an_unknown_model_behind_a_bedrock_id_is_named_as_recorded():
    cost = price([R("us.anthropic.claude-mystery-9-v1:0", input=10)])
    assert (cost.usd, cost.unpriced_models) == (None, ("us.anthropic.claude-mystery-9-v1:0",))


def test_requests_that_cannot_be_priced_make_the_cost_unknown_and_are_named():
    cost = price([R(input=1000), R("no-such-model", input=5), R("no-such-model", output=2), R(None, input=1),
                  R(provider=None, input=3), R(provider="google", input=3)])
    assert cost == Cost(usd=None, priced_usd=0.003, requests=6, unpriced_requests=5,
                        unpriced_models=("(model not recorded)", "claude-sonnet-4-5 (None)",
                                         "claude-sonnet-4-5 (google)", "no-such-model"))
    assert cost.as_dict() == {"usd": None, "priced_usd": 0.003, "requests": 6, "unpriced_requests": 5,
                              "unpriced_models": ["(model not recorded)", "claude-sonnet-4-5 (None)",
                                                  "claude-sonnet-4-5 (google)", "no-such-model"]}


def test_a_cost_the_line_recorded_is_its_price():
    # lines with costUSD (as older tools wrote them): that cost, whatever their model or tokens, as ccusage counts
    recorded = [R(input=1000, cost_usd=0.5), R(None, output=10, cost_usd=0.25), R("no-such-model", cost_usd=0.125)]
    assert price([*recorded, R(input=1000)]) == Cost(usd=0.878, priced_usd=0.878, requests=4, unpriced_requests=0,
                                                     unpriced_models=())


def test_requests_without_tokens_cost_nothing_whatever_their_model():
    # Claude Code's <synthetic> lines report no tokens
    assert price([R("<synthetic>"), R(None)]) == Cost(usd=0.0, priced_usd=0.0, requests=2, unpriced_requests=0,
                                                       unpriced_models=())
    assert price([]) == Cost(usd=0.0, priced_usd=0.0, requests=0, unpriced_requests=0, unpriced_models=())
    assert price(iter([R(input=1000)])).usd == 0.003  # any iterable, read once


_TOKENS = st.integers(0, 260_000)
_REQUESTS = st.builds(
    lambda model, at, speed, tokens: R(model, OPENAI if model.startswith("gpt") else ANTHROPIC, at, speed=speed,
                                       **dict(zip(("input", "output", "cache_write", "cache_read"), tokens))),
    st.sampled_from(["claude-sonnet-4-5", "claude-opus-4-6", "claude-opus-4-8", "gpt-4o", "gpt-5"]),
    st.sampled_from([datetime(2026, 3, 1, tzinfo=timezone.utc), datetime(2026, 3, 20, tzinfo=timezone.utc)]),
    st.sampled_from([None, "fast"]),
    st.tuples(_TOKENS, st.integers(0, 20_000), _TOKENS, _TOKENS),
)


@settings(max_examples=100, deadline=None, database=None)
@given(st.lists(_REQUESTS, max_size=8))
def test_requests_priced_together_cost_the_sum_of_their_own_prices(requests):
    # requests of one price list and tier are summed and priced once; the result must be the per-request sum
    each = sum((Decimal(repr(price([r]).priced_usd)) for r in requests), Decimal(0))
    cost = price(requests)
    assert cost.priced_usd == cost.usd == float(each) and cost.requests == len(requests)
