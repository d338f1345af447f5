"""The outcome lines a block's raw run shares between its sections: failures, fixes, commands, where it stopped.

:class:`Content` computes them once per run (the descriptions themselves come from
:mod:`..tools.describe`, shared with the state snapshot).
"""

from __future__ import annotations

from ..scan import Scan
from ..text import clean, cut, quote
from ..tools import commands as _commands
from ..tools import describe as _describe
from ..tools import fixes as _fixes
from ..tools import unfixed as _unfixed


class Content:
    """Failures, fixes and commands of a scanned run, and the point where it stopped."""

    def __init__(self, x: Scan) -> None:
        self.x = x
        self.answered = x.answered()
        self.fixes = _fixes(x.work.actions)
        self.failed = _unfixed(x.work.actions)
        self.commands = _commands(x.work.actions)

    def resume_point(self) -> list[tuple[str, int]]:
        """The last concrete action with its result, and whether the latest request was answered."""
        out = []
        last = self.x.work.last_action()
        if last is not None:
            text = f"last action: {_describe(last)}"
            if last.answered and not last.failed and last.first_line and not last.summary and last.command \
                    and not last.quiet:
                text += f"; output began: {quote(cut(last.first_line, 160))}"
            out.append((text, 0))
        if self.answered and self.x.said.last is not None:
            out.append((f"the latest request was answered: {quote(cut(clean(self.x.said.last.text), 240))}",
                        1))
        elif self.x.user.last is not None:
            out.append(("the latest request is not answered yet; continue from the last action", 1))
        return out
