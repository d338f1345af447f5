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
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import orjson

from ..model import Compaction, Message, Record, Transcript
from ._source import ReadContext
from .claude_chain import MESSAGE_TYPES, Line, file_order, groups, leaf, line_of, outside_notes, root, walk
from .claude_messages import assistant_message, blocks, compaction, model_of, provider_usage, user_messages

__all__ = ["NAME", "sniff", "read_records"]

NAME = "claude-code"
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


def read_records(records: Sequence[Record], ctx: ReadContext) -> tuple[list[Transcript], dict[str, int], dict[str, Any]]:
    """Build the main transcript and one per sub-agent from the lines of a session file."""
    lines: dict[str, Line] = {}
    left: list[str] = []  # message lines that no chain can hold
    unknown: dict[str, int] = {}
    session_ids: dict[str, None] = {}
    clock = ""  # lines without a timestamp count as written when the line before them was
    chained = any(isinstance(r.data.get("parentUuid"), str) for r in records if isinstance(r.data, dict))
    for i, rec in enumerate(records):
        d = rec.data
        if d is None:
            continue
        if isinstance(d.get("timestamp"), str) and d["timestamp"] > clock:
            clock = d["timestamp"]
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
            session_ids.setdefault(d["sessionId"])
        uuid = d.get("uuid")
        if not chained and kind in MESSAGE_TYPES and not isinstance(uuid, str):
            uuid = f"(line {rec.line})"  # no chain to hang it in: file order places it
        if isinstance(uuid, str) and uuid not in lines:
            lines[uuid] = line_of(i, uuid, d, clock)
        elif kind in MESSAGE_TYPES:
            why = (f"repeats the uuid of line {records[lines[uuid].index].line}" if isinstance(uuid, str)
                   else "has no uuid")
            left.append(f"line {rec.line} ({kind}) {why} and is not read")
    transcripts = [_transcript(key, members, lines, records, ctx, chained=chained)
                   for key, members in groups(lines, chained=chained).items()]
    if left and transcripts:  # told on the file's first transcript (the main one when there is one)
        transcripts[0] = replace(transcripts[0], notes=(*transcripts[0].notes, *left))
    meta = {"session_ids": list(session_ids)}
    return _link_subagents(transcripts), unknown, meta


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


def _transcript(key: str, members: list[Line], lines: Mapping[str, Line], records: Sequence[Record],
                ctx: ReadContext, *, chained: bool) -> Transcript:
    if chained:
        chain, notes = walk(leaf(members, lines), lines, ctx.options.full_history)
    else:
        chain, notes = file_order(members, ctx.options.full_history), []
    by_message_id, results_for = _siblings(chain, members, lines, records)
    order = _emission_order(chain, records, by_message_id, results_for)
    messages: list[Message] = []
    compactions: list[Compaction] = []
    for unit in order:
        first = records[unit[0]].data
        if first.get("type") == "assistant":
            messages.append(assistant_message(unit, records))
        elif first.get("type") == "user":
            messages.extend(user_messages(unit[0], records[unit[0]]))
        elif first.get("subtype") == "compact_boundary":
            compactions.append(compaction(records[unit[0]], len(messages)))
    in_chain = {c.line for c in compactions}
    for ln in members:
        if ln.subtype == "compact_boundary" and records[ln.index].line not in in_chain:
            compactions.append(compaction(records[ln.index], None))
    compactions.sort(key=lambda c: c.line or 0)
    kind = "main" if key == "main" else "subagent"
    return Transcript(
        id=key,
        kind=kind,
        messages=tuple(messages),
        model=model_of(messages, records),
        compactions=tuple(compactions),
        provider_usage=provider_usage(members, records, chain),
        parent_tool_call=None,
        notes=(*notes, *outside_notes(members, lines, chain, {i for m in messages for i in m.source},
                                      {ln.index: records[ln.index].line for ln in members})),
    )


def _siblings(chain: Sequence[Line], members: Sequence[Line], lines: Mapping[str, Line],
              records: Sequence[Record]) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """Lines of each reply (by message.id) and result lines of each tool_use id.

    Only from the tree segments the chain runs through: a compacted file holds the old lines and
    their re-chained copies, which share message ids.
    """
    memo: dict[str, str] = {}
    roots = {root(ln, lines, memo) for ln in chain}
    by_message_id: dict[str, list[int]] = defaultdict(list)
    results_for: dict[str, list[int]] = defaultdict(list)
    for ln in members:
        if root(ln, lines, memo) not in roots:
            continue
        if ln.message_id:
            by_message_id[ln.message_id].append(ln.index)
        elif ln.kind == "user":
            for block in blocks(records[ln.index].data):
                if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                    results_for[block["tool_use_id"]].append(ln.index)
    return by_message_id, results_for


def _emission_order(chain: Sequence[Line], records: Sequence[Record], by_message_id: Mapping[str, list[int]],
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
        for call_id in _tool_use_ids(unit, records) if ln.kind == "assistant" else ():
            candidates = [i for i in results_for.get(call_id, ()) if i not in done]
            if candidates:
                pick = next((i for i in candidates if i in on_chain), candidates[-1])
                done.add(pick)
                units.append([pick])
    return units


def _tool_use_ids(unit: Sequence[int], records: Sequence[Record]) -> list[str]:
    ids = []
    for i in unit:
        for block in blocks(records[i].data):
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                ids.append(block["id"])
    return ids


def _link_subagents(transcripts: list[Transcript]) -> list[Transcript]:
    """Point each sub-agent at the main transcript's Task/Agent call whose prompt started it."""
    main = next((t for t in transcripts if t.kind == "main"), None)
    if main is None:
        return transcripts
    by_prompt: dict[str, str] = {}
    for m in main.messages:
        for call in m.tool_calls:
            try:
                args = orjson.loads(call.arguments)
            except orjson.JSONDecodeError:
                continue
            if isinstance(args, dict) and isinstance(args.get("prompt"), str):
                by_prompt.setdefault(args["prompt"].strip(), call.id)
    out = []
    for t in transcripts:
        first_user = next((m for m in t.messages if m.role == "user"), None)
        if t.kind == "subagent" and first_user is not None:
            call_id = by_prompt.get(first_user.text.strip())
            if call_id:
                t = replace(t, parent_tool_call=call_id)
        out.append(t)
    return out
