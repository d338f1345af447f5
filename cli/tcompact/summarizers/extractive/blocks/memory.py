"""Earlier round-level memory blocks read back as parts (merged into one block summary by :mod:`.merge`).

A merge target (scopes ``recursive_merge``, ``existing_round_level_block``, ``mixed_context``;
openjiuwen-spec §8.1.4) holds memory blocks (§8.1.7: the marker, header lines, ``Summary:`` and
the summary) and possibly raw messages. Each memory block's summary is split back into its
sections — by the headings this summariser writes (``User Requirements:``, …) or the usual
variants a model writes (``## Final Result``, ``**Open Work**``, ``1. Requirements``); the parts
are then merged by :mod:`.merge`.
"""

from __future__ import annotations

import re

import orjson

from ....markers import ROUND_LEVEL_ACK, ROUND_LEVEL_MARKER
from ....model import Message
from ....rounds import is_internal_text
from .parts import (
    CONTINUES,
    TIER_COMMANDS,
    TIER_FAILED,
    TIER_FILES,
    TIER_FINAL,
    TIER_OPEN,
    TIER_WORK,
    Part,
    Req,
)
from .merge import FILE_LINE

MARKER, ACK = ROUND_LEVEL_MARKER, ROUND_LEVEL_ACK
_MAX_LINES = 4000  # summary lines read of one memory block
_MAX_LOOSE = 200  # lines kept of a summary without any known heading
_BULLET = re.compile(r"^(?:[-*+•]|\d{1,3}[.)])\s+")
_HEADING_MARKS = re.compile(r"^(?:#{1,6}\s*|\d{1,2}[.)]\s+)")
_SECTION_ALIASES = (  # (start of a heading, section); first match wins
    ("failed attempt", "failed"), ("do not retry", "failed"), ("failures", "failed"), ("dead end", "failed"),
    ("artifact", "artifacts"), ("files", "artifacts"), ("relevant files", "artifacts"), ("commands", "artifacts"),
    ("open work", "open"), ("ongoing", "open"), ("unfinished", "open"), ("pending", "open"), ("next step", "open"),
    ("current state", "open"), ("resume", "open"), ("in progress", "open"), ("remaining", "open"),
    ("final result", "final"), ("final answer", "final"), ("final outcome", "final"), ("result", "final"),
    ("outcome", "final"), ("conclusion", "final"),
    ("user requirement", "requirements"), ("requirement", "requirements"), ("user request", "requirements"),
    ("original request", "requirements"), ("user message", "requirements"), ("constraint", "requirements"),
    ("acceptance criteria", "requirements"), ("preference", "requirements"), ("task", "requirements"),
    ("goal", "requirements"),
    ("work done", "work"), ("completed work", "work"), ("work", "work"), ("progress", "work"), ("history", "work"),
    ("key facts", "work"), ("facts", "work"), ("decision", "work"), ("finding", "work"), ("summary", "work"),
    ("context", "work"), ("notes", "work"),
)
_EMPTY_ITEM = re.compile(r"^\(?(?:none|omitted|n/a|\+\d+ omitted for budget)\)?\.?$", re.IGNORECASE)
_SERIALIZED = re.compile(r"^\[(\d+)\] role=(\w+)(.*)$")


def is_memory(m: Message) -> bool:
    """A round-level memory block: a user message starting with the marker (or with its header lines)."""
    if m.role != "user":
        return False
    head = m.text.lstrip()[:600]
    return head.startswith(MARKER) or "\nprocessor: RoundLevelCompressor\n" in head


def is_ack(m: Message) -> bool:
    """The assistant acknowledgement that may follow a memory block."""
    return m.role == "assistant" and not m.tool_calls and m.text.strip() == ACK


# -- reading a memory block ---------------------------------------------------------------------


def memory_parts(text: str) -> list[Part]:
    """The parts a memory block holds: one, or one per entry when its summary is a raw JSON answer."""
    scope, summary = _split_header(text)
    parts = _json_parts(summary)
    return parts if parts else [_parse_summary(summary, scope)]


def _split_header(text: str) -> tuple[str, str]:
    """(scope, summary) of a memory block text."""
    head_end = text.find("\nSummary:\n", 0, 4000)
    if head_end < 0:
        lines = text.lstrip().split("\n", 1)
        body = lines[1] if len(lines) > 1 and lines[0].strip().startswith(MARKER) else text
        return "", body
    scope = re.search(r"(?m)^scope:\s*(\S+)", text[:head_end])
    return (scope.group(1) if scope else ""), text[head_end + len("\nSummary:\n"):]


