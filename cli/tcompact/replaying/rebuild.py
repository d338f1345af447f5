"""A dump's compressor run done again on its recorded messages: what verifying and re-running share."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..compressors import get
from ..compressors.base import CompressionResult, Context
from ..dump import messages_of
from ..errors import InputError
from ..summarizers.base import Summarizer
from ..counting.tokens import TokenCounter

__all__ = ["rebuild", "run_context"]


def run_context(doc: Mapping[str, Any], summarizer: Summarizer) -> Context:
    """What the dump's compressor got besides its messages and settings: the counter, the window, the
    options of the recorded run; answered by ``summarizer``, never waiting between retries."""
    enc = doc["encoding"]
    counter = TokenCounter(enc["name"], approximate=bool(enc.get("approximate")))
    return Context(counter=counter, window=doc["trigger"]["context_window"], summarizer=summarizer,
                   force=bool(doc["trigger"]["forced"]), preserve=doc["request"].get("preserve"),
                   sleep=lambda s: None)


def rebuild(doc: Mapping[str, Any], summarizer: Summarizer, *, path: Path | None = None) -> CompressionResult:
    """Run the dump's compressor with its settings on its recorded messages, answered by ``summarizer``."""
    compressor = get(doc["processor"]["name"])
    settings = compressor.settings_model(**doc["processor"]["settings"])
    try:
        messages = messages_of(doc["context_before"]["messages"])
    except (ValueError, TypeError, AttributeError) as exc:  # ShapeError: a stored message of the wrong shape
        raise InputError(f"field context_before.messages holds a message tcompact cannot read ({exc})",
                         path=str(path) if path is not None else None,
                         hint="the dump was edited or written by another tool; compact again to get a new one") from None
    return compressor.compress(messages, settings, run_context(doc, summarizer))
