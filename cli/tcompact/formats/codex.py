"""Codex CLI rollout files (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Each line is ``{"timestamp", "type", "payload"}``. ``response_item`` payloads are what the
model saw: messages, reasoning, function and custom tool calls with their outputs, shell and
web-search calls. Consecutive assistant-side items (reasoning, assistant text, calls) form one
assistant message. The base instructions of ``session_meta`` are the system prompt. Some
rollouts (Codex Desktop) record user turns only as ``event_msg`` ``user_message``; those
become user messages when no ``response_item`` mirrors them.

Context after a compaction is the latest ``compacted`` line's ``replacement_history`` plus the
items after it, as Codex rebuilds it on resume; ``--full-history`` reads every item instead.
``event_msg``, ``turn_context`` and unknown lines are kept for writing back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from ..model import Compaction, Message, Reasoning, Record, ToolCall, Transcript
from ..rounds import is_real_user
from ._source import ReadContext

__all__ = ["NAME", "sniff", "read_records", "KNOWN_TYPES"]

NAME = "codex"
KNOWN_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_ASSISTANT_ITEMS = frozenset({"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"})
_OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output"})
_SILENT_ITEMS = frozenset({"ghost_snapshot"})  # bookkeeping, never sent to the model
_EXIT_CODE = re.compile(r"(?:Process exited with code|Exit code:?)\s+(-?\d+)")


def sniff(record: Mapping[str, Any]) -> bool:
    """True when a JSONL record looks like a Codex rollout line."""
    return record.get("type") in KNOWN_TYPES and isinstance(record.get("payload"), dict)


class _Builder:
    """Accumulates messages while the rollout is read in order."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.pending: dict[str, Any] | None = None  # assistant message being assembled

    def flush(self) -> None:
        p = self.pending
        if p is not None:
            self.messages.append(
                Message(role="assistant", content=tuple(p["parts"]) or None, tool_calls=tuple(p["calls"]),
                        reasoning=tuple(p["reasoning"]), source=tuple(dict.fromkeys(p["source"])),
                        meta={"lines": p["lines"]})
            )
            self.pending = None

    def assistant(self, source: int, line: int) -> dict[str, Any]:
        if self.pending is None:
            self.pending = {"parts": [], "calls": [], "reasoning": [], "source": [], "lines": []}
        self.pending["source"].append(source)
        self.pending["lines"].append(line)
        return self.pending

    def add(self, message: Message) -> None:
        self.flush()
        self.messages.append(message)


def read_records(records: Sequence[Record], ctx: ReadContext) -> tuple[list[Transcript], dict[str, int], dict[str, Any]]:
    """Build the transcript of a rollout."""
    unknown: dict[str, int] = {}
    meta: dict[str, Any] = {}
    base, legacy = (None, False) if ctx.options.full_history else _base_index(records)
    start = base or 0
    b = _Builder()
    mirrored = _user_texts(records)
    compactions: list[Compaction] = []
    usage: list[Mapping[str, Any]] = []
    model = None
    for i, rec in enumerate(records):
        d = rec.data
        if d is None:
            continue
        kind, payload = d.get("type"), d.get("payload")
        if kind not in KNOWN_TYPES:
            unknown[str(kind)] = unknown.get(str(kind), 0) + 1
            continue
        if not isinstance(payload, dict):
            ctx.reject(rec, f'{kind} line without a "payload" object')
            continue
        if kind == "session_meta":
            meta = {k: v for k, v in payload.items() if k not in ("base_instructions", "instructions", "dynamic_tools")}
            _system_prompt(payload, i, rec, b)
        elif kind == "turn_context":
            model = payload.get("model") if isinstance(payload.get("model"), str) else model
        elif kind == "event_msg":
            _event(payload, i, rec, b, mirrored, compactions, usage, active=legacy or i >= start)
        elif kind == "compacted":
            if i == base and legacy:  # rebuilt as Codex does: the user's requests, then the summary
                b.flush()
                b.messages = [m for m in b.messages if m.role == "system" or is_real_user(m)]
            compactions.append(Compaction(kind="codex_compacted", index=len(b.messages) if i >= start else None,
                                          line=rec.line))
            if i == base and not legacy:
                _replacement(payload, i, rec, b, ctx)
            elif i >= start:
                b.add(Message(role="user", content=str(payload.get("message") or ""), internal=True,
                              source=(i,), meta={"line": rec.line, "compacted": True}))
        elif legacy or i >= start:
            _response_item(payload, i, rec, b, ctx, unknown)
    b.flush()
    transcript = Transcript(id="main", kind="main", messages=tuple(b.messages), model=model,
                            compactions=tuple(compactions), provider_usage=_usage(usage))
    return [transcript], unknown, meta


def _base_index(records: Sequence[Record]) -> tuple[int | None, bool]:
    """Index of the newest ``compacted`` line (None when none) and whether it lacks replacement_history."""
    for i in range(len(records) - 1, -1, -1):
        d = records[i].data
        if d and d.get("type") == "compacted" and isinstance(d.get("payload"), dict):
            return i, not isinstance(d["payload"].get("replacement_history"), list)
    return None, False