def _json_parts(summary: str) -> list[Part]:
    """Parts of a summary that is itself a ``{"blocks": [...]}`` answer (the pipeline's raw fallback)."""
    text = summary.strip()
    if text.startswith("```"):
        text = re.sub(r"^```(?:json)?\s*|\s*```$", "", text)
    if not text.startswith("{"):
        return []
    try:
        payload = orjson.loads(text)
    except orjson.JSONDecodeError:
        return []
    blocks = payload.get("blocks") if isinstance(payload, dict) else None
    if not isinstance(blocks, list):
        return []
    return [_parse_summary(b["summary"], "") for b in blocks
            if isinstance(b, dict) and isinstance(b.get("summary"), str) and b["summary"].strip()]


def _heading(line: str) -> tuple[str, str] | None:
    """(section, inline text) when a line is a section heading (plain, markdown, bold or numbered)."""
    if line[:1] in (" ", "\t") or line.lstrip()[:2] in ("- ", "* ", "+ ", "• "):
        return None
    text = _HEADING_MARKS.sub("", line.strip()).replace("**", "").replace("__", "").strip()
    title, _, inline = text.partition(":")
    title = title.strip(" *_#").lower()
    if not title or len(title.split()) > 6:
        return None
    for start, section in _SECTION_ALIASES:
        if title.startswith(start):
            return section, inline.strip(" *_")
    return None


def _items(summary: str) -> tuple[list[tuple[str, str]], bool]:
    """(section, item text) of a summary's items, and whether it had any known heading."""
    items: list[tuple[str, str]] = []
    section = "work"
    current: list[str] | None = None
    headings = False

    def flush() -> None:
        nonlocal current
        if current is not None:
            text = "\n".join(current).strip()
            if text and not _EMPTY_ITEM.match(text):
                items.append((section, text))
        current = None

    for raw in summary.splitlines()[:_MAX_LINES]:
        line = raw.rstrip()
        if current is not None and raw[:1] in (" ", "\t"):
            current.append(line.strip())  # a continuation line (or a blank line inside a quoted request)
            continue
        if not line.strip():
            flush()
            continue
        heading = _heading(line)
        if heading is not None:
            flush()
            headings = True
            section = heading[0]
            if heading[1]:
                current = [heading[1]]
            continue
        flush()
        bullet = _BULLET.match(line.strip())
        current = [line.strip()[bullet.end():] if bullet else line.strip()]
    flush()
    return items, headings


def _parse_summary(summary: str, scope: str) -> Part:
    """A memory block's summary as a part, section by section."""
    items, headings = _items(summary)
    if not headings:
        return _loose_part(summary, scope)
    part = Part()
    open_lines = 0
    for section, text in items:
        if section == "requirements":
            part.requirements.append(Req(text, quoted=False, continued=text.startswith(CONTINUES)))
        elif section == "final":
            part.final.append((text, TIER_FINAL))
        elif section == "open":
            part.open.append((text, TIER_OPEN + (0.0 if open_lines < 4 else 0.3)))
            open_lines += 1
        elif section == "failed":
            part.failed.append((text, TIER_FAILED))
        elif section == "artifacts":
            part.artifacts.append((text, TIER_FILES if FILE_LINE.match(text) else TIER_COMMANDS))
        else:
            part.work.append((text, TIER_WORK))
    part.ongoing = bool(part.open) or scope == "ongoing_react"
    return part


def _loose_part(summary: str, scope: str) -> Part:
    """A summary without known headings: serialised user messages are requirements, the rest is history."""
    part = Part(ongoing=scope == "ongoing_react")
    entries: list[list[str]] = []
    for line in summary.splitlines()[:_MAX_LINES]:
        match = _SERIALIZED.match(line)
        if match:
            content = match.group(3).split("content=", 1)
            entries.append([match.group(2), content[1] if len(content) > 1 else ""])
        elif entries:
            entries[-1].append(line)
        elif line.strip() and len(part.work) < _MAX_LOOSE:
            part.work.append((line.strip(), TIER_WORK))
    for role, *lines in entries:
        text = "\n".join(lines).strip()
        if role == "user" and text and not is_internal_text(text) and not text.startswith(MARKER):
            part.requirements.append(Req(text))
        elif role == "assistant" and text and len(part.work) < _MAX_LOOSE:
            part.work.append((text, TIER_WORK))
    return part
