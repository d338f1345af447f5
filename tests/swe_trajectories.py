"""SWE-agent trajectories as SWE-agent wrote them before function calling (0.x), every value invented.

The shape: one JSON object with a ``history`` — the system prompt, the task as a user message, then
per step an assistant message whose ``content`` is its thought and a fenced command, with ``thought``
and ``action`` keys and no ``message_type``, answered by the command's output as a *user* message
ending in SWE-agent's ``(Open file: …)`` / ``(Current directory: …)`` / ``bash-$`` prompt — and a
``trajectory`` list of the same steps as ``{"action", "observation", "response", "state", "thought"}``;
``info`` holds the exit status, the submitted patch and ``model_stats``.
"""

from __future__ import annotations

from typing import Any

SYSTEM = ("SETTING: You are an autonomous programmer, and you're working directly in the command line with a "
          "special interface. The special interface consists of a file editor that shows you 100 lines of a file "
          "at a time. COMMANDS: open <path> [<line_number>], goto <line_number>, scroll_down, create <filename>, "
          "edit <start_line>:<end_line>, search_dir <search_term> [<dir>], find_file <file_name> [<dir>], submit.")
TASK = ("We're currently solving the following issue within our repository. Here's the issue text:\nISSUE:\n"
        "TimeDelta serialization rounds 345 milliseconds down to 344 in fields.py; it should round to the nearest "
        "integer.\n\nINSTRUCTIONS:\nNow, you're going to solve this issue on your own. When you're satisfied with "
        "all of the changes you've made, you can submit your changes to the code base by simply running the submit "
        "command.\n(Open file: n/a)\n(Current directory: /marshmallow-code__marshmallow)\nbash-$")
_STEPS = (("Let me find the file that serializes TimeDelta.", "find_file fields.py src"),
          ("Open it near the TimeDelta field.", "open src/marshmallow/fields.py 1474"),
          ("The value is truncated with int(); round instead.", "edit 1475:1475\n        return int(round(value.total_seconds() / base_unit.total_seconds()))\nend_of_edit"),
          ("Reproduce the bug with a small script.", "create reproduce.py"),
          ("Run it.", "python reproduce.py"),
          ("Search the tests for TimeDelta.", "search_dir TimeDelta tests"))


def _output(n: int, lines: int) -> str:
    body = "\n".join(f"{n}:{k}: def field_{k}(self, value, attr, obj, **kwargs):  # line {k} of the listing {n}"
                     for k in range(lines))
    return f"{body}\n(Open file: /marshmallow-code__marshmallow/src/marshmallow/fields.py)\n" \
           "(Current directory: /marshmallow-code__marshmallow)\nbash-$"


def old_trajectory(steps: int = 6, *, lines: int = 8, submit: bool = True) -> dict[str, Any]:
    """A pre-function-calling trajectory of ``steps`` command steps (each output ``lines`` long), then ``submit``."""
    history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM, "agent": "primary"},
                                     {"role": "user", "content": TASK, "agent": "primary"}]
    trajectory = []
    plan = [_STEPS[n % len(_STEPS)] for n in range(steps)] + ([("Done: the rounding is fixed.", "submit")]
                                                              if submit else [])
    for n, (thought, action) in enumerate(plan):
        response = f"{thought}\n```\n{action}\n```"
        output = "diff --git a/src/marshmallow/fields.py b/src/marshmallow/fields.py" if action == "submit" \
            else _output(n, lines)
        history.append({"role": "assistant", "content": response, "thought": thought, "action": action + "\n",
                        "agent": "primary"})
        history.append({"role": "user", "content": output, "agent": "primary"})
        trajectory.append({"action": action + "\n", "observation": output, "response": response,
                           "state": '{"open_file": "n/a", "working_dir": "/marshmallow-code__marshmallow"}',
                           "thought": thought})
    return {"environment": "swe_main", "trajectory": trajectory, "history": history,
            "info": {"exit_status": "submitted", "submission": "diff --git a/src/marshmallow/fields.py",
                     "model_stats": {"total_cost": 0.42, "instance_cost": 0.42, "tokens_sent": 52000,
                                     "tokens_received": 900, "api_calls": len(plan)}}}
