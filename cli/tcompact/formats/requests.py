"""Provider-reported usage, one entry per API request: the value every format's ``requests`` gives.

Pricing needs each request on its own — the price tier of a request depends on the size of its
own prompt, and its model and time pick the price table — so a format walks its records for them
instead of the per-transcript totals its reader keeps (:class:`~tcompact.formats.family.Format`,
``requests``). Figures are made alike across the formats:

- ``input``: prompt tokens not read from the cache and not written to it (Claude ``input_tokens``;
  Codex ``input_tokens - cached_input_tokens``, since Codex counts cached tokens inside input);
- ``cache_write`` (Claude ``cache_creation_input_tokens``, of which ``cache_write_1h`` were written
  for an hour) and ``cache_read`` (Claude ``cache_read_input_tokens``, Codex ``cached_input_tokens``);
- ``output``: completion tokens, reasoning included.

``key`` identifies a request across files, so that a fork that copied its parent's history is not
charged twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from .family import get

if TYPE_CHECKING:
    from ..model import Record

__all__ = ["Request", "requests_of", "parse_time", "ANTHROPIC", "OPENAI"]

ANTHROPIC = "anthropic"
OPENAI = "openai"


@dataclass(frozen=True, slots=True)
class Request:
    """The usage one API request reported."""

    key: tuple[Any, ...]
    model: str | None
    provider: str | None
    at: datetime | None
    input: int = 0
    output: int = 0
    cache_write: int = 0
    cache_read: int = 0
    cache_write_1h: int = 0
    speed: str | None = None
    #: the cost the line itself recorded (``costUSD``), which is then its price
    cost_usd: float | None = None

    @property
    def prompt(self) -> int:
        """The whole prompt: uncached input, cache writes and cache reads."""
        return self.input + self.cache_write + self.cache_read


def requests_of(fmt: str, records: Sequence[Record]) -> tuple[Request, ...] | None:
    """Every request a file of format ``fmt`` records, in file order; None when it records no provider
    usage at all (a format without it, or a Codex rollout without token_count events)."""
    return get(fmt).requests(records) or None


def parse_time(value: Any) -> datetime | None:
    """An ISO 8601 time as an aware datetime (UTC when it names no offset), or None."""
    if not isinstance(value, str):
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)
