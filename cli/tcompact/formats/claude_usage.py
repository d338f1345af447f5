"""The API requests a Claude Code session records, each with its usage (:mod:`tcompact.formats.requests`).

Claude Code writes one reply over several lines that repeat the input figures while the output
grows: lines are de-duplicated by (``message.id``, ``requestId``) keeping the last, as the reader
does. Lines of usage without a ``type`` (``message.usage``, often with the ``costUSD`` the line
cost, as older tools wrote them) are requests too, as ccusage counts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..model import Record
from .requests import ANTHROPIC, Request, parse_time

__all__ = ["claude_requests"]


def claude_requests(records: Sequence[Record]) -> tuple[Request, ...]:
    """Every request of a Claude Code session, the last line of each reply, in file order."""
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


def _n(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
