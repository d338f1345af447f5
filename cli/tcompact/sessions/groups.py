"""``inspect --group-by``: session rows summed by project, day or model, or their tools by tool name.

- ``session``: the rows themselves (no groups);
- ``project``: the sessions of each recorded working directory;
- ``day``: the sessions by the day (in ``--timezone``) of their last activity, so that each
  session, with all its figures, is in exactly one day;
- ``model``: what can be split by model — the requests of each model, their usage and cost;
  ``sessions`` counts the sessions that used it (a session of two models is in both rows);
- ``tool``: calls, argument and result tokens, results and errors of each tool name.

Every grouping also gives totals over all the sessions listed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import tzinfo
from typing import TYPE_CHECKING, Any, cast

from .usage import Request

if TYPE_CHECKING:
    from .shapes import (Cost, Group, GroupTotals, ModelGroup, SessionRow, SummedGroup, SummedTotals, ToolGroup, ToolTotals,
                         UsageSums)

__all__ = ["GROUPS", "group_rows", "usage_sums"]

GROUPS = ("session", "project", "day", "model", "tool")
_USAGE = ("input", "output", "cache_write", "cache_read")


def usage_sums(requests: Sequence[Request]) -> UsageSums:
    """Requests and their usage added up."""
    return {"requests": len(requests), **{k: sum(getattr(r, k) for r in requests) for k in _USAGE}}


def group_rows(group_by: str, rows: Sequence[SessionRow], reads: Sequence[Any], *, tz: tzinfo,
               cost: bool) -> tuple[list[Group] | None, GroupTotals]:
    """The groups (None for ``session``) and the totals, from rows and the reads they came from
    (``reads[i].requests`` and ``reads[i].files`` belong to ``rows[i]``)."""
    pairs = list(zip(rows, reads))
    if group_by == "tool":
        return _tools(pairs)
    totals = cast("SummedTotals", {k: v for k, v in _summed("total", pairs, cost=cost).items() if k != "key"})
    if group_by == "session":
        return None, totals
    if group_by == "model":
        return _models(pairs, cost=cost), totals
    key: Callable[[SessionRow], str] = (
        (lambda row: row["project"] or "(not recorded)") if group_by == "project"
        else (lambda row: (row["last_activity"] or "(no date)")[:10]))
    buckets: dict[str, list[tuple[SessionRow, Any]]] = {}
    for pair in pairs:  # rows are newest first, so the buckets are too
        buckets.setdefault(key(pair[0]), []).append(pair)
    return [_summed(k, members, cost=cost) for k, members in buckets.items()], totals


def _summed(key: str, pairs: Sequence[tuple[SessionRow, Any]], *, cost: bool) -> SummedGroup:
    requests = [r for _, read in pairs for r in read.requests]
    out: SummedGroup = {
        "key": key, "sessions": len(pairs),
        "messages": sum(row["messages"] for row, _ in pairs),
        "tool_calls": sum(row["tool_calls"] for row, _ in pairs),
        "tokens": sum(row["tokens"] for row, _ in pairs),
        "usage": usage_sums(requests) if requests else None,
    }
    if cost:
        out["cost"] = _cost(requests)
    return out


def _models(pairs: Sequence[tuple[SessionRow, Any]], *, cost: bool) -> list[ModelGroup]:
    by_model: dict[str, list[Request]] = {}
    sessions: dict[str, set[str]] = {}
    for row, read in pairs:
        for r in read.requests:
            name = r.model or "(not recorded)"
            by_model.setdefault(name, []).append(r)
            sessions.setdefault(name, set()).add(f"{row['agent']}:{row['id']}")
    out = []
    for name, requests in by_model.items():
        entry: ModelGroup = {"key": name, "sessions": len(sessions[name]), "usage": usage_sums(requests)}
        if cost:
            entry["cost"] = _cost(requests)
        out.append(entry)
    out.sort(key=lambda e: (-(e.get("cost") or {}).get("priced_usd", 0), -e["usage"]["requests"], e["key"]))
    return out


def _tools(pairs: Sequence[tuple[SessionRow, Any]]) -> tuple[list[ToolGroup], ToolTotals]:
    fields = ("calls", "argument_tokens", "result_tokens", "results", "errors")
    rows: dict[str, dict[str, Any]] = {}
    users: dict[str, set[str]] = {}
    for row, read in pairs:
        for f in read.files:
            for t in f["transcripts"]:
                for tool in t["tools"]:
                    entry = rows.setdefault(tool["name"], {"key": tool["name"], **dict.fromkeys(fields, 0)})
                    for k in fields:
                        entry[k] += tool[k]
                    users.setdefault(tool["name"], set()).add(f"{row['agent']}:{row['id']}")
    out = [{**entry, "sessions": len(users[name])} for name, entry in rows.items()]
    out.sort(key=lambda e: (-(e["argument_tokens"] + e["result_tokens"]), e["key"]))
    totals = {"sessions": len(pairs), **{k: sum(e[k] for e in out) for k in fields}}
    return out, totals


def _cost(requests: Sequence[Request]) -> Cost | None:
    from .pricing import price

    return price(requests).as_dict() if requests else None
