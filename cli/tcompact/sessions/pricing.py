"""Dollars for provider-reported usage, from the genai-prices table shipped in its package (offline).

genai-prices (pydantic, MIT) holds the prices of each model over time: cache writes (5-minute and
one-hour) and cache reads are priced as such, and where the table has tiers (Claude Sonnet 4.5
above 200k prompt tokens, ...) a request whose own prompt — uncached input plus cache writes and
reads — is past a tier pays that tier's price on all its tokens, as Anthropic bills. The price
of each request is taken at its time and with its ``speed`` (Claude fast mode). A request whose line
recorded its own cost (``costUSD``) costs that, as ccusage counts it.

Model ids are mapped to the table's models as ccusage maps them: a route prefix (``converse/``,
``bedrock/``, ``openrouter/anthropic/``) is dropped; an Amazon Bedrock id
(``jp.anthropic.claude-haiku-4-5-20251001-v1:0``) takes the Bedrock price — geographic and in-region
endpoints 10% above Anthropic's for Claude 4.5 and later, ``global.`` at Anthropic's — and an id the
Bedrock table lacks is priced as the Anthropic model it names.

A request of a model the table does not know, or of a provider it has no prices for, is *not
priced*: the cost is then unknown (None), never $0, and the model is named. Requests that
reported no tokens cost nothing whatever their model (Claude Code's ``<synthetic>`` lines).
The package is imported on first use only (it takes about half a second).

To stay fast on thousands of requests, requests that share a price list and a tier are summed
and priced once; pricing is linear within a tier, so the result is the sum of per-request prices.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from functools import cache
from typing import Any

from .usage import ANTHROPIC, OPENAI, Request

__all__ = ["Cost", "price", "prices_version", "PRICES_PACKAGE"]

PRICES_PACKAGE = "genai-prices"
_PROVIDERS = {ANTHROPIC: "anthropic", OPENAI: "openai"}
#: An Amazon Bedrock model id: an optional inference-profile region (``us.``, ``eu.``, ``jp.``, ``apac.``,
#: ``global.`` …), ``anthropic.``, the model, an optional ``-vN:M`` version.
_BEDROCK = re.compile(r"^(?:[a-z]{2,6}(?:-[a-z]+)?\.)?anthropic\.(?P<model>claude-.+?)(?:-v\d+(?::\d+)?)?$")


@dataclass(frozen=True)
class Cost:
    """What some requests cost: ``usd`` is None when any of them could not be priced."""

    usd: float | None
    priced_usd: float
    requests: int
    unpriced_requests: int
    unpriced_models: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape (README, the sessions schema)."""
        return {"usd": self.usd, "priced_usd": self.priced_usd, "requests": self.requests,
                "unpriced_requests": self.unpriced_requests, "unpriced_models": list(self.unpriced_models)}


def prices_version() -> str:
    """The installed genai-prices version (the price table is the one shipped with it)."""
    from importlib.metadata import version

    return version(PRICES_PACKAGE)


def price(requests: Iterable[Request]) -> Cost:
    """The cost of ``requests``."""
    from genai_prices import Usage

    groups: dict[tuple[str, tuple[int, ...]], tuple[Any, list[int]]] = {}
    unpriced: dict[str, int] = {}
    count = 0
    recorded = Decimal(0)
    for r in requests:
        count += 1
        if r.cost_usd is not None:
            recorded += Decimal(repr(r.cost_usd))
            continue
        if not (r.input or r.output or r.cache_write or r.cache_read):
            continue
        model = _model(r.provider, r.model)
        if isinstance(model, str):
            unpriced[model] = unpriced.get(model, 0) + 1
            continue
        prices = model.get_prices(r.at or datetime.now(timezone.utc), {"speed": r.speed} if r.speed else None)
        tiers = _tiers(prices, r.prompt)
        entry = groups.setdefault((repr(prices), tiers), (_flat(prices, tiers), [0, 0, 0, 0, 0]))
        sums = entry[1]
        for i, n in enumerate((r.prompt, r.output, r.cache_write, r.cache_read, r.cache_write_1h)):
            sums[i] += n
    total = recorded
    for flat, (prompt, output, write, read, write_1h) in groups.values():
        usage = Usage(input_tokens=prompt, output_tokens=output, cache_write_tokens=write, cache_read_tokens=read,
                      cache_write_1h_tokens=write_1h)
        total += flat.calc_price(usage)["total_price"]
    priced = float(total)
    return Cost(usd=None if unpriced else priced, priced_usd=priced, requests=count,
                unpriced_requests=sum(unpriced.values()), unpriced_models=tuple(sorted(unpriced)))


@cache
def _model(provider: str | None, model: str | None) -> Any:
    """The table's model for a request, or the reason it has none (a string: the model as shown)."""
    from genai_prices import Usage, calc_price

    if model is None:
        return "(model not recorded)"
    provider_id = _PROVIDERS.get(provider or "")
    if provider_id is None:
        return f"{model} ({provider})"
    for table, name in _candidates(provider_id, model):
        try:
            return calc_price(Usage(), name, provider_id=table).model
        except LookupError:
            continue
    return model


def _candidates(provider_id: str, model: str) -> list[tuple[str, str]]:
    """(price table, model id) to look up, in order: a route prefix (``converse/``, ``bedrock/``,
    ``vertex_ai/``, ``openrouter/anthropic/``) is dropped; an Amazon Bedrock id is looked up in the
    Bedrock table (its regional and global prices), then as the Anthropic model it names; a Vertex
    ``claude-…@DATE`` id as ``claude-…-DATE``."""
    name = model.rsplit("/", 1)[-1] or model
    bedrock = _BEDROCK.match(name) if provider_id == "anthropic" else None
    if bedrock is None:
        return [(provider_id, name.replace("@", "-"))]
    return [("aws", name), (provider_id, bedrock["model"])]


def _tiers(prices: Any, prompt: int) -> tuple[int, ...]:
    """For each tiered price of the list, which tier a prompt of ``prompt`` tokens pays (0: the base)."""
    from genai_prices.types import TieredPrices

    out = []
    for value in vars(prices).values():
        if isinstance(value, TieredPrices):
            passed = [n for n, tier in enumerate(value.tiers, 1) if prompt > tier.start]
            out.append(passed[-1] if passed else 0)
    return tuple(out)


def _flat(prices: Any, tiers: tuple[int, ...]) -> Any:
    """The price list with each tiered price fixed at the chosen tier."""
    from genai_prices.types import ModelPrice, TieredPrices

    chosen = iter(tiers)
    flat = {}
    for key, value in vars(prices).items():
        if isinstance(value, TieredPrices):
            n = next(chosen)
            value = value.base if n == 0 else value.tiers[n - 1].price
        flat[key] = value
    return ModelPrice(**flat)
