"""Carrying out a planting plan on a file's own records, format by format, in memory.

The copy must read as the same kind of session with the canaries in it, so each format is edited
in its own terms, the layout its class names (``Format.planting``): a chat line's ``content``, or
the list of a JSON document that holds the messages (``Format.document_items``: a ``history``,
``messages``, a ``traj``), here; Claude Code and Codex records in :mod:`.agents`. Unchanged records
keep their bytes.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson

from ..formats.family import get
from ..model import Message, SourceFile, Transcript
from ..tool_names import kind_of
from .planting import Plan, TextEdit, ToolStep

__all__ = ["plant_records", "append_paragraph", "insert_line", "Edit", "Editor", "last_text", "step_texts",
           "document_items"]

Edit = Callable[[str], str]


def plant_records(source: SourceFile, transcript: Transcript, plan: Plan) -> bytes:
    """The bytes of a copy of ``source`` with the plan carried out on ``transcript``."""
    editor = _editors()[get(source.format).planting(source)](source, transcript)
    for e in plan.edits:
        editor.edit(e.message, _text_edit(e))
    for s in plan.steps:
        editor.step(s)
    return editor.render()


def _editors() -> dict[str, type[Editor]]:
    """The editor of each record layout a format can name (``Format.planting``)."""
    from .agents import ClaudeEditor, CodexEditor  # they build on the base editor below

    return {"chat-lines": _ChatLines, "document": _Document, "claude-code": ClaudeEditor, "codex": CodexEditor}


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


def last_text(parts: list[Any], kinds: tuple[str, ...], fn: Edit, new: Mapping[str, Any] | None) -> bool:
    """Edit the last text part of a content list (or add ``new`` with the edited empty text)."""
    for part in reversed(parts):
        if isinstance(part, dict) and part.get("type") in kinds and isinstance(part.get("text"), str):
            part["text"] = fn(part["text"])
            return True
    if new is not None:
        parts.append({**new, "text": fn("")})
        return True
    return False


def step_texts(step: ToolStep) -> tuple[str, bool]:
    """(result text, is an error) of a tool step, as a Claude-style tool reports it."""
    c = step.canary
    if step.action == "write":
        return f"File created successfully at: {c.values[0]}", False
    return (f"Exit code {c.exit_code}\n{c.text}" if c.exit_code else c.text), c.exit_code != 0


class Editor:
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
        last_text(content, ("text",), fn, {"type": "text"})
    else:
        d["content"] = fn(content if isinstance(content, str) else "")


def _chat_step(messages: Sequence[Message], step: ToolStep, like: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The assistant call and the tool result of a step, keys as the session's own messages have them."""
    name, args = _chat_call(messages, step)
    result, _ = step_texts(step)
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


class _ChatLines(Editor):
    """Chat JSON Lines: one message per record."""

    def edit(self, index: int, fn: Edit) -> None:
        _chat_edit(self.data(self.messages[index].source[0]), fn)

    def step(self, step: ToolStep) -> None:
        like = next((self.source.records[m.source[0]].data for m in self.messages if m.role == "tool"), None)
        self.after[self.messages[step.after].source[-1]] += _chat_step(self.messages, step, like)


def document_items(doc: Any, source: SourceFile, transcript: Transcript) -> list[Any]:
    """The list of ``doc`` (a copy of the document ``source`` was read from) that holds ``transcript``'s
    messages, each at its ``meta["item"]``: a SWE-agent ``history``, a tau-bench episode's ``traj``, the
    messages of a chat document (the format's class knows which)."""
    return get(source.format).document_items(doc, source, transcript)


class _Document(Editor):
    """One JSON document: a SWE-agent ``history``, a chat array or ``{"messages"}``, a tau-bench ``traj``."""

    def __init__(self, source: SourceFile, transcript: Transcript) -> None:
        super().__init__(source, transcript)
        self.doc = copy.deepcopy(source.records[0].data)
        self.items = document_items(self.doc, source, transcript)
        self.inserts: dict[int, list[dict[str, Any]]] = defaultdict(list)

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
