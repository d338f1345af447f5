"""Token counting with the encodings shipped inside the package (:mod:`tcompact.encodings`).

Per-message formula (documented in the README, "Token counting"):

* ``MESSAGE_OVERHEAD`` (4) per message — the ``<|start|>role\\n … <|end|>`` framing;
* the tokens of every text part, of a ``name`` field and of readable reasoning;
* per tool call: tokens of the name + tokens of the arguments + ``TOOL_CALL_OVERHEAD`` (3);
* images: the OpenAI tile formula when the size can be read from an inline image (85 + 170 per
  512-px tile after scaling to 2048 and then 768 on the short side), 85 for ``detail: low``,
  ``IMAGE_DEFAULT_TOKENS`` (1445) when the size is unknown — an estimate;
* encrypted reasoning: ``ceil(chars × 3/16)`` (base64 → bytes → ~4 bytes a token) — an estimate.

Each distinct text is tokenised once: :meth:`TokenCounter.prime` batch-encodes every text of a
message list in parallel and caches the counts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from .encodings import ENCODINGS, encoding_for_model, load_encoding
from .images import image_tokens
from .model import Message, ToolCall
from .rounds import is_real_user

__all__ = [
    "ENCODINGS",
    "KINDS",
    "MESSAGE_OVERHEAD",
    "TOOL_CALL_OVERHEAD",
    "MessageTokens",
    "TokenCounter",
    "encoding_for_model",
    "load_encoding",
    "message_kind",
]

MESSAGE_OVERHEAD = 4
TOOL_CALL_OVERHEAD = 3
_NO_SPECIAL: frozenset[str] = frozenset()

#: Content kinds, in report order.
KINDS = ("system", "user", "injected", "assistant", "reasoning", "tool_arguments", "tool_results", "images")


def message_kind(message: Message) -> str:
    """The content kind a message's own text and framing are attributed to."""
    role = message.role
    if role in ("system", "developer"):
        return "system"
    if role == "user":
        return "user" if is_real_user(message) else "injected"
    if role in ("tool", "function"):
        return "tool_results"
    return "assistant"


@dataclass(frozen=True, slots=True)
class MessageTokens:
    """Tokens of one message: the total, its split by content kind and the estimated share."""

    total: int
    by_kind: Mapping[str, int]
    estimated: int = 0


_CHUNKS_PER_WORKER = 4


