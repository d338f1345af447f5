"""Which lines of a Claude Code session form the active context: groups, the leaf, the chain, and what is left out.

Claude Code resumes from one *leaf* and walks ``parentUuid`` back from it (REAL-CLIENTS.md). Only
message lines (``user``, ``assistant``) can be leaves: a line with no child is mapped up through
non-message lines (``progress``, ``system``, …) to its nearest message line, which is a leaf when
no message line hangs directly under it (as 2.1.x does); of the leaves, the newest ``timestamp``
wins, the first in file order on ties (as 2.0.76 does). A ``progress`` record dated after every
message therefore no longer cuts the session at its parent.

A file in which no line names a parent (older Claude Code versions, files other tools write) has no
chain at all: its lines are read in file order (:func:`file_order`).

What the chain leaves out is either history before a compaction, an abandoned branch (a line whose
tree segment the chain, or a compaction's history, runs through), or something else — a tree not
connected to the chain, a repeated uuid, a message line without a uuid, a non-message record newer
than the last message — and those are reported as notes (``inspect`` shows them), never dropped
without a word. Each sub-agent's transcript is then linked to the Task call that started it
(:func:`link_subagents`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache
from operator import attrgetter
from sys import intern
from typing import TYPE_CHECKING, Any

from .claude_messages import line_facts

if TYPE_CHECKING:
    from ..model import Transcript

__all__ = ["Line", "line_of", "line_state", "groups", "root", "leaf", "walk", "file_order", "outside_notes",
           "link_subagents", "MESSAGE_TYPES"]

MESSAGE_TYPES = frozenset({"user", "assistant"})


@dataclass(slots=True)
class Line:
    """A line with a uuid: what the chain walk needs of it, and what the transcript takes from it besides
    its messages (so that a transcript can be put together again from its lines alone)."""

    index: int
    uuid: str
    parent: str | None
    logical_parent: str | None
    kind: str
    subtype: str | None
    sidechain: bool
    agent: str | None
    timestamp: str
    message_id: str | None
    line_no: int = 0
    uses: tuple[str, ...] = ()  # the ids of its tool_use blocks
    results: tuple[str, ...] = ()  # the tool_use ids its tool_result blocks answer (user lines)
    usage: tuple[int, ...] | None = None  # the counts of message.usage (assistant lines with a message id)
    request: str = ""
    model: str | None = None
    compact: tuple[str | None, int | None] | None = None  # a compact boundary's trigger and preTokens
    prompts: tuple[tuple[str, bytes], ...] = ()  # (call id, key of the stripped prompt) of its calls
    opening: bytes | None = None  # key of the stripped text of its user message (sidechain user lines)


_FIELDS = attrgetter(*Line.__slots__)


def line_state(ln: Line) -> tuple[Any, ...]:
    """The fields of a line as a tuple, in order (``Line(*line_state(ln)) == ln``)."""
    return _FIELDS(ln)


def line_of(i: int, uuid: str, d: Mapping[str, Any], clock: str, line_no: int = 0) -> Line:
    """The :class:`Line` of record ``i`` (``clock``: the time of a line without a timestamp; ``line_no``:
    its line in the file)."""
    message = d.get("message") if isinstance(d.get("message"), dict) else {}
    parent = d.get("parentUuid")
    logical = d.get("logicalParentUuid")
    kind = intern(d["type"]) if isinstance(d.get("type"), str) else ""
    subtype = intern(d["subtype"]) if isinstance(d.get("subtype"), str) else None
    message_id = intern(message["id"]) if kind == "assistant" and isinstance(message.get("id"), str) else None
    ln = Line(  # (names that repeat are interned: a kept state then holds each once)
        index=i,
        uuid=intern(uuid),
        parent=intern(parent) if isinstance(parent, str) else None,
        logical_parent=intern(logical) if isinstance(logical, str) else None,
        kind=kind,
        subtype=subtype,
        sidechain=d.get("isSidechain") is True,
        agent=intern(d["agentId"]) if isinstance(d.get("agentId"), str) else None,
        timestamp=d.get("timestamp") if isinstance(d.get("timestamp"), str) else clock,
        message_id=message_id,
        line_no=line_no,
    )
    if kind in MESSAGE_TYPES or subtype == "compact_boundary":
        line_facts(ln, d, message)
    return ln


def groups(lines: Mapping[str, Line], *, chained: bool = True) -> dict[str, list[Line]]:
    """Main-chain lines under "main"; sidechain lines under their agentId or their root's uuid (in a
    file without parent links, under the first such line's) — a compaction's boundary (no parent) under
    the root of the sidechain its ``logicalParentUuid`` continues, so that a compacted sub-agent keeps its
    place and its name."""
    out: dict[str, list[Line]] = defaultdict(list)
    root_of: dict[str, str] = {}
    loose: str | None = None
    for ln in lines.values():
        if not ln.sidechain:
            out["main"].append(ln)
        elif ln.agent:
            out[f"agent-{ln.agent}"].append(ln)
        elif not chained:
            loose = loose or ln.uuid.strip("()").replace(" ", "-")
            out[f"sidechain-{loose[:8]}"].append(ln)
        else:
            out[f"sidechain-{_sidechain_root(ln, lines, root_of)[:8]}"].append(ln)
    if "main" in out:
        return {"main": out.pop("main"), **out}
    return dict(out)


def _sidechain_root(ln: Line, lines: Mapping[str, Line], memo: dict[str, str]) -> str:
    """The root of a sidechain line's tree, followed back through the boundaries of its compactions."""
    seen: set[str] = set()
    top = root(ln, lines, memo, sidechain_only=True)
    while top not in seen:
        seen.add(top)
        head = lines.get(top)
        before = lines.get(head.logical_parent) if head and head.subtype == "compact_boundary" and \
            head.logical_parent else None
        if before is None or not before.sidechain:
            break
        top = root(before, lines, memo, sidechain_only=True)
    return top


