"""Provider-reported usage, one entry per API request, from the records of a Claude Code or Codex file.

Pricing needs each request on its own — the price tier of a request depends on the size of its
own prompt, and its model and time pick the price table — so this walks the records instead of
the per-transcript totals the readers keep. Figures are made alike across the agents:

- ``input``: prompt tokens not read from the cache and not written to it (Claude ``input_tokens``;
  Codex ``input_tokens - cached_input_tokens``, since Codex counts cached tokens inside input);
- ``cache_write`` (Claude ``cache_creation_input_tokens``, of which ``cache_write_1h`` were written
  for an hour) and ``cache_read`` (Claude ``cache_read_input_tokens``, Codex ``cached_input_tokens``);
- ``output``: completion tokens, reasoning included.

Claude Code writes one reply over several lines that repeat the input figures while the output
grows: lines are de-duplicated by (``message.id``, ``requestId``) keeping the last, as the reader
does. Lines of usage without a ``type`` (``message.usage``, often with the ``costUSD`` the line
cost, as older tools wrote them) are requests too, as ccusage counts them. Codex ``token_count`` events are read by :func:`tcompact.formats.codex_usage.usage_step`, the one
reading ``inspect FILE`` uses too: an event whose running total did not change adds nothing, else
the request is its ``last_token_usage`` (the growth of the total where it has none). ``key``
identifies a request across files, so that a fork that copied its parent's history is not
charged twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..formats.codex_usage import usage_step
from ..model import Record
from .stores import parse_time

__all__ = ["Request", "requests_of", "ANTHROPIC", "OPENAI"]

ANTHROPIC = "anthropic"
OPENAI = "openai"
_CODEX_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens")


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
    """Every request of a ``claude-code`` or ``codex`` file, in file order; None when the file
    records no provider usage at all (other formats, or a rollout without token_count events)."""
    if fmt == "claude-code":
        found = _claude(records)
    elif fmt == "codex":
        found = _codex(records)
    else:
        return None
    return found or None


def _claude(records: Sequence[Record]) -> tuple[Request, ...]:
    last: dict[tuple[Any, ...], Request] = {}
    for rec in records:
        d = rec.data
        key, message = _claude_reply(rec)
        if key is None:
            continue
        usage = message["usage"]
        detail = usage.get("cache_creation") if isinstance(usage.get("cache_creation"), dict) else {}
        model = message.get("model")
        cost = d.get("costUSD")
        last[key] = Request(key=key, model=model if isinstance(model, str) and model else None, provider=ANTHROPIC,
                            at=parse_time(d.get("timestamp")), input=_n(usage.get("input_tokens")),
                            output=_n(usage.get("output_tokens")),
                            cache_write=_n(usage.get("cache_creation_input_tokens")),
                            cache_read=_n(usage.get("cache_read_input_tokens")),
                            cache_write_1h=_n(detail.get("ephemeral_1h_input_tokens")),
                            speed=usage.get("speed") if isinstance(usage.get("speed"), str) else None,
                            cost_usd=float(cost) if _is_number(cost) else None)
    return tuple(last.values())


def _claude_reply(rec: Record) -> tuple[tuple[Any, ...] | None, Any]:
    """(the request key, the message) of a line that reports a reply's usage, or (None, None): an
    ``assistant`` line with a ``message.id``, or a line of usage with no ``type`` at all (as older
    tools wrote them: ``message.usage`` and often ``costUSD``), keyed by its time, place and figures."""
    d = rec.data
    message = d.get("message") if isinstance(d, dict) else None
    if not isinstance(message, dict) or not isinstance(message.get("usage"), dict):
        return None, None
    mid = message.get("id")
    if d.get("type") == "assistant" and isinstance(mid, str) and mid:
        return ("claude", mid, str(d.get("requestId") or "")), message
    if "type" not in d:
        figures = tuple(sorted((k, v) for k, v in message["usage"].items() if isinstance(v, int)))
        return ("claude-line", str(mid or ""), str(d.get("timestamp")), rec.line, figures), message
    return None, None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


def _codex(records: Sequence[Record]) -> tuple[Request, ...]:
    out: list[Request] = []
    model: str | None = None
    provider: str | None = OPENAI
    previous: dict[str, int] | None = None
    for rec in records:
        d = rec.data
        p = d.get("payload") if isinstance(d, dict) else None
        if not isinstance(p, dict):
            continue
        if d.get("type") == "session_meta":
            provider = p.get("model_provider") if isinstance(p.get("model_provider"), str) else OPENAI
        elif d.get("type") == "turn_context" and isinstance(p.get("model"), str) and p["model"]:
            model = p["model"]
        elif d.get("type") == "event_msg" and p.get("type") == "token_count" and isinstance(p.get("info"), dict):
            step, previous = usage_step(p["info"], previous)
            if step is not None:
                cached = min(step["cached_input_tokens"], step["input_tokens"])
                key = ("codex", str(d.get("timestamp")), *sorted((k, v) for k, v in (previous or step).items()
                                                                 if k in _CODEX_KEYS))
                out.append(Request(key=key, model=model, provider=provider, at=parse_time(d.get("timestamp")),
                                   input=step["input_tokens"] - cached, cache_read=cached,
                                   output=step["output_tokens"]))
    return tuple(out)


def _n(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


