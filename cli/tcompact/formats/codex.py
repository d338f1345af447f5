"""Codex CLI rollout files (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Each line is ``{"timestamp", "type", "payload"}``. ``response_item`` payloads are what the
model saw: messages, reasoning, function and custom tool calls with their outputs, shell and
web-search calls. Consecutive assistant-side items (reasoning, assistant text, calls) form one
assistant message. The base instructions of ``session_meta`` are the system prompt. Some
rollouts (Codex Desktop) record user turns only as ``event_msg`` ``user_message``; those
become user messages when no ``response_item`` mirrors them.

Context after a compaction is the latest ``compacted`` line's ``replacement_history`` plus the
items after it, as Codex rebuilds it on resume; ``--full-history`` reads every item instead. The
``compacted`` line and the ``context_compacted`` event Codex writes next to it are one compaction.
``event_msg``, ``turn_context`` and unknown lines are kept for writing back.
"""

from __future__ import annotations

import dataclasses
from dataclasses import astuple
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..model import Compaction, Message, Reasoning, Record, ToolCall, Transcript
from ..rounds import is_real_user
from ._source import ReadContext
from .codex_items import assistant_item, failed, output_text, parts_of, text_of_parts
from .codex_usage import RolloutUsage

if TYPE_CHECKING:
    from .family.base import Finished

__all__ = ["sniff", "KNOWN_TYPES"]

KNOWN_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_ASSISTANT_ITEMS = frozenset({"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"})
_OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output"})
_SILENT_ITEMS = frozenset({"ghost_snapshot"})  # bookkeeping, never sent to the model


def sniff(record: Mapping[str, Any]) -> bool:
    """True when a JSONL record looks like a Codex rollout line."""
    kind = record.get("type")
    return isinstance(kind, str) and kind in KNOWN_TYPES and isinstance(record.get("payload"), dict)


