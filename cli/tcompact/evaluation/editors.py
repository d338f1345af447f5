"""Carrying out a planting plan on a file's own records, format by format, in memory.

The copy must read as the same kind of session with the canaries in it, so each format is edited
in its own terms: a chat line's ``content``; a Claude Code line's text block or ``tool_result``,
new tool steps as an assistant ``tool_use`` line and a user ``tool_result`` line spliced into
the ``uuid``/``parentUuid`` chain; a Codex ``response_item`` (with its ``event_msg`` mirror) and
new ``function_call`` / ``custom_tool_call`` items with their outputs; the ``history`` (or
``messages``, ``traj``) list of a JSON document. Unchanged records keep their bytes.
"""

from __future__ import annotations

import copy
import uuid
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson

from ..model import Message, SourceFile, Transcript
from ..tool_names import kind_of
from .planting import Plan, TextEdit, ToolStep

__all__ = ["plant_records"]

Edit = Callable[[str], str]
_NAMESPACE = uuid.UUID("6f1c2f0e-5a1b-4c8e-9d4a-0e7f4b9a2c31")


def plant_records(source: SourceFile, transcript: Transcript, plan: Plan) -> bytes:
    """The bytes of a copy of ``source`` with the plan carried out on ``transcript``."""
    if source.format == "claude-code":
        editor: _Editor = _Claude(source, transcript)
    elif source.format == "codex":
        editor = _Codex(source, transcript)
    elif source.meta.get("document"):
        editor = _Document(source, transcript)
    else:
        editor = _ChatLines(source, transcript)
    for e in plan.edits:
        editor.edit(e.message, _text_edit(e))
    for s in plan.steps:
        editor.step(s)
    return editor.render()


def _text_edit(e: TextEdit) -> Edit:
    if e.mode == "line":
        return lambda text: insert_line(text, e.canary.text, e.at)
    return lambda text: append_paragraph(text, e.canary.text)


def append_paragraph(text: str, paragraph: str) -> str:
    """The text with a paragraph added at its end (inside the arguments of a slash command)."""
    if "</command-args>" in text:
        at = text.rindex("</command-args>")
        return f"{text[:at].rstrip()} {paragraph}{text[at:]}"
    body = text.rstrip()
    return f"{body}\n\n{paragraph}{text[len(body):]}" if body else paragraph


def insert_line(text: str, line: str, at: float) -> str:
    """The text with ``line`` inserted at a line boundary ``at`` of the way through (after a Codex
    ``Output:`` header, never before the first line)."""
    lines = text.split("\n")
    start = next((n + 1 for n, ln in enumerate(lines[:8]) if ln.strip() == "Output:"), 1 if len(lines) > 1 else 0)
    pos = min(max(start + int(at * (len(lines) - start)), start), len(lines))
    lines.insert(pos, line)
    return "\n".join(lines)


def _last_text(parts: list[Any], kinds: tuple[str, ...], fn: Edit, new: Mapping[str, Any] | None) -> bool:
    """Edit the last text part of a content list (or add ``new`` with the edited empty text)."""
    for part in reversed(parts):
        if isinstance(part, dict) and part.get("type") in kinds and isinstance(part.get("text"), str):
            part["text"] = fn(part["text"])
            return True
    if new is not None:
        parts.append({**new, "text": fn("")})
        return True
    return False


def _step_texts(step: ToolStep) -> tuple[str, bool]:
    """(result text, is an error) of a tool step, as a Claude-style tool reports it."""
    c = step.canary
    if step.action == "write":
        return f"File created successfully at: {c.values[0]}", False
    return (f"Exit code {c.exit_code}\n{c.text}" if c.exit_code else c.text), c.exit_code != 0


