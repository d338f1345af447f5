"""The extractive summariser's answers made ahead by a copy of the process (:mod:`tcompact.forked`, issue 26).

The extractive summariser answers in this process, one thread of Python, while a second core waits.
Told which requests are coming (:meth:`~tcompact.summarizers.base.Summarizer.answer_ahead`) — the later
half of a round-level stage's calls, or the one request of a summarising compressor, which meanwhile does
the work that does not need the answer — it has a copy of the process answer them; :meth:`Ahead.take`
hands such an answer over when its request arrives (the same text: the answer depends on the request
alone), with the token counts of its block summaries, which round-level counts next. A request the copy
did not answer is answered here as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import orjson

from ...counting.tokens import TokenCounter
from ...forked import Forked, enabled
from ..base import SummaryRequest
from .tools.errors import remember, remembered

__all__ = ["Ahead"]

_Answer = tuple[str, list[tuple[str, int]]]  # the JSON answer; each block summary with its token count


class Ahead:
    """The batches of requests a copy is answering, and their answers once fetched."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._batches: list[_Batch] = []
        self._lock = threading.Lock()

    def start(self, requests: Sequence[SummaryRequest], answer: Callable[[SummaryRequest], str]) -> None:
        """Have a copy answer ``requests`` with ``answer``."""
        wanted = list(requests)
        if not wanted or not enabled():
            return
        _ = self.counter.encoding  # the tokenizer built once, before the copy is made, for both
        batch = _Batch(wanted, Forked(lambda: _answers(wanted, answer, self.counter)))
        with self._lock:
            self._batches.append(batch)

    def take(self, request: SummaryRequest) -> str | None:
        """The answer a copy made for ``request`` (waited for), or None: answer it here."""
        with self._lock:
            batch = next((b for b in self._batches if b.holds(request)), None)
            if batch is None:
                return None
            got = batch.pop(request)
            if not batch.pending:
                self._batches.remove(batch)
        if got is None:
            return None
        text, counts = got
        self.counter.learn(counts)
        return text


class _Batch:
    def __init__(self, requests: list[SummaryRequest], copy: Forked[tuple[list[_Answer], dict]]) -> None:
        self.requests = requests
        self.pending = {_key(r): n for n, r in enumerate(requests)}
        self.copy: Forked[tuple[list[_Answer], dict]] | None = copy
        self.answers: list[_Answer] | None = None

    def holds(self, request: SummaryRequest) -> bool:
        n = self.pending.get(_key(request))
        return n is not None and self.requests[n].messages is request.messages

    def pop(self, request: SummaryRequest) -> _Answer | None:
        n = self.pending.pop(_key(request))
        if self.copy is not None:  # the first request of the batch: wait for the copy
            got, self.copy = self.copy.result(), None
            if got is not None:
                self.answers, found = got
                remember(found)  # the error lines of the outputs it read: the benefit check reads them again
        return self.answers[n] if self.answers is not None and n < len(self.answers) else None


def _key(request: SummaryRequest) -> tuple:
    """What an answer depends on: the messages (the same object), the body, the contract and budgets, the blocks
    of a "blocks" request, the prompt of another (its preserve instruction)."""
    return (id(request.messages), request.contract, request.body.start, request.body.stop, request.blocks,
            request.target_tokens, request.cap_tokens, None if request.contract == "blocks" else request.prompt)


def _answers(requests: list[SummaryRequest], answer: Callable[[SummaryRequest], str], counter: TokenCounter
             ) -> tuple[list[_Answer], dict]:
    """In the copy: each answer, and the error lines it found (remembered by :func:`error_lines`)."""
    known = remembered().keys()
    out = [_answered(answer(r), counter) for r in requests]
    return out, {k: v for k, v in remembered().items() if k not in known}


def _answered(text: str, counter: TokenCounter) -> _Answer:
    """The answer, with the count of each block summary in it (counted while it was fitted)."""
    try:
        blocks = orjson.loads(text).get("blocks") or []
    except (orjson.JSONDecodeError, AttributeError):
        blocks = []
    summaries = [b["summary"] for b in blocks if isinstance(b, dict) and isinstance(b.get("summary"), str)]
    return text, [(s, counter.count(s)) for s in summaries]
