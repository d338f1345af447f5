"""The scan of the transcript: one pass that gathers everything the snapshot sections are built from.

The preserved prefix is read for context (the round count, the active request, the plan, the working
directory), the body for its requests, assistant prose, tool calls and their results, and earlier
checkpoints. Afterwards paths are made absolute, files gathered and failures paired with their fixes.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ....model import Message, ToolCall
from ....markers import RECOVERED_CONTEXT, STATE_REINJECTION
from ....rounds import command_prompt, is_real_user
from ....tool_names import kind_of
from ..tools import Action, call_args, classify
from .checkpoints import carry, is_checkpoint, says_answered
from .files import FileState
from .fixes import resolve_failures
from ..tools import offloaded
from .plan import plan_of
from .values import Earlier, Plan, Requests, Said, Work
from ..tools import record_result
from ..text import cut, promise, user_text, window

MAX_FILES = 300  # files listed; four times as many are tracked
_BACKTICK = re.compile(r"`([^`\n]{2,60})`")
CWD_PATTERNS = (re.compile(r"<cwd>([^<]+)</cwd>"), re.compile(r"\(Current directory: ([^)]+)\)"))
_OPEN_FILE = re.compile(r"\(Open file: ([^)]+)\)")
_RUNNING = re.compile(r"Process running with session ID (\d+)")


@dataclass(slots=True)
class _Pass:
    """The state of the pass alone: what the values are built with, gone once it ends."""

    assistant_text: str = ""  # the last assistant text (before the next request)
    open_file: str | None = None
    calls: dict[str, Action] = field(default_factory=dict)
    sessions: dict[str, Action] = field(default_factory=dict)  # Codex session id -> the command running in it


class Scan:
    """One pass over the messages: what the sections are built from, as small typed values (:mod:`.values`) —
    ``user``, ``plan``, ``work``, ``said``, ``earlier`` — beside the messages and the body's bounds."""

    def __init__(self, messages: Sequence[Message], body: range) -> None:
        self.messages = messages
        start, stop = max(body.start, 0), min(body.stop, len(messages))
        self.start, self.stop = start, max(stop, start)
        self.user = Requests()
        self.plan = Plan()
        self.work = Work()
        self.said = Said()
        self.earlier = Earlier()
        self._pass = _Pass()
        self._scan_context()
        self._scan_body()
        del self._pass
        self._gather_files()
        resolve_failures(self.work.actions)

    # -- context ----------------------------------------------------------------------------

    def _scan_context(self) -> None:
        """Round count, active request and working directory from the preserved prefix."""
        for i in range(self.start):
            m = self.messages[i]
            if m.role == "user" and is_real_user(m):
                self.user.round += 1
                self._note_request(i, m)
            elif m.role == "assistant" and m.text.strip():
                self._pass.assistant_text = m.text
            elif m.role == "user":
                self._cwd(m.text[:2000])

    def _note_request(self, index: int, message: Message) -> None:
        """Track the latest real request, the assistant message before it and the substantive ones."""
        self.earlier.answered = False
        text = user_text(message)
        prompt = command_prompt(self.messages, index)
        if prompt is not None:  # a slash command's request is its prompt (``/init`` + what /init asks for)
            text = f"{text}\n{self.messages[prompt].text.strip()}"
        if len(text) >= 40:
            if not self.user.substantive or len(self.user.substantive) == 1:
                self.user.substantive.append((index, text))
            else:
                self.user.substantive[-1] = (index, text)
        self.user.last = (index, text)
        self.user.previous_text = self._pass.assistant_text
        self._pass.assistant_text = ""

    def _cwd(self, text: str) -> None:
        """Remember a working directory a message states (Codex ``<cwd>``, SWE-agent's prompt line)."""
        for pattern in CWD_PATTERNS:
            match = pattern.search(text)
            if match:
                self.work.cwd = match.group(1).strip()

    # -- body -------------------------------------------------------------------------------

    def _scan_body(self) -> None:
        """Requests, assistant prose, tool calls and their results of the body, in order."""
        for i in range(self.start, self.stop):
            self._message(i, self.messages[i])
        if self.plan.todos is None:  # the plan may sit in the preserved prefix
            for i in range(self.start - 1, -1, -1):
                m = self.messages[i]
                if m.role == "assistant" and m.tool_calls and self._todo_calls(m.tool_calls):
                    break

    def _message(self, i: int, m: Message) -> None:
        """One message of the body, by role."""
        role = m.role
        if role == "user":
            if is_real_user(m):
                self.user.round += 1
                self._note_request(i, m)
                self.user.requests.append((i, self.user.round, self.user.last[1] if self.user.last else user_text(m)))
            else:
                self._internal(i, m)
        elif role == "assistant":
            self._assistant(i, m)
        elif role in ("tool", "function"):
            self._result(i, m)
        elif role in ("system", "developer") and m.internal is False and i > 0:
            self._internal(i, m)

    def _internal(self, i: int, m: Message) -> None:
        """An injected message: keep an earlier checkpoint (and its lines), note a working directory."""
        self._cwd(m.text[:4000])
        if is_checkpoint(m):
            if not m.text.lstrip().startswith((RECOVERED_CONTEXT, STATE_REINJECTION)):  # re-injected state: no summary
                self.earlier.checkpoints.append((i, m.text))
            for category, line in carry(m.text):
                self.earlier.carried.setdefault(category, []).append(line)
            # a checkpoint after the latest request answers it when it says so (a compacted session again)
            self.earlier.answered = self.earlier.answered or says_answered(m.text)

    def _assistant(self, i: int, m: Message) -> None:
        """Sentences, backticked terms, the plan and the tool calls of an assistant message."""
        self.said.last = m
        if m.text.strip():
            self._prose(i, m)
        elif m.tool_calls:
            prior = self.said.round_text.get(self.user.round)
            if prior is not None:
                self.said.round_text[self.user.round] = (prior[0], True)
        if m.tool_calls:
            self._todo_calls(m.tool_calls)
            for call in m.tool_calls:
                self._call(i, call)

    def _prose(self, i: int, m: Message) -> None:
        """An assistant text: kept for its sentences (read on demand), its backticked terms counted."""
        text = m.text.strip()
        self._pass.assistant_text = text
        self.said.round_text[self.user.round] = (text, bool(m.tool_calls))
        self.said.texts.append((i, self.user.round, text))
        for term in _BACKTICK.findall(text[:20000]):
            self.said.terms[term.strip()] += 1

    def _todo_calls(self, calls: Sequence[ToolCall]) -> bool:
        """Take the plan from TodoWrite / update_plan calls (the latest wins); True if there was one."""
        plan = plan_of(calls)
        if plan is None:
            return False
        self.plan.todos, self.plan.explanation = plan
        return True

    def _call(self, i: int, call: ToolCall) -> None:
        """Record a tool call as an action, with the working directory and open file it sets; a poll of a
        command still running (Codex ``write_stdin``) is that command's, and its result the command's outcome."""
        if kind_of(call.name) == "poll":
            running = self._pass.sessions.get(str(call_args(call)[0].get("session_id")))
            if running is not None:
                running.answered = False
                self._pass.calls[call.id] = running
                return
        action = classify(i, call, round_=self.user.round, open_file=self._pass.open_file)
        if action is None:
            return
        if action.workdir:
            self.work.cwd = action.workdir
        if action.opens:
            self._pass.open_file = action.opens
        action.cwd = self.work.cwd
        self.work.actions.append(action)
        self._pass.calls[call.id] = action

    def _result(self, i: int, m: Message) -> None:
        """Outcome of the call a tool result answers, and the context the result reveals."""
        action = None
        for cid in m.tool_call_ids:
            action = self._pass.calls.get(cid) or action
        seen = window(m.text)
        if len(seen) > 200:
            for where in offloaded(seen):
                self.work.critical[f"offloaded content: {cut(where.strip(), 200)}"] = None
        match = _OPEN_FILE.search(seen[-400:])
        if match:
            self._pass.open_file = match.group(1).strip()
        self._cwd(seen[-400:])
        if action is not None and not action.answered:
            earlier = action.error_lines
            record_result(action, m.text, window=seen, is_error=m.is_error)
            action.error_lines = tuple(dict.fromkeys(earlier + action.error_lines))
            running = _RUNNING.search(seen[:400]) if action.command else None
            if running:  # the command goes on in a session that later calls poll
                self._pass.sessions[running.group(1)] = action
                action.outcome = f"still running (session {running.group(1)})"

    # -- after the pass ---------------------------------------------------------------------

    def _gather_files(self) -> None:
        """Make the actions' paths absolute and note every operation under its file."""
        for action in self.work.actions:
            if action.cwd:
                action.paths = [(_absolute(p, action.cwd), op) for p, op in action.paths]
                action.path_symbols = {_absolute(p, action.cwd): v for p, v in action.path_symbols.items()}
            for path, op in action.paths:
                info = self.work.files.get(path)
                if info is None:
                    if len(self.work.files) >= MAX_FILES * 4:
                        continue
                    info = self.work.files[path] = FileState(path=path, first=action.index)
                info.note(action, op)

    # -- derived views ----------------------------------------------------------------------

    def promised(self) -> str:
        """The sentence in which the last assistant text, ending the body without a call, promises work it has
        not done (''): such a reply does not answer its request."""
        last = self.said.last
        return promise(last.text) if last is not None and not last.tool_calls and last.text.strip() else ""

    def answered(self) -> bool:
        """Whether the last real user message is answered: by a final assistant text without tool calls that
        does not end by promising work still to do, or by a successful call of a tool that ends the task
        (submit) with nothing but its result after it."""
        if self.user.last is None:
            return False
        last = None
        for i in range(self.stop - 1, self.user.last[0], -1):
            if self.messages[i].role == "assistant":
                last = self.messages[i]
                break
        if last is not None and bool(last.text.strip()) and not last.tool_calls:
            return not promise(last.text)
        if last is None and self.earlier.answered:
            return True
        final = self.work.actions[-1] if self.work.actions else None
        return final is not None and final.finishes and final.index > self.user.last[0] and \
            not any(self.messages[i].role == "assistant" for i in range(final.index + 1, self.stop))


def _absolute(path: str, cwd: str) -> str:
    """A path as written, made absolute against the working directory when that is known."""
    path = path.strip()
    path = path.removeprefix("./")
    if cwd and not path.startswith(("/", "~")) and cwd.startswith(("/", "~")):
        path = posixpath.normpath(posixpath.join(cwd, path))
    return path