def root(ln: Line, lines: Mapping[str, Line], memo: dict[str, str], *, sidechain_only: bool = False) -> str:
    """The uuid of the top of ``ln``'s tree segment (a root, a compact boundary, or a dangling parent)."""
    path = []
    cur: Line | None = ln
    while cur is not None and cur.uuid not in memo:
        path.append(cur.uuid)
        nxt = lines.get(cur.parent) if cur.parent else None
        ok = nxt is not None and (nxt.sidechain or not sidechain_only) and nxt.uuid not in path
        cur = nxt if ok else None
    top = memo[cur.uuid] if cur is not None else path[-1]
    for u in path:
        memo[u] = top
    return top


def leaf(members: Sequence[Line], lines: Mapping[str, Line]) -> Line:
    """The line Claude Code resumes from (see the module docstring); a group without message lines
    falls back to its newest line."""
    candidates = _leaves(members, lines)
    if not candidates:
        return max(members, key=lambda ln: (_when(ln.timestamp), ln.index))
    return max(sorted(candidates, key=lambda ln: ln.index), key=lambda ln: _when(ln.timestamp))


def _leaves(members: Sequence[Line], lines: Mapping[str, Line]) -> list[Line]:
    named = {ln.parent for ln in members if ln.parent}
    message_child = {ln.parent for ln in members if ln.parent and ln.kind in MESSAGE_TYPES}
    found: dict[str, Line] = {}
    for ln in members:
        if ln.uuid in named:
            continue
        up = _message_at_or_above(ln, lines)
        if up is not None and up.uuid not in message_child:
            found.setdefault(up.uuid, up)
    return list(found.values())


def _message_at_or_above(ln: Line, lines: Mapping[str, Line]) -> Line | None:
    seen: set[str] = set()
    cur: Line | None = ln
    while cur is not None and cur.uuid not in seen:
        if cur.kind in MESSAGE_TYPES:
            return cur
        seen.add(cur.uuid)
        cur = lines.get(cur.parent) if cur.parent else None
    return None


@lru_cache(maxsize=65536)
def _when(timestamp: str) -> float:
    """Seconds since the epoch of an ISO timestamp; one that does not parse sorts first."""
    try:
        return datetime.fromisoformat(timestamp[:-1] + "+00:00" if timestamp.endswith("Z") else timestamp).timestamp()
    except ValueError:
        return float("-inf")


def walk(end: Line, lines: Mapping[str, Line], full_history: bool) -> tuple[list[Line], list[str]]:
    """The chain from the root (or the last boundary) to ``end``, oldest first, and notes."""
    chain: list[Line] = []
    notes: list[str] = []
    seen: set[str] = set()
    cur: Line | None = end
    while cur is not None and cur.uuid not in seen:
        seen.add(cur.uuid)
        chain.append(cur)
        nxt_id = cur.parent
        if cur.subtype == "compact_boundary":
            if not full_history:
                break
            nxt_id = cur.logical_parent or cur.parent
        if nxt_id is None:
            break
        cur = lines.get(nxt_id)
        if cur is None:
            notes.append(f"chain stops at a parent that is not in the file ({nxt_id})")
    chain.reverse()
    return chain, notes


