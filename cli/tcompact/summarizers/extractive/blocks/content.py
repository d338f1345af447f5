"""Section content that depends on the whole request: the user's words, outcomes and resume state.

:class:`_Content` computes, once per summary, the values several sections share (the per-request
character allowance, whether the latest request was answered, the failures and commands) and
builds the items of the sections that need them, each as ``(text, rank)``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..tools.describe import commands as _commands
from ..tools.describe import describe as _describe
from ..tools.describe import fixes as _fixes
from ..tools.describe import last_actions as _last_actions
from ..tools.describe import test_coverage as _test_coverage
from ..tools.describe import unfixed as _unfixed
from ..scan.extraction import Scan
from .history import _outcome
from ..scan.plan import in_progress, next_step, todos
from ..text import clean, cut, cut_marked, one_line, quote, reply_context, resume_field, word_count

_REQUEST_CHARS = 1500  # a user request longer than this is cut with a marker
_MAX_COMMANDS = 300
_CONSTRAINT_CUES = re.compile(
    r"(?i)\b(?:must|should(?:n't)?|don'?t|do not|never|always|only|prefer|avoid|make sure|without|please|"
    r"need(?:s)? to|has to|have to|not acceptable|no longer|instead of|at most|at least|max(?:imum)?|keep)\b")
_USER_SPLIT = re.compile(r"(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)(?<!\bvs\.)\s+|\n+")  # cheap test first
_OPEN_STATUSES = ("pending", "in_progress", "in-progress", "todo", "not_started", "active")


class _Content:
    """The texts of every kind of item that needs more than one look at the extraction."""

    def __init__(self, x: Scan, budget: int) -> None:
        self.x = x
        self.current_round = x.round
        self.body_rounds = ({r for _, r, _ in x.requests} | {a.round for a in x.actions}
                            | set(x.round_text) | {self.current_round})  # prose rounds hold the sentences' rounds
        n_requests = max(len(x.requests), 1)
        self.request_chars = max(160, min(_REQUEST_CHARS, int(budget * 4 * 0.4 / n_requests)))
        self.answered = x.answered()
        self.fixes = _fixes(x.actions)
        self.failed = _unfixed(x.actions)
        self.commands = _commands(x.actions)
        self._constraints: list[tuple[str, int]] | None = None

    # user's words

    def request_text(self, text: str, limit: int | None = None) -> str:
        """A request quoted verbatim (long ones cut with a marker; continuation lines indented)."""
        return quote(cut_marked(text, limit or self.request_chars).replace("\n", "\n  "))

    def requests(self, with_outcome: bool, rounds: set[int] | None = None) -> list[tuple[str, int]]:
        """The body's real user messages in order (oldest ranked for dropping first)."""
        out = []
        items = [r for r in self.x.requests if rounds is None or r[1] in rounds]
        for n, (_, rnd, text) in enumerate(items):
            line = self.request_text(text)
            if with_outcome:
                line += f" → {_outcome(self.x, rnd)}"
            out.append((line, len(items) - 1 - n))
        return out

    def active(self, earlier_requests: bool = True) -> list[tuple[str, int]]:
        """The latest request verbatim, what a terse reply refers to, and the substantive requests."""
        x = self.x
        if x.last_request is None:
            return []
        index, text = x.last_request
        where = "" if index >= x.start else " (the message itself is kept above this summary)"
        out = [(f"Latest request{where}: {self.request_text(text, _REQUEST_CHARS)}", 0)]
        if len(text) < 40 and x.previous_text:
            out.append((f"It replies to the assistant's previous message: {reply_context(text, x.previous_text)}", 1))
        substantive = [(i, t) for i, t in x.substantive if i != index]
        if substantive and len(text) < 80:
            out.append((f"Original task: {self.request_text(substantive[0][1], 600)}", 2))
            if len(substantive) > 1:
                out.append((f"Latest substantive request: {self.request_text(substantive[-1][1], 600)}", 3))
        out.append((f"Status: {'answered' if self.answered else 'not answered yet, work in progress'}.", 4))
        if earlier_requests:
            out += self._earlier_requests(x.last_request, substantive)
        return out

    def _earlier_requests(self, latest: tuple[int, str], substantive: Sequence[tuple[int, str]]
                          ) -> list[tuple[str, int]]:
        """The user's other words in this part, newest first (those quoted as the task left out)."""
        index, text = latest
        quoted = {i for i, _ in substantive[:1]} | ({substantive[-1][0]} if len(substantive) > 1 else set())
        earlier = [(i, t) for i, _, t in self.x.requests if i != index and (i not in quoted or len(text) >= 80)]
        return [(f"Earlier request in this part: {self.request_text(req)}", 5 + n)
                for n, (_, req) in enumerate(reversed(earlier))]

    def constraints(self) -> list[tuple[str, int]]:
        """User sentences with a constraint cue (must, don't, only, …), quoted, deduplicated (found once)."""
        if self._constraints is None:
            self._constraints = self._find_constraints()
        return self._constraints

    def _find_constraints(self) -> list[tuple[str, int]]:
        """The constraint sentences of the body's requests and of the latest request before it."""
        x = self.x
        sources = [text for _, _, text in x.requests]
        if x.last_request is not None and x.last_request[0] < x.start:
            sources.append(x.last_request[1])
        seen: dict[str, None] = {}
        found: list[str] = []
        for text in sources:
            for part in _USER_SPLIT.split(text[:20000]):
                part = part.strip(" -*•")
                if 3 <= word_count(part) <= 80 and _CONSTRAINT_CUES.search(part) and part.lower() not in seen:
                    seen[part.lower()] = None
                    found.append(quote(cut(one_line(part), 300)))
        return [(line, len(found) - 1 - n) for n, line in enumerate(found)]

    # the state to resume from

    def active_item(self) -> str:
        """The Resume line's 'active': the todo in progress, else the last tool action."""
        current = in_progress(self.x)
        if current:
            return f"in_progress todo: {current}"
        last = self.x.last_action()
        return f"last action: {_describe(last)}" if last else "(none)"

    def resume_line(self, limit: int = 200) -> str:
        """The one-line resume point, each field cut to about ``limit`` characters."""
        x = self.x
        request = resume_field(x.last_request[1], limit) if x.last_request else "(none)"
        return (f"last request: {request}; answered: {'yes' if self.answered else 'no'}; "
                f"active: {resume_field(self.active_item(), limit + 20)}; next: {resume_field(next_step(x), limit)}")

    def current(self) -> list[tuple[str, int]]:
        """The state right before the checkpoint: todo in progress, recent actions, last test, last text."""
        out = []
        current = in_progress(self.x)
        if current:
            out.append((f"in progress (todo): {current}", 0))
        out += [("recent: " + text, rank + 1) for text, rank in _last_actions(self.x.actions)]
        tests = [a for a in self.x.actions if a.test and a.answered]
        if tests:
            out.append((f"latest test run: {_describe(tests[-1])}", 1))
        last = self.x.last_assistant
        if last is not None and last.text.strip():
            out.append((f"last assistant message: {quote(cut(clean(last.text), 300))}", 2))
        return out

    def resume_point(self) -> list[tuple[str, int]]:
        """The last concrete action with its result, and whether the latest request was answered."""
        out = []
        last = self.x.last_action()
        if last is not None:
            text = f"last action: {_describe(last)}"
            if last.answered and not last.failed and last.first_line and not last.summary and last.command \
                    and not last.quiet:
                text += f"; output began: {quote(cut(last.first_line, 160))}"
            out.append((text, 0))
        if self.answered and self.x.last_assistant is not None:
            out.append((f"the latest request was answered: {quote(cut(clean(self.x.last_assistant.text), 240))}",
                        1))
        elif self.x.last_request is not None:
            out.append(("the latest request is not answered yet; continue from the last action", 1))
        return out

    def pending(self) -> list[tuple[str, int]]:
        """The next step and the unfinished plan items."""
        out = todos(self.x, _OPEN_STATUSES)
        step = next_step(self.x)
        if step != "(none)":
            out.insert(0, (f"next step: {step}", 0))
        return out

    def verification(self) -> list[tuple[str, int]]:
        """Open failures, the latest test run, edits no test run has covered, an unanswered request."""
        out = []
        unresolved = len(self.failed)
        if unresolved:
            out.append((f"{unresolved} failed attempt(s) were never fixed (see Failed Attempts)", 0))
        out += _test_coverage(self.x.actions)
        if not self.answered and self.x.last_request is not None:
            out.append(("the latest request has no final answer yet", 2))
        return out