class _Editor:
    """Copies of the records it changes, and the new records to write before or after others."""

    def __init__(self, source: SourceFile, transcript: Transcript) -> None:
        self.source, self.messages = source, transcript.messages
        self.changed: dict[int, Any] = {}
        self.before: dict[int, list[Any]] = defaultdict(list)
        self.after: dict[int, list[Any]] = defaultdict(list)

    def data(self, i: int) -> Any:
        """Record ``i``'s value, copied on the first change."""
        if i not in self.changed:
            self.changed[i] = copy.deepcopy(self.source.records[i].data)
        return self.changed[i]

    def edit(self, index: int, fn: Edit) -> None:
        raise NotImplementedError

    def step(self, step: ToolStep) -> None:
        raise NotImplementedError

    def render(self) -> bytes:
        """JSON Lines: unchanged records as they were, changed and new ones as compact JSON."""
        out = bytearray()
        for i, rec in enumerate(self.source.records):
            for d in self.before.get(i, ()):
                out += orjson.dumps(d) + b"\n"
            if i in self.changed:
                out += orjson.dumps(self.changed[i]) + b"\n"
            else:
                raw = rec.raw if rec.raw is not None else orjson.dumps(rec.data) + b"\n"
                out += raw if raw.endswith(b"\n") else raw + b"\n"
            for d in self.after.get(i, ()):
                out += orjson.dumps(d) + b"\n"
        return bytes(out)


# -- chat messages (JSON Lines and documents) ---------------------------------------------------


def _chat_edit(d: dict[str, Any], fn: Edit) -> None:
    content = d.get("content")
    if isinstance(content, list):
        _last_text(content, ("text",), fn, {"type": "text"})
    else:
        d["content"] = fn(content if isinstance(content, str) else "")