def file_order(members: Sequence[Line], full_history: bool) -> list[Line]:
    """The context of lines that name no parent: all of them in file order, from the last
    ``compact_boundary`` on (every line with ``full_history``)."""
    ordered = sorted(members, key=lambda ln: ln.index)
    starts = [n for n, ln in enumerate(ordered) if ln.subtype == "compact_boundary"]
    return ordered if full_history or not starts else ordered[starts[-1]:]


def outside_notes(members: Sequence[Line], lines: Mapping[str, Line], chain: Sequence[Line], used: set[int],
                  line_no: Mapping[int, int], memo: dict[str, str] | None = None) -> list[str]:
    """Notes on this group's lines that the active context leaves out for a reason other than a compaction
    or an abandoned branch (``used``: record indices the messages were read from; ``line_no``: file lines;
    ``memo``: the :func:`root` of lines found already)."""
    memo = {} if memo is None else memo
    reach = _connected_roots(chain, members, lines, memo)
    stray = [ln for ln in members if ln.kind in MESSAGE_TYPES and ln.index not in used
             and root(ln, lines, memo) not in reach]
    notes = []
    if stray:
        notes.append(f"{len(stray)} message line(s) outside the active context, neither before a compaction nor "
                     f"on an abandoned branch (not connected to the chain that ends at line "
                     f"{line_no.get(chain[-1].index, '?') if chain else '?'}): lines {_listed(line_no, stray)}")
    end = chain[-1] if chain else None
    named = {ln.parent for ln in members if ln.parent}
    newer = [ln for ln in members if end is not None and ln.kind not in MESSAGE_TYPES and ln.uuid not in named
             and _when(ln.timestamp) > _when(end.timestamp) and _message_at_or_above(ln, lines) is not end]
    if newer:
        kinds = ", ".join(sorted({ln.kind or "record" for ln in newer}))
        notes.append(f"{len(newer)} record(s) that are not messages ({kinds}) are newer than the last message "
                     f"but do not end the context, which ends at line {line_no.get(end.index, '?')}: lines "
                     f"{_listed(line_no, newer)}")
    return notes


def _connected_roots(chain: Sequence[Line], members: Sequence[Line], lines: Mapping[str, Line],
                     memo: dict[str, str]) -> set[str]:
    """Roots of the chain's tree segments and of every segment before a compaction they lead to."""
    reach = {root(ln, lines, memo) for ln in chain}
    boundaries = {ln.uuid: ln for ln in members if ln.subtype == "compact_boundary" and ln.logical_parent}
    grew = True
    while grew:
        grew = False
        for b in boundaries.values():
            if root(b, lines, memo) in reach and b.logical_parent in lines:
                top = root(lines[b.logical_parent], lines, memo)
                if top not in reach:
                    reach.add(top)
                    grew = True
    return reach


def _listed(line_no: Mapping[int, int], found: Iterable[Line], limit: int = 10) -> str:
    numbers = sorted(line_no.get(ln.index, ln.index + 1) for ln in found)
    return ", ".join(map(str, numbers[:limit])) + (" …" if len(numbers) > limit else "")


def link_subagents(transcripts: list[Transcript], units: Sequence[Sequence[tuple[tuple[int, ...], int]]],
                    at: Mapping[int, Line]) -> list[Transcript]:
    """Point each sub-agent at the main transcript's Task/Agent call whose prompt started it (the opening
    text of its first user message); ``units`` are each transcript's units of lines, in order."""
    main = next((n for n, t in enumerate(transcripts) if t.kind == "main"), None)
    if main is None:
        return transcripts
    by_prompt: dict[bytes, str] = {}
    for unit, _ in units[main]:
        for i in unit:
            for call_id, prompt in at[i].prompts:
                by_prompt.setdefault(prompt, call_id)
    out = []
    for t, own in zip(transcripts, units):
        opening = next((at[unit[0]].opening for unit, _ in own if at[unit[0]].opening is not None), None)
        if t.kind == "subagent" and opening is not None and by_prompt.get(opening):
            t = replace(t, parent_tool_call=by_prompt[opening])
        out.append(t)
    return out
