"""Planting in the records of the agents' own session files: Claude Code lines and Codex rollout items.

Claude Code: a text block or ``tool_result`` of a line is edited; a new tool step is an assistant
``tool_use`` line and a user ``tool_result`` line spliced into the ``uuid``/``parentUuid`` chain
right before the line the next reply enters by, so the chain walk from the newest leaf passes
through them. Codex: a ``response_item`` is edited together with the ``event_msg`` that mirrors a
user message (or the ``event_msg`` alone, in Codex Desktop rollouts); a new step is a
``function_call`` (``exec_command``, or ``shell`` where the rollout uses it) or an ``apply_patch``
``custom_tool_call``, with its output, in the shape Codex writes them.
"""

from __future__ import annotations

import uuid
from typing import Any

import orjson

from ..model import Message
from .editors import Edit, Editor, last_text, step_texts
from .planting import ToolStep

__all__ = ["ClaudeEditor", "CodexEditor"]

_NAMESPACE = uuid.UUID("6f1c2f0e-5a1b-4c8e-9d4a-0e7f4b9a2c31")


# -- Claude Code -------------------------------------------------------------------------------


class ClaudeEditor(Editor):
    """Claude Code lines: text blocks and tool results edited, tool steps spliced into the chain."""

    def edit(self, index: int, fn: Edit) -> None:
        m = self.messages[index]
        if m.role == "assistant":
            line = next((i for i in reversed(m.source) if _has_text(self.source.records[i].data)), m.source[-1])
            last_text(self.data(line)["message"]["content"], ("text",), fn, {"type": "text"})
            return
        message = self.data(m.source[0])["message"]
        if isinstance(message["content"], str):
            message["content"] = fn(message["content"])
        elif m.role == "tool":
            block = next(b for b in message["content"] if b.get("type") == "tool_result"
                         and b.get("tool_use_id") == m.tool_call_ids[0])
            body = block.get("content")
            if isinstance(body, list):
                last_text(body, ("text",), fn, {"type": "text"})
            else:
                block["content"] = fn(body if isinstance(body, str) else "")
        else:
            last_text(message["content"], ("text",), fn, {"type": "text"})

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
        result, error = step_texts(step)
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


class CodexEditor(Editor):
    """Codex rollout lines: outputs and messages edited (mirrors kept in step), items added — inside the
    ``replacement_history`` of a ``compacted`` line too, where the context of a compacted rollout starts."""

    def __init__(self, source: Any, transcript: Any) -> None:
        super().__init__(source, transcript)
        self.inside: dict[tuple[int, int], list[dict[str, Any]]] = {}  # (record, item) → items after it

    def _item(self, index: int, want: Any) -> dict[str, Any]:
        """The payload of message ``index`` that ``want`` picks: the last of its records' payloads, or of
        its own items of a ``compacted`` line's replacement history (those between its neighbours')."""
        m = self.messages[index]
        for i in reversed(m.source):
            payload = self.data(i)["payload"]
            if self.source.records[i].data.get("type") == "compacted":
                items = payload.get("replacement_history") or []
                items = items[self._own(index, i, "lo"):self._own(index, i, "hi") or len(items)]
            else:
                items = [payload]
            for item in reversed(items):
                if isinstance(item, dict) and want(item):
                    return item
        raise LookupError(f"no item of message {m.role!r} to edit")

    def _own(self, index: int, record: int, end: str) -> int:
        """Where message ``index``'s items of a replacement history begin (``lo``) or end (``hi``, 0: at the end),
        from the item numbers its neighbours of the same line carry."""
        def number(m: Message) -> int | None:
            return m.meta.get("replacement") if record in m.source else None

        if number(self.messages[index]) is not None:
            n = number(self.messages[index])
            return n if end == "lo" else n + 1
        if end == "lo":
            before = [number(m) for m in self.messages[:index] if number(m) is not None]
            return max(before) + 1 if before else 0
        after = [number(m) for m in self.messages[index + 1:] if number(m) is not None]
        return min(after) if after else 0

    def edit(self, index: int, fn: Edit) -> None:
        m = self.messages[index]
        if m.role == "assistant":
            item = self._item(index, lambda d: _codex_message(d, "assistant"))
            last_text(item["content"], ("output_text", "text"), fn, None)
        elif m.role == "tool":
            item = self._item(index, lambda d: d.get("call_id") == m.tool_call_ids[0] and "output" in d)
            item["output"] = _codex_output(item.get("output"), fn)
        elif m.meta.get("from") == "event_msg":
            payload = self.data(m.source[0])["payload"]
            payload["message"] = fn(payload["message"])
        else:
            self._user_item(index, fn)

    def _user_item(self, index: int, fn: Edit) -> None:
        """A user response item edited, and the event_msg that mirrors it made to match again."""
        old = self.messages[index].text.strip()
        item = self._item(index, lambda d: d.get("type") == "message" and d.get("role") == "user")
        content = item["content"]
        if isinstance(content, str):
            new = item["content"] = fn(content)
        else:
            last_text(content, ("input_text", "text"), fn, {"type": "input_text"})
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
        position = self.messages[step.after].meta.get("replacement")
        if position is not None:  # inside the replacement history of a compacted line: right after that item
            self.inside.setdefault((at, position), []).extend(items)
        else:
            self.after[at] += [{"timestamp": stamp, "type": "response_item", "payload": item} for item in items]

    def render(self) -> bytes:
        for (at, position), items in sorted(self.inside.items(), reverse=True):  # the later places first
            history = self.data(at)["payload"]["replacement_history"]
            history[position + 1:position + 1] = items
        return super().render()


def _codex_message(item: Any, role: str) -> bool:
    """Whether a response item is a message of ``role`` with a list of parts."""
    return isinstance(item, dict) and item.get("type") == "message" and item.get("role") == role and \
        isinstance(item.get("content"), list)


def _codex_output(output: Any, fn: Edit) -> Any:
    """A tool output edited: plain text, the ``output`` inside a JSON envelope, or a list of parts."""
    if isinstance(output, list):
        last_text(output, ("input_text", "output_text", "text"), fn, {"type": "input_text"})
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
