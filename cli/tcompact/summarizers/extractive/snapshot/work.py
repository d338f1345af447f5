"""What the tools did, as snapshot items: failures, error lines, fixes, files, commands, tests, state.

Each fact appears once, in its latest state: a failure never fixed is listed with its command and
its error lines (and nowhere else); an error line that appeared in an output — of a command that
went on, or of a failure a later run fixed — is listed with the command that printed it; a file
once, with every operation and what it now is; a command once, with its last outcome and the line
of output that says so. Identifiers, paths, commands and error lines are copied as they stand.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..scan import Scan, Work, in_progress, next_step
from ..tools import Action
from ..tools import command_groups, describe, failure_groups, failure_line, fixed_line, reported_errors, test_coverage
from ..tools import went_on
from ..text import cut, one_line, quote
from ..fitting import Item

__all__ = ["failure_items", "error_items", "file_items", "edit_items", "command_items", "state_items",
           "round_items"]

_CHANGES = ("created", "written", "edited", "deleted", "moved")
_COMMAND_CHARS = 400  # a command line is shown whole up to this, else cut (a heredoc, a script)
_OPEN = ("pending", "in_progress", "in-progress", "todo", "not_started", "active")
_PYTEST_E = re.compile(r"^E\s+")  # pytest's mark before an error line (the key error is shown without it)
_LAST_EDITS = 3  # the newest edits whose new text is shown
_EDIT_CHARS = 1200  # of one edit's new text (a longer one keeps its head and tail)


def _label(action: Action) -> str:
    """The action as shown: a command whole (cut only past :data:`_COMMAND_CHARS`), else its label."""
    if action.command:
        command = one_line(action.command)
        return f"`{cut(command, _COMMAND_CHARS)}`"
    return action.label


def _also(action: Action, shown: str) -> list[str]:
    """The error lines of an action's output other than the one already shown, as sub-lines."""
    return [f"\n  {line}" for line in action.error_lines if _PYTEST_E.sub("", line) not in shown]


def failure_items(work: Work) -> list[Item]:
    """Failed attempts never fixed: the last attempt, how often, exit code, key error and every error line."""
    out = []
    for group in failure_groups(work.actions):
        last = group[-1]
        text = failure_line(group, _label(last))
        out.append(Item("failure", text + "".join(_also(last, text)), 1, order=last.index, round=last.round))
    return out


def error_items(work: Work) -> list[Item]:
    """Error lines of outputs whose call did not fail (or failed and was fixed), with the command, and fixes."""
    out = []
    for a in work.actions:
        if a.failed and a.resolved_by is not None:
            text = fixed_line(a, _label(a), fix_chars=160)
            out.append(Item("fix", text + "".join(_also(a, text)), 2, order=a.index, round=a.round))
        elif reported_errors(a):
            out += [Item("error", text, 1, order=a.index, round=a.round) for text in went_on(a, _label(a))]
    return out


def file_items(work: Work) -> list[Item]:
    """Every file once: changed ones (priority 1), read ones (2), only searched (3), with gist and symbols."""
    out = []
    for info in work.files.values():
        text = f"{info.path} — {info.status(latest=True)}"
        if info.gist:
            text += f": {quote(info.gist)}"
        if info.symbols:
            text += "; defines " + ", ".join(f"`{s}`" for s in info.symbols)
        changed = any(info.ops.get(op) for op in _CHANGES)
        read = info.ops.get("read") or info.failed
        kind, priority = ("file_changed", 1) if changed else (("file_read", 2) if read else ("file_searched", 3))
        out.append(Item(kind, text, priority, order=info.last, round=max(info.rounds, default=0)))
    return out


def edit_items(work: Work) -> list[Item]:
    """The new text of the last edits (an edit's "→ ok" says nothing of what the file now says), the newest first
    to be kept; each as the call gave it, a long one cut in its middle."""
    edits = [a for a in work.actions if a.new_text.strip() and a.answered and not a.failed][-_LAST_EDITS:]
    out = []
    for a in reversed(edits):
        text = a.new_text
        if len(text) > _EDIT_CHARS:
            half = _EDIT_CHARS // 2
            text = f"{text[:half]}\n[… {len(text) - _EDIT_CHARS:,} characters of this edit left out …]\n{text[-half:]}"
        if "\n" not in text and "`" not in text and len(text) <= 200:  # one short line: inline
            shown = f"- last edits: {a.label} put in: `{text}`"
        else:
            fence = "~~~" if "```" in text else "```"
            shown = f"- last edits: {a.label} put in:\n{fence}\n{text}\n{fence}"
        out.append(Item("edit", shown, 3, order=a.index, round=a.round, block=True))
    return out


