"""Claude Code lines to messages: content blocks, tool results, compactions, provider usage.

:mod:`tcompact.formats.claude_code` decides which lines form the active context and in what
order; this module turns those lines into :class:`~tcompact.model.Message` values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from sys import intern
from typing import Any

import orjson

from ..model import Compaction, Message, Reasoning, Record, ToolCall, text_of

__all__ = ["blocks", "assistant_message", "user_messages", "compaction", "model_of", "provider_usage", "line_facts",
           "text_key"]

_SERVER_TOOL_BLOCKS = frozenset({"server_tool_use", "mcp_tool_use"})
#: The usage figures a reply's line reports (a line keeps them as counts, in this order).
_USAGE = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")


def text_key(text: str) -> bytes:
    """A short stand-in for a text that two texts share only when they are equal."""
    import hashlib

    return hashlib.sha1(text.encode("utf-8", "surrogatepass"), usedforsecurity=False).digest()


def line_facts(ln: Any, d: Mapping[str, Any], message: Mapping[str, Any]) -> None:
    """Fill in, on the :class:`~tcompact.formats.claude_chain.Line` of a message line or a compact boundary,
    what its transcript takes from it besides its messages: call and result ids, usage, model, the
    boundary's figures, the Task prompts it sends and (on a sidechain) the text its user message opens with."""
    if ln.subtype == "compact_boundary":
        md = d.get("compactMetadata") if isinstance(d.get("compactMetadata"), dict) else {}
        pre = md.get("preTokens")
        ln.compact = (md.get("trigger") if isinstance(md.get("trigger"), str) else None,
                      pre if isinstance(pre, int) else None)
    content = message.get("content")
    found = content if isinstance(content, list) else []
    if ln.kind == "assistant":
        ln.uses = tuple(b["id"] for b in found if b.get("type") == "tool_use" and isinstance(b.get("id"), str))
        ln.prompts = tuple((str(b.get("id") or ""), text_key(b["input"]["prompt"].strip())) for b in found
                           if (b.get("type") == "tool_use" or b.get("type") in _SERVER_TOOL_BLOCKS)
                           and isinstance(b.get("input"), dict) and isinstance(b["input"].get("prompt"), str))
        ln.model = intern(message["model"]) if isinstance(message.get("model"), str) else None
        if ln.message_id and isinstance(message.get("usage"), dict):
            usage = message["usage"]
            ln.usage = tuple(_int(usage.get(k)) for k in _USAGE)
            ln.request = str(d.get("requestId") or "")
    elif ln.kind == "user":
        ln.results = tuple(b["tool_use_id"] for b in found
                           if b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str))
        rest = _rest(found) if isinstance(content, list) else None
        if isinstance(content, str) or rest:
            ln.opening = text_key(content.strip() if isinstance(content, str) else text_of(tuple(rest)).strip())


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
    out = [_tool_result(block, index, meta) for block in content if block.get("type") == "tool_result"]
    rest = _rest(content)
    if rest:
        out.append(Message(role="user", content=tuple(rest), internal=internal, source=(index,), meta=meta,
                           extra=extra))
    return out


def _rest(content: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The parts of a user line's content that are no tool result: its user message, if any."""
    return [{"type": "text", "text": b.get("text") if isinstance(b.get("text"), str) else ""}
            if b.get("type") == "text" else b for b in content if b.get("type") != "tool_result"]


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


def compaction(ln: Any, index: int | None) -> Compaction:
    """The compaction a compact boundary's :class:`~tcompact.formats.claude_chain.Line` records."""
    trigger, pre = ln.compact or (None, None)
    return Compaction(kind="claude_compact_boundary", index=index, line=ln.line_no, trigger=trigger, pre_tokens=pre)


def model_of(last_lines: Sequence[Any]) -> str | None:
    """The model of the last reply that names a real one, given the last line of each reply in order."""
    for ln in reversed(last_lines):
        model = ln.model
        if isinstance(model, str) and model and not model.startswith("<"):
            return model
    return None


def provider_usage(members: Sequence[Any], chain: Sequence[Any]) -> dict[str, Any] | None:
    """Usage the provider reported for this transcript's requests.

    Lines of one reply repeat the input and cache figures while output grows: de-duplicate by
    (message.id, requestId) — message.id alone when a file has no requestId — keeping the last line.
    """
    last: dict[tuple[str, str], tuple[int, ...]] = {}
    lines_with_usage = 0
    for ln in sorted(members, key=lambda x: x.index):
        if ln.usage is None:
            continue
        lines_with_usage += 1
        last[(ln.message_id, ln.request)] = ln.usage
    if not last:
        return None
    totals = {k: sum(u[n] for u in last.values()) for n, k in enumerate(_USAGE)}
    context = at = None
    for ln in reversed(chain):
        if ln.message_id:
            for (mid, _), u in last.items():
                if mid == ln.message_id:
                    context = u[0] + u[1] + u[2]
                    at = ln.line_no
            break
    return {"source": "claude-code", "requests": len(last), "lines": lines_with_usage, **totals,
            "last_context_tokens": context, "last_line": at}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
