"""What happened to one file across a summarised part: its operations, gist, symbols and rounds.

A file outlives the messages that touched it, so the scan keeps one :class:`FileState` per path
and both summary writers state it from there (``status()``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..tools import Action

__all__ = ["FileState"]

_STATUS_OPS = ("created", "written", "edited", "deleted", "moved", "read", "searched")


@dataclass(slots=True)
class FileState:
    """What happened to one file across the body."""

    path: str
    ops: Counter = field(default_factory=Counter)
    failed: Counter = field(default_factory=Counter)
    first: int = 0
    last: int = 0
    gist: str = ""
    symbols: list[str] = field(default_factory=list)
    rounds: set[int] = field(default_factory=set)
    last_op: str = ""  # the latest operation that succeeded

    def status(self, *, latest: bool = False) -> str:
        """The operations: created, edited ×3, read, a failed one that never succeeded, …; ``latest``: a file
        deleted last says so first."""
        parts = [op + (f" ×{self.ops[op]}" if self.ops[op] > 1 else "") for op in _STATUS_OPS if self.ops.get(op)]
        parts += [f"{op} failed" + (f" ×{n}" if n > 1 else "") for op, n in sorted(self.failed.items())
                  if not self.ops.get(op)]
        status = ", ".join(parts) or "touched"
        return f"now deleted (earlier: {status})" if latest and self.last_op == "deleted" and len(parts) > 1 \
            else status

    def note(self, action: Action, op: str) -> None:
        """Count one operation of an action on this file and keep its gist and symbols."""
        if action.failed:
            self.failed[op] += 1
        else:
            self.ops[op] += 1
            self.last_op = op
        self.last = action.index
        self.rounds.add(action.round)
        if action.gist and not self.gist:
            self.gist = action.gist
        for symbol in action.path_symbols.get(self.path, action.symbols):
            if symbol not in self.symbols and len(self.symbols) < 8:
                self.symbols.append(symbol)
