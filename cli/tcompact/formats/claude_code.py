"""Claude Code session files (``~/.claude/projects/<project>/<session>.jsonl``).

The file is a tree of lines linked by ``uuid``/``parentUuid``. The active context is the chain
from the newest leaf back to the last ``compact_boundary`` (``--full-history`` goes on through
``logicalParentUuid``). Two things make a naive walk wrong, both seen in real files
(FORMATS.md §2): an assistant reply is split over several lines sharing ``message.id``, and with
parallel tool calls each ``tool_result`` line hangs off the line of *its own* ``tool_use``, so
the walk skips sibling calls and results. We therefore walk the chain, then gather every line
of each reply on it and attach every result to the reply that issued its call.

Sub-agent lines (``isSidechain``) form their own transcripts (kind ``subagent``), one per
``agentId`` or per sidechain root. Lines that are not messages are kept for writing back. A file
with no ``parentUuid`` on any line (older Claude Code versions, files other tools write) has no
chain to walk: its lines are read in file order, from its last ``compact_boundary`` on.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from itertools import islice
from typing import TYPE_CHECKING, Any

from ..model import Compaction, Record, Transcript
from ._source import ReadContext
from .claude_chain import (MESSAGE_TYPES, Line, file_order, groups, leaf, line_of, line_state, link_subagents,
                           outside_notes, root, walk)
from .claude_messages import assistant_message, compaction, model_of, provider_usage, user_messages

if TYPE_CHECKING:
    from .family.base import Finished

__all__ = ["sniff"]

KNOWN_TYPES = MESSAGE_TYPES | {
    "system",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "progress",
    "attachment",
    "custom-title",
    "tag",
    "agent-name",
    "last-prompt",
    "pr-link",
}


def sniff(record: Mapping[str, Any]) -> bool:
    """True when a JSONL record looks like a Claude Code session line."""
    kind = record.get("type")
    if not isinstance(kind, str):
        return False
    if kind in MESSAGE_TYPES:
        return isinstance(record.get("message"), dict) and ("uuid" in record or "sessionId" in record)
    return kind in KNOWN_TYPES and ("sessionId" in record or "uuid" in record or "leafUuid" in record
                                    or "messageId" in record)


class Reading:
    """A session file read line by line: its lines with a uuid (all the chain walk and the transcripts
    need of them besides their messages), the unknown record types, the session ids. It can be kept
    between reads (:meth:`state`) and fed the lines appended since; its transcripts are then put
    together again from the lines, building only the messages of units not ``kept`` from before."""

    LATE_STATE = True  # finishing leaves the state as it was: it is taken after, the records dropped

    def __init__(self) -> None:
        self.lines: dict[str, Line] = {}
        self.left: list[str] = []  # message lines that no chain can hold
        self.unknown: dict[str, int] = {}
        self.session_ids: dict[str, None] = {}
        self.clock = ""  # lines without a timestamp count as written when the line before them was
        self.chained = True  # whether any line names a parent (none: the lines are read in file order)
        self.units: list[list[tuple[tuple[int, ...], int]]] = []  # per transcript: each unit, its messages
        self.restored: list[tuple[Any, ...]] = []  # the state of the lines restored (they never change)

    def prepare(self, records: Sequence[Record]) -> None:
        """What reading in order needs of the whole file first: whether any line names a parent."""
        self.chained = any(isinstance(r.data.get("parentUuid"), str) for r in records if isinstance(r.data, dict))

    def resumes(self, records: Sequence[Record]) -> bool:
        """Whether appended ``records`` can be read on from here: not when the first parent named turns a file
        read in file order into a tree (the file is then read whole)."""
        return self.chained or not any(isinstance(r.data.get("parentUuid"), str) for r in records
                                       if isinstance(r.data, dict))

    def feed(self, records: Sequence[Record], start: int, ctx: ReadContext) -> None:
        """Take in ``records``, the records of the file from index ``start`` on."""
        lines, unknown = self.lines, self.unknown
        for i, rec in enumerate(records, start):
            d = rec.data
            if d is None:
                continue
            if isinstance(d.get("timestamp"), str) and d["timestamp"] > self.clock:
                self.clock = d["timestamp"]
            kind = d.get("type")
            if not isinstance(kind, str):
                key = "(record without type)" if kind is None else f'("type" is {type(kind).__name__})'
                unknown[key] = unknown.get(key, 0) + 1
                kind = None
            elif kind not in KNOWN_TYPES:
                unknown[kind] = unknown.get(kind, 0) + 1
            if kind in MESSAGE_TYPES and not _valid_message_line(rec, ctx):
                continue
            if isinstance(d.get("sessionId"), str):
                self.session_ids.setdefault(d["sessionId"])
            uuid = d.get("uuid")
            if not self.chained and kind in MESSAGE_TYPES and not isinstance(uuid, str):
                uuid = f"(line {rec.line})"  # no chain to hang it in: file order places it
            if isinstance(uuid, str) and uuid not in lines:
                lines[uuid] = line_of(i, uuid, d, self.clock, rec.line)
            elif kind in MESSAGE_TYPES:
                why = f"repeats the uuid of line {lines[uuid].line_no}" if isinstance(uuid, str) else "has no uuid"
                self.left.append(f"line {rec.line} ({kind}) {why} and is not read")

    def finish(self, records: Sequence[Record], ctx: ReadContext, kept: Mapping[tuple[int, ...], list] | None = None
               ) -> Finished:
        """The transcripts: the main one and one per sub-agent. A unit of lines found in ``kept`` gives
        the messages kept for it (whatever they are); every other unit is built from ``records``."""
        self.units = []
        transcripts = []
        at = {ln.index: ln for ln in self.lines.values()}
        for key, members in groups(self.lines, chained=self.chained).items():
            units: list[tuple[tuple[int, ...], int]] = []
            transcripts.append(_transcript(key, members, self.lines, at, ctx, _builder(records, kept, units),
                                           chained=self.chained))
            self.units.append(units)
        if self.left and transcripts:  # told on the file's first transcript (the main one when there is one)
            transcripts[0] = replace(transcripts[0], notes=(*transcripts[0].notes, *self.left))
        meta = {"session_ids": list(self.session_ids)}
        return link_subagents(transcripts, self.units, at), dict(self.unknown), meta

    def state(self) -> Any:
        """What a later read needs to go on from here (plain values)."""
        new = [line_state(ln) for ln in islice(self.lines.values(), len(self.restored), None)]
        return (self.restored + new, self.left, self.unknown, list(self.session_ids), self.clock, self.chained)

    @classmethod
    def restore(cls, state: Any) -> Reading:
        """The reading :meth:`state` described."""
        lines, left, unknown, session_ids, clock, chained = state
        reading = cls()
        reading.chained = chained
        reading.lines = {t[1]: Line(*t) for t in lines}
        reading.restored = lines
        reading.left, reading.unknown, reading.clock = list(left), dict(unknown), clock
        reading.session_ids = dict.fromkeys(session_ids)
        return reading

    def kept(self, messages: Sequence[Sequence[Any]]) -> dict[tuple[int, ...], list]:
        """Each unit's share of ``messages`` (the transcripts' messages as :meth:`finish` ordered them, in
        whatever form the caller keeps them): what a later :meth:`finish` takes as ``kept``."""
        out: dict[tuple[int, ...], list] = {}
        for units, items in zip(self.units, messages):
            at = 0
            for unit, n in units:
                out[unit] = list(items[at:at + n])
                at += n
        return out


def _builder(records: Sequence[Record], kept: Mapping[tuple[int, ...], list] | None,
             units: list[tuple[tuple[int, ...], int]]) -> Any:
    """The messages of a unit (kept, else built), noting each unit and how many it gave in ``units``."""
    def build(unit: list[int], kind: str) -> list[Any]:
        key = tuple(unit)
        found = kept.get(key) if kept is not None else None
        if found is None:
            found = [assistant_message(unit, records)] if kind == "assistant" else user_messages(unit[0], records[unit[0]])
        units.append((key, len(found)))
        return found

    return build


def _valid_message_line(rec: Record, ctx: ReadContext) -> bool:
    message = rec.data.get("message")
    if not isinstance(message, dict):
        ctx.reject(rec, f'{rec.data["type"]} line without a "message" object')
        return False
    content = message.get("content")
    if not isinstance(content, (str, list)) or (
        isinstance(content, list) and not all(isinstance(b, dict) for b in content)
    ):
        ctx.reject(rec, 'message "content" must be a string or a list of blocks')
        return False
    return True


def _transcript(key: str, members: list[Line], lines: Mapping[str, Line], at: Mapping[int, Line], ctx: ReadContext,
                build: Callable[[list[int], str], list[Any]], *, chained: bool) -> Transcript:
    if chained:
        chain, notes = walk(leaf(members, lines), lines, ctx.options.full_history)
    else:
        chain, notes = file_order(members, ctx.options.full_history), []
    memo: dict[str, str] = {}  # the root of each line, found once
    by_message_id, results_for = _siblings(chain, members, lines, memo)
    order = _emission_order(chain, at, by_message_id, results_for)
    messages: list[Any] = []
    compactions: list[Compaction] = []
    used: set[int] = set()  # the lines the messages were read from
    replies: list[Line] = []  # the last line of each reply
    for unit in order:
        first = at[unit[0]]
        if first.kind in MESSAGE_TYPES:
            made = build(unit, first.kind)
            messages.extend(made)
            if made:
                used.update(unit)
            if first.kind == "assistant":
                replies.append(at[unit[-1]])
        elif first.subtype == "compact_boundary":
            compactions.append(compaction(first, len(messages)))
    in_chain = {c.line for c in compactions}
    for ln in members:
        if ln.subtype == "compact_boundary" and ln.line_no not in in_chain:
            compactions.append(compaction(ln, None))
    compactions.sort(key=lambda c: c.line or 0)
    kind = "main" if key == "main" else "subagent"
    return Transcript(
        id=key,
        kind=kind,
        messages=tuple(messages),
        model=model_of(replies),
        compactions=tuple(compactions),
        provider_usage=provider_usage(members, chain),
        parent_tool_call=None,
        notes=(*notes, *outside_notes(members, lines, chain, used, {ln.index: ln.line_no for ln in members}, memo)),
    )


def _siblings(chain: Sequence[Line], members: Sequence[Line], lines: Mapping[str, Line], memo: dict[str, str]
              ) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """Lines of each reply (by message.id) and result lines of each tool_use id.

    Only from the tree segments the chain runs through: a compacted file holds the old lines and
    their re-chained copies, which share message ids.
    """
    roots = {root(ln, lines, memo) for ln in chain}
    by_message_id: dict[str, list[int]] = defaultdict(list)
    results_for: dict[str, list[int]] = defaultdict(list)
    for ln in members:
        if root(ln, lines, memo) not in roots:
            continue
        if ln.message_id:
            by_message_id[ln.message_id].append(ln.index)
        elif ln.kind == "user":
            for call_id in ln.results:
                results_for[call_id].append(ln.index)
    return by_message_id, results_for


def _emission_order(chain: Sequence[Line], at: Mapping[int, Line], by_message_id: Mapping[str, list[int]],
                    results_for: Mapping[str, list[int]]) -> list[list[int]]:
    """Units to turn into messages: each reply's lines together, each followed by its results."""
    on_chain = {ln.index for ln in chain}
    done: set[int] = set()
    units: list[list[int]] = []
    for ln in chain:
        if ln.index in done or not (ln.kind in MESSAGE_TYPES or ln.subtype == "compact_boundary"):
            continue
        unit = [i for i in by_message_id[ln.message_id] if i not in done] if ln.message_id else [ln.index]
        if ln.index not in unit:  # a chain that strays into another transcript's lines (a duplicated uuid)
            unit = sorted({*unit, ln.index})
        done.update(unit)
        units.append(unit)
        for call_id in [c for i in unit for c in at[i].uses] if ln.kind == "assistant" else ():
            candidates = [i for i in results_for.get(call_id, ()) if i not in done]
            if candidates:
                pick = next((i for i in candidates if i in on_chain), candidates[-1])
                done.add(pick)
                units.append([pick])
    return units
