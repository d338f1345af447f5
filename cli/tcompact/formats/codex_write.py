"""Generating Codex rollout lines from messages (conversion, and replacement history of a compaction)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .. import __version__
from ..model import Message, Transcript, index_tool_calls
from .chat_write import dumps_line as _line
from .claude_write import json_object as _json_object

__all__ = ["codex_rollout", "codex_items", "codex_call_kinds"]



def codex_rollout(t: Transcript, *, now: str, session: str) -> tuple[list[bytes], list[str]]:
    """A Codex rollout for a transcript (session_meta, turn_context, response items); it loses nothing."""
    messages = list(t.messages)
    meta: dict[str, Any] = {"id": session, "timestamp": now, "cwd": "", "originator": "tcompact",
                            "cli_version": __version__, "source": "exec"}
    if messages and messages[0].role == "system":
        meta["base_instructions"] = {"text": messages.pop(0).text}
    out = [_line({"timestamp": now, "type": "session_meta", "payload": meta})]
    if t.model:
        out.append(_line({"timestamp": now, "type": "turn_context", "payload": {"cwd": "", "model": t.model}}))
    kinds = codex_call_kinds(messages)
    for m in messages:
        for payload in codex_items(m, kinds):
            out.append(_line({"timestamp": now, "type": "response_item", "payload": payload}))
    return out, []


def codex_call_kinds(messages: Sequence[Message]) -> dict[str, str]:
    """Call id → call type ("function", "custom", ...), to pick the matching output item type."""
    return {link.call.id: link.call.type for link in index_tool_calls(messages).links}


def codex_items(m: Message, call_kinds: Mapping[str, str]) -> list[dict[str, Any]]:
    """The response items of one message."""
    if m.role in ("tool", "function"):
        output: Any = m.content if isinstance(m.content, str) else _codex_parts(m.content or (), "input_text")
        kind = "custom_tool_call_output" if call_kinds.get(m.tool_call_id or "") == "custom" else "function_call_output"
        return [{"type": kind, "call_id": cid, "output": output} for cid in m.tool_call_ids or ("",)]
    if m.role != "assistant":
        item: dict[str, Any] = {"type": "message", "role": m.role,
                                "content": _codex_parts(_as_parts(m.content), "input_text")}
        if isinstance(m.extra.get("metadata"), dict):
            item["metadata"] = dict(m.extra["metadata"])  # compress_level of a round-level memory block
        return [item]
    items: list[dict[str, Any]] = [
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": r.text}], "content": None,
         "encrypted_content": None}
        for r in m.reasoning if r.text
    ]
    parts = _as_parts(m.content)
    if parts:
        items.append({"type": "message", "role": "assistant", "content": _codex_parts(parts, "output_text")})
    items.extend(_codex_call(c.type, c.id, c.name, c.arguments) for c in m.tool_calls)
    return items


def _codex_call(kind: str, call_id: str, name: str, arguments: str) -> dict[str, Any]:
    if kind == "custom":
        return {"type": "custom_tool_call", "status": "completed", "call_id": call_id, "name": name, "input": arguments}
    if kind == "local_shell":
        return {"type": "local_shell_call", "call_id": call_id, "status": "completed", "action": _json_object(arguments)}
    if kind == "server":
        return {"type": "web_search_call", "status": "completed", "action": _json_object(arguments)}
    return {"type": "function_call", "name": name, "arguments": arguments, "call_id": call_id}


def _as_parts(content: str | tuple | None) -> Sequence[Mapping[str, Any]]:
    if isinstance(content, str):
        return ({"type": "text", "text": content},) if content else ()
    return content or ()


def _codex_parts(parts: Sequence[Mapping[str, Any]], text_type: str) -> list[dict[str, Any]]:
    out = []
    for p in parts:
        if p.get("type") == "image_url":
            url = p.get("image_url")
            out.append({"type": "input_image", "image_url": url.get("url", "") if isinstance(url, dict) else url})
        elif p.get("type") == "image" and isinstance(p.get("source"), dict):
            src = p["source"]
            url = src.get("url") or f"data:{src.get('media_type', 'image/png')};base64,{src.get('data', '')}"
            out.append({"type": "input_image", "image_url": url})
        elif isinstance(p.get("text"), str):
            out.append({"type": text_type, "text": p["text"]})
        else:
            out.append(dict(p))
    return out
