"""The working set of a session: the files being worked on, and the exact names its tools returned.

After a compaction an agent goes on with what it was doing, and what it then needs is seldom the
story of the session — a summary tells that — but its working set: the text of the file it just
changed and is about to change again, the files it read for that, and the ids, paths and names a
listing or a search gave it. :func:`working_set` picks them from a transcript within a token
budget, for the working-set compaction (``compressors/working_set.py``) and for the hooks that hand
a session over after the agent's own compaction:

* **files** by relevance to the open task — the files the session changed, newest change first,
  with their text as it is now (the last read with every later edit replayed, :mod:`.files`);
  then the files it read and named again afterwards; then other source files read. Data files
  (CSV, JSON lines, logs) come only when the user named them. Each file is cut in its own middle
  at most, none shorter than a useful excerpt;
* **index** — the terms of the hidden tool outputs, ranked and grouped by output (:mod:`.index`).

``WorkingSet.text`` is the block a compaction re-injects; ``files`` and ``index`` are the data.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass

from ..model import Message
from ..tokens import TokenCounter
from .files import FileView, clean_read, file_views
from .index import IndexEntry, build_index, render_index, terms

__all__ = ["WorkingSet", "WorkingFile", "working_set", "file_views", "FileView", "clean_read", "terms",
           "IndexEntry", "FILES_SHARE"]

#: The share of the budget the files may take (the index takes the rest, and what the files leave).
FILES_SHARE = 0.6
_MIN_FILE_CHARS = 1200
_MAX_FILES = 5
_CUT = "\n[… {n:,} characters in the middle of this file left out by tcompact; read the file for them …]\n"
_DATA = re.compile(r"(?i)\.(?:jsonl?|ndjson|csv|tsv|log|lock|vtt|srt|svg|xml|map|bin|out|txt|min\.js)$")
_WHY = {"created": "created in this session", "written": "written in this session",
        "edited": "edited in this session; its text with every edit applied"}


@dataclass(frozen=True, slots=True)
class WorkingFile:
    """A file of the working set: its path, why it is there, its text (cut in the middle when needed)."""

    path: str
    why: str
    text: str
    whole: bool

    def render(self) -> str:
        """The file's entry as re-injected."""
        note = "" if self.whole else " (part of it, as read)"
        return f"File: {self.path} — {self.why}{note}\n```\n{self.text}\n```"


@dataclass(frozen=True, slots=True)
class WorkingSet:
    """The files and the index of a working set, and the tokens its text takes."""

    files: tuple[WorkingFile, ...]
    index: tuple[IndexEntry, ...]
    tokens: int

    @property
    def text(self) -> str:
        """The working set as one block of text ('' when it is empty)."""
        parts = [f.render() for f in self.files]
        if self.index:
            parts.append(render_index(self.index))
        return "\n\n".join(parts)


def working_set(messages: Sequence[Message], counter: TokenCounter, budget: int, *,
                hidden: Container[int] | None = None, shown: str = "",
                locator: Callable[[Message], str] | None = None) -> WorkingSet:
    """The working set of ``messages`` within ``budget`` tokens.

    ``hidden``: the indices whose content the reader no longer sees (default: all); only their files
    and outputs are candidates. ``shown``: text the reader does see (a summary, kept messages) —
    terms standing in it are not repeated. ``locator`` names where a message's original is."""
    hidden = range(len(messages)) if hidden is None else hidden
    files = pick_files(messages, counter, int(budget * FILES_SHARE), hidden=hidden)
    used = sum(counter.count(f.render()) for f in files)
    seen = shown + "\n" + "\n".join(f.text for f in files)
    index = build_index(messages, counter, budget - used, hidden=hidden, shown=seen, locator=locator)
    return WorkingSet(tuple(files), tuple(index), used + (counter.count(render_index(index)) if index else 0))


def pick_files(messages: Sequence[Message], counter: TokenCounter, budget: int, *,
               hidden: Container[int]) -> list[WorkingFile]:
    """The most relevant files whose text is hidden, whole entry by whole entry within ``budget`` tokens."""
    views = [v for v in file_views(messages).values() if v.text and v.text.strip() and v.seen_at in hidden]
    named = _named(messages)
    users = "\n".join(m.text for m in messages if m.role == "user")
    ranked = sorted((v for v in views if _eligible(v, users)), key=lambda v: _relevance(v, named), reverse=True)
    out: list[WorkingFile] = []
    left = budget
    for view in ranked[: _MAX_FILES * 2]:
        entry = _entry(view, counter, left)
        if entry is None:
            continue
        out.append(entry)
        left -= counter.count(entry.render())
        if len(out) >= _MAX_FILES or left < 200:
            break
    return out


def _eligible(view: FileView, users: str) -> bool:
    """Data files only when changed or named by the user."""
    return view.changed or not _DATA.search(view.path) or view.path.rsplit("/", 1)[-1] in users


def _named(messages: Sequence[Message]) -> dict[str, int]:
    """Per file name: the last message where the assistant (text, reasoning, calls) or the user named it."""
    out: dict[str, int] = {}
    for i, m in enumerate(messages):
        if m.role in ("assistant", "user"):
            text = m.text + " ".join(r.text for r in m.reasoning) + " ".join(c.arguments for c in m.tool_calls)
            for name in set(re.findall(r"[\w.-]+\.[A-Za-z]\w{0,9}\b", text[:100_000])):
                out[name] = i
    return out


def _relevance(view: FileView, named: dict[str, int]) -> tuple:
    """Changed files first (newest change first), then files read and named again later, then the rest."""
    if view.changed:
        return 2, view.changed_at
    base = view.path.rsplit("/", 1)[-1]
    later = named.get(base, -1)
    return (1, later) if view.read_at is not None and later > view.read_at else (0, view.read_at or 0)


def _entry(view: FileView, counter: TokenCounter, room: int) -> WorkingFile | None:
    """The file's entry cut in its middle to ``room`` tokens (None when less than a useful excerpt fits)."""
    why = _WHY.get(view.state, "read in this session")
    whole = WorkingFile(view.path, why, view.text or "", view.whole)
    total = counter.count(whole.render())
    if total <= room:
        return whole
    text = view.text or ""
    keep = int(len(text) * max(room - 40, 0) / max(total, 1))
    if keep < min(len(text), _MIN_FILE_CHARS):
        return None
    head = keep * 2 // 3
    cut = _CUT.format(n=len(text) - keep)
    return WorkingFile(view.path, why, text[:head].rstrip() + cut + text[len(text) - (keep - head):].lstrip(),
                       view.whole)
