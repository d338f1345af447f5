"""Token counting with the encodings shipped inside the package (:mod:`tcompact.counting.encodings`).

Per-message formula (documented in the README, "Token counting"):

* ``MESSAGE_OVERHEAD`` (4) per message — the ``<|start|>role\\n … <|end|>`` framing;
* the tokens of every text part, of a ``name`` field and of readable reasoning;
* per tool call: tokens of the name + tokens of the arguments + ``TOOL_CALL_OVERHEAD`` (3);
* images: the OpenAI tile formula when the size can be read from an inline image (85 + 170 per
  512-px tile after scaling to 2048 and then 768 on the short side), 85 for ``detail: low``,
  ``IMAGE_DEFAULT_TOKENS`` (1445) when the size is unknown — an estimate;
* encrypted reasoning: ``ceil(chars × 3/16)`` (base64 → bytes → ~4 bytes a token) — an estimate.

Each distinct text is tokenised once: :meth:`TokenCounter.prime` batch-encodes every text of a
message list in parallel (long texts in pieces, :func:`pieces`) and caches the counts, in memory
and in the persistent cache shared by every tcompact process (:mod:`tcompact.counting.cache`).
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .encodings import ENCODINGS, encoding_for_model, load_encoding
from .images import image_tokens
from ..model import Message, ToolCall
from ..rounds import is_real_user
from .pieces import CHUNKS_PER_WORKER, interruptibly, parallel_keys, pieces, pool, slices

__all__ = [
    "ENCODINGS", "KINDS", "MESSAGE_OVERHEAD", "TOOL_CALL_OVERHEAD", "MessageTokens", "TokenCounter",
    "encoding_for_model", "load_encoding", "message_kind",
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


#: Pieces of joined texts (:meth:`TokenCounter.counts_in_memory`) up to this many characters are kept.
_KEPT_PIECE = 4096
_LOADING = threading.Lock()
#: Batches of up to this many characters are tokenised in the calling thread: handing a few short texts
#: to the pool and waiting for them cost more than tokenising them (round-level counts thousands).
_INLINE = 1 << 15


class TokenCounter:
    """Counts tokens with one encoding, caching the count of every distinct text.

    Counts are looked up in the persistent cache first (:mod:`tcompact.counting.cache`; ``cache``
    True means the process's shared cache unless caching is off, False none, or a given
    :class:`~tcompact.counting.cache.TokenCache`), and the tokenizer is loaded only when some text is
    not found there. ``tokenized`` counts the texts this counter had to tokenise.
    """

    def __init__(self, encoding: str = "o200k_base", *, approximate: bool = False, cache: Any = True) -> None:
        if encoding not in ENCODINGS:
            load_encoding(encoding)  # the one error for an unknown encoding
        self.encoding_name = encoding
        self.approximate = approximate
        self._cache: dict[str, int] = {"": 0}
        self._messages: dict[int, tuple[Message, MessageTokens]] = {}
        self._store_choice = cache
        self._store_resolved = False
        self._store: Any = None
        self._encoding: Any = None
        self._to_buffer: Any = None
        self.tokenized = 0

    @classmethod
    def for_model(cls, model: str | None, *, encoding: str | None = None, cache: Any = True) -> TokenCounter:
        """A counter for a model name; an explicit ``encoding`` wins (approximate unless it is the model's)."""
        enc, approximate = encoding_for_model(model)
        if encoding is not None:
            approximate = approximate or encoding != enc
            enc = encoding
        return cls(enc, approximate=approximate, cache=cache)

    @property
    def encoding(self) -> Any:
        """The tiktoken encoding, loaded on first use (once, whichever summariser thread asks first)."""
        if self._encoding is None:
            with _LOADING:
                if self._encoding is None:
                    self._load()
        return self._encoding

    def _load(self) -> None:
        encoding = interruptibly(load_encoding, self.encoding_name)
        # tiktoken's buffer encoder gives counts without building a Python list of token ids;
        # it is internal API, so the public batch encoder is the fallback.
        self._to_buffer = getattr(getattr(encoding, "_core_bpe", None), "encode_to_tiktoken_buffer", None)
        self._encoding = encoding

    def _persistent(self) -> Any:
        if not self._store_resolved:
            self._store_resolved = True
            choice = self._store_choice
            if choice is True:
                from .cache import shared_cache

                choice = shared_cache()
            self._store = choice or None
        return self._store

    def count(self, text: str) -> int:
        """Tokens of one text (no special tokens recognised)."""
        n = self._cache.get(text)
        if n is None:
            if self._encoding is None and self._persistent() is not None:
                self.prime((text,))  # a cached run never loads the tokenizer
                return self._cache[text]
            n = self._cache[text] = self._counts([text])[0]
        return n

    def prime(self, texts: Iterable[str]) -> None:
        """Count every distinct, not yet counted text: from the persistent cache, else by tokenising
        them in parallel (and keeping their counts there)."""
        cache = self._cache
        todo = [t for t in dict.fromkeys(texts) if t not in cache]
        if not todo:
            return
        store = self._persistent()
        if store is None:
            cache.update(zip(todo, self._counts(todo)))
            return
        from .encodings import fingerprint
        from .cache import text_keys

        keys = parallel_keys(text_keys, fingerprint(self.encoding_name), todo)
        found = store.lookup(keys)
        missing = [i for i, n in enumerate(found) if n is None]
        cache.update((t, n) for t, n in zip(todo, found) if n is not None)
        if missing:
            counts = self._counts([todo[i] for i in missing])
            cache.update((todo[i], n) for i, n in zip(missing, counts))
            store.store((keys[i], n) for i, n in zip(missing, counts))

    def learn(self, counts: Iterable[tuple[str, int]], *, persistent: bool = False) -> None:
        """Keep counts made without tokenising the texts (from their parts' counts,
        :func:`tcompact.counting.join.joined_counts`) as :meth:`count` keeps its counts, in memory, or also in
        the persistent cache (``persistent``) as :meth:`prime` does."""
        new = {t: n for t, n in counts if t not in self._cache}
        self._cache.update(new)
        store = self._persistent() if persistent else None
        if new and store is not None:
            from .encodings import fingerprint
            from .cache import text_keys

            store.store(zip(parallel_keys(text_keys, fingerprint(self.encoding_name), list(new)), new.values()))

    def known(self, text: str) -> int | None:
        """The count of ``text`` if this counter has it already, else None (nothing is counted)."""
        return self._cache.get(text)

    def counts_in_memory(self, texts: Sequence[str]) -> list[int]:
        """Counts of ``texts``, those not counted yet tokenised together, the short ones kept in memory only:
        pieces of other texts (:mod:`tcompact.counting.join`) that no later run would look up."""
        cache = self._cache
        todo = [t for t in dict.fromkeys(texts) if t not in cache]
        if not todo:
            return [cache[t] for t in texts]
        counted = dict(zip(todo, self._counts(todo)))
        cache.update((t, n) for t, n in counted.items() if len(t) <= _KEPT_PIECE)  # a long one is a copy
        return [cache[t] if t in cache else counted[t] for t in texts]

    def _counts(self, texts: Sequence[str]) -> list[int]:
        helper = sys.modules.get("tcompact.counting.helper")  # (imported by what started a copy, if anything did)
        if self._encoding is None and helper is not None and (copy := helper.running(self.encoding_name)) is not None:
            counted = copy.counts(list(texts))  # the tokenizer a copy built meanwhile
            if counted is not None:
                self.tokenized += len(texts)
                return counted
        encoding = self.encoding
        self.tokenized += len(texts)
        if self._to_buffer is None:
            return [len(ids) for ids in encoding.encode_ordinary_batch(list(texts))]
        items = [(i, s, e) for i, t in enumerate(texts) for s, e in pieces(t)]
        if len(items) == 1:
            return [self._buffer_count(texts[0])]
        if sum(e - s for _, s, e in items) <= _INLINE:  # less work than handing it to the pool
            return self._piece_counts(texts, items)  # (a small batch is never in pieces: one item a text)
        counts = [0] * len(texts)
        parts = slices(items, pool()._max_workers * CHUNKS_PER_WORKER)
        for part, part_counts in zip(parts, pool().map(lambda p: self._piece_counts(texts, p), parts)):
            for (i, _, _), n in zip(part, part_counts):
                counts[i] += n
        return counts

    def _piece_counts(self, texts: Sequence[str], items: Sequence[tuple[int, int, int]]) -> list[int]:
        out = []
        for i, s, e in items:
            text = texts[i]
            out.append(self._buffer_count(text if e - s == len(text) else text[s:e], copied=e - s != len(text)))
        return out

    def _buffer_count(self, text: str, *, copied: bool = False) -> int:
        if not copied and not text.isascii():
            # Handing a non-ASCII str to tiktoken makes CPython keep a UTF-8 copy inside that
            # str for as long as it lives; counting a throwaway copy keeps memory at 1x the text.
            text = text[:1] + text[1:]
        try:
            return memoryview(self._to_buffer(text, _NO_SPECIAL)).nbytes // 4
        except UnicodeEncodeError:  # lone surrogates: tiktoken's own fallback
            fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            return memoryview(self._to_buffer(fixed, _NO_SPECIAL)).nbytes // 4

    def message(self, message: Message, *, remember: bool = True) -> MessageTokens:
        """Tokens of one message by the documented formula (remembered for that message unless told not to:
        compressors ask for the same messages' tokens many times over — round-level once per block and
        stage —, inspect once)."""
        found = self._messages.get(id(message))
        if found is not None and found[0] is message:
            return found[1]
        tokens = self._message(message)
        if remember:
            self._messages[id(message)] = (message, tokens)  # (the message kept: its id is not reused meanwhile)
        return tokens

    def _message(self, message: Message) -> MessageTokens:
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
        """Tokens of every message, priming the cache with all their texts in one batch first (the texts of
        the messages not counted yet: a compressor asks again and again for transcripts of the same messages)."""
        known = self._messages
        self.prime(texts_of([m for m in messages if (found := known.get(id(m))) is None or found[0] is not m]))
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
