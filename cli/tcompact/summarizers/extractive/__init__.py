"""The offline summariser: a state snapshot built from the transcript itself, no model involved.

``ExtractiveSummarizer`` fills the numbered sections of a contract (:data:`contracts.SECTIONS`)
from what the messages already say: the user's requests and constraints in their own words, the
todo/plan state, what the assistant decided and found, which files were read, edited or created,
which commands ran and how they ended, which attempts failed and were never fixed, and a one-line
resume point. Only ``messages[body]`` is summarised; the preserved prefix before it is read for
context (the active request, the round numbers, the plan). Internal messages in the body that hold
an earlier checkpoint (``<memory_block_…>``, a Claude compact summary) are carried as one block.

The output is deterministic (same request, same text) and fitted to ``target_tokens``: every item
is tokenised once and the least important are left out first. Large tool results are only looked
at through a head and a tail window (their error lines excepted), so the cost is linear in the
size of the body.

The work is split by what it does, one package each:

- :mod:`.tools` reads what a tool call did: :mod:`~.tools.calls` classifies it (with
  :mod:`~.tools.shell` for command lines), :mod:`~.tools.results` and :mod:`~.tools.outputs` read
  its result, :mod:`~.tools.errors` finds the error lines of any output (the one detector), and
  :mod:`~.tools.describe` states outcomes — the one wording of failures, fixes and error lines both
  summaries use;
- :mod:`.scan` is the one pass over a transcript (:class:`~.scan.Scan`: requests, texts, actions,
  files, the plan, earlier checkpoints);
- :mod:`.snapshot` writes the ``<state_snapshot>`` of a contract: items from the user's messages
  (:mod:`~.snapshot.users`), the tools (:mod:`~.snapshot.work`), the assistant's prose
  (:mod:`~.snapshot.prose`) and ``--preserve`` (:mod:`~.snapshot.preserve`), placed in sections
  (:mod:`~.snapshot.layout`) and fitted (:mod:`~.snapshot.fit`);
- :mod:`.blocks` answers the round-level pipeline's "blocks" contract with JSON, one summary per
  block: raw runs (:mod:`~.blocks.parts`, with :mod:`~.blocks.background`, :mod:`~.blocks.content`,
  :mod:`~.blocks.files`, :mod:`~.blocks.history`) and earlier memory blocks (:mod:`~.blocks.memory`)
  become parts, merged (:mod:`~.blocks.merge`) and fitted (:mod:`~.blocks.fit`) by
  :mod:`~.blocks.writer`;
- :mod:`.fitting` is the one fitting engine both writers use (items, counting, the running
  estimate, leaving out until it fits), and :mod:`.text` the text helpers (cutting, quoting,
  sentences).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from ...counting.tokens import TokenCounter
from ...forked import later_half
from ...model import Message
from ..base import BackendSettings, Summarizer, SummarizerError, SummaryRequest, SummaryResponse
from ..contracts import SECTIONS
from .ahead import Ahead
from .blocks import summarize_blocks
from .scan import Scan
from .snapshot import instruction, write_snapshot
from .tools.errors import drop_error_lines_ahead, error_lines_ahead

__all__ = ["ExtractiveSummarizer", "ExtractiveSettings"]


class ExtractiveSettings(BackendSettings):
    """The extractive summariser has no options of its own."""


class ExtractiveSummarizer(Summarizer):
    """Offline, deterministic summariser that follows a contract's sections within a token budget."""

    name = "extractive"
    description = "offline: a state snapshot built from the transcript itself, no model"
    settings_model = ExtractiveSettings
    reruns = True
    #: Its output follows the contract by construction: the reply checks of summarised compactions
    #: (summarizers/validity.py) are for models, and would refuse a transcript's own repetitions.
    trusted = True

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._ahead = Ahead(counter)

    @classmethod
    def build(cls, settings: ExtractiveSettings, *, counter: TokenCounter, progress: object = None
              ) -> ExtractiveSummarizer:
        return cls(counter)

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        """Summarise ``request.messages[request.body]`` into a ``<state_snapshot>`` block, or answer a
        "blocks" request with one summary per block (:mod:`.blocks`)."""
        started = time.perf_counter()
        if request.contract != "blocks" and request.contract not in SECTIONS:
            raise SummarizerError("api_request_error", f"unknown summary contract {request.contract!r}",
                                  hint=f"choose one of: {', '.join(SECTIONS)}")
        text = self._ahead.take(request)
        if text is None:
            text = self._answer(request)
        return SummaryResponse(text=text, usage=None, model="extractive", latency_s=time.perf_counter() - started)

    def answer_ahead(self, requests: Sequence[SummaryRequest]) -> None:
        """A copy of the process answers ``requests`` meanwhile (:mod:`.ahead`)."""
        self._ahead.start([r for r in requests if r.contract == "blocks" or r.contract in SECTIONS], self._answer)

    def _answer(self, request: SummaryRequest) -> str:
        if request.contract == "blocks":
            return summarize_blocks(request, self.counter)
        error_lines_ahead(_later_outputs(request.messages, request.body))  # found meanwhile by a copy
        try:
            scan = Scan(request.messages, request.body)
        finally:
            drop_error_lines_ahead()
        return write_snapshot(scan, request.contract, SECTIONS[request.contract], budget=request.target_tokens,
                              counter=self.counter, preserve=instruction(request.prompt),
                              cap=max(request.cap_tokens or 0, request.target_tokens))


def _later_outputs(messages: Sequence[Message], body: range) -> list[str]:
    """The tool outputs of the later part of ``body`` holding about half of its outputs' characters: the scan
    reaches them once it has read the earlier half itself."""
    outputs = [m.text for m in messages[body.start:body.stop] if m.role in ("tool", "function")]
    return outputs[later_half([len(t) for t in outputs]):]