def _chat_step(messages: Sequence[Message], step: ToolStep, like: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The assistant call and the tool result of a step, keys as the session's own messages have them."""
    name, args = _chat_call(messages, step)
    result, _ = _step_texts(step)
    call = {"id": step.call_id, "type": "function", "function": {"name": name, "arguments": orjson.dumps(args).decode()}}
    assistant: dict[str, Any] = {"role": "assistant", "content": "", "tool_calls": [call]}
    tool: dict[str, Any] = {"role": "tool", "content": result}
    if like is not None and "tool_call_ids" in like:
        tool["tool_call_ids"] = [step.call_id]
    else:
        tool["tool_call_id"] = step.call_id
    for key in ("agent",):
        if like is not None and key in like:
            assistant[key] = tool[key] = like[key]
    if like is not None and "message_type" in like:
        assistant["message_type"], tool["message_type"] = "action", "observation"
    return [assistant, tool]


def _chat_call(messages: Sequence[Message], step: ToolStep) -> tuple[str, dict[str, Any]]:
    """The tool a chat session would use for a step, and its arguments."""
    used = [c.name for m in messages for c in m.tool_calls]
    c = step.canary
    if step.action == "shell":
        name = next((n for n in used if kind_of(n) == "shell"), "bash")
        return name, {"command": c.command}
    name = next((n for n in used if kind_of(n) in ("write", "editor")), "write_file")
    if kind_of(name) == "editor":
        return name, {"command": "create", "path": c.values[0], "file_text": c.text}
    if name == "create":  # SWE-agent's create tool makes the file; its content comes with a later edit
        return name, {"filename": c.values[0]}
    key = "file_path" if name == "Write" else "path"
    return name, {key: c.values[0], "content": c.text}


class _ChatLines(_Editor):
    """Chat JSON Lines: one message per record."""

    def edit(self, index: int, fn: Edit) -> None:
        _chat_edit(self.data(self.messages[index].source[0]), fn)

    def step(self, step: ToolStep) -> None:
        like = next((self.source.records[m.source[0]].data for m in self.messages if m.role == "tool"), None)
        self.after[self.messages[step.after].source[-1]] += _chat_step(self.messages, step, like)


class _Document(_Editor):
    """One JSON document: a SWE-agent ``history``, a chat array or ``{"messages"}``, a tau-bench ``traj``."""

    def __init__(self, source: SourceFile, transcript: Transcript) -> None:
        super().__init__(source, transcript)
        self.doc = copy.deepcopy(source.records[0].data)
        self.items = self._items(source, transcript)
        self.inserts: dict[int, list[dict[str, Any]]] = defaultdict(list)

    def _items(self, source: SourceFile, transcript: Transcript) -> list[Any]:
        doc = self.doc
        if source.format == "swe-agent":
            return doc["history"]
        if source.format == "tau-bench":
            episodes = [doc] if isinstance(doc, dict) else doc
            return episodes[list(source.transcripts).index(transcript)]["traj"]
        return doc if isinstance(doc, list) else doc["messages"]

    def edit(self, index: int, fn: Edit) -> None:
        _chat_edit(self.items[self.messages[index].meta["item"]], fn)

    def step(self, step: ToolStep) -> None:
        like = next((self.items[m.meta["item"]] for m in self.messages if m.role == "tool"), None)
        self.inserts[self.messages[step.after].meta["item"]] += _chat_step(self.messages, step, like)

    def render(self) -> bytes:
        merged: list[Any] = []
        for j, item in enumerate(self.items):
            merged.append(item)
            merged += self.inserts.get(j, ())
        self.items[:] = merged
        return orjson.dumps(self.doc)


# -- Claude Code -------------------------------------------------------------------------------


class _Claude(_Editor):
    """Claude Code lines: text blocks and tool results edited, tool steps spliced into the chain."""

    def edit(self, index: int, fn: Edit) -> None:
        m = self.messages[index]
        if m.role == "assistant":
            line = next((i for i in reversed(m.source) if _has_text(self.source.records[i].data)), m.source[-1])
            _last_text(self.data(line)["message"]["content"], ("text",), fn, {"type": "text"})
            return
        message = self.data(m.source[0])["message"]
        if isinstance(message["content"], str):
            message["content"] = fn(message["content"])
        elif m.role == "tool":
            block = next(b for b in message["content"] if b.get("type") == "tool_result"
                         and b.get("tool_use_id") == m.tool_call_ids[0])
            body = block.get("content")
            if isinstance(body, list):
                _last_text(body, ("text",), fn, {"type": "text"})
            else:
                block["content"] = fn(body if isinstance(body, str) else "")
        else:
            _last_text(message["content"], ("text",), fn, {"type": "text"})

    def step(self, step: ToolStep) -> None:
        nxt = self.messages[step.after + 1]
        own = {self.source.records[i].data.get("uuid") for i in nxt.source}
        entry = next((i for i in nxt.source if self.data(i).get("parentUuid") not in own), nxt.source[0])
        head = self.data(entry)
        call_uuid, result_uuid = (str(uuid.uuid5(_NAMESPACE, f"{step.call_id}/{part}")) for part in ("call", "result"))
        envelope = {k: head[k] for k in ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch",
                                         "timestamp") if k in head}
        path = step.canary.values[0]
        if step.action == "write" and isinstance(head.get("cwd"), str) and head["cwd"].startswith("/"):
            path = f"{head['cwd'].rstrip('/')}/{path}"
        tool_input = ({"command": step.canary.command, "description": "Run a command"} if step.action == "shell"
                      else {"file_path": path, "content": step.canary.text})
        result, error = _step_texts(step)
        if step.action == "write":
            result = f"File created successfully at: {path}"
        call = {"parentUuid": head.get("parentUuid"), **envelope, "type": "assistant", "uuid": call_uuid,
                "message": {"id": f"msg_{step.call_id}", "type": "message", "role": "assistant",
                            "model": "<planted>", "content": [{"type": "tool_use", "id": step.call_id,
                                                               "name": "Bash" if step.action == "shell" else "Write",
                                                               "input": tool_input}]}}
        answer = {"parentUuid": call_uuid, **envelope, "type": "user", "uuid": result_uuid,
                  "message": {"role": "user", "content": [{"tool_use_id": step.call_id, "type": "tool_result",
                                                           "content": result, "is_error": error}]}}
        head["parentUuid"] = result_uuid
        self.before[entry] += [call, answer]


def _has_text(d: Any) -> bool:
    content = d.get("message", {}).get("content") if isinstance(d, dict) else None
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "text" and
                                             str(b.get("text", "")).strip() for b in content)


# -- Codex ---------------------------------------------------------------------------------------


