"""What each file of a session says now, as far as the transcript shows it.

An agent's next step usually edits a file it read and changed a moment ago, and an ``Edit`` needs
the file's exact text. The transcript holds that text in pieces: a read shows the file (or part of
it), a write gives its whole new text, an edit replaces one string by another, a patch changes
hunks. :func:`file_views` replays them in order — reads (the read tools, and shell ``cat``/``sed -n``
of one file), writes, ``Edit``/``MultiEdit``/editor ``str_replace``/``create``, Codex
``apply_patch`` — so each path has its latest known text, or none when an edit could not be
applied to what was known (then the text would be stale, and is dropped). Failed calls change
nothing. Line numbers a read tool puts before each line and the notes a harness appends to a read
(Claude Code's ``<system-reminder>``) are not part of the file and are removed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..model import Message, ToolCall, index_tool_calls
from ..summarizers.extractive.tools import call_args, classify
from ..tool_names import kind_of
from .patches import apply_patch

__all__ = ["FileView", "file_views", "clean_read", "strip_notes"]

_HARNESS_NOTE = re.compile(r"\s*<system-reminder>.*?</system-reminder>\s*", re.DOTALL)
_NUMBERED = re.compile(r"^ *\d+(?:→|\t)", re.MULTILINE)
_SWE_NUMBERED = re.compile(r"^\d+:", re.MULTILINE)
_SWE_WINDOW = re.compile(r"\A\[File: [^\]\n]*\]\n|^\(\d+ more lines (?:above|below)\)\n?", re.MULTILINE)
_CODEX_HEADER = re.compile(r"\A(?:Chunk ID: .*\n)?(?:Wall time: .*\n)?(?:Process exited with code \d+\n)?"
                           r"(?:Original token count: \d+\n)?Output:\n")
_SWE_FOOTER = re.compile(r"\n\(Open file: [^)]*\)\n\(Current directory: [^)]*\)\n?(?:bash-\$)?\s*\Z")
_TOOL_ERROR = re.compile(r"^<tool_use_error>|^Error: ", re.IGNORECASE)
_CHANGES = ("created", "written", "edited", "deleted", "moved")
_SKIP_PARTS = ("/.git/", "/node_modules/", "/__pycache__/")


@dataclass(slots=True)
class FileView:
    """One path as the transcript leaves it: its latest known text (None: unknown), whether that text is
    the whole file, its last operation and where the text was last seen whole (message index)."""

    path: str
    text: str | None = None
    whole: bool = False
    state: str = "read"  # read, created, written, edited, deleted
    read_at: int | None = None
    changed_at: int | None = None
    seen_at: int = 0  # the message that shows the text (a read's result, or the call that wrote it)
    reads: int = 0
    changes: int = 0
    last: int = 0
    new_texts: list[tuple[int, str]] = field(default_factory=list)  # (index, new text) of each edit

    @property
    def changed(self) -> bool:
        """Whether the session created, wrote or edited it."""
        return self.changed_at is not None


def strip_notes(text: str) -> str:
    """The text without the notes a harness appends for the model of that moment (``<system-reminder>``)."""
    return _HARNESS_NOTE.sub("\n", text) if "<system-reminder>" in text else text


def clean_read(text: str) -> str:
    """A read tool's output as the file's text: harness notes, a Codex output header and an SWE-agent
    footer removed, and the line numbers a read tool adds when every line has one."""
    text = strip_notes(text).rstrip("\n")
    text = _CODEX_HEADER.sub("", text, count=1)
    text = _SWE_FOOTER.sub("", text).replace("\r\n", "\n")
    numbered = _NUMBERED
    if text.startswith("[File: "):  # SWE-agent's window: "[File: p (N lines total)]", "12:line", "(k more lines …)"
        text, numbered = _SWE_WINDOW.sub("", text).rstrip("\n"), _SWE_NUMBERED
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if lines and len(numbered.findall(text)) >= len(lines):
        text = numbered.sub("", text)
    return text


class _Views(dict[str, FileView]):
    """The views being replayed, and the paths whose text is a read tool's output not cleaned yet (a read is
    cleaned only when an edit needs its text or it is the last one: most reads are read again later)."""

    def __init__(self) -> None:
        super().__init__()
        self.raw: set[str] = set()

    def settled(self, view: FileView) -> str | None:
        """The view's text, cleaned (:func:`clean_read`) if it is a read's output."""
        if view.path in self.raw:
            self.raw.discard(view.path)
            view.text = clean_read(view.text or "")
        return view.text

    def set_text(self, view: FileView, text: str | None, *, raw: bool = False) -> None:
        """Give the view a text: a read tool's output as it is (``raw``), or a text already clean."""
        view.text = text
        (self.raw.add if raw else self.raw.discard)(view.path)


