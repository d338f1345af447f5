"""The lines a compaction appends to a Claude Code session file, laid out as Claude Code lays out its own.

Every original line stays; after them come a ``compact_boundary`` line (``parentUuid`` null,
``logicalParentUuid`` naming the old leaf, ``compactMetadata`` with trigger and preTokens) and the
new context as a fresh chain. What the real clients need of that chain (REAL-CLIENTS.md, measured
with Claude Code 2.0.76 and 2.1.x):

* **the messages in the compressor's order**: a summary that stands for history before the kept
  messages (``dialogue``) comes right after the boundary, as Claude Code's own does; one that stands
  for work after a kept request (``current-round``, a ``round-level`` block, ``full``'s handoff
  after the user's messages) stays after it — moved ahead, it would make the request read as new
  and unanswered, and the summary's "the request is kept above" untrue. Both clients send the chain
  in file order and give the line after the boundary no special meaning;
* **timestamps strictly increasing from the boundary on**, 1 ms apart (the summary 1 ms after the
  boundary, as Claude Code writes it), starting after every timestamp in the file: 2.0.76 resumes
  from the newest-timestamped leaf, first in file order on ties, so a chain whose copies kept their
  old times resumed at the boundary and sent the new prompt alone;
* **a fresh ``message.id`` for each re-chained assistant reply** (one new id per original id, so a
  reply split over lines stays one reply): 2.1.x merges assistant lines by ``message.id``, and the
  originals are still in the file — copies with their old ids sent every kept block twice;
* **no second copy of usage**: a copied assistant line carries no ``usage``. ccusage 18,
  claude-monitor and claude-code-log de-duplicate only on (``message.id``, ``requestId``), and
  Claude Code's context meter reads the last assistant usage, which after a compaction would be
  the size of the context *before* it; without one the client estimates the new context instead;
* **sub-agent files stay sub-agent files**: every added line keeps the transcript's
  ``isSidechain`` and ``agentId`` (Claude Code resumes a sub-agent by the lines with its agentId);
* **no thinking after the first change, no unanswered call** (:mod:`tcompact.formats.claude_prune`):
  the copies of the turns from the first changed message on lose their thinking blocks, a copied
  line left empty is not written, and a call without a result is left out.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from ..model import Message, Record, Transcript
from .chat_write import dumps_line
from .claude_prune import Pruning, prune, strip_line
from .claude_write import claude_message_body

__all__ = ["compaction_lines", "is_summary"]

_NAMESPACE = uuid.UUID("0d6a0c7e-2f35-4b4e-9a57-1f0f5f3ab0c1")
_ENVELOPE = ("isSidechain", "agentId", "userType", "cwd", "sessionId", "version", "gitBranch")
_MS = timedelta(milliseconds=1)


def is_summary(m: Message) -> bool:
    """True for a compaction summary (a memory block, or a Claude-style continuation summary)."""
    return bool(m.meta.get("memory_block")) or (m.role == "user" and m.text.startswith(
        "This session is being continued"))


def compaction_lines(records: Sequence[Record], original: Transcript, messages: Sequence[Message], *,
                     now: str, pre_tokens: int, pruning: Pruning | None = None) -> list[bytes]:
    """The boundary line and the new chain holding ``messages``, in their order, pruned as ``pruning``
    (:func:`~tcompact.formats.claude_prune.prune` of them, when not given) says."""
    pruning = pruning or prune(original.messages, messages)
    env = _envelope(records, original)
    clock = _Clock(now, records)
    boundary_time = clock.tick()
    boundary = str(uuid.uuid5(_NAMESPACE, f"{env.get('sessionId')}/{boundary_time}/{pre_tokens}/{len(records)}"))
    head = {"parentUuid": None, "logicalParentUuid": _last_uuid(records, original), **env, "type": "system",
            "subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": False,
            "timestamp": boundary_time, "uuid": boundary, "level": "info",
            "compactMetadata": {"trigger": "manual", "preTokens": pre_tokens}}
    return [dumps_line(head), *(dumps_line(d) for d in _chain(records, original, messages, env=env,
                                                             parent=boundary, clock=clock, pruning=pruning))]


def _chain(records: Sequence[Record], original: Transcript, messages: Sequence[Message], *,
           env: Mapping[str, Any], parent: str, clock: _Clock, pruning: Pruning) -> list[dict[str, Any]]:
    originals = {m.source: m for m in original.messages if m.source}
    done: set[int] = set()
    renamed: dict[str, str] = {}
    reply_ids: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for n, (m, written) in enumerate(zip(messages, pruning.written, strict=True)):
        if written is None:
            continue  # nothing left of it to send
        if m.source and originals.get(m.source) == m and all(records[i].data for i in m.source):
            for i in m.source:
                data = None if i in done else strip_line(records[i].data, thinking=n >= pruning.first,
                                                         calls=pruning.calls)
                done.add(i)
                if data is not None:
                    out.append(_copy(data, parent=parent, renamed=renamed, reply_ids=reply_ids, when=clock.tick()))
                    parent = out[-1]["uuid"]
            continue
        new_uuid = str(uuid.uuid5(_NAMESPACE, f"{parent}/new/{n}"))
        out.append(_new_line(written, env=env, parent=parent, uuid_=new_uuid, when=clock.tick()))
        parent = new_uuid
    return out


def _copy(d: dict[str, Any], *, parent: str, renamed: dict[str, str], reply_ids: dict[str, str],
          when: str) -> dict[str, Any]:
    """A kept line (a copy of it, changed here) re-chained: new uuid and time; an assistant reply gets a
    fresh id and loses its usage."""
    new_uuid = str(uuid.uuid5(_NAMESPACE, f"{parent}/{d.get('uuid')}"))
    renamed[str(d.get("uuid"))] = new_uuid
    d.update(parentUuid=parent, uuid=new_uuid, timestamp=when)
    if d.get("sourceToolAssistantUUID") in renamed:
        d["sourceToolAssistantUUID"] = renamed[d["sourceToolAssistantUUID"]]
    message = d.get("message")
    if d.get("type") == "assistant" and isinstance(message, dict):
        old = str(message.get("id") or new_uuid)
        if old not in reply_ids:
            reply_ids[old] = "msg_tc" + uuid.uuid5(_NAMESPACE, f"{parent}/{old}").hex[:24]
        message["id"] = reply_ids[old]
        message.pop("usage", None)
    return d


def _new_line(m: Message, *, env: Mapping[str, Any], parent: str, uuid_: str, when: str) -> dict[str, Any]:
    kind, body = claude_message_body(m, uid=uuid_)
    d: dict[str, Any] = {"parentUuid": parent, **env, "type": kind, "message": body}
    if is_summary(m):
        d.update(isCompactSummary=True, isVisibleInTranscriptOnly=True)
    elif kind == "user" and m.role == "user":
        d["isMeta"] = True
    if isinstance(m.extra.get("metadata"), dict):
        d["metadata"] = dict(m.extra["metadata"])  # compress_level of a round-level memory block
    d.update(uuid=uuid_, timestamp=when)
    return d


class _Clock:
    """Millisecond ticks starting at ``now`` or 1 ms after the newest timestamp of the file, whichever is later."""

    def __init__(self, now: str, records: Sequence[Record]) -> None:
        newest = max((t for r in records if r.data for t in [_parse(r.data.get("timestamp"))] if t), default=None)
        start = _parse(now) or datetime.now(timezone.utc)
        self._next = max(start, newest + _MS) if newest else start

    def tick(self) -> str:
        when, self._next = self._next, self._next + _MS
        return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def _parse(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)


def _envelope(records: Sequence[Record], original: Transcript) -> dict[str, Any]:
    for m in reversed(original.messages):
        for i in reversed(m.source):
            d = records[i].data or {}
            return {k: d[k] for k in _ENVELOPE if k in d}
    return {"isSidechain": False, "userType": "external"}


def _last_uuid(records: Sequence[Record], original: Transcript) -> str | None:
    indices = [i for m in original.messages for i in m.source]
    return (records[max(indices)].data or {}).get("uuid") if indices else None
