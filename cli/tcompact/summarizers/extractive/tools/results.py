"""What came of a tool call: its result read for failure, exit code, key error, test summary and gist.

A result is matched to its call by id; the verdict is stored on the call's :class:`Action` so
that failures can later be paired with the successful rerun that fixed them.
"""

from __future__ import annotations

import re

from ....tool_names import AGENT, kind_of
from .calls import Action
from .errors import error_lines, key_error, outcome_line
from .outputs import command_failed, exit_code_of, first_lines, gist_of, symbols_of, summary_line_of, tool_failed
from ..text import cut

_DATA_FILES = re.compile(r"(?i)\.(?:jsonl?|csv|tsv|log|lock|vtt|srt|svg|xml|min\.js|map|bin|txt|out|ndjson)$")
_LINE_NUMBERS = re.compile(r"(?m)^\s*\d+(?:→|\t|:|\s{2})")


def record_result(action: Action, text: str, *, window: str, is_error: bool) -> None:
    """Outcome of the call a tool result answers: failed or not, exit code, key error, test summary."""
    action.answered = True
    head = window[:4000]
    exit_code = exit_code_of(text)
    failed = is_error or (exit_code is not None and exit_code != 0) or "<tool_use_error>" in head
    summary = summary_line_of(window) if action.kind == "command" else ""
    if not failed and exit_code is None:
        failed = _silent_failure(action, window, summary=summary)
    action.failed = failed
    action.exit_code = exit_code
    action.summary = summary
    action.first_line = cut(" ⏎ ".join(first_lines(head)), 200)
    if failed:
        action.error = key_error(window)
    elif not action.gist and action.partial is False:
        _note_read(action, head)
    action.error_lines = tuple(error_lines(text))
    if action.kind == "command" and not failed:
        action.outcome = summary or outcome_line(text)
    action.finishes = kind_of(action.name) == "finish" and not failed
    _created_or_updated(action, head)


def _silent_failure(action: Action, window: str, *, summary: str) -> bool:
    """Whether a result without error flag or exit code still says the call failed."""
    if action.kind == "command" and not action.quiet:
        return command_failed(window, summary)
    if action.name.lower() in AGENT:  # a sub-agent's answer is a report, whatever its first word
        return False
    return tool_failed(window[:4000], refusable=action.kind == "other")


def _note_read(action: Action, head: str) -> None:
    """The gist and symbols of the one source file a successful whole-file read showed."""
    reads = [p for p, op in action.paths if op == "read"]
    if len(reads) == 1 and not _DATA_FILES.search(reads[0]):
        action.gist = gist_of(head)
        action.symbols = tuple(symbols_of(_LINE_NUMBERS.sub("", head)))


def _created_or_updated(action: Action, head: str) -> None:
    """A write the tool reports as an update of an existing file counts as written, not created."""
    if action.paths and any(op == "created" for _, op in action.paths) and action.kind == "edit" \
            and "updated" in head[:300] and "created" not in head[:300]:
        action.paths = [(p, "written" if op == "created" else op) for p, op in action.paths]
