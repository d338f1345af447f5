"""Where the canaries of ``tcompact eval`` go: a seeded plan over the messages of a transcript.

The plan names messages of the session as it was read, so it does not depend on the format:
user canaries are appended to real user messages, the decision and the early fact to assistant
texts, the error line goes inside a tool output at a line boundary, and the file written and
the command run are new tool steps (one call and its result) placed where a tool result is
followed by the next assistant message — a point where the session stays well-formed, every
call keeps its result. :mod:`.editors` carries the plan out on the file's own records.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ..model import Message
from ..rounds import is_real_user
from ..spans import legal_cut_points
from ..tool_names import is_plan_tool
from .canaries import KINDS, Canary, draw

__all__ = ["TextEdit", "ToolStep", "Plan", "plan"]


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Put a canary's text into message ``message``: a new paragraph at its end (``append``) or one
    line inside a tool output, ``at`` (0..1) of the way through its lines (``line``)."""

    message: int
    canary: Canary
    mode: str
    at: float = 0.0


@dataclass(frozen=True, slots=True)
class ToolStep:
    """A new assistant tool call and its result, placed right after message ``after``.

    ``action`` is "write" (the canary's value is the path, its text the content) or "shell"
    (the canary's command, its text the output, ``canary.exit_code`` the status)."""

    after: int
    canary: Canary
    action: str
    call_id: str


@dataclass(frozen=True, slots=True)
class Plan:
    """The canaries and what to do to plant each; ``skipped`` names kinds the session has no place for."""

    canaries: tuple[Canary, ...]
    edits: tuple[TextEdit, ...]
    steps: tuple[ToolStep, ...]
    skipped: tuple[str, ...]


def plan(messages: Sequence[Message], rng: random.Random, *, per_kind: int, taken: str) -> Plan:
    """``per_kind`` canaries of every kind at seeded places of ``messages`` (``taken``: the session's text)."""
    hosts = _Hosts(messages)
    canaries: list[Canary] = []
    edits: list[TextEdit] = []
    steps: list[ToolStep] = []
    skipped: list[str] = []
    for kind in KINDS:
        places = hosts.places(kind)
        if not places:
            skipped.append(kind)
            continue
        for n, where in enumerate(_pick(rng, places, per_kind), start=1):
            canary = draw(rng, kind, n, taken=taken)
            taken += "\n" + "\n".join(canary.values)
            canaries.append(canary)
            if kind in ("file_written", "command"):
                action = "write" if kind == "file_written" else "shell"
                steps.append(ToolStep(where, canary, action, call_id=f"call_eval_{canary.token}"))
            elif kind == "error_line":
                edits.append(TextEdit(where, canary, "line", at=rng.uniform(0.25, 0.75)))
            else:
                edits.append(TextEdit(where, canary, "append"))
    return Plan(tuple(canaries), tuple(edits), tuple(steps), tuple(skipped))


def _pick(rng: random.Random, places: Sequence[int], n: int) -> list[int]:
    """``n`` places, distinct while there are enough, in the order drawn."""
    if len(places) >= n:
        return rng.sample(list(places), n)
    return [rng.choice(list(places)) for _ in range(n)]


class _Hosts:
    """The messages each kind of canary can go into."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self.messages = messages
        texts = [i for i, m in enumerate(messages) if m.role == "assistant" and m.text.strip()]
        self.assistant_texts = texts
        self.early = texts[: max(1, len(texts) // 4)]
        users = [i for i, m in enumerate(messages) if is_real_user(m)]
        self.users = [i for i in users if not messages[i].text.lstrip().startswith("<")
                      or "</command-args>" in messages[i].text] or users
        self.results = self._results()
        self.step_points = self._step_points()

    def places(self, kind: str) -> list[int]:
        """Message indices a canary of ``kind`` can go into (or after, for tool steps)."""
        if kind in ("user_constraint", "user_preference"):
            return self.users
        if kind == "decision":
            return [i for i in self.assistant_texts if i not in self.early] or self.assistant_texts
        if kind == "early_fact":
            return self.early
        if kind == "error_line":
            return self.results
        return self.step_points

    def _results(self) -> list[int]:
        """Tool outputs of several lines (of one line when none has more), plan updates left out."""
        calls = {c.id: c.name for m in self.messages for c in m.tool_calls}
        outputs = [i for i, m in enumerate(self.messages) if m.role == "tool" and m.text.strip()
                   and not any(is_plan_tool(calls.get(cid, "")) for cid in m.tool_call_ids)]
        long = [i for i in outputs if self.messages[i].text.strip().count("\n") >= 2]
        return long or outputs

    def _step_points(self) -> list[int]:
        """Messages a new tool step can follow: a tool result answered in full and followed by an
        assistant message, else an assistant answer followed by a real user message."""
        m = self.messages
        cuts = set(legal_cut_points(m))
        after_results = [c - 1 for c in sorted(cuts) if 0 < c < len(m) and m[c].role == "assistant"
                         and m[c - 1].role == "tool"]
        if after_results:
            return after_results
        return [c - 1 for c in sorted(cuts) if 0 < c < len(m) and is_real_user(m[c])
                and m[c - 1].role == "assistant" and not m[c - 1].tool_calls]
