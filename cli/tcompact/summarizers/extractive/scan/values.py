"""What the scan of a transcript found, as small typed values: one per kind of fact a summary is built from.

:class:`~.extraction.Scan` holds one of each — the user's requests (:class:`Requests`), the plan
(:class:`Plan`), what the tools did (:class:`Work`), what the assistant said (:class:`Said`) and
the earlier checkpoints in the body (:class:`Earlier`) — so a writer reads the value it needs by
name, and the state of the pass itself (calls not answered yet, running sessions) stays in the pass.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from ....model import Message
from ..text import sentences, window
from ..tools import Action
from .files import FileState

__all__ = ["Requests", "Plan", "Work", "Said", "Earlier", "MAX_SENTENCES"]

MAX_SENTENCES = 400  # assistant sentences kept (the newest)


@dataclass(slots=True)
class Requests:
    """The user's requests: those of the body, the last one, and the context around it."""

    requests: list[tuple[int, int, str]] = field(default_factory=list)  # (index, round, text) in the body
    last: tuple[int, str] | None = None  # (index, text) of the last real user message
    previous_text: str = ""  # the last assistant text before that request
    substantive: list[tuple[int, str]] = field(default_factory=list)  # the first and the latest of 40+ characters
    round: int = 0  # real user messages so far; after the scan, the current round


@dataclass(slots=True)
class Plan:
    """The latest todo list (TodoWrite, update_plan) and its explanation; ``todos`` None when there was none."""

    todos: list[tuple[str, str]] | None = None
    explanation: str = ""


@dataclass(slots=True)
class Work:
    """What the tools did: the calls as actions, the files they touched, offloaded content, the working directory."""

    actions: list[Action] = field(default_factory=list)
    files: dict[str, FileState] = field(default_factory=dict)
    critical: dict[str, None] = field(default_factory=dict)
    cwd: str = ""

    def last_action(self) -> Action | None:
        """The newest tool call of the body, if any."""
        return self.actions[-1] if self.actions else None


@dataclass(slots=True)
class Earlier:
    """Earlier checkpoints in the body: their texts, their lines by category (round-level blocks), and whether
    the newest after the latest request records that request as answered."""

    checkpoints: list[tuple[int, str]] = field(default_factory=list)  # (index, text) of earlier summaries
    carried: dict[str, list[str]] = field(default_factory=dict)
    answered: bool = False


@dataclass(slots=True)
class Said:
    """What the assistant wrote: its texts in order, each round's last one, backticked terms, the last message;
    the sentences are read from the newest text back, only as far as they are asked for."""

    texts: list[tuple[int, int, str]] = field(default_factory=list)  # (index, round, text)
    round_text: dict[int, tuple[str, bool]] = field(default_factory=dict)  # round -> (last text, had tool calls)
    terms: Counter[str] = field(default_factory=Counter)
    last: Message | None = None
    _newest: list[tuple[int, int, str]] = field(default_factory=list)  # (index, round, sentence), newest first
    _unread: int = -1  # texts not yet read for sentences (the oldest ones); -1: all of them

    def newest_sentences(self) -> Iterator[tuple[int, int, str]]:
        """(index, round, sentence) of the newest informative sentences of the texts, newest first; at most
        :data:`MAX_SENTENCES`, and the texts are only read as far as the caller iterates."""
        if self._unread < 0:
            self._unread = len(self.texts)
        n = 0
        while n < len(self._newest) or self._read_older():
            yield self._newest[n]
            n += 1

    def _read_older(self) -> bool:
        """Add the sentences of the next older text that has some; False when none is left or there are enough."""
        while self._unread and len(self._newest) < MAX_SENTENCES:
            self._unread -= 1
            i, rnd, text = self.texts[self._unread]
            found = [(i, rnd, s) for s in sentences(window(text) if len(text) > 20000 else text)]
            if found:
                self._newest += reversed(found[len(self._newest) - MAX_SENTENCES:])
                return True
        return False
