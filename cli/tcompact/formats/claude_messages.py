"""Claude Code lines to messages: content blocks, tool results, compactions, provider usage.

:mod:`tcompact.formats.claude_code` decides which lines form the active context and in what
order; this module turns those lines into :class:`~tcompact.model.Message` values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from ..model import Compaction, Message, Reasoning, Record, ToolCall

__all__ = ["blocks", "assistant_message", "user_messages", "compaction", "model_of", "provider_usage"]

_SERVER_TOOL_BLOCKS = frozenset({"server_tool_use", "mcp_tool_use"})


def blocks(d: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = d.get("message", {}).get("content") if isinstance(d.get("message"), dict) else None
    return content if isinstance(content, list) else []


def assistant_message(unit: Sequence[int], records: Sequence[Record]) -> Message:
    parts: list[Mapping[str, Any]] = []
    reasoning: list[Reasoning] = []
    calls: list[ToolCall] = []
    for i in unit:
        for block in blocks(records[i].data):
            _assistant_block(block, parts, reasoning, calls)
        content = records[i].data["message"].get("content")
        if isinstance(content, str) and content:
            parts.append({"type": "text", "text": content})
    first = records[unit[0]].data
    return Message(
        role="assistant",
        content=tuple(parts),
        tool_calls=tuple(calls),
        reasoning=tuple(reasoning),
        internal=first.get("isApiErrorMessage") is True,
        source=tuple(unit),
        meta={"lines": [records[i].line for i in unit], "uuid": first.get("uuid"),
              "message_id": first["message"].get("id")},
    )


def _assistant_block(block: Mapping[str, Any], parts: list, reasoning: list, calls: list) -> None:
    kind = block.get("type")
    if not isinstance(kind, str):
        kind = None
    if kind == "text":
        parts.append({"type": "text", "text": block.get("text") if isinstance(block.get("text"), str) else ""})
    elif kind == "thinking":
        text = block.get("thinking") if isinstance(block.get("thinking"), str) else ""
        signature = block.get("signature")
        if not text and isinstance(signature, str):  # Claude Code 2.1.69 on: the text left out, its signature kept
            reasoning.append(Reasoning(encrypted_chars=len(signature), kind="thinking"))
        else:
            reasoning.append(Reasoning(text=text, kind="thinking"))
    elif kind == "redacted_thinking":
        data = block.get("data")
        reasoning.append(Reasoning(encrypted_chars=len(data) if isinstance(data, str) else 0, kind="redacted"))
    elif kind == "tool_use" or kind in _SERVER_TOOL_BLOCKS:
        calls.append(
            ToolCall(
                id=str(block.get("id") or ""),
                name=str(block.get("name") or ""),
                arguments=orjson.dumps(block.get("input", {})).decode(),
                type="function" if kind == "tool_use" else "server",
            )
        )
    else:
        parts.append(block)  # images, server tool results, future block types: counted by shape


def user_messages(index: int, rec: Record) -> list[Message]:
    d = rec.data
    content = d["message"].get("content")
    internal = d.get("isMeta") is True or d.get("isCompactSummary") is True or d.get("isVisibleInTranscriptOnly") is True
    meta = {"lines": [rec.line], "uuid": d.get("uuid")}
    if d.get("isCompactSummary") is True:
        meta = {**meta, "compact_summary": True}
    extra = {"metadata": d["metadata"]} if isinstance(d.get("metadata"), dict) else {}  # round-level levels
    if isinstance(content, str):
        return [Message(role="user", content=content, internal=internal, source=(index,), meta=meta, extra=extra)]
    out: list[Message] = []
    rest: list[Mapping[str, Any]] = []
    for block in content:
        if block.get("type") == "tool_result":
            out.append(_tool_result(block, index, meta))
        elif block.get("type") == "text":
            rest.append({"type": "text", "text": block.get("text") if isinstance(block.get("text"), str) else ""})
        else:
            rest.append(block)
    if rest:
        out.append(Message(role="user", content=tuple(rest), internal=internal, source=(index,), meta=meta,
                           extra=extra))
    return out


def _tool_result(block: Mapping[str, Any], index: int, meta: Mapping[str, Any]) -> Message:
    body = block.get("content")
    if isinstance(body, list):
        parts = tuple(
            {"type": "text", "text": b.get("text", "")} if b.get("type") == "text" else b
            for b in body
            if isinstance(b, dict)
        )
        content: str | tuple | None = parts
    else:
        content = body if isinstance(body, str) else ""
    return Message(
        role="tool",
        content=content,
        tool_call_ids=(str(block.get("tool_use_id") or ""),),
        is_error=block.get("is_error") is True,
        source=(index,),
        meta=meta,
    )


def compaction(rec: Record, index: int | None) -> Compaction:
    md = rec.data.get("compactMetadata") if isinstance(rec.data.get("compactMetadata"), dict) else {}
    pre = md.get("preTokens")
    return Compaction(
        kind="claude_compact_boundary",
        index=index,
        line=rec.line,
        trigger=md.get("trigger") if isinstance(md.get("trigger"), str) else None,
        pre_tokens=pre if isinstance(pre, int) else None,
    )


def model_of(messages: Sequence[Message], records: Sequence[Record]) -> str | None:
    for m in reversed(messages):
        if m.role == "assistant" and m.source:
            model = records[m.source[-1]].data["message"].get("model")
            if isinstance(model, str) and model and not model.startswith("<"):
                return model
    return None


def provider_usage(members: Sequence[Any], records: Sequence[Record], chain: Sequence[Any]) -> dict[str, Any] | None:
    """Usage the provider reported for this transcript's requests.

    Lines of one reply repeat the input and cache figures while output grows: de-duplicate by
    (message.id, requestId) — message.id alone when a file has no requestId — keeping the last line.
    """
    last: dict[tuple[str, str], Mapping[str, Any]] = {}
    lines_with_usage = 0
    for ln in sorted(members, key=lambda x: x.index):
        d = records[ln.index].data
        usage = d.get("message", {}).get("usage") if ln.kind == "assistant" else None
        if not isinstance(usage, dict) or not ln.message_id:
            continue
        lines_with_usage += 1
        last[(ln.message_id, str(d.get("requestId") or ""))] = usage
    if not last:
        return None
    keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")
    totals = {k: sum(_int(u.get(k)) for u in last.values()) for k in keys}
    context = at = None
    for ln in reversed(chain):
        if ln.message_id:
            for (mid, _), u in last.items():
                if mid == ln.message_id:
                    context = _int(u.get("input_tokens")) + _int(u.get("cache_read_input_tokens")) + _int(
                        u.get("cache_creation_input_tokens"))
                    at = records[ln.index].line
            break
    return {"source": "claude-code", "requests": len(last), "lines": lines_with_usage, **totals,
            "last_context_tokens": context, "last_line": at}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
