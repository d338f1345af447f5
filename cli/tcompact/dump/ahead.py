"""The dumps' redaction made ahead, by copies of the process, while the compressors run (issue 26).

A run's dumps hold the whole transcript (the first dump's ``context_before``) and every prompt
sent; redacting them is a pass of some fifteen patterns over all that text, over a second of work
for a 40 MB session, which used to follow the compaction. It depends on nothing the compaction
decides: the transcript is redacted by a copy of the process (:mod:`tcompact.forked`) made once
it is counted, and the prompts of a stage of round-level by one made once the stage is done, each on
the core the compaction's one thread leaves idle. The dumps take the redactions from there (the
same strings: redaction is a function of the text); with no copy, they redact as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..forked import Forked
from ..model import Message, same_messages
from ..redact import redact, redact_value
from .values import digest, message_dict

__all__ = ["DumpsAhead", "MIN_TEXTS"]

#: Characters of prompts below which a stage's prompts are redacted where the dumps are written (a copy
#: of the process costs more than that).
MIN_TEXTS = 1 << 20


class DumpsAhead:
    """The redaction of a run's transcript as its first dump stores it, with the digest of the redacted
    messages; and of the texts (prompts) handed to :meth:`texts` on the way."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self.messages = tuple(messages)
        self._context: Forked[tuple[dict[str, str], str]] | None = Forked(lambda: _context(self.messages))
        self._context_made: tuple[dict[str, str], str] | None = None
        self._texts: list[tuple[list[str], Forked[dict[int, str]]]] = []
        self._known: dict[str, str] = {}

    def redaction(self, before: Sequence[Message]) -> tuple[dict[str, str], str] | None:
        """(the strings of the transcript redaction changed → what they became, the digest of the redacted
        messages) when ``before`` is the transcript this was made for and the copy answered; else None."""
        if not same_messages(before, self.messages):
            return None
        if self._context is not None:
            self._context_made, self._context = self._context.result(), None
        return self._context_made

    def texts(self, texts: Sequence[str]) -> None:
        """Redact ``texts`` (a stage's prompts) in a copy meanwhile, when they are long enough to be worth one."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._known))
        if sum(map(len, todo)) >= MIN_TEXTS:
            self._texts.append((todo, Forked(lambda: _changed(todo))))

    def leaf(self) -> Callable[[str], str]:
        """The redaction of one string for the dumps: from a copy's answer when it made one, else made here."""
        for todo, copy in self._texts:
            changed = copy.result()
            if changed is not None:
                self._known.update((t, changed.get(n, t)) for n, t in enumerate(todo))
        self._texts = []
        known = self._known
        return lambda text: known[text] if text in known else redact(text)


def _context(messages: Sequence[Message]) -> tuple[dict[str, str], str]:
    seen: dict[str, str] = {}
    clean = redact_value([message_dict(m) for m in messages], seen)
    return {raw: done for raw, done in seen.items() if raw is not done and raw != done}, digest(clean)


def _changed(texts: Sequence[str]) -> dict[int, str]:
    out = {}
    for n, text in enumerate(texts):
        done = redact(text)
        if done is not text and done != text:
            out[n] = done
    return out
