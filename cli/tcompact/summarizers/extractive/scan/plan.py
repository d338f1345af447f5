"""The agent's plan: read from TodoWrite / update_plan calls, shown as items, and the next step.

The plan is the agent's own statement of what is done and what is left, so it decides the
"active" and "next" fields of the resume line before anything guessed from prose.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ....model import ToolCall
from ....tool_names import is_plan_tool
from ..tools import call_args
from ..text import MD_NOISE, clean, cut, one_line, prose_lines, split_sentences

if TYPE_CHECKING:
    from .extraction import Scan
    from .values import Plan

_NEXT_CUES = re.compile(
    r"(?i)\b(?:next step|next,|next i|next we|i'll|i will|let me|let's|now i|then i|remaining|still need|"
    r"would you like|do you want|want me to|shall i|should i|once you|if you (?:share|send|paste|want|confirm))\b")


def plan_of(calls: Sequence[ToolCall]) -> tuple[list[tuple[str, str]], str] | None:
    """The (items, explanation) of the last TodoWrite / update_plan call among ``calls``, if any."""
    plan = None
    for call in calls:
        if not is_plan_tool(call.name):
            continue
        args, _ = call_args(call)
        items = args.get("todos", args.get("plan", args.get("items")))
        if not isinstance(items, list):
            continue
        explanation = args.get("explanation")
        plan = (_todo_items(items), one_line(explanation) if isinstance(explanation, str) else "")
    return plan


def _todo_items(items: Sequence[Any]) -> list[tuple[str, str]]:
    """(content, status) of the plan items that have a text."""
    todos = []
    for item in items:
        if isinstance(item, Mapping):
            content = item.get("content", item.get("step", item.get("title", item.get("text", ""))))
            status = str(item.get("status", "pending"))
            if isinstance(content, str) and content.strip():
                todos.append((one_line(content), status))
    return todos


def todos(plan: Plan, statuses: tuple[str, ...] | None = None) -> list[tuple[str, int]]:
    """The latest plan's items with their status (optionally only some statuses)."""
    items = plan.todos or []
    out = [(f"[{status}] {content}", n) for n, (content, status) in enumerate(items)
           if statuses is None or status in statuses]
    if statuses is None and plan.explanation:
        out.insert(0, (f"plan note: {cut(plan.explanation, 200)}", 0))
    return out


def in_progress(plan: Plan) -> str | None:
    """The plan item in progress, if any."""
    for content, status in plan.todos or []:
        if status in ("in_progress", "in-progress", "active"):
            return content
    return None


def next_step(x: Scan) -> str:
    """The first pending todo, else the next step the last assistant message states, else '(none)'."""
    for content, status in x.plan.todos or []:
        if status in ("pending", "todo", "not_started"):
            return content
    last = x.said.last
    if last is None or x.user.last is None or not last.text.strip():
        return "(none)"
    text = last.text[-6000:]
    listed = _listed_next_step(text)
    return listed if listed is not None else _stated_next_step(text)


def _listed_next_step(text: str) -> str | None:
    """The first item of a "Next steps" list in the text, if it has one."""
    raw_lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for n, line in enumerate(raw_lines):
        if re.match(r"(?i)^\W*next steps?\b.{0,40}$", clean(line)):
            for item in raw_lines[n + 1:n + 6]:
                if re.match(r"^(?:[-*+•]|\d+[.)])\s+", item) and not clean(item).endswith(":"):
                    return cut(clean(MD_NOISE.sub("", item)), 200)
    return None


def _stated_next_step(text: str) -> str:
    """The last sentence of the text that announces what comes next, else '(none)'."""
    found = ""
    for line in prose_lines(text):
        for sentence in split_sentences(line):
            if _NEXT_CUES.search(sentence) and len(sentence.split()) >= 3:
                found = sentence
    found = re.sub(r"(?i)^\W*next(?: steps?)?\s*[:,\-–]\s*", "", clean(found))
    return cut(found, 200) if found else "(none)"
