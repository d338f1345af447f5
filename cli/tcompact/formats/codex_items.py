"""What the response items of a Codex rollout read as: content parts, calls, reasoning, tool outputs.

A ``message`` item's content becomes chat parts (:func:`parts_of`); reasoning and the calls
(``function_call``, ``custom_tool_call`` — apply_patch —, ``local_shell_call``, ``web_search_call``)
join the assistant message being assembled (:func:`assistant_item`); an output is an error when
its shell exit code is not zero or a structured one says ``success: false`` (:func:`failed`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from ..model import Reasoning, ToolCall

__all__ = ["assistant_item", "parts_of", "text_of_parts", "output_text", "failed"]

_EXIT_CODE = re.compile(r"(?:Process exited with code|Exit code:?)\s+(-?\d+)")


def assistant_item(kind: str, p: Mapping[str, Any], pending: dict[str, Any]) -> None:
    """Add an assistant-side item (reasoning, a call) to the assistant message being assembled."""
    if kind == "reasoning":
        summary = "\n".join(_texts_of(p.get("summary")))
        content = "\n".join(_texts_of(p.get("content")))
        enc = p.get("encrypted_content")
        pending["reasoning"].append(Reasoning(text="\n".join(t for t in (summary, content) if t),
                                              encrypted_chars=len(enc) if isinstance(enc, str) else 0,
                                              kind="summary" if summary else "reasoning"))
        return
    call_id = str(p.get("call_id") or p.get("id") or f"{kind}_{len(pending['calls'])}")
    if kind == "function_call":
        call = ToolCall(call_id, str(p.get("name") or ""), _args(p.get("arguments")))
    elif kind == "custom_tool_call":
        call = ToolCall(call_id, str(p.get("name") or ""), _args(p.get("input")), type="custom")
    elif kind == "local_shell_call":
        call = ToolCall(call_id, "local_shell", _args(p.get("action")), type="local_shell")
    else:  # web_search_call: run by the provider, no output item follows
        call = ToolCall(call_id, "web_search", _args(p.get("action")), type="server")
    pending["calls"].append(call)


def _texts_of(items: Any) -> list[str]:
    """The ``text`` strings of a list of ``{"text": ...}`` objects (anything else is passed over)."""
    if not isinstance(items, list):
        return []
    return [t for c in items if isinstance(c, dict) and isinstance(t := c.get("text"), str)]


def _args(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else orjson.dumps(value).decode()


def parts_of(content: Any) -> tuple[Mapping[str, Any], ...]:
    """A content list as chat parts: texts as ``text``, images as ``image_url``, anything else as it was."""
    parts = []
    for c in content if isinstance(content, list) else []:
        if not isinstance(c, dict):
            continue
        kind = c.get("type")
        if kind in ("input_text", "output_text", "text") and isinstance(c.get("text"), str):
            parts.append({"type": "text", "text": c["text"]})
        elif kind == "input_image":
            parts.append({"type": "image_url", "image_url": {"url": c.get("image_url", "")}})
        else:
            parts.append(c)
    return tuple(parts)


def text_of_parts(parts: Sequence[Mapping[str, Any]]) -> str:
    """The texts of chat parts, one per line."""
    return "\n".join(p["text"] for p in parts if isinstance(p.get("text"), str))


def output_text(output: Any) -> str:
    """A tool output that is neither a string nor a content list, as text."""
    if output is None:
        return ""
    if isinstance(output, dict) and isinstance(output.get("content"), str):
        return output["content"]
    return orjson.dumps(output).decode()


def failed(output: Any) -> bool:
    """A non-zero exit code in a shell output, or ``success: false`` in a structured one."""
    if isinstance(output, dict):
        return output.get("success") is False
    if not isinstance(output, str):
        return False
    if output.startswith("{"):
        try:
            doc = orjson.loads(output)
        except orjson.JSONDecodeError:
            doc = None
        if isinstance(doc, dict):
            code = (doc.get("metadata") or {}).get("exit_code") if isinstance(doc.get("metadata"), dict) else None
            return isinstance(code, int) and code != 0
    match = _EXIT_CODE.search(output[:400])
    return bool(match) and match.group(1) != "0"
