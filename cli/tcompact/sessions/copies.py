"""Which session a request belongs to when several sessions hold it.

A fork — tcompact's ``--fork``, Claude Code's own branching — and a resumed copy hold the history
of the session they came from, lines and times included, so the same API request (the same key,
:mod:`tcompact.sessions.usage`) is in both. It is counted once, in the session it was made in: the
one active first; of sessions that began at the same time (a copy keeps its original's times), one
that names another as its origin (Codex ``forked_from_id``, Claude Code ``forkedFrom``) comes after
it, then the one whose activity ended first (a fork goes on after its original's end), then the id.
The others count it under ``copied_requests``: a fork counts only what it added.

Sessions outside a listing can hold the originals of the listed sessions' requests (``inspect
--last 1`` on a fork): :func:`peers` names the ones that may, so that they are read too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import Any

from .stores import Session
from .usage import Request

__all__ = ["peers", "owned"]

_OLDEST = datetime.min.replace(tzinfo=timezone.utc)


def peers(chosen: Sequence[Session], every: Iterable[Session]) -> list[Session]:
    """The sessions of ``every`` not in ``chosen`` that may hold the originals of their requests: of the
    same agent and first activity (a copy keeps its original's times), or named as an origin."""
    mine = {(s.agent, s.id) for s in chosen}
    starts = {(s.agent, s.first) for s in chosen if s.first is not None}
    origins = {(s.agent, s.origin) for s in chosen if s.origin}
    return [s for s in every if (s.agent, s.id) not in mine
            and ((s.agent, s.first) in starts or (s.agent, s.id) in origins)]


def owned(held: Sequence[tuple[Session, Sequence[Request]]]) -> list[tuple[list[Request], int]]:
    """For each (session, its requests), in the order given: the requests it counts, and how many it
    holds that another session counts (each request once within a session too)."""
    ids = {(s.agent, s.id) for s, _ in held}

    def order(n: int) -> tuple[Any, ...]:
        s = held[n][0]
        return (s.first or _OLDEST, (s.agent, s.origin) in ids, s.last or _OLDEST, s.id)

    seen: set[tuple[Any, ...]] = set()
    out: list[tuple[list[Request], int]] = [([], 0)] * len(held)
    for n in sorted(range(len(held)), key=order):
        unique = {req.key: req for req in held[n][1]}
        kept = [req for key, req in unique.items() if key not in seen]
        seen.update(unique)
        out[n] = (kept, len(unique) - len(kept))
    return out
