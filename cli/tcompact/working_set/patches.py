"""Codex ``apply_patch`` inputs applied to a file's known text, so the file's new text is known too.

The format: ``*** Begin Patch``, then per file ``*** Add File: P`` (every line ``+``),
``*** Delete File: P`` or ``*** Update File: P`` (optionally ``*** Move to: Q``) followed by hunks
that start at ``@@`` and hold context (`` ``), removed (``-``) and added (``+``) lines, then
``*** End Patch``. A hunk is applied where its context and removed lines stand, after the previous
hunk; when one does not stand in the text the result is unknown (None), never a guess.
"""

from __future__ import annotations

import re

__all__ = ["apply_patch"]

_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$")


def _sections(patch: str) -> dict[str, tuple[str, list[str]]]:
    """Per path: its verb and the lines of its section."""
    out: dict[str, tuple[str, list[str]]] = {}
    current: list[str] | None = None
    for line in patch.splitlines():
        match = _FILE.match(line)
        if match:
            current = []
            out[match.group(2)] = (match.group(1), current)
        elif line.startswith(("*** End Patch", "*** Begin Patch")):
            current = None
        elif current is not None and not line.startswith("*** Move to:"):
            current.append(line)
    return out


def _hunks(lines: list[str]) -> list[tuple[list[str], list[str]]]:
    """(old lines, new lines) of each hunk."""
    hunks: list[tuple[list[str], list[str]]] = []
    old: list[str] = []
    new: list[str] = []
    for line in lines:
        if line.startswith("@@"):
            if old or new:
                hunks.append((old, new))
            old, new = [], []
        elif line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
        elif line != "*** End of File":
            text = line[1:] if line.startswith(" ") else line
            old.append(text)
            new.append(text)
    if old or new:
        hunks.append((old, new))
    return hunks


def apply_patch(patch: str, path: str, text: str | None) -> str | None:
    """The text of ``path`` after the patch (its whole text for an added file), or None when unknown."""
    sections = _sections(patch)
    found = sections.get(path) or next((v for k, v in sections.items() if path.endswith("/" + k)
                                        or k.endswith("/" + path)), None)
    if found is None:
        return None
    verb, lines = found
    if verb == "Add":
        return "\n".join(line[1:] for line in lines if line.startswith("+")) + "\n"
    if verb == "Delete" or text is None:
        return None
    pos = 0
    for old, new in _hunks(lines):
        block = "\n".join(old)
        at = text.find(block, pos) if block else pos
        if at < 0:
            return None
        text = text[:at] + "\n".join(new) + text[at + len(block):]
        pos = at + len("\n".join(new))
    return text