class Reading:
    """Reads a rollout in order, one method per line type, assembling messages as it goes. It can be kept
    between reads (:meth:`state`) and fed the lines appended since, when :meth:`resumes` allows it: the
    messages made before are then not made again but kept by the caller (``offset`` of them)."""

    LATE_STATE = False

    def __init__(self, ctx: ReadContext) -> None:
        self.ctx = ctx
        self.taken = 0  # the messages made when the state was taken: what the caller keeps
        self.base: int | None = None  # the newest compacted line (see _active)
        self.legacy = False
        self.mirrored: set[str] = set()
        self.added: set[str] = set()  # texts of the user messages made from event_msg lines
        self.offset = 0
        self.messages: list[Message] = []
        self.pending: dict[str, Any] | None = None  # the assistant message being assembled
        self.unknown: dict[str, int] = {}
        self.meta: dict[str, Any] = {}
        self.compactions: list[Compaction] = []
        self.usage = RolloutUsage()
        self.model: str | None = None
        self.turns = 0  # conversation lines read: a compaction's two lines have none between them
        self.turns_at_compaction = -1

    def prepare(self, records: Sequence[Record]) -> None:
        """What reading in order needs of the whole file first: where the context starts, which user
        texts are response items."""
        self.base, self.legacy = (None, False) if self.ctx.options.full_history else _base_index(records)
        self.mirrored = _user_texts(records)

    def feed(self, records: Sequence[Record], start: int, ctx: ReadContext | None = None) -> None:
        """Read ``records``, the records of the file from index ``start`` on."""
        for i, rec in enumerate(records, start):
            if rec.data is None:
                continue
            kind = rec.data.get("type")
            if not isinstance(kind, str) or kind not in KNOWN_TYPES:
                key = kind if isinstance(kind, str) else "None" if kind is None else \
                    f'("type" is {type(kind).__name__})'
                self.unknown[key] = self.unknown.get(key, 0) + 1
            elif not isinstance(rec.data.get("payload"), dict):
                self.ctx.reject(rec, f'{kind} line without a "payload" object')
            else:
                getattr(self, f"_{kind}")(rec.data["payload"], i, rec)

    def finish(self, records: Sequence[Record] = (), ctx: ReadContext | None = None, kept: Sequence[Any] | None = None
               ) -> Finished:
        """The transcript: the ``kept`` messages (``offset`` of them), then those read since; the unknown
        line types and the file's details."""
        self._flush()
        transcript = Transcript(id="main", kind="main", messages=(*(kept or ()), *self.messages), model=self.model,
                                compactions=tuple(self.compactions), provider_usage=self.usage.report())
        return [transcript], self.unknown, self.meta

    def kept(self, messages: Sequence[Sequence[Any]]) -> list[Any]:
        """What a later :meth:`finish` takes as ``kept``: the messages made when the state was taken."""
        return list(messages[0][:self.taken])

    def resumes(self, records: Sequence[Record]) -> bool:
        """Whether appended ``records`` can be read on from here (then taken in as :meth:`prepare` would):
        not when they move the context's start (a compaction), insert the system prompt (session_meta)
        or mirror a user message read from an event_msg line — the file is then read whole."""
        if any(r.data is not None and r.data.get("type") in ("compacted", "session_meta") for r in records):
            return False
        texts = _user_texts(records)
        if texts & self.added:
            return False
        self.mirrored |= texts
        return True

    def state(self) -> Any:
        """What a later read needs to go on from here (plain values); the messages made so far are the caller's."""
        self.taken = self.offset + len(self.messages)
        p = self.pending
        pending = None if p is None else (p["parts"], [astuple(c) for c in p["calls"]],
                                          [astuple(r) for r in p["reasoning"]], p["source"], p["lines"])
        return (self.base, self.legacy, sorted(self.mirrored), sorted(self.added), self.offset + len(self.messages),
                pending, self.unknown, self.meta, [astuple(c) for c in self.compactions], self.usage.state(),
                self.model, self.turns, self.turns_at_compaction)

    @classmethod
    def restore(cls, state: Any, ctx: ReadContext) -> Reading:
        """The reading :meth:`state` described."""
        reading = cls(ctx)
        (reading.base, reading.legacy, mirrored, added, reading.offset, pending, reading.unknown, reading.meta,
         compactions, usage, reading.model, reading.turns, reading.turns_at_compaction) = state
        reading.mirrored, reading.added = set(mirrored), set(added)
        reading.compactions = [Compaction(*c) for c in compactions]
        reading.usage = RolloutUsage.restore(usage)
        if pending is not None:
            parts, calls, reasoning, source, lines = pending
            reading.pending = {"parts": list(parts), "calls": [ToolCall(*c) for c in calls],
                               "reasoning": [Reasoning(*r) for r in reasoning], "source": list(source),
                               "lines": list(lines)}
        return reading

    def _active(self, i: int) -> bool:
        """Whether line ``i`` belongs to the context the model has now (see the module docstring)."""
        return self.legacy or i >= (self.base or 0)

    # ---- line types

    def _session_meta(self, p: Mapping[str, Any], i: int, rec: Record) -> None:
        self.meta = {k: v for k, v in p.items() if k not in ("base_instructions", "instructions", "dynamic_tools")}
        base = p.get("base_instructions")
        text = base.get("text") if isinstance(base, dict) else p.get("instructions")
        if isinstance(text, str) and text:
            # the base instructions come first in every request, wherever the line is in the file (an
            # assistant message being assembled goes on: the line is not part of the conversation)
            at = sum(1 for m in self.messages if m.meta.get("from") == "session_meta")
            self.messages.insert(at, Message(role="system", content=text, internal=True, source=(i,),
                                             meta={"line": rec.line, "from": "session_meta"}))
            self.compactions = [dataclasses.replace(c, index=c.index + 1) if c.index is not None and c.index >= at
                                else c for c in self.compactions]

    def _turn_context(self, p: Mapping[str, Any], i: int, rec: Record) -> None:
        if isinstance(p.get("model"), str):
            self.model = p["model"]

    def _event_msg(self, p: Mapping[str, Any], i: int, rec: Record) -> None:
        kind = p.get("type")
        if kind == "token_count" and isinstance(p.get("info"), dict):
            self.usage.add(p["info"], rec.line)
        elif kind == "context_compacted":
            if not self._same_compaction("codex_compacted"):  # the event of a compacted line just read
                index = self.offset + len(self.messages) if self._active(i) else None
                self.compactions.append(Compaction(kind="codex_context_compacted", index=index, line=rec.line))
            self.turns_at_compaction = self.turns
        elif kind == "user_message":
            self.turns += 1
            text = p.get("message") if self._active(i) else None
            if isinstance(text, str) and text.strip() not in self.mirrored:
                self.added.add(text.strip())
                self._add(Message(role="user", content=text, source=(i,),
                                  meta={"line": rec.line, "from": "event_msg"}))

    def _compacted(self, p: Mapping[str, Any], i: int, rec: Record) -> None:
        if i == self.base and self.legacy:  # rebuilt as Codex does: the user's requests, then the summary
            self._flush()
            self.messages = [m for m in self.messages if m.role == "system" or is_real_user(m)]
        active = i >= (self.base or 0)
        if self._same_compaction("codex_context_compacted"):  # its event came first: the line stands for both
            self.compactions.pop()
        self.compactions.append(Compaction(kind="codex_compacted",
                                           index=self.offset + len(self.messages) if active else None, line=rec.line))
        self.turns_at_compaction = self.turns
        if i == self.base and not self.legacy:
            for n, item in enumerate(p.get("replacement_history") or []):
                if isinstance(item, dict):
                    self._item(item, i, rec, meta={"line": rec.line, "replacement": n})
            self._flush()
        elif active:
            self._add(Message(role="user", content=str(p.get("message") or ""), internal=True, source=(i,),
                              meta={"line": rec.line, "compacted": True}))

    def _same_compaction(self, kind: str) -> bool:
        """Whether the last compaction listed is of ``kind`` with no conversation line read since: Codex
        writes a ``compacted`` line and a ``context_compacted`` event for one compaction."""
        return bool(self.compactions) and self.compactions[-1].kind == kind and self.turns == self.turns_at_compaction

    def _response_item(self, p: Mapping[str, Any], i: int, rec: Record) -> None:
        self.turns += 1
        if self._active(i):
            self._item(p, i, rec, meta={"line": rec.line})

    # ---- items

    def _item(self, p: Mapping[str, Any], i: int, rec: Record, *, meta: Mapping[str, Any]) -> None:
        kind = p.get("type")
        if not isinstance(kind, str):
            kind = f"({type(kind).__name__})"
        if kind == "message":
            self._message(p, i, rec, meta)
        elif kind in _ASSISTANT_ITEMS:
            assistant_item(kind, p, self._assistant(i, rec.line))
        elif kind in _OUTPUT_ITEMS:
            output = p.get("output")
            content = output if isinstance(output, str) else (
                parts_of(output) if isinstance(output, list) else output_text(output))
            self._add(Message(role="tool", content=content, tool_call_ids=(str(p.get("call_id") or ""),),
                              is_error=failed(output), source=(i,), meta=meta))
        elif kind == "compaction":
            enc = p.get("encrypted_content")
            opaque = Reasoning(encrypted_chars=len(enc) if isinstance(enc, str) else 0, kind="compaction")
            self._add(Message(role="user", internal=True, reasoning=(opaque,), source=(i,), meta=meta))
        elif kind not in _SILENT_ITEMS and "replacement" not in meta:
            key = f"response_item/{kind}"
            self.unknown[key] = self.unknown.get(key, 0) + 1

    def _message(self, p: Mapping[str, Any], i: int, rec: Record, meta: Mapping[str, Any]) -> None:
        role, content = p.get("role"), p.get("content")
        if not isinstance(role, str) or not role or not isinstance(content, (list, str)):
            self.ctx.reject(rec, 'response_item message needs a "role" and a "content" list')
            return
        parts = parts_of(content) if isinstance(content, list) else ({"type": "text", "text": content},)
        if role == "assistant":
            self._assistant(i, rec.line)["parts"].extend(parts)
        else:
            extra = {"metadata": p["metadata"]} if isinstance(p.get("metadata"), dict) else {}
            self._add(Message(role=role, content=parts, internal=role == "developer", source=(i,), meta=meta,
                              extra=extra))

    # ---- assembling assistant messages

    def _assistant(self, source: int, line: int) -> dict[str, Any]:
        if self.pending is None:
            self.pending = {"parts": [], "calls": [], "reasoning": [], "source": [], "lines": []}
        self.pending["source"].append(source)
        self.pending["lines"].append(line)
        return self.pending

    def _flush(self) -> None:
        p = self.pending
        if p is not None:
            self.messages.append(
                Message(role="assistant", content=tuple(p["parts"]) or None, tool_calls=tuple(p["calls"]),
                        reasoning=tuple(p["reasoning"]), source=tuple(dict.fromkeys(p["source"])),
                        meta={"lines": p["lines"]})
            )
            self.pending = None

    def _add(self, message: Message) -> None:
        self._flush()
        self.messages.append(message)


def _base_index(records: Sequence[Record]) -> tuple[int | None, bool]:
    """Index of the newest ``compacted`` line (None when none) and whether it lacks replacement_history."""
    for i in range(len(records) - 1, -1, -1):
        d = records[i].data
        if d and d.get("type") == "compacted" and isinstance(d.get("payload"), dict):
            return i, not isinstance(d["payload"].get("replacement_history"), list)
    return None, False


def _user_texts(records: Sequence[Record]) -> set[str]:
    """Texts of the user messages recorded as response items (their event_msg mirrors are skipped)."""
    texts = set()
    for rec in records:
        d = rec.data
        p = d.get("payload") if d else None
        if d and d.get("type") == "response_item" and isinstance(p, dict) and p.get("type") == "message" \
                and p.get("role") == "user":
            content = p.get("content")
            texts.add((content if isinstance(content, str) else text_of_parts(parts_of(content))).strip())
    return texts