def _user_texts(records: Sequence[Record]) -> set[str]:
    texts = set()
    for rec in records:
        d = rec.data
        p = d.get("payload") if d else None
        if d and d.get("type") == "response_item" and isinstance(p, dict) and p.get("type") == "message" \
                and p.get("role") == "user":
            texts.add(_text(_parts(p.get("content"))).strip())
    return texts


def _system_prompt(payload: Mapping[str, Any], i: int, rec: Record, b: _Builder) -> None:
    base = payload.get("base_instructions")
    text = base.get("text") if isinstance(base, dict) else payload.get("instructions")
    if isinstance(text, str) and text:
        b.add(Message(role="system", content=text, internal=True, source=(i,),
                      meta={"line": rec.line, "from": "session_meta"}))


def _event(payload: Mapping[str, Any], i: int, rec: Record, b: _Builder, mirrored: set[str],
           compactions: list[Compaction], usage: list[Mapping[str, Any]], *, active: bool) -> None:
    kind = payload.get("type")
    if kind == "token_count" and isinstance(payload.get("info"), dict):
        usage.append(payload["info"])
    elif kind == "context_compacted":
        compactions.append(Compaction(kind="codex_context_compacted", index=len(b.messages) if active else None,
                                      line=rec.line))
    elif kind == "user_message" and active:
        text = payload.get("message")
        if isinstance(text, str) and text.strip() not in mirrored:
            b.add(Message(role="user", content=text, source=(i,), meta={"line": rec.line, "from": "event_msg"}))


def _replacement(payload: Mapping[str, Any], i: int, rec: Record, b: _Builder, ctx: ReadContext) -> None:
    for n, item in enumerate(payload.get("replacement_history") or []):
        if isinstance(item, dict):
            _response_item(item, i, rec, b, ctx, {}, meta={"line": rec.line, "replacement": n})
    b.flush()


def _response_item(p: Mapping[str, Any], i: int, rec: Record, b: _Builder, ctx: ReadContext,
                   unknown: dict[str, int], meta: Mapping[str, Any] | None = None) -> None:
    kind = p.get("type")
    meta = meta or {"line": rec.line}
    if kind == "message":
        _message(p, i, rec, b, ctx, meta)
    elif kind in _ASSISTANT_ITEMS:
        _assistant_item(kind, p, b.assistant(i, rec.line))
    elif kind in _OUTPUT_ITEMS:
        output = p.get("output")
        content = output if isinstance(output, str) else _parts(output) if isinstance(output, list) else _output_text(output)
        b.add(Message(role="tool", content=content, tool_call_ids=(str(p.get("call_id") or ""),),
                      is_error=_failed(output), source=(i,), meta=meta))
    elif kind == "compaction":
        enc = p.get("encrypted_content")
        b.add(Message(role="user", internal=True, reasoning=(Reasoning(
            encrypted_chars=len(enc) if isinstance(enc, str) else 0, kind="compaction"),), source=(i,), meta=meta))
    elif kind not in _SILENT_ITEMS:
        key = f"response_item/{kind}"
        unknown[key] = unknown.get(key, 0) + 1


def _message(p: Mapping[str, Any], i: int, rec: Record, b: _Builder, ctx: ReadContext, meta: Mapping[str, Any]) -> None:
    role = p.get("role")
    content = p.get("content")
    if not isinstance(role, str) or not isinstance(content, (list, str)):
        ctx.reject(rec, 'response_item message needs a "role" and a "content" list')
        return
    parts = _parts(content) if isinstance(content, list) else ({"type": "text", "text": content},)
    if role == "assistant":
        pending = b.assistant(i, rec.line)
        pending["parts"].extend(parts)
    else:
        b.add(Message(role=role, content=parts, internal=role == "developer", source=(i,), meta=meta))


def _assistant_item(kind: str, p: Mapping[str, Any], pending: dict[str, Any]) -> None:
    if kind == "reasoning":
        summary = "\n".join(s.get("text", "") for s in p.get("summary") or [] if isinstance(s, dict))
        content = "\n".join(c.get("text", "") for c in p.get("content") or [] if isinstance(c, dict))
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


def _args(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else orjson.dumps(value).decode()


def _parts(content: Any) -> tuple[Mapping[str, Any], ...]:
    parts = []
    for c in content or []:
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


def _text(parts: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(p["text"] for p in parts if isinstance(p.get("text"), str))


def _output_text(output: Any) -> str:
    if output is None:
        return ""
    if isinstance(output, dict) and isinstance(output.get("content"), str):
        return output["content"]
    return orjson.dumps(output).decode()


def _failed(output: Any) -> bool:
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


def _usage(infos: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    if not infos:
        return None
    last = infos[-1]
    keys = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")

    def pick(u: Any) -> dict[str, int] | None:
        return {k: u.get(k, 0) for k in keys} if isinstance(u, dict) else None

    last_usage = pick(last.get("last_token_usage"))
    return {
        "source": "codex",
        "events": len(infos),
        "total": pick(last.get("total_token_usage")),
        "last": last_usage,
        "model_context_window": last.get("model_context_window"),
        "last_context_tokens": last_usage["input_tokens"] if last_usage else None,
    }
