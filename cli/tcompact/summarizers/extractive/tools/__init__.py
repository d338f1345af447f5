"""Reading what tool calls did, whatever harness made them.

:func:`classify` turns a call into an :class:`Action` (shell command, patch, read, edit or write,
search, test, other — with the files it touches and the tests it runs, read from its name and the
shape of its arguments; shell lines are parsed, never run); :func:`record_result` reads the result
that answers it (failed or not, exit code, the key error, a test summary, every error statement
of the output, the line that says how it ended). :func:`error_lines` and :func:`outcome_line`
read any output text; :func:`describe` and the rest of :mod:`.describe` state outcomes, one call or
grouped.
"""

from .calls import Action, call_args, classify
from .describe import (
    command_groups,
    commands,
    describe,
    failure_groups,
    failure_line,
    fixed_line,
    fixes,
    last_actions,
    reported_errors,
    test_coverage,
    unfixed,
    went_on,
)
from .errors import error_lines, outcome_line
from .outputs import offloaded
from .results import record_result

__all__ = ["Action", "classify", "call_args", "record_result", "error_lines", "outcome_line", "offloaded",
           "describe", "last_actions", "test_coverage", "fixes", "unfixed", "failure_groups", "failure_line",
           "commands", "command_groups", "fixed_line", "went_on", "reported_errors"]