def file_views(messages: Sequence[Message]) -> dict[str, FileView]:
    """Every file the calls of ``messages`` read or changed, with its latest known text."""
    views = _Views()
    results = {}
    for link in index_tool_calls(messages).links:
        results.setdefault((link.call_at, link.call.id), link.result_at)  # ids are reused (SWE-agent replays)
    open_file: str | None = None
    for i, m in enumerate(messages):
        for call in m.tool_calls:
            at = results.get((i, call.id))
            result = messages[at] if at is not None else None
            if result is not None and (result.is_error or _TOOL_ERROR.match(result.text[:200])):
                continue
            action = classify(i, call, round_=0, open_file=open_file)
            if action is None:
                continue
            if action.opens:
                open_file = action.opens
            _apply(views, i, call, action, result_at=at, result=result)
    kept = {p: v for p, v in views.items() if not any(part in p for part in _SKIP_PARTS)}
    for view in kept.values():
        views.settled(view)
    return kept


def _view(views: _Views, path: str, at: int) -> FileView:
    view = views.get(path)
    if view is None:
        view = views[path] = FileView(path=path)
    view.last = at
    return view


def _apply(views: _Views, i: int, call: ToolCall, action: Any, *, result_at: int | None,
           result: Message | None) -> None:
    """One successful call's effect on the files it touches."""
    args, raw = call_args(call)
    ops = action.paths
    patch = _patch(args, raw)
    if patch is not None:
        _patched(views, i, patch, ops)
        return
    if action.kind == "command":
        reads = [p for p, op in ops if op == "read"]
        if len(ops) == 1 and len(reads) == 1 and action.quiet and result is not None and result_at is not None:
            _read(views, reads[0], result.text, at=result_at, whole=not action.partial)
        for path, op in ops:
            if op in _CHANGES:
                _lost(views, path, i, op)
        return
    for path, op in ops:
        if op == "read" and result is not None and result_at is not None:
            _read(views, path, result.text, at=result_at, whole=not action.partial)
        elif op in ("created", "written", "edited"):
            _changed(views, path, i, args, op, whole_write=kind_of(call.name) == "write" or op == "created")


def _read(views: _Views, path: str, text: str, *, at: int, whole: bool) -> None:
    view = _view(views, path, at)
    view.reads += 1
    view.read_at = at
    if whole or view.text is None or not view.whole:  # the output as it is: cleaned when needed
        view.whole, view.seen_at = whole, at
        views.set_text(view, text, raw=True)


def _lost(views: _Views, path: str, at: int, op: str) -> None:
    """A change whose new text the transcript does not show (a shell redirect, rm)."""
    view = _view(views, path, at)
    view.changes += 1
    view.changed_at = at
    view.state = op
    view.whole = False
    views.set_text(view, None)


def _changed(views: _Views, path: str, at: int, args: Mapping[str, Any], op: str, *,
             whole_write: bool) -> None:
    view = _view(views, path, at)
    view.changes += 1
    view.changed_at = at
    content = next((args[k] for k in ("content", "file_text") if isinstance(args.get(k), str)), None)
    if whole_write and content is not None:
        view.state = "created" if view.text is None and view.changed_at == at and view.changes == 1 else "written"
        view.whole, view.seen_at = True, at
        views.set_text(view, content)
        view.new_texts.append((at, content))
        return
    view.state = "edited"
    edits = _edits(args)
    view.new_texts += [(at, new) for _, new, _ in edits if new]
    text = views.settled(view)
    for old, new, every in edits:
        if text is None or not old or old not in text:
            text = None
            break
        text = text.replace(old, new) if every else text.replace(old, new, 1)
    views.set_text(view, text)
    if text is not None:
        view.seen_at = at


def _edits(args: Mapping[str, Any]) -> list[tuple[str, str, bool]]:
    """(old, new, every occurrence) of an edit call's replacements (Edit, MultiEdit, editor str_replace)."""
    pairs = args.get("edits") if isinstance(args.get("edits"), list) else [args]
    out = []
    for e in pairs:
        if not isinstance(e, Mapping):
            continue
        old = e.get("old_string", e.get("old_str", e.get("search")))
        new = e.get("new_string", e.get("new_str", e.get("replace", e.get("text"))))
        if isinstance(new, str):
            out.append((old if isinstance(old, str) else "", new, bool(e.get("replace_all"))))
    return out


def _patch(args: Mapping[str, Any], raw: str) -> str | None:
    """The ``*** Begin Patch`` text of an apply_patch call (a custom tool's raw input, or an argument)."""
    text = next((args[k] for k in ("patch", "input", "diff") if isinstance(args.get(k), str)), None if args else raw)
    return text if text is not None and "*** Begin Patch" in text[:200] else None


def _patched(views: _Views, at: int, patch: str, ops: Sequence[tuple[str, str]]) -> None:
    """An apply_patch call: each file it adds, updates or deletes."""
    for path, op in ops:
        view = _view(views, path, at)
        view.changes += 1
        view.changed_at = at
        new = apply_patch(patch, path, views.settled(view) if view.whole else None)
        view.state = "deleted" if op == "deleted" else ("created" if op == "created" else "edited")
        views.set_text(view, None if op == "deleted" else new)
        view.whole = view.text is not None
        if new is not None:
            view.seen_at = at
