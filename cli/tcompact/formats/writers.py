"""Writing transcripts as chat, Claude Code or Codex files.

Over a source file of the same format, an unchanged transcript gives back the file byte for
byte (chat: every unchanged line keeps its bytes). Into another format, the lines are generated:
a Claude Code session with a fresh uuid chain, or a Codex rollout with a ``session_meta`` line
and ``response_item`` lines. What the target cannot hold is reported, never dropped silently:
``losses`` are messages it cannot express (the caller refuses unless told to go on), ``notes``
are file bookkeeping that has no place in the target.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import orjson

from .. import __version__
from ..errors import UsageError
from ..model import Message, SourceFile, Transcript, index_tool_calls
from . import chat
from ._merge import join_lines

__all__ = ["Rendered", "render"]

_NAMESPACE = uuid.UUID("6f1d3c2a-9b1e-4c55-8a8e-2f4f7d0c9e11")


@dataclass(frozen=True)
class Rendered:
    """The bytes of a written transcript, what the target could not hold, and what stayed behind."""

    data: bytes
    losses: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def render(transcript: Transcript, fmt: str, *, source: SourceFile | None = None, now: str | None = None) -> Rendered:
    """Write ``transcript`` as ``fmt`` (see the module docstring)."""
    same = source is not None and source.format == fmt and not source.meta.get("document")
    if same:
        original = source.transcript(transcript.id)
        if fmt == "chat":
            return Rendered(join_lines(chat.write(transcript, original, source.records)))
        if transcript.messages == original.messages:
            return Rendered(join_lines(_raw_records(source)))
        raise UsageError(f"a changed {fmt} transcript is written by `tcompact compact`, not by convert")
    when = now or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    session = str(uuid.uuid5(_NAMESPACE, f"{source.path if source else ''}/{transcript.id}"))
    notes = tuple(_notes(transcript, source))
    if fmt == "chat":
        return Rendered(join_lines(chat.write(transcript, None, None)), (), notes)
    build = _claude_lines if fmt == "claude-code" else _codex_lines
    lines, losses = build(transcript, now=when, session=session)
    return Rendered(join_lines(lines), tuple(losses), notes)


def _raw_records(source: SourceFile) -> list[bytes]:
    if any(r.raw is None for r in source.records):
        raise UsageError("this file was read without its raw bytes", path=source.path,
                         hint="read it with ReadOptions(keep_raw=True) to write it back")
    return [r.raw for r in source.records]  # type: ignore[misc]


def _notes(transcript: Transcript, source: SourceFile | None) -> list[str]:
    """File bookkeeping that a conversion leaves behind."""
    if source is None:
        return []
    notes = []
    others = [t for t in source.transcripts if t.id != transcript.id]
    if others:
        ids = ", ".join(t.id for t in others[:5]) + (" …" if len(others) > 5 else "")
        notes.append(f"{len(others)} other transcript(s) in the file not included ({ids}); pass --transcript ID")
    used = {i for t in source.transcripts for m in t.messages for i in m.source}
    left = [] if source.meta.get("document") else [
        r.data for i, r in enumerate(source.records) if i not in used and r.data is not None]
    earlier = sum(1 for d in left if d.get("type") in ("user", "assistant") and isinstance(d.get("message"), dict))
    if earlier:
        notes.append(f"{earlier} message line(s) outside the active context (before a compaction, or on an "
                     "abandoned branch) stay behind; pass --full-history to include what precedes a compaction")
    kinds = Counter(_record_kind(d) for d in left if not (d.get("type") in ("user", "assistant")
                                                          and isinstance(d.get("message"), dict)))
    if kinds:
        listed = ", ".join(f"{k} ×{n}" for k, n in kinds.most_common())
        notes.append(f"{sum(kinds.values())} record(s) that are not messages stay behind: {listed}")
    encrypted = sum(1 for m in transcript.messages for r in m.reasoning if r.encrypted_chars)
    if encrypted:
        notes.append(f"{encrypted} encrypted reasoning item(s) are opaque and cannot be carried over")
    return notes


def _record_kind(data: Mapping[str, Any]) -> str:
    kind = str(data.get("type") or "record")
    payload = data.get("payload")
    if isinstance(payload, dict) and isinstance(payload.get("type"), str):
        return f"{kind}/{payload['type']}"
    return kind


def _line(d: Mapping[str, Any]) -> bytes:
    return chat.dumps_line(d)


# ---- Claude Code -------------------------------------------------------------------------------


def _claude_lines(t: Transcript, *, now: str, session: str) -> tuple[list[bytes], list[str]]:
    losses: list[str] = []
    out: list[bytes] = []
    parent: str | None = None
    for n, m in enumerate(t.messages):
        if m.role in ("system", "developer"):
            losses.append(f"message {n} ({m.role}): Claude Code sessions have no {m.role} messages")
            continue
        uid = str(uuid.uuid5(_NAMESPACE, f"{session}/{n}"))
        line: dict[str, Any] = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "",
                                "sessionId": session, "version": f"tcompact-{__version__}"}
        if m.role == "assistant":
            line |= {"type": "assistant", "message": _claude_assistant(m, t.model, uid)}
        elif m.role in ("tool", "function"):
            line |= {"type": "user", "message": {"role": "user", "content": _claude_results(m)}}
        else:
            content = m.content if isinstance(m.content, str) else [_claude_block(p) for p in m.content or ()]
            line |= {"type": "user", "message": {"role": "user", "content": content}}
            if m.internal:
                line["isMeta"] = True
        line |= {"uuid": uid, "timestamp": now}
        out.append(_line(line))
        parent = uid
    return out, losses


def _claude_assistant(m: Message, model: str | None, uid: str) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [_claude_block(p) for p in (m.content if isinstance(m.content, tuple) else ())]
    if isinstance(m.content, str) and m.content:
        blocks.append({"type": "text", "text": m.content})
    for c in m.tool_calls:
        blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": _json_object(c.arguments)})
    return {"id": f"msg_{uid.replace('-', '')[:24]}", "type": "message", "role": "assistant",
            "model": model or "unknown", "content": blocks,
            "stop_reason": "tool_use" if m.tool_calls else "end_turn", "stop_sequence": None}


def _claude_results(m: Message) -> list[dict[str, Any]]:
    body: Any = m.content if isinstance(m.content, str) else [_claude_block(p) for p in m.content or ()]
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


def _json_object(arguments: str) -> Any:
    try:
        value = orjson.loads(arguments) if arguments else {}
    except orjson.JSONDecodeError:
        return {"input": arguments}
    return value if isinstance(value, dict) else {"input": value}


# ---- Codex -------------------------------------------------------------------------------------


def _codex_lines(t: Transcript, *, now: str, session: str) -> tuple[list[bytes], list[str]]:
    messages = list(t.messages)
    meta: dict[str, Any] = {"id": session, "timestamp": now, "cwd": "", "originator": "tcompact",
                            "cli_version": __version__, "source": "exec"}
    if messages and messages[0].role == "system":
        meta["base_instructions"] = {"text": messages.pop(0).text}
    out = [_line({"timestamp": now, "type": "session_meta", "payload": meta})]
    if t.model:
        out.append(_line({"timestamp": now, "type": "turn_context", "payload": {"cwd": "", "model": t.model}}))
    kinds = {link.call.id: link.call.type for link in index_tool_calls(messages).links}
    for m in messages:
        for payload in _codex_items(m, kinds):
            out.append(_line({"timestamp": now, "type": "response_item", "payload": payload}))
    return out, []


def _codex_items(m: Message, call_kinds: Mapping[str, str]) -> list[dict[str, Any]]:
    if m.role in ("tool", "function"):
        output: Any = m.content if isinstance(m.content, str) else _codex_parts(m.content or (), "input_text")
        kind = "custom_tool_call_output" if call_kinds.get(m.tool_call_id or "") == "custom" else "function_call_output"
        return [{"type": kind, "call_id": cid, "output": output} for cid in m.tool_call_ids or ("",)]
    if m.role != "assistant":
        return [{"type": "message", "role": m.role, "content": _codex_parts(_as_parts(m.content), "input_text")}]
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
