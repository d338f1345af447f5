"""Which files of a session are being worked on, by relevance to the open task, within a budget.

Recency alone picks the wrong file: the last read can be a persona CSV a workflow loaded, while
the spec the whole session wrote is what the next step edits. So the files the session changed
come first (the newest change first), with their text as it now is; then the files it read and
named again afterwards (the assistant's text, reasoning or calls, or the user); then other source
files read, newest first. Data files (CSV, JSON lines, logs…) come only when changed or named by
the user. Each entry is whole or cut in its own middle, never shorter than a useful excerpt, and
never two files under one header; at most five.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass

from ..model import Message
from .files import FileView, file_views

__all__ = ["WorkingFile", "pick_files", "MIN_FILE_CHARS", "MAX_FILES"]

MIN_FILE_CHARS = 1500  # an entry cut shorter than this is left out instead (a snippet is no use)
MAX_FILES = 5
_CUT = "\n[… {n:,} characters in the middle of this file left out by tcompact; read the file for them …]\n"
_DATA = re.compile(r"(?i)\.(?:jsonl?|ndjson|csv|tsv|log|lock|vtt|srt|svg|xml|map|bin|out|txt|min\.js)$")
_FILE_NAME = re.compile(r"[\w.-]+\.[A-Za-z]\w{0,9}\b")
_DOT_LETTER = re.compile(r"\.[A-Za-z]")  # in every file name
_NAME_RUN = re.compile(r"[\w.-]*")  # a file name is part of such a run


@dataclass(frozen=True, slots=True)
class WorkingFile:
    """A file of the working set: its path, its state (read, created, written, edited), its text (cut in the
    middle when needed) and whether that text is the whole file."""

    path: str
    state: str
    text: str
    whole: bool
    lines: int = 0  # of the text before any cut

    def render(self) -> str:
        """The file's entry as re-injected: a header saying what the text is, then the text."""
        if self.state == "read":
            lines = (self.lines or self.text.count("\n") + 1) if self.text else "unknown"
            note = "" if self.whole else "\nNote: only part of this file was available."
            return f"Recently read file: {self.path}\nLines returned: {lines}{note}\n\n{self.text}"
        if self.state in ("created", "written"):
            return (f"Recently written file: {self.path} (its whole text as last written, with any later edits "
                    f"applied)\n\n{self.text}")
        part = "" if self.whole else " (the part that was read)"
        return f"Recently edited file: {self.path}{part} (its text as read, with every later edit applied)\n\n{self.text}"


def pick_files(messages: Sequence[Message], budget: int, *, hidden: Container[int],
               size: Callable[[str], int] = len, max_each: int | None = None) -> list[WorkingFile]:
    """The most relevant files whose text is at a ``hidden`` index, whole entry by whole entry within ``budget``
    (measured by ``size``: characters by default, or a token count), each at most ``max_each``; in session order
    of relevance, the most relevant last."""
    views = [v for v in file_views(messages).values() if v.text is not None and v.seen_at in hidden]
    named = _named(messages)
    users = "\n".join(m.text for m in messages if m.role == "user")
    ranked = sorted((v for v in views if _eligible(v, users)), key=lambda v: _relevance(v, named), reverse=True)
    out: list[WorkingFile] = []
    left = budget
    for view in ranked:
        entry = _entry(view, min(left, max_each or left), size)
        if entry is None:
            break
        out.append(entry)
        left -= size(entry.render()) + 2
        if len(out) >= MAX_FILES:
            break
    return out[::-1]


def _eligible(view: FileView, users: str) -> bool:
    """Data files only when changed or named by the user."""
    return view.changed or not _DATA.search(view.path) or view.path.rsplit("/", 1)[-1] in users


def _named(messages: Sequence[Message]) -> dict[str, int]:
    """Per file name: the last message where the assistant (text, reasoning, calls) or the user named it."""
    out: dict[str, int] = {}
    runs: dict[str, list[str]] = {}  # the file names of each run of name characters, found once
    for i, m in enumerate(messages):
        if m.role in ("assistant", "user"):
            text = m.text + " ".join(r.text for r in m.reasoning) + " ".join(c.arguments for c in m.tool_calls)
            for name in _names_in(text[:100_000], runs):
                out[name] = i
    return out


def _names_in(text: str, runs: dict[str, list[str]]) -> set[str]:
    """The file names a text holds: those of each run of ``[\\w.-]`` characters holding a dot before a letter.

    A file name is such a run or part of one, so only those runs are looked at, each distinct one once
    (issue 26: a session's 7.6 MB of messages hold 43,000 such dots in 305 distinct runs), and the regex's
    backtracking at every position of every other word is spared."""
    out: set[str] = set()
    end, backwards = -1, ""
    for dot in _DOT_LETTER.finditer(text):
        at = dot.start()
        if at < end:  # in the run just read
            continue
        backwards = backwards or text[::-1]
        back = len(text) - at  # the characters before the dot, read backwards, start here
        start = at - (_NAME_RUN.match(backwards, back).end() - back)
        end = _NAME_RUN.match(text, at).end()
        run = text[start:end]
        names = runs.get(run)
        if names is None:
            names = runs[run] = _FILE_NAME.findall(run)
        out.update(names)
    return out


def _relevance(view: FileView, named: dict[str, int]) -> tuple:
    """Changed files first (newest change first), then files read and named again later, then the rest."""
    if view.changed:
        return 2, view.changed_at
    later = named.get(view.path.rsplit("/", 1)[-1], -1)
    return (1, later) if view.read_at is not None and later > view.read_at else (0, view.read_at or 0)


def _entry(view: FileView, room: int, size: Callable[[str], int]) -> WorkingFile | None:
    """The file's entry cut in its middle to ``room`` (None when less than a useful excerpt fits)."""
    text = view.text or ""
    state = view.state if view.changed_at is not None and view.changed_at > (view.read_at or -1) else "read"
    whole = WorkingFile(view.path, state, text, view.whole, text.count("\n") + 1)
    total = size(whole.render())
    if total <= room:
        return whole
    keep = int(len(text) * max(room - size(_CUT) - (total - size(text)), 0) / max(size(text), 1))
    if keep < min(len(text), MIN_FILE_CHARS):
        return None
    head = keep * 2 // 3
    cut = _CUT.format(n=len(text) - keep)
    return WorkingFile(view.path, state, text[:head].rstrip() + cut + text[len(text) - (keep - head):].lstrip(),
                       view.whole, whole.lines)
