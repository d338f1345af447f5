"""The ``replay`` backend: answers recorded in compression dumps, offline (the dumps are read and
checked by :mod:`tcompact.dump`; this module only matches requests to what they recorded).

A request is matched to a dump by the fingerprint of what was sent (the wire messages, the prompt
and the contract). Recorded failures replay as failures (with the figures an overflow refusal
gave), a refused reply replays as that reply (the compressor refuses it again), and the
summariser window of the recorded run is this backend's window, so a what-if run over the same
transcript takes the same path; a request with no recording is an error that names the dump folder.
A replay of redacted dumps matches requests without the token figures their prompts state
(``blind``): counted on the original texts, those figures differ when counted on redacted ones.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson
from pydantic import Field

from .base import BackendSettings, ModelWindow, Summarizer, SummaryRequest, SummaryResponse, SummarizerError

__all__ = ["ReplaySummarizer", "ReplaySettings", "fingerprint", "without_token_figures", "TOKEN_FIGURE"]


#: A token figure stated in a prompt: ``- current_context_window_tokens: 114934``, ``within 2,000 tokens``.
TOKEN_FIGURE = re.compile(r"(?<=_tokens: )\d+|\b\d[\d,]*(?= tokens\b)")


def without_token_figures(value: Any) -> Any:
    """``value`` with every token figure stated in its texts replaced by ``#``."""
    if isinstance(value, str):
        return TOKEN_FIGURE.sub("#", value)
    if isinstance(value, list):
        return [without_token_figures(v) for v in value]
    if isinstance(value, dict):
        return {k: without_token_figures(v) for k, v in value.items()}
    return value


def fingerprint(messages_sent: Iterable[Mapping[str, Any]], contract: str, *, blind: bool = False) -> str:
    """A stable hash of what a summariser was sent; ``blind`` leaves out the token figures its texts
    state (counted on the original texts, they cannot be counted again from redacted ones)."""
    sent = list(messages_sent)
    canonical = orjson.dumps([contract, without_token_figures(sent) if blind else sent], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()


class ReplaySettings(BackendSettings):
    """The replay backend's one option: the folder of dumps whose answers it gives."""

    replay_dir: Path = Field(json_schema_extra={"option": "--replay-dir", "own": True,
                                                "hint": "point it at a folder of dumps"})

    @classmethod
    def given(cls, options: Any) -> dict[str, object]:
        return {"replay_dir": options.replay_dir}


class ReplaySummarizer(Summarizer):
    """Answers each request with the response recorded for the same request, in recording order."""

    name = "replay"
    description = "answers recorded in compression dumps, offline"
    settings_model = ReplaySettings

    @classmethod
    def build(cls, settings: ReplaySettings, *, counter: Any = None, progress: Any = None) -> ReplaySummarizer:
        from ..dump import dumps_of  # the one dump reader (dumps are written and read there)

        return cls([d.doc for d in dumps_of(str(settings.replay_dir))], origin=str(settings.replay_dir))

    def __init__(self, dumps: Iterable[Mapping[str, Any]], *, origin: str = "the dumps", blind: bool = False) -> None:
        self.origin, self.blind = origin, blind
        self._recorded: dict[str, deque[Mapping[str, Any]]] = defaultdict(deque)
        self._window: ModelWindow | None = None
        self.trusted = True  # answers recorded from the extractive backend only are not checked again
        self.narrates = False  # the recorded run asked a model for the narrative beside the extractive facts
        for n, doc in enumerate(sorted(dumps, key=lambda d: (d.get("timestamp") or 0,
                                                            (d.get("call") or {}).get("number") or 0))):
            req = doc.get("request") or {}
            key = fingerprint(req.get("messages_sent") or [], str(req.get("contract")), blind=blind)
            self._recorded[key].append(doc)
            if n == 0:
                self._window = _window(req.get("summarizer_window"))
            self.trusted = self.trusted and req.get("summarizer") == "extractive"
            self.narrates = self.narrates or req.get("contract") == "narrative"

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        """The recorded response for this request (or its recorded error)."""
        key = fingerprint(request.wire_messages(), request.contract, blind=self.blind)
        queue = self._recorded.get(key)
        if not queue:
            raise SummarizerError("api_request_error", f"no recorded response for this {request.processor} request "
                                  f"in {self.origin}", hint="record it first with --summarizer openai or extractive")
        doc = queue.popleft()
        error, resp = doc.get("error"), doc.get("response")
        if error and not resp:
            raise SummarizerError(str(error.get("kind") or "unknown"), str(error.get("message") or "recorded error"),
                                  retry_after=error.get("retry_after"), status=error.get("status"),
                                  context_window=error.get("context_window"), prompt_tokens=error.get("prompt_tokens"))
        resp = resp or {}
        return SummaryResponse(text=str(resp.get("raw_content") or ""), usage=resp.get("usage"),
                               model=resp.get("model"), latency_s=0.0, finish_reason=resp.get("finish_reason"))

    def context_window(self) -> ModelWindow | None:
        """The summariser window the recorded run was fitted to (None: it knew none)."""
        return self._window


def _window(recorded: Any) -> ModelWindow | None:
    if isinstance(recorded, Mapping) and isinstance(recorded.get("tokens"), int) and recorded["tokens"] > 0:
        return ModelWindow(recorded["tokens"], str(recorded.get("source") or "recorded"))
    return None