def command_items(work: Work) -> list[Item]:
    """Each distinct command once with its last outcome and the output line that says how it ended (unfixed
    failures are listed with the failed attempts instead)."""
    out = []
    for group in command_groups(work.actions):
        last = group[-1]
        if last.failed:  # listed with the failed attempts, or with the fix that followed
            continue
        times = f" ×{len(group)}" if len(group) > 1 else ""
        if not last.answered:
            outcome = "no result yet"
        elif last.failed:
            outcome = f"failed (exit {last.exit_code}): {last.error}" if last.exit_code else f"failed: {last.error}"
        else:
            code = f" (exit {last.exit_code})" if last.exit_code is not None else ""
            outcome = f"ok{code}" + (f": {last.outcome}" if last.outcome else "")
        priority = 3 if last.quiet and not last.test else 1
        out.append(Item("command", f"{_label(last)}{times} → {outcome}", priority, order=last.index,
                        round=last.round))
    return out


def state_items(x: Scan, *, answered: bool) -> list[Item]:
    """Where the work stands: the plan, the todo in progress, the next step, the last action and tests."""
    out = [Item("done", f"[{status}] {content}", 2, order=x.stop) for content, status in x.plan.todos or []
           if status in ("completed", "done")]
    out += [Item("pending", f"[{status}] {content}", 1, order=x.stop) for content, status in x.plan.todos or []
            if status in _OPEN]
    if x.plan.explanation:
        out.append(Item("pending", f"plan note: {cut(x.plan.explanation, 300)}", 2, order=x.stop))
    current = in_progress(x.plan)
    if current:
        out.append(Item("state", f"in progress (todo): {current}", 1, order=x.stop))
    promised = x.promised()
    if promised:
        out.append(Item("state", f"the last reply promised, and the work stopped before it was done: "
                                 f"{quote(cut(promised, 300))}", 0, order=x.stop))
    step = next_step(x)
    if step != "(none)" and not step.rstrip().endswith(":"):
        out.append(Item("next", f"next step: {step}", 1, order=x.stop))
    last = x.work.last_action()
    if last is not None:
        text = f"last action: {describe(last)}"
        if last.outcome and not last.summary:
            text += f"; its output ended with: {quote(last.outcome)}"
        out.append(Item("resume_point", text, 1, order=last.index, round=last.round))
    out += [Item("test", line, 2, order=x.stop) for line, _ in test_coverage(x.work.actions)
            if not (last is not None and last.test and line.startswith("latest test run"))]  # the last action says it
    if not answered and x.user.last is not None:
        out.append(Item("test", "the latest request has no final answer yet", 2, order=x.stop))
    return out


def round_items(x: Scan, rounds: Sequence[int]) -> list[Item]:
    """One line per round: how much it changed and ran, and how it ended (the files and commands themselves
    are listed once, in their own sections)."""
    by_round: dict[int, list[Action]] = {}
    for action in x.work.actions:
        by_round.setdefault(action.round, []).append(action)
    out = []
    for rnd in sorted(set(rounds)):
        actions = by_round.get(rnd, [])
        if not actions:  # a round of talk only: its request and answer are listed with the user's messages
            continue
        changed = {p for a in actions for p, op in a.paths if op in _CHANGES}
        read = {p for a in actions for p, op in a.paths if op == "read"} - changed
        commands = [a for a in actions if a.kind == "command"]
        failed = sum(1 for a in actions if a.failed)
        parts = [f"{len(changed)} file(s) changed"] if changed else []
        parts += [f"{len(read)} read"] if read else []
        parts += [f"{len(commands)} command(s) run"] if commands else []
        parts += [f"{failed} call(s) failed"] if failed else []
        ended = "answered" if rnd in x.said.round_text and not x.said.round_text[rnd][1] else "no final answer"
        out.append(Item("round", f"round {rnd}: {', '.join(parts) or 'no tool calls'}; {ended}", 3,
                        order=min((a.index for a in actions), default=0), round=rnd))
    return out
