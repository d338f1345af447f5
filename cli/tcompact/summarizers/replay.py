"""The ``replay`` backend: answers from recorded compression dumps, offline.

A request is matched to a dump by the fingerprint of what was sent (the wire messages, the prompt
and the contract). Recorded failures replay as failures, so a what-if run over the same transcript
takes the same path; a request with no recording is an error that names the dump folder. A
replay of redacted dumps matches requests without the token figures their prompts state
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

from ..errors import InputError
from .base import SummaryRequest, SummaryResponse, SummarizerError

__all__ = ["ReplaySummarizer", "fingerprint", "without_token_figures", "TOKEN_FIGURE"]


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


class ReplaySummarizer:
    """Answers each request with the response recorded for the same request, in recording order."""

    name = "replay"

    def __init__(self, dumps: Iterable[Mapping[str, Any]], *, origin: str = "the dumps", blind: bool = False) -> None:
        self.origin, self.blind = origin, blind
        self._recorded: dict[str, deque[Mapping[str, Any]]] = defaultdict(deque)
        for doc in sorted(dumps, key=lambda d: (d.get("timestamp") or 0, (d.get("call") or {}).get("number") or 0)):
            req = doc.get("request") or {}
            key = fingerprint(req.get("messages_sent") or [], str(req.get("contract")), blind=blind)
            self._recorded[key].append(doc)

    @classmethod
    def from_folder(cls, folder: str | Path) -> ReplaySummarizer:
        """Load every ``*.json`` dump of a folder (or one dump file)."""
        path = Path(folder)
        files = sorted(path.glob("*.json")) if path.is_dir() else [path]
        if not files or not all(f.exists() for f in files):
            raise InputError("no dumps to replay from", path=str(folder), hint="pass --replay-dir with dump files")
        docs = []
        for f in files:
            try:
                docs.append(orjson.loads(f.read_bytes()))
            except orjson.JSONDecodeError as exc:
                raise InputError(f"not a JSON dump ({exc.msg})", path=str(f), hint="remove it from the folder") from None
        return cls(docs, origin=str(folder))

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        """The recorded response for this request (or its recorded error)."""
        key = fingerprint(request.wire_messages(), request.contract, blind=self.blind)
        queue = self._recorded.get(key)
        if not queue:
            raise SummarizerError("api_request_error", f"no recorded response for this {request.processor} request "
                                  f"in {self.origin}", hint="record it first with --summarizer openai or extractive")
        doc = queue.popleft()
        error = doc.get("error")
        if error:
            raise SummarizerError(str(error.get("kind") or "unknown"), str(error.get("message") or "recorded error"),
                                  retry_after=error.get("retry_after"), status=error.get("status"))
        resp = doc.get("response") or {}
        return SummaryResponse(text=str(resp.get("raw_content") or ""), usage=resp.get("usage"),
                               model=resp.get("model"), latency_s=0.0)
