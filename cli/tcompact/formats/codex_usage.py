"""The provider usage a Codex rollout records, read one way for ``inspect FILE`` and the sessions view.

Codex writes an ``event_msg`` ``token_count`` after each request: ``total_token_usage`` (a running
total), ``last_token_usage`` (the request's own figures) and ``model_context_window``. ccusage reads
them, and so does :func:`usage_step`: an event whose running total did not change repeats the one
before it and adds nothing; otherwise the request is ``last_token_usage``, or — an event without it
— the growth of the total (a total that went down, as after a resume, starts again from zero).
:class:`RolloutUsage` adds the requests up for the reader's ``provider_usage``;
:func:`codex_requests` makes each one a priced request (:mod:`tcompact.formats.requests`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..model import Record
    from .requests import Request

__all__ = ["USAGE_KEYS", "usage_step", "RolloutUsage", "codex_requests"]

#: The figures of a Codex token usage object.
USAGE_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")


def usage_step(info: Mapping[str, Any], previous: dict[str, int] | None
               ) -> tuple[dict[str, int] | None, dict[str, int] | None]:
    """One ``token_count`` event read as ccusage reads it: (the usage of the request it reports, or None
    when it reports none; the running total to compare the next event with).

    An event whose running total (``total_token_usage``) did not change repeats the one before it and
    adds nothing. Otherwise the request is ``last_token_usage``, or — an event without it — the growth
    of the total since the previous event (a total that went down, as after a resume, starts again
    from zero). Both ``inspect FILE`` and the sessions view count requests with this one function.
    """
    total = _figures(info.get("total_token_usage"))
    last = _figures(info.get("last_token_usage"))
    if total is not None and total == previous:
        return None, previous
    if last is not None:
        step = last
    elif total is None:
        return None, previous
    elif previous is None or any(total[k] < previous[k] for k in USAGE_KEYS):
        step = total
    else:
        step = {k: total[k] - previous[k] for k in USAGE_KEYS}
    return (step if any(step.values()) else None), (total if total is not None else previous)


def _figures(u: Any) -> dict[str, int] | None:
    """A usage object's figures (one that is no count — a string, a list — counts 0), or None."""
    return {k: _count(u.get(k)) for k in USAGE_KEYS} if isinstance(u, dict) else None


class RolloutUsage:
    """The provider usage of a rollout, added up request by request as :func:`usage_step` reads them."""

    def __init__(self) -> None:
        self.events = 0
        self.total = dict.fromkeys(USAGE_KEYS, 0)
        self.requests = 0
        self.previous: dict[str, int] | None = None
        self.last: dict[str, int] | None = None
        self.line: int | None = None  # the file line of the last request
        self.window: int | None = None

    def add(self, info: Mapping[str, Any], line: int) -> None:
        """One ``token_count`` event's ``info``, found at file line ``line``."""
        self.events += 1
        window = info.get("model_context_window")
        self.window = window if _count(window) > 0 else self.window
        step, self.previous = usage_step(info, self.previous)
        if step is not None:
            self.requests += 1
            self.total = {k: self.total[k] + step[k] for k in USAGE_KEYS}
            self.last, self.line = step, line

    def state(self) -> tuple[Any, ...]:
        """The figures so far, as plain values (what :meth:`restore` takes back)."""
        return self.events, self.total, self.requests, self.previous, self.last, self.line, self.window

    @classmethod
    def restore(cls, state: Any) -> RolloutUsage:
        usage = cls()
        (usage.events, total, usage.requests, previous, last, usage.line, usage.window) = state
        usage.total, usage.previous, usage.last = dict(total), previous and dict(previous), last and dict(last)
        return usage

    def report(self) -> dict[str, Any] | None:
        """The transcript's ``provider_usage`` (README, "inspect --json schema"), or None without any event."""
        if not self.events:
            return None
        return {"source": "codex", "events": self.events, "requests": self.requests,
                "total": self.total, "last": self.last, "model_context_window": self.window,
                "last_context_tokens": self.last["input_tokens"] if self.last else None, "last_line": self.line}


def codex_requests(records: Sequence[Record]) -> tuple[Request, ...]:
    """Every request of a rollout, in file order, with the model of its turn and the session's provider."""
    from .requests import OPENAI, Request, parse_time

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
                                                                 if k in _REQUEST_KEYS))
                out.append(Request(key=key, model=model, provider=provider, at=parse_time(d.get("timestamp")),
                                   input=step["input_tokens"] - cached, cache_read=cached,
                                   output=step["output_tokens"]))
    return tuple(out)


_REQUEST_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens")  # what tells two requests apart


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