@cache
def _pool() -> Any:
    """One thread pool for the process: tiktoken releases the GIL while it encodes."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1)), thread_name_prefix="tcompact-tok")


def _slices(texts: Sequence[str], parts: int) -> list[Sequence[str]]:
    """Contiguous slices of about equal total length, in order."""
    goal = sum(map(len, texts)) / max(parts, 1)
    out, start, size = [], 0, 0
    for i, text in enumerate(texts):
        size += len(text)
        if size >= goal:
            out.append(texts[start : i + 1])
            start, size = i + 1, 0
    if start < len(texts):
        out.append(texts[start:])
    return out


class TokenCounter:
    """Counts tokens with one encoding, caching the count of every distinct text."""

    def __init__(self, encoding: str = "o200k_base", *, approximate: bool = False) -> None:
        self.encoding_name = encoding
        self.approximate = approximate
        self._encoding = load_encoding(encoding)
        self._cache: dict[str, int] = {"": 0}
        # tiktoken's buffer encoder gives counts without building a Python list of token ids;
        # it is internal API, so the public batch encoder is the fallback.
        self._to_buffer = getattr(getattr(self._encoding, "_core_bpe", None), "encode_to_tiktoken_buffer", None)

    @classmethod
    def for_model(cls, model: str | None, *, encoding: str | None = None) -> TokenCounter:
        """A counter for a model name; an explicit ``encoding`` wins (approximate unless it is the model's)."""
        enc, approximate = encoding_for_model(model)
        if encoding is not None:
            approximate = approximate or encoding != enc
            enc = encoding
        return cls(enc, approximate=approximate)

    def count(self, text: str) -> int:
        """Tokens of one text (no special tokens recognised)."""
        n = self._cache.get(text)
        if n is None:
            n = self._cache[text] = self._counts([text])[0]
        return n

    def prime(self, texts: Iterable[str]) -> None:
        """Tokenise every distinct, not yet counted text, in parallel."""
        cache = self._cache
        todo = [t for t in dict.fromkeys(texts) if t not in cache]
        if todo:
            cache.update(zip(todo, self._counts(todo)))

    def _counts(self, texts: Sequence[str]) -> list[int]:
        if self._to_buffer is None:
            return [len(ids) for ids in self._encoding.encode_ordinary_batch(list(texts))]
        if len(texts) == 1:
            return [self._buffer_count(texts[0])]
        parts = _slices(texts, _pool()._max_workers * _CHUNKS_PER_WORKER)
        return [n for counts in _pool().map(self._buffer_counts, parts) for n in counts]

    def _buffer_counts(self, texts: Sequence[str]) -> list[int]:
        return [self._buffer_count(t) for t in texts]

    def _buffer_count(self, text: str) -> int:
        if not text.isascii():
            # Handing a non-ASCII str to tiktoken makes CPython keep a UTF-8 copy inside that
            # str for as long as it lives; counting a throwaway copy keeps memory at 1x the text.
            text = text[:1] + text[1:]
        try:
            return memoryview(self._to_buffer(text, _NO_SPECIAL)).nbytes // 4
        except UnicodeEncodeError:  # lone surrogates: tiktoken's own fallback
            fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            return memoryview(self._to_buffer(fixed, _NO_SPECIAL)).nbytes // 4

    def message(self, message: Message) -> MessageTokens:
        """Tokens of one message by the documented formula."""
        kinds: dict[str, int] = {}
        main = message_kind(message)
        own = MESSAGE_OVERHEAD + self.count(message.name or "")
        estimated = 0
        content = message.content
        if isinstance(content, str):
            own += self.count(content)
        elif content:
            for part in content:
                text, image = _part_cost(part)
                if image is not None:
                    est = image_tokens(image)
                    kinds["images"] = kinds.get("images", 0) + est
                    estimated += est
                else:
                    own += self.count(text)
        kinds[main] = kinds.get(main, 0) + own
        for r in message.reasoning:
            n = self.count(r.text)
            if r.encrypted_chars:
                est = math.ceil(r.encrypted_chars * 3 / 16)
                n += est
                estimated += est
            if n:
                kinds["reasoning"] = kinds.get("reasoning", 0) + n
        if message.tool_calls:
            kinds["tool_arguments"] = sum(self.call(c) for c in message.tool_calls)
        return MessageTokens(total=sum(kinds.values()), by_kind=kinds, estimated=estimated)

    def call(self, call: ToolCall) -> int:
        """Tokens of one tool call: its name, its arguments and the per-call overhead."""
        return self.count(call.name) + self.count(call.arguments) + TOOL_CALL_OVERHEAD

    def messages(self, messages: Sequence[Message]) -> list[MessageTokens]:
        """Tokens of every message, priming the cache with all their texts in one batch first."""
        self.prime(texts_of(messages))
        return [self.message(m) for m in messages]

    def total(self, messages: Sequence[Message]) -> int:
        """Sum of :meth:`messages` totals."""
        return sum(t.total for t in self.messages(messages))


def texts_of(messages: Iterable[Message]) -> Iterable[str]:
    """Every text the formula tokenises in these messages."""
    for m in messages:
        if m.name:
            yield m.name
        content = m.content
        if isinstance(content, str):
            yield content
        elif content:
            for part in content:
                text, image = _part_cost(part)
                if image is None:
                    yield text
        for r in m.reasoning:
            yield r.text
        for c in m.tool_calls:
            yield c.name
            yield c.arguments


def _part_cost(part: Mapping[str, Any]) -> tuple[str, Mapping[str, Any] | None]:
    """(text to tokenise, None) for text-like parts, ('', part) for image parts."""
    kind = part.get("type")
    if kind in ("image_url", "input_image", "image"):
        return "", part
    text = part.get("text")
    if isinstance(text, str):
        return text, None
    # Unknown part shapes are counted by their compact JSON so nothing is silently free.
    import orjson

    return orjson.dumps(part).decode(), None
