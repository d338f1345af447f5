"""Generating Claude Code session lines from messages (conversion, and new lines of a compaction)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import orjson

from .. import __version__
from ..model import Message, Transcript
from .chat_write import dumps_line as _line

__all__ = ["claude_session", "claude_message_body", "claude_result_content", "json_object"]

_NAMESPACE = uuid.UUID("6f1d3c2a-9b1e-4c55-8a8e-2f4f7d0c9e11")



def claude_session(t: Transcript, *, now: str, session: str) -> tuple[list[bytes], list[str]]:
    """A Claude Code session file for a transcript (fresh uuid chain), and what it cannot hold."""
    losses: list[str] = []
    out: list[bytes] = []
    parent: str | None = None
    for n, m in enumerate(t.messages):
        if m.role in ("system", "developer"):
            losses.append(f"message {n} ({m.role}): Claude Code sessions have no {m.role} messages")
            continue
        uid = str(uuid.uuid5(_NAMESPACE, f"{session}/{n}"))
        kind, body = claude_message_body(m, model=t.model, uid=uid)
        line: dict[str, Any] = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "",
                                "sessionId": session, "version": f"tcompact-{__version__}", "type": kind,
                                "message": body}
        if m.internal and m.role == "user":
            line["isMeta"] = True
        line |= {"uuid": uid, "timestamp": now}
        out.append(_line(line))
        parent = uid
    return out, losses


def claude_message_body(m: Message, *, model: str | None = None, uid: str = "") -> tuple[str, dict[str, Any]]:
    """The line type ("user" or "assistant") and the ``message`` object of a message."""
    if m.role == "assistant":
        return "assistant", _claude_assistant(m, model, uid or str(uuid.uuid4()))
    if m.role in ("tool", "function"):
        return "user", {"role": "user", "content": _claude_results(m)}
    content = m.content if isinstance(m.content, str) else [_claude_block(p) for p in m.content or ()]
    return "user", {"role": "user", "content": content}


def claude_result_content(m: Message) -> Any:
    """The ``content`` of a tool_result block for a tool message."""
    return m.content if isinstance(m.content, str) else [_claude_block(p) for p in m.content or ()]


def _claude_assistant(m: Message, model: str | None, uid: str) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [_claude_block(p) for p in (m.content if isinstance(m.content, tuple) else ())]
    if isinstance(m.content, str) and m.content:
        blocks.append({"type": "text", "text": m.content})
    for c in m.tool_calls:
        blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": json_object(c.arguments)})
    return {"id": f"msg_{uid.replace('-', '')[:24]}", "type": "message", "role": "assistant",
            "model": model or "unknown", "content": blocks,
            "stop_reason": "tool_use" if m.tool_calls else "end_turn", "stop_sequence": None}


def _claude_results(m: Message) -> list[dict[str, Any]]:
    body = claude_result_content(m)
    blocks = []
    for k, cid in enumerate(m.tool_call_ids or ("",)):
        block: dict[str, Any] = {"tool_use_id": cid, "type": "tool_result",
                                 "content": body if k == 0 else "(same output as the result above)"}
        if m.is_error:
            block["is_error"] = True
        blocks.append(block)
    return blocks


def _claude_block(part: Mapping[str, Any]) -> dict[str, Any]:
    kind = part.get("type")
    if kind == "image_url":
        url = part.get("image_url")
        url = url.get("url", "") if isinstance(url, dict) else str(url or "")
        if url.startswith("data:") and ";base64," in url:
            media, data = url[5:].split(";base64,", 1)
            return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
        return {"type": "image", "source": {"type": "url", "url": url}}
    return dict(part)


def json_object(arguments: str) -> Any:
    """Tool-call arguments as a JSON object (non-objects wrapped as {\"input\": ...})."""
    try:
        value = orjson.loads(arguments) if arguments else {}
    except orjson.JSONDecodeError:
        return {"input": arguments}
    return value if isinstance(value, dict) else {"input": value}
