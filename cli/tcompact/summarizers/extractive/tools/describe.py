"""Tool calls described with what came of them, one by one and grouped: failures, fixes, commands, tests.

Both summary writers (the state snapshot and the round-level blocks) state the same outcomes, so
the wording of "`cmd` → failed (exit 1: …)" and the grouping of repeated commands and failures
live here, next to the reading of the results.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..text import cut
from .calls import Action

__all__ = ["describe", "last_actions", "test_coverage", "fixes", "unfixed", "failure_groups", "failure_line",
           "commands", "command_groups", "command_line", "fixed_line", "went_on", "reported_errors", "WENT_ON",
           "FIXED"]

_MAX_COMMANDS = 300
#: How both summaries state a call whose output reported error lines although it went on (the lines follow), …
WENT_ON = "{label} went on, but its output reported:"
#: … and a failure a later call fixed.
FIXED = "{label} failed ({error}); fixed by a later successful {fix}"
#: Documents and data: no test run verifies an edit of these.
_NOT_TESTED = re.compile(r"(?i)\.(?:md|mdx|markdown|rst|txt|adoc|org|csv|tsv|log)$")


def describe(action: Action) -> str:
    """An action with its outcome: ok (test summary or exit code) or failed (exit code and error)."""
    if not action.answered:
        return f"{action.label} (no result yet)"
    if action.failed:
        code = f"exit {action.exit_code}: " if action.exit_code not in (None, 0) else ""
        return f"{action.label} → failed ({code}{action.error})"
    detail = action.summary or ("exit 0" if action.exit_code == 0 else "")
    return f"{action.label} → ok" + (f" ({detail})" if detail else "")


def last_actions(actions: Sequence[Action], limit: int = 6) -> list[tuple[str, int]]:
    """The most recent distinct actions with their outcome (repeats counted), newest first."""
    out: list[list] = []
    for action in reversed(actions[-limit * 8:]):
        text = describe(action)
        if out and out[-1][0] == text:
            out[-1][1] += 1
        elif len(out) < limit:
            out.append([text, 1])
        else:
            break
    return [(text + (f" (×{n} in a row)" if n > 1 else ""), rank) for rank, (text, n) in enumerate(out)]


def test_coverage(actions: Sequence[Action]) -> list[tuple[str, int]]:
    """The latest test run and the edits made after it, or the edits no test run followed at all (edits of
    documents and data files aside: no test verifies them)."""
    tests = [a for a in actions if a.test and a.answered]
    edits = [a for a in actions if a.kind == "edit" or any(op in ("edited", "created", "written")
                                                          for _, op in a.paths)]
    if not tests:
        changed = sorted({p for a in edits for p, op in a.paths if op != "read" and not _NOT_TESTED.search(p)})
        return [("no test run recorded after editing: " + ", ".join(changed[:12]), 1)] if changed else []
    last = tests[-1]
    state = "latest test run" if not last.failed else "not verified: the latest test run failed"
    out = [(f"{state}: {describe(last)}", 1)]
    later = sorted({p for a in edits if a.index > last.index for p, op in a.paths
                    if op != "read" and not _NOT_TESTED.search(p)})
    if later:
        out.append(("edited after the last test run (unverified): " + ", ".join(later[:12]), 0))
    return out


def fixes(actions: Sequence[Action]) -> list[tuple[str, int]]:
    """Failures a later successful call fixed, each with that fix (the newest ranked to stay)."""
    fixes = [fixed_line(a) for a in actions if a.failed and a.resolved_by is not None]
    return [(text, len(fixes) - 1 - n) for n, text in enumerate(fixes)]


def fixed_line(action: Action, label: str | None = None, *, fix_chars: int = 120) -> str:
    """A failure a later call fixed (``action.resolved_by``), with that fix cut to ``fix_chars``."""
    return FIXED.format(label=action.label if label is None else label, error=action.error,
                        fix=cut(action.resolved_by or "", fix_chars))


def reported_errors(action: Action) -> bool:
    """Whether the call went on (did not fail) although its output reported error lines: the one test of both
    summaries for listing them with :func:`went_on`."""
    return not action.failed and bool(action.error_lines)


def went_on(action: Action, label: str | None = None, *, one_per_line: bool = False) -> list[str]:
    """The error lines of a call that went on (:func:`reported_errors`), stated the one way: all under the call
    (the state snapshot), or one line each (the round-level blocks)."""
    head = WENT_ON.format(label=action.label if label is None else label)
    if one_per_line:
        return [f"{head} {line}" for line in action.error_lines]
    return [head + "".join(f"\n  {line}" for line in action.error_lines)]


def unfixed(actions: Sequence[Action]) -> list[tuple[str, int]]:
    """Failures never fixed, grouped by what was attempted, the newest first."""
    return [(failure_line(group), rank) for rank, group in enumerate(failure_groups(actions))]


def failure_groups(actions: Sequence[Action]) -> list[list[Action]]:
    """Failures never fixed, grouped by what was attempted (same key), the newest group first."""
    grouped: dict[tuple[str, str], list[Action]] = {}
    for action in actions:
        if action.failed and action.resolved_by is None:
            grouped.setdefault(action.keys[0] if action.keys else ("", action.label), []).append(action)
    return sorted(grouped.values(), key=lambda group: group[-1].index, reverse=True)


def command_groups(actions: Sequence[Action]) -> list[list[Action]]:
    """The runs of each distinct command (reads and searches that succeeded left out), newest group first."""
    seen: dict[str, list[Action]] = {}
    for action in actions:
        if action.kind != "command" or (action.quiet and not action.failed and action.paths):
            continue
        seen.setdefault(action.keys[0][1] if action.keys else action.label, []).append(action)
    return sorted(seen.values(), key=lambda group: group[-1].index, reverse=True)


def failure_line(group: Sequence[Action], label: str | None = None) -> str:
    """A repeated failure as one line: the last attempt (as ``label`` when given), how often, its exit code and
    error."""
    last = group[-1]
    times = f" ×{len(group)}" if len(group) > 1 else ""
    code = f"exit {last.exit_code}: " if last.exit_code not in (None, 0) else ""
    tool = f" ({last.name}{times})" if last.command else times
    return f"{last.label if label is None else label}{tool} → {code}{last.error}"


def commands(actions: Sequence[Action]) -> list[tuple[str, int]]:
    """Distinct commands with their last outcome: failures, then test runs, then the rest."""
    ordered = command_groups(actions)[:_MAX_COMMANDS]
    lines = [command_line(group) for group in ordered]
    lines.sort(key=lambda t: (t[0], -t[1]))
    return [(text, rank) for rank, (_, _, text) in enumerate(lines)]


def command_line(group: Sequence[Action]) -> tuple[int, int, str]:
    """(importance, index, line) of a command run one or more times, by its last run."""
    last = group[-1]
    times = f" ×{len(group)}" if len(group) > 1 else ""
    if not last.answered:
        outcome = "no result yet"
    elif last.failed:
        outcome = "failed" + (f" (exit {last.exit_code})" if last.exit_code not in (None, 0) else "")
    else:
        outcome = "ok" + (f" (exit {last.exit_code})" if last.exit_code is not None else "")
    if last.summary:
        outcome += f", {last.summary}"
    elif last.outcome and not last.failed and not last.quiet:
        outcome += f": {last.outcome}"
    importance = 0 if last.failed else (1 if last.test else (3 if last.quiet else 2))
    return importance, last.index, f"{last.label}{times} → {outcome}"
