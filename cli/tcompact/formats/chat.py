"""The canonical format: OpenAI chat messages, one per line (or a JSON array / ``{"messages": []}``).

Keys we understand become message fields; every other key is kept in ``Message.extra`` and
written back as it was, so openJiuwen message dumps (``metadata``, ``usage_metadata``,
``finish_reason``) and SWE-agent extras survive a round trip. Both tool-call shapes are read:
OpenAI's nested ``{"function": {"name", "arguments"}}`` and the flattened ``{"name", "arguments"}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import astuple, dataclass, replace
from typing import TYPE_CHECKING, Any

import orjson

from ..model import Compaction, Message, Reasoning, Record, Transcript, ToolCall
from ..rounds import memory_blocks
from ._source import ReadContext

if TYPE_CHECKING:
    from .family.base import Finished

__all__ = ["sniff", "read_document", "parse_message", "message_to_dict", "episode_id"]

_KNOWN = frozenset({"role", "content", "tool_calls", "tool_call_id", "tool_call_ids", "name", "reasoning_content"})


class ShapeError(ValueError):
    """A chat message of the wrong shape; the text says which key."""


def sniff(record: Mapping[str, Any]) -> bool:
    """True when a JSONL record looks like a chat message (or a ``{"messages": [...]}`` episode)."""
    if isinstance(record.get("messages"), list) and "type" not in record:
        return True
    return isinstance(record.get("role"), str) and "type" not in record


def parse_message(d: Mapping[str, Any], *, source: tuple[int, ...] = (), meta: Mapping[str, Any] | None = None) -> Message:
    """Build a Message from one chat dict; raises ShapeError naming the bad key."""
    role = d.get("role")
    if not isinstance(role, str) or not role:
        raise ShapeError('"role" must be a non-empty string')
    content = _content(d.get("content"))
    calls = tuple(_tool_call(c, i) for i, c in enumerate(_list(d, "tool_calls")))
    ids = _tool_call_ids(d)
    name = d.get("name")
    if name is not None and not isinstance(name, str):
        raise ShapeError('"name" must be a string')
    reasoning = d.get("reasoning_content")
    if reasoning is not None and not isinstance(reasoning, str):
        raise ShapeError('"reasoning_content" must be a string')
    extra = {k: v for k, v in d.items() if k not in _KNOWN}
    return Message(
        role=role,
        content=content,
        tool_calls=calls,
        tool_call_ids=ids,
        name=name,
        reasoning=(Reasoning(text=reasoning, kind="reasoning_content"),) if reasoning else (),
        source=source,
        meta=meta or {},
        extra=extra,
    )


def _content(value: Any) -> str | tuple[Mapping[str, Any], ...] | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        for part in value:
            if not isinstance(part, dict):
                raise ShapeError('"content" parts must be objects')
        return tuple(value)
    raise ShapeError(f'"content" must be a string, a list of parts or null, not {type(value).__name__}')


def _list(d: Mapping[str, Any], key: str) -> list[Any]:
    value = d.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ShapeError(f'"{key}" must be a list')
    return value


def _tool_call(c: Any, i: int) -> ToolCall:
    if not isinstance(c, dict):
        raise ShapeError(f'"tool_calls"[{i}] must be an object')
    fn = c.get("function") if isinstance(c.get("function"), dict) else c
    name, args = fn.get("name"), fn.get("arguments", "")
    if not isinstance(name, str):
        raise ShapeError(f'"tool_calls"[{i}] has no function name')
    if not isinstance(args, str):
        args = orjson.dumps(args).decode()
    call_id = c.get("id")
    return ToolCall(id=str(call_id) if call_id is not None else f"call_{i}", name=name, arguments=args,
                    type=str(c.get("type") or "function"))


def _tool_call_ids(d: Mapping[str, Any]) -> tuple[str, ...]:
    single = d.get("tool_call_id")
    many = d.get("tool_call_ids")
    if single is not None and not isinstance(single, str):
        raise ShapeError('"tool_call_id" must be a string')
    if many is not None and (not isinstance(many, list) or not all(isinstance(x, str) for x in many)):
        raise ShapeError('"tool_call_ids" must be a list of strings')
    # an empty id is kept: a result that names no call (as the Claude and Codex readers give it)
    ids = ([single] if single is not None else []) + [x for x in many or [] if x != single]
    return tuple(ids)


def message_to_dict(m: Message) -> dict[str, Any]:
    """The chat dict of a message (tool calls in OpenAI's nested shape)."""
    d: dict[str, Any] = {"role": m.role, "content": list(m.content) if isinstance(m.content, tuple) else m.content}
    if m.name is not None:
        d["name"] = m.name
    if m.tool_calls:
        d["tool_calls"] = [
            {"id": c.id, "type": c.type if c.type != "server" else "function",
             "function": {"name": c.name, "arguments": c.arguments}}
            for c in m.tool_calls
        ]
    if len(m.tool_call_ids) == 1:
        d["tool_call_id"] = m.tool_call_ids[0]
    elif m.tool_call_ids:
        d["tool_call_ids"] = list(m.tool_call_ids)
    texts = [r.text for r in m.reasoning if r.text]
    if texts:
        d["reasoning_content"] = "\n\n".join(texts)
    for k, v in m.extra.items():
        d.setdefault(k, v)
    return d


class Reading:
    """A chat JSONL file read line by line. Without episode lines it can be kept between reads
    (:meth:`state`) and fed the lines appended since: the messages made before are then not made again
    but kept by the caller (``offset`` of them)."""

    LATE_STATE = False

    def __init__(self) -> None:
        self.offset = 0
        self.taken = 0  # the messages made when the state was taken: what the caller keeps
        self.messages: list[Message] = []
        self.episodes: list[Transcript] = []
        self.unknown: dict[str, int] = {}
        self.usage = _Usage()
        self.compactions: list[Compaction] = []

    def prepare(self, records: Sequence[Record]) -> None:
        """Nothing: a chat line reads alone."""

    def resumes(self, records: Sequence[Record]) -> bool:
        """Always: appended chat lines never change what the lines before them read as."""
        return True

    def feed(self, records: Sequence[Record], start: int, ctx: ReadContext) -> None:
        """Read ``records``, the records of the file from index ``start`` on."""
        messages, unknown = self.messages, self.unknown
        for i, rec in enumerate(records, start):
            d = rec.data
            if d is None:
                continue
            if "role" not in d:
                if isinstance(d.get("messages"), list):
                    self.episodes.append(_episode(d, d["messages"], rec, ctx, episode_id(rec), line=rec.line))
                    continue
                kind = d.get("type")
                key = kind if isinstance(kind, str) and kind else "(record without role)" if not kind else \
                    f'("type" is {type(kind).__name__})'
                unknown[key] = unknown.get(key, 0) + 1
                continue
            try:
                messages.append(parse_message(d, source=(i,), meta={"line": rec.line}))
            except ShapeError as exc:
                ctx.reject(rec, f"chat message: {exc}")

    def finish(self, records: Sequence[Record] = (), ctx: ReadContext | None = None, kept: Sequence[Any] | None = None
               ) -> Finished:
        """The transcripts: the ``kept`` messages (``offset`` of them) and those read since, and the episodes."""
        kept = kept or ()
        new = self.messages
        self.usage.add(new)
        compactions = [*self.compactions, *(replace(c, index=c.index + self.offset) for c in memory_blocks(new))]
        out = [Transcript(id="main", kind="main", messages=(*kept, *new), provider_usage=self.usage.report(),
                          compactions=tuple(compactions))]
        if self.episodes:
            out = ([out[0]] if kept or new else []) + self.episodes
        return out, dict(self.unknown), {}

    def state(self) -> Any:
        """What a later read needs to go on from here (plain values; None once an episode was read): to be
        taken before :meth:`finish`."""
        if self.episodes:
            return None
        self.taken = self.offset + len(self.messages)
        usage = _Usage()
        usage.add(self.messages, base=self.usage)
        blocks = [*self.compactions, *(replace(c, index=c.index + self.offset) for c in memory_blocks(self.messages))]
        return self.offset + len(self.messages), self.unknown, astuple(usage), [astuple(c) for c in blocks]

    def kept(self, messages: Sequence[Sequence[Any]]) -> list[Any]:
        """What a later :meth:`finish` takes as ``kept``: the messages made when the state was taken."""
        return list(messages[0][:self.taken])

    @classmethod
    def restore(cls, state: Any) -> Reading:
        """The reading :meth:`state` described."""
        reading = cls()
        reading.offset, unknown, usage, blocks = state
        reading.unknown = dict(unknown)
        reading.usage = _Usage(*usage)
        reading.compactions = [Compaction(*c) for c in blocks]
        return reading


def episode_id(rec: Record) -> str:
    """The id of the episode a ``{"messages": [...]}`` line holds."""
    return f"line-{rec.line}"


def read_document(record: Record, ctx: ReadContext) -> list[Transcript]:
    """A JSON array of messages, or an object with a ``messages`` list."""
    value = record.data
    items = value["messages"] if isinstance(value, dict) else value
    return [_episode(value if isinstance(value, dict) else {}, items, record, ctx, "main", kind="main")]


def _episode(holder: Mapping[str, Any], items: list[Any], rec: Record, ctx: ReadContext, tid: str,
             *, kind: str = "episode", line: int | None = None) -> Transcript:
    messages = parse_items(items, rec, ctx, "messages", line=line)
    model = holder.get("model") if isinstance(holder.get("model"), str) else None
    return Transcript(id=tid, kind=kind, messages=messages, model=model, provider_usage=usage_of(messages),
                      compactions=memory_blocks(messages))


def parse_items(items: list[Any], rec: Record, ctx: ReadContext, where: str, *, line: int | None = None
                ) -> tuple[Message, ...]:
    """Messages of a list inside a JSON value; a bad item is rejected as ``where[j]``. ``line`` is
    the file line that holds them all (an episode of a JSON Lines file)."""
    out = []
    for j, item in enumerate(items):
        if not isinstance(item, dict):
            ctx.reject(rec, "expected a message object", where=f"{where}[{j}]")
            continue
        try:
            out.append(parse_message(item, meta={"item": j} if line is None else {"item": j, "line": line}))
        except ShapeError as exc:
            ctx.reject(rec, str(exc), where=f"{where}[{j}]")
    return tuple(out)


def usage_of(messages: Sequence[Message]) -> dict[str, Any] | None:
    """Provider usage recorded on assistant messages (OpenAI ``usage`` or openJiuwen ``usage_metadata``)."""
    usage = _Usage()
    usage.add(messages)
    return usage.report()


@dataclass
class _Usage:
    """The provider usage of the messages read so far."""

    requests: int = 0
    inputs: int = 0
    outputs: int = 0
    last_input: int | None = None
    last_line: int | None = None

    def add(self, messages: Sequence[Message], *, base: _Usage | None = None) -> None:
        """Count in the usage of ``messages`` (after that of ``base``, when given)."""
        if base is not None:
            self.requests, self.inputs, self.outputs, self.last_input, self.last_line = astuple(base)
        for m in messages:
            u = m.extra.get("usage_metadata") or m.extra.get("usage")
            if m.role != "assistant" or not isinstance(u, dict):
                continue
            i = u.get("input_tokens", u.get("prompt_tokens"))
            o = u.get("output_tokens", u.get("completion_tokens"))
            if not isinstance(i, int) or not isinstance(o, int) or (i == 0 and o == 0):
                continue
            self.requests += 1
            self.inputs += i
            self.outputs += o
            self.last_input, self.last_line = i, m.meta.get("line")

    def report(self) -> dict[str, Any] | None:
        if not self.requests:
            return None
        return {"source": "chat", "requests": self.requests, "input_tokens": self.inputs, "output_tokens": self.outputs,
                "last_context_tokens": self.last_input, "last_line": self.last_line}