class _Codex(_Editor):
    """Codex rollout lines: outputs and messages edited (mirrors kept in step), items added."""

    def edit(self, index: int, fn: Edit) -> None:
        m = self.messages[index]
        if m.role == "assistant":
            line = next(i for i in reversed(m.source) if _codex_message(self.source.records[i].data, "assistant"))
            _last_text(self.data(line)["payload"]["content"], ("output_text", "text"), fn, None)
        elif m.role == "tool":
            payload = self.data(m.source[0])["payload"]
            payload["output"] = _codex_output(payload.get("output"), fn)
        elif m.meta.get("from") == "event_msg":
            payload = self.data(m.source[0])["payload"]
            payload["message"] = fn(payload["message"])
        else:
            self._user_item(m, fn)

    def _user_item(self, m: Message, fn: Edit) -> None:
        """A user response item edited, and the event_msg that mirrors it made to match again."""
        old = m.text.strip()
        content = self.data(m.source[0])["payload"]["content"]
        if isinstance(content, str):
            new = self.data(m.source[0])["payload"]["content"] = fn(content)
        else:
            _last_text(content, ("input_text", "text"), fn, {"type": "input_text"})
            new = "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
        for i, rec in enumerate(self.source.records):
            p = rec.data.get("payload") if isinstance(rec.data, dict) else None
            if rec.data and rec.data.get("type") == "event_msg" and isinstance(p, dict) and \
                    p.get("type") == "user_message" and isinstance(p.get("message"), str) and p["message"].strip() == old:
                self.data(i)["payload"]["message"] = new

    def step(self, step: ToolStep) -> None:
        at = self.messages[step.after].source[-1]
        stamp = self.source.records[at].data.get("timestamp")
        used = {c.name for m in self.messages for c in m.tool_calls}
        c = step.canary
        if step.action == "write":
            patch = f"*** Begin Patch\n*** Add File: {c.values[0]}\n" + "".join(
                f"+{ln}\n" for ln in c.text.splitlines()) + "*** End Patch\n"
            output = orjson.dumps({"output": f"Success. Updated the following files:\nA {c.values[0]}\n",
                                   "metadata": {"exit_code": 0, "duration_seconds": 0.0}}).decode()
            items = [{"type": "custom_tool_call", "status": "completed", "call_id": step.call_id,
                      "name": "apply_patch", "input": patch},
                     {"type": "custom_tool_call_output", "call_id": step.call_id, "output": output}]
        elif "shell" in used and "exec_command" not in used:
            args = {"command": ["bash", "-lc", c.command]}
            output = orjson.dumps({"output": c.text + "\n", "metadata": {"exit_code": c.exit_code,
                                                                         "duration_seconds": 0.1}}).decode()
            items = [{"type": "function_call", "name": "shell", "arguments": orjson.dumps(args).decode(),
                      "call_id": step.call_id}, {"type": "function_call_output", "call_id": step.call_id,
                                                  "output": output}]
        else:
            output = (f"Chunk ID: {c.token}\nWall time: 0.1000 seconds\nProcess exited with code {c.exit_code}\n"
                      f"Original token count: {len(c.text) // 4 + 1}\nOutput:\n{c.text}\n")
            items = [{"type": "function_call", "name": "exec_command",
                      "arguments": orjson.dumps({"cmd": c.command}).decode(), "call_id": step.call_id},
                     {"type": "function_call_output", "call_id": step.call_id, "output": output}]
        self.after[at] += [{"timestamp": stamp, "type": "response_item", "payload": item} for item in items]


def _codex_message(d: Any, role: str) -> bool:
    p = d.get("payload") if isinstance(d, dict) else None
    return isinstance(p, dict) and p.get("type") == "message" and p.get("role") == role and \
        isinstance(p.get("content"), list)


def _codex_output(output: Any, fn: Edit) -> Any:
    """A tool output edited: plain text, the ``output`` inside a JSON envelope, or a list of parts."""
    if isinstance(output, list):
        _last_text(output, ("input_text", "output_text", "text"), fn, {"type": "input_text"})
        return output
    if not isinstance(output, str):
        return fn("")
    if output.startswith("{"):
        try:
            doc = orjson.loads(output)
        except orjson.JSONDecodeError:
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("output"), str):
            doc["output"] = fn(doc["output"])
            return orjson.dumps(doc).decode()
    return fn(output)
