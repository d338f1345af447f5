"""Writing a changed transcript back into its own Claude Code or Codex file.

Two layouts, chosen by what changed:

* **in place** — the messages are the same ones in the same order and only some tool results'
  texts changed (truncate, micro, offload): those lines are rewritten where they are, every
  other byte stays. ``tcompact restore`` can then give the original back byte for byte.
* **compaction** — messages were replaced by a summary: the original lines all stay (as Claude
  Code and Codex keep them), and after them come, for Claude Code, a ``compact_boundary`` line
  and the new context as a fresh chain (:mod:`tcompact.formats.claude_write_compaction` says what the
  real clients need of it); for Codex, a ``compacted`` line whose ``replacement_history`` is
  the new context (original payloads reused, so encrypted reasoning survives), then a
  ``context_compacted`` event. Both files read back with our reader as the new messages.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ..model import Message, Record, SourceFile, Transcript
from .chat_write import dumps_line
from .claude_write_compaction import compaction_lines
from .claude_prune import Pruning, prune, reparent, strip_line
from .claude_write import claude_result_content
from .codex_write import codex_call_kinds, codex_items

__all__ = ["one_to_one", "claude_lines", "codex_lines", "SUMMARY_PREFIX"]

#: Codex's prefix for a local compaction summary (FORMATS.md §1).
SUMMARY_PREFIX = "Another language model started to solve this problem and produced a summary of its thinking process."


def one_to_one(original: Sequence[Message], new: Sequence[Message]) -> bool:
    """True when ``new`` is ``original`` with only tool-result texts changed."""
    return len(original) == len(new) and all(
        a.source == b.source and (a == b or (a.role == b.role and a.role in ("tool", "function"))) and b.source
        for a, b in zip(original, new, strict=True))


def _changed_by_record(original: Sequence[Message], new: Sequence[Message]) -> dict[int, list[Message]]:
    out: dict[int, list[Message]] = {}
    for a, b in zip(original, new, strict=True):
        if a != b:
            out.setdefault(b.source[0], []).append(b)
    return out


# ---- Claude Code -------------------------------------------------------------------------------


def claude_lines(source: SourceFile, original: Transcript, new: Transcript, *, now: str, pre_tokens: int
                 ) -> tuple[list[bytes], Pruning]:
    """The file lines of a changed Claude Code transcript (layout chosen as the module says), and what
    they leave out of it (:mod:`tcompact.formats.claude_prune`)."""
    records = source.records
    pruning = prune(original.messages, new.messages)
    changed = _changed_by_record(original.messages, new.messages) if one_to_one(original.messages, new.messages) else {}
    if changed and all(_is_result_line(records[i].data) for i in changed):
        return _claude_in_place(records, new.messages, changed, pruning), pruning
    lines = [r.raw or b"" for r in records]
    if lines and not lines[-1].endswith(b"\n"):
        lines[-1] += b"\n"
    return [*lines, *compaction_lines(records, original, new.messages, now=now, pre_tokens=pre_tokens,
                                      pruning=pruning)], pruning


def _claude_in_place(records: Sequence[Record], messages: Sequence[Message], changed: Mapping[int, list[Message]],
                     pruning: Pruning) -> list[bytes]:
    """Every line where it was: the changed results rewritten, the replies from the first change on without
    their thinking, a line left empty out (the lines under it hang from its parent)."""
    results = _results_by_record(messages)
    thinking = {i for n, m in enumerate(messages) if n >= pruning.first and m.role == "assistant" for i in m.source}
    calls = {i for m in messages if any(c.id in pruning.calls for c in m.tool_calls) for i in m.source}
    docs: dict[int, dict[str, Any] | None] = {i: _claude_results(records[i].data, results[i]) for i in changed}
    for i in (thinking | calls) - set(changed):
        stripped = strip_line(records[i].data, thinking=i in thinking, calls=pruning.calls)
        if stripped != records[i].data:
            docs[i] = stripped
    gone = {records[i].data.get("uuid"): records[i].data.get("parentUuid") for i, d in docs.items() if d is None}
    lines = []
    for i, r in enumerate(records):
        if i in docs and docs[i] is None:
            continue  # left out: the lines under it hang from its parent
        d = docs.get(i, r.data)
        moved = reparent(d, gone) if d is not None and gone else None
        lines.append(dumps_line(moved if moved is not None else d) if moved is not None or i in docs
                     else r.raw or b"")
    return lines


def _is_result_line(data: Mapping[str, Any] | None) -> bool:
    content = ((data or {}).get("message") or {}).get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def _results_by_record(messages: Sequence[Message]) -> dict[int, list[Message]]:
    """The tool-result messages read from each line, in the order of the line's tool_result blocks."""
    out: dict[int, list[Message]] = {}
    for m in messages:
        if m.role == "tool" and m.source:
            out.setdefault(m.source[0], []).append(m)
    return out


def _claude_results(data: Mapping[str, Any], messages: Sequence[Message]) -> dict[str, Any]:
    """A user line with the content of its tool_result blocks replaced from ``messages`` (one per block, in
    order, as the reader made them: ids may be missing or repeated)."""
    d = copy.deepcopy(data)
    blocks = [b for b in d["message"]["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    for block, m in zip(blocks, messages, strict=False):
        block["content"] = claude_result_content(m)
    return d


# ---- Codex -------------------------------------------------------------------------------------


def codex_lines(source: SourceFile, original: Transcript, new: Transcript, *, now: str) -> list[bytes]:
    """The file lines of a changed Codex transcript (layout chosen as the module says)."""
    records = source.records
    changed = _changed_by_record(original.messages, new.messages) if one_to_one(original.messages, new.messages) else {}
    if changed and all(_is_output_line(records[i].data) and len(changed[i]) == 1 for i in changed):
        return [dumps_line(_codex_output(records[i].data, changed[i][0])) if i in changed else r.raw or b""
                for i, r in enumerate(records)]
    lines = [r.raw or b"" for r in records]
    if lines and not lines[-1].endswith(b"\n"):
        lines[-1] += b"\n"
    history = _codex_history(records, original, new.messages)
    summary = next((m.text for m in new.messages if m.meta.get("memory_block")), "")
    payload = {"message": f"{SUMMARY_PREFIX}\n{summary}" if summary else "", "replacement_history": history}
    lines.append(dumps_line({"timestamp": now, "type": "compacted", "payload": payload}))
    lines.append(dumps_line({"timestamp": now, "type": "event_msg", "payload": {"type": "context_compacted"}}))
    return lines


def _codex_history(records: Sequence[Record], original: Transcript, messages: Sequence[Message]) -> list[dict]:
    originals = {m.source: m for m in original.messages if m.source}
    kinds = codex_call_kinds(messages)
    items: list[dict[str, Any]] = []
    for m in messages:
        if m.meta.get("from") == "session_meta":
            continue  # the system prompt stays in session_meta
        payloads = [records[i].data["payload"] for i in m.source
                    if records[i].data and records[i].data.get("type") == "response_item"]
        if originals.get(m.source) == m and payloads and len(payloads) == len(m.source):
            items.extend(copy.deepcopy(payloads))
        else:
            items.extend(codex_items(m, kinds))
    return items


def _is_output_line(data: Mapping[str, Any] | None) -> bool:
    payload = (data or {}).get("payload") or {}
    return (data or {}).get("type") == "response_item" and payload.get("type") in (
        "function_call_output", "custom_tool_call_output")


def _codex_output(data: Mapping[str, Any], m: Message) -> dict[str, Any]:
    d = copy.deepcopy(data)
    d["payload"]["output"] = m.content if isinstance(m.content, str) else m.text
    return d
