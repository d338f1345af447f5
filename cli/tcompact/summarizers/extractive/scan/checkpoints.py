"""Earlier checkpoints inside the body: which of their lines are carried into the new snapshot.

A body being compacted again may hold the summary of an earlier compaction; its requests, failed
attempts, pending work and facts would be lost unless they are carried over, by category.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ....model import Message
from ....markers import CONTINUATION, is_checkpoint_text
from ....rounds import INJECTED_PREFIXES
from ..text import cut

_CHECKPOINT_HEADING = re.compile(r"^\s*(?:#+\s*)?(\d{1,2})\.\s+(.{3,90}?)\s*:?\s*$")
_CARRY_MAP = (  # heading keywords -> category of a carried line, first match wins
    ("resume", None), ("do not retry", "failed"), ("failed attempt", "failed"), ("artifact trail", "files"),
    ("user message", "requests"), ("user request", "requests"), ("primary request", "requests"),
    ("active task", "requests"), ("decision", "facts"),  # before "constraint": "Decisions, Constraints, …" is the assistant's
    ("requirement", "constraints"), ("constraint", "constraints"),
    ("preference", "constraints"), ("pending", "pending"), ("next", "pending"), ("open work", "pending"),
    ("file", "files"), ("error", "facts"), ("evidence", "facts"), ("fact", "facts"), ("decision", "facts"),
    ("finding", "facts"), ("problem", "facts"),
)
#: Lines of an earlier checkpoint that are not carried: empty markers, the old resume line, budget
#: markers and notes this summariser derives again from the new state.
_STALE_LINE = re.compile(
    r"(?i)\(?(?:none\b|n/a\b|no (?:pending|open|further)|wait for|\+\d+ omitted for budget)|`?last request:|status:|"
    r"it replies to the assistant|\d+ failed attempt\(s\) were never fixed|latest test run|not verified:|"
    r"no test run recorded|\(\+\d+ more left out for the budget\)|"
    r"edited after the last test run|the latest request (?:has no|is not|was answered)|latest request\b(?!: “)|"
    r"the user's messages are kept verbatim|the latest request is the last user message")
_ANSWERED = re.compile(r"(?m)^(?:- )?Status: answered\.$|; answered: yes;")


def says_answered(text: str) -> bool:
    """Whether an earlier checkpoint records its latest request as answered."""
    return _ANSWERED.search(text[-20000:]) is not None or _ANSWERED.search(text[:20000]) is not None


def is_checkpoint(message: Message) -> bool:
    """Whether an injected message holds an earlier checkpoint (a memory block, a compact summary)."""
    text = message.text
    return is_checkpoint_text(text) or (message.internal and "<state_snapshot>" in text[:20000])


def carry(text: str) -> list[tuple[str, str]]:
    """The still-useful lines of an earlier checkpoint, each with the category it belongs to.

    Numbered headings decide the category (``_CARRY_MAP``); the old resume line, "(none)" lines,
    budget markers and lines this summariser derives afresh (verification notes) are dropped, and
    so are an old active-task section's lines when the block also lists the user's requests.
    """
    found, headings = _checkpoint_lines(_snapshot_body(text))
    if not headings:
        return [("history", line) for _, _, line in found[:60]]
    return _deduplicated(found)


def _snapshot_body(text: str) -> str:
    """The inside of a ``<state_snapshot>`` block, else the whole text."""
    match = re.search(r"<state_snapshot>(.*?)(?:</state_snapshot>|$)", text, re.DOTALL | re.IGNORECASE)
    return match.group(1) if match else text


def _checkpoint_lines(body: str) -> tuple[list[tuple[str, str, str]], int]:
    """(category, heading, line) of every carried line, and how many numbered headings there were."""
    found: list[tuple[str, str, str]] = []
    category: str | None = "history"
    title = ""
    headings = 0
    for raw in body.splitlines()[:3000]:
        line = raw.strip()
        heading = _CHECKPOINT_HEADING.match(line)
        if heading and len(heading.group(2).split()) <= 12 and not heading.group(2).endswith("."):
            title = heading.group(2).lower()
            category = _category(title)
            headings += 1
            continue
        kept = _carried_line(line, title) if category is not None else None
        if kept is None:
            continue
        found.append((category, title, kept))
        if len(found) >= 600:
            break
    return found, headings


def _category(title: str) -> str | None:
    """The category a checkpoint heading files its lines under (None: not carried)."""
    for word, target in _CARRY_MAP:
        if word in title:
            return target
    return "history"


def _carried_line(line: str, title: str) -> str | None:
    """A checkpoint line as carried (bullet dropped, cut), or None when it is stale or empty."""
    bullet = re.match(r"^(?:[-*•]|\d+[.)])\s+", line)
    if bullet:
        line = line[bullet.end():]
    line = line.removeprefix("[earlier] ")  # carried twice: still one mark
    if (not line or _STALE_LINE.match(line)
            or line.startswith(("<", "Summary:", "Analysis:", *INJECTED_PREFIXES))
            or ("relevant files" in title and not bullet)):  # a directory tree: its structure cannot be carried
        return None
    return cut(line, 300)


def _deduplicated(found: Sequence[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """(category, line) pairs without repeats; an old active task is dropped when user requests are listed."""
    listed = any(("user message" in t or "user request" in t) for _, t, _ in found)
    out: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for category, title, line in found:
        if listed and ("active task" in title or "primary request" in title):
            continue
        if (category, line) not in seen:
            seen.add((category, line))
            out.append((category, line))
    return out


_MEMORY_TAG = re.compile(r"(?m)^\s*</?memory_block\w*>\s*$\n?|\A\s*\[[A-Z_]+MEMORY_BLOCK\]\s*$\n?")
_WRAPPED = re.compile(r"<summary>\n?(.*?)\n?</summary>", re.DOTALL)
_SNAPSHOT = re.compile(r"<state_snapshot>\n?(.*?)\n?(?:</state_snapshot>|\Z)", re.DOTALL)
_CLAUDE_SUMMARY = re.compile(r"(?m)^Summary:\s*$")
_TRAILER = re.compile(r"\n*(?:Recent messages are preserved verbatim\.|Please continue the conversation from where we "
                      r"left it off.*)\s*\Z", re.DOTALL)
_SUPERSEDED_SECTIONS = ("resume", "current work", "next step", "immediate resume", "active state")
_OPEN_SECTIONS = ("pending", "todo", "open work", "next")
_ANSWER = "The work ended with this answer"


def _unwrapped(text: str) -> str:
    """The summary inside a checkpoint: a memory block's ``<summary>``, a ``<state_snapshot>``, or a Claude
    Code summary from its ``Summary:`` line on (its ``Analysis:`` is scratch work), without the
    continuation preamble and trailer."""
    wrapped = _WRAPPED.search(text)
    text = wrapped.group(1) if wrapped else _MEMORY_TAG.sub("", text)
    snapshot = _SNAPSHOT.search(text)
    if snapshot:
        return snapshot.group(1).strip("\n")
    claude = _CLAUDE_SUMMARY.search(text)
    if claude:
        text = text[claude.end():]
    elif text.lstrip().startswith(CONTINUATION):
        text = text.split("\n\n", 1)[1] if "\n\n" in text else ""
    return _TRAILER.sub("", text).strip("\n")


def _sections(body: str) -> list[tuple[str, list[str]]]:
    """(heading title in lower case, lines) of a summary's numbered sections; text before the first heading
    has the title ''."""
    out: list[tuple[str, list[str]]] = [("", [])]
    for line in body.split("\n"):
        heading = _CHECKPOINT_HEADING.match(line)
        if heading and len(heading.group(2).split()) <= 12 and not heading.group(2).endswith("."):
            out.append((heading.group(2).lower(), [line]))
        else:
            out[-1][1].append(line)
    return out


def earlier_block(text: str, *, done: Sequence[str] = (), gone: Sequence[str] = (), continued: bool = True) -> str:
    """An earlier compaction's summary as one block, line by line as it stood (code keeps its indentation),
    without what is known to be superseded: its resume line, budget markers and empty markers; its current
    work and next step when work went on after it (``continued``); open items now ``done`` (the todo list
    says so); lines naming a path that is ``gone`` (deleted since). '' when nothing is left."""
    done_keys = [d.lower() for d in done if d.strip()]
    kept: list[str] = []
    for title, lines in _sections(_unwrapped(text)):
        if title:  # its heading marked as one, so it never reads as a heading of the summary that carries it
            lines = ["### " + lines[0].lstrip(" #"), *lines[1:]]
        if continued and any(word in title for word in _SUPERSEDED_SECTIONS):
            answer = next((n for n, line in enumerate(lines) if line.startswith(_ANSWER)), None)
            if answer is None:  # superseded; a final answer recorded there is a result, not the state of work
                continue
            lines = lines[:1] + lines[answer:]
        open_items = any(word in title for word in _OPEN_SECTIONS)
        section: list[str] = []
        for line in lines:
            bare = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", line).removeprefix("[earlier] ")
            if bare.strip() and (_STALE_LINE.match(bare) or bare.strip() in ("(none)", "</state_snapshot>")):
                continue
            if open_items and any(key in bare.lower() for key in done_keys):
                continue
            if any(path in line for path in gone):
                continue
            section.append(line)
        if not title or any(line.strip() for line in section[1:]):  # a heading left without lines goes too
            kept += section
    block = "\n".join(kept).strip("\n")
    return re.sub(r"\n{3,}", "\n\n", block)
