"""What a block's raw run did, in one line (files by operation, commands, failures), and its context.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING


if TYPE_CHECKING:
    from ..tools import Action
    from ..scan import Work

_WORK_OPS = ("created", "written", "edited", "deleted", "read", "searched")



def round_work(actions: Sequence[Action]) -> str:
    """The files a round touched by operation, the commands it ran and its failed calls."""
    files: dict[str, Counter] = {}
    for a in actions:
        for path, op in a.paths:
            files.setdefault(op, Counter())[path.rsplit("/", 1)[-1]] += 1
    parts = _file_parts(files)
    commands = sum(1 for a in actions if a.kind == "command")
    if commands:
        parts.append(f"ran {commands} command(s)")
    failed = sum(1 for a in actions if a.failed)
    if failed:
        parts.append(f"{failed} tool call(s) failed")
    return "; ".join(parts) if parts else "no tool calls"



def _file_parts(files: Mapping[str, Counter]) -> list[str]:
    """'edited a.py ×2, b.py (+3 more)' for each operation, the six most touched names shown."""
    parts = []
    for op in _WORK_OPS:
        if op in files:
            names = ", ".join(n + (f" ×{c}" if c > 1 else "") for n, c in files[op].most_common(6))
            more = len(files[op]) - 6
            parts.append(f"{op} {names}" + (f" (+{more} more)" if more > 0 else ""))
    return parts



def critical_lines(work: Work) -> list[tuple[str, int]]:
    """The working directory and where offloaded or cleared tool output can be recovered."""
    out = []
    if work.cwd:
        out.append((f"working directory: {work.cwd}", 0))
    for n, text in enumerate(work.critical):
        out.append((text, n + 1))
    return out
