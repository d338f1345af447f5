"""Which failed tool calls a later run fixed: the same command or file again, or a test run covering them.

A failure a later run fixed is reported once, with that fix, never among the attempts not to retry.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..tools import Action

__all__ = ["resolve_failures"]


def resolve_failures(actions: Sequence[Action]) -> None:
    """Mark failures fixed by a later successful rerun (same key, or a test run covering them)."""
    pending: dict[tuple[str, str], list[Action]] = {}
    tests: list[Action] = []
    for action in actions:
        if not action.answered:
            continue
        if action.failed:
            for key in action.keys:
                pending.setdefault(key, []).append(action)
            if action.test is not None:
                tests.append(action)
            continue
        for key in action.keys:
            for failure in pending.pop(key, ()):
                failure.resolved_by = failure.resolved_by or action.label
        if action.test is not None:
            for failure in tests:
                if failure.resolved_by is None and failure.test and _covers(action.test, failure.test):
                    failure.resolved_by = action.label


def _covers(runs: Sequence[tuple[str, frozenset[str]]], failed: Sequence[tuple[str, frozenset[str]]]) -> bool:
    """Whether passing test runs cover every failing one (same runner; whole suite or a superset of targets)."""
    return all(any(runner == f_runner and (not targets or f_targets <= targets) for runner, targets in runs)
               for f_runner, f_targets in failed)
