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
message list in parallel (long texts in pieces, :func:`pieces`) and caches the counts, in memory
and in the persistent cache shared by every tcompact process (:mod:`tcompact.tokencache`).
"""

from __future__ import annotations

import math
import threading
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
#: A text longer than this many characters is counted in pieces of about this size, in parallel
#: (see :func:`pieces`).
PIECE = 1 << 18
#: Pieces of joined texts (:meth:`TokenCounter.counts_in_memory`) up to this many characters are kept.
_KEPT_PIECE = 4096
_LOADING = threading.Lock()
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _interruptibly(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` on a thread of its own, waited for where Ctrl-C can reach the caller: building the
    tokenizer is one call into tiktoken's Rust (up to a second on a busy machine) that no signal cuts short."""
    box: list[Any] = []

    def run() -> None:
        try:
            box.append((True, fn(*args)))
        except BaseException as exc:  # handed to the caller
            box.append((False, exc))

    worker = threading.Thread(target=run, name="tcompact-tokenizer", daemon=True)
    worker.start()
    worker.join()
    ok, value = box[0]
    if not ok:
        raise value
    return value


@cache
def _pool() -> Any:
    """One thread pool for the process: tiktoken releases the GIL while it encodes."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1)), thread_name_prefix="tcompact-tok")


def pieces(text: str, size: int = PIECE) -> list[tuple[int, int]]:
    """``(start, end)`` ranges covering ``text``, each about ``size`` characters, cut only where tiktoken
    splits anyway, so that the counts of the pieces add up to the count of the text.

    A cut goes between a line break and an ASCII letter. No alternative of the o200k or cl100k
    split pattern matches a newline and then a letter (letter runs exclude line breaks; the
    punctuation, number and whitespace runs exclude letters), and none looks behind, so the
    pieces before such a point are the same as those of the text ending there, and the pieces
    after it the same as those of the text starting there (the one lookahead, ``\\s+(?!\\S)``, and
    cl100k's ``\\s++$`` both give way at a final whitespace run ending in a newline to
    ``\\s*[\\r\\n]``, which matches the same run). A text without such a point stays whole.
    """
    n = len(text)
    if n <= 2 * size:
        return [(0, n)]
    out, start = [], 0
    while n - start > 2 * size:
        cut = _cut_after(text, start + size, n - size)
        if cut < 0:
            break
        out.append((start, cut))
        start = cut
    out.append((start, n))
    return out


def _cut_after(text: str, pos: int, end: int) -> int:
    """The first position in ``[pos, end)`` that follows a newline and holds an ASCII letter, or -1."""
    while True:
        i = text.find("\n", pos - 1, end - 1)
        if i < 0:
            return -1
        if text[i + 1] in _LETTERS:
            return i + 1
        pos = i + 2


def _slices(items: Sequence[tuple[int, int, int]], parts: int) -> list[Sequence[tuple[int, int, int]]]:
    """Contiguous slices of ``(text, start, end)`` work items of about equal total length, in order."""
    goal = sum(e - s for _, s, e in items) / max(parts, 1)
    out, start, size = [], 0, 0
    for i, (_, s, e) in enumerate(items):
        size += e - s
        if size >= goal:
            out.append(items[start : i + 1])
            start, size = i + 1, 0
    if start < len(items):
        out.append(items[start:])
    return out


def _parallel(keys_of: Any, salt: bytes, texts: list[str]) -> list[bytes]:
    """``keys_of(salt, texts)`` computed in the thread pool for large batches (hashing releases the GIL)."""
    total = sum(map(len, texts))
    if total < 1 << 20 or len(texts) < 2:
        return keys_of(salt, texts)
    parts = _slices([(i, 0, len(t)) for i, t in enumerate(texts)], _pool()._max_workers * _CHUNKS_PER_WORKER)
    batches = [[texts[i] for i, _, _ in part] for part in parts]
    return [k for keys in _pool().map(lambda b: keys_of(salt, b), batches) for k in keys]


class TokenCounter:
    """Counts tokens with one encoding, caching the count of every distinct text.

    Counts are looked up in the persistent cache first (:mod:`tcompact.tokencache`; ``cache``
    True means the process's shared cache unless caching is off, False none, or a given
    :class:`~tcompact.tokencache.TokenCache`), and the tokenizer is loaded only when some text is
    not found there. ``tokenized`` counts the texts this counter had to tokenise.
    """

    def __init__(self, encoding: str = "o200k_base", *, approximate: bool = False, cache: Any = True) -> None:
        if encoding not in ENCODINGS:
            load_encoding(encoding)  # the one error for an unknown encoding
        self.encoding_name = encoding
        self.approximate = approximate
        self._cache: dict[str, int] = {"": 0}
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
        encoding = _interruptibly(load_encoding, self.encoding_name)
        # tiktoken's buffer encoder gives counts without building a Python list of token ids;
        # it is internal API, so the public batch encoder is the fallback.
        self._to_buffer = getattr(getattr(encoding, "_core_bpe", None), "encode_to_tiktoken_buffer", None)
        self._encoding = encoding

    def _persistent(self) -> Any:
        if not self._store_resolved:
            self._store_resolved = True
            choice = self._store_choice
            if choice is True:
                from .tokencache import shared_cache

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
        from .tokencache import text_keys

        keys = _parallel(text_keys, fingerprint(self.encoding_name), todo)
        found = store.lookup(keys)
        missing = [i for i, n in enumerate(found) if n is None]
        cache.update((t, n) for t, n in zip(todo, found) if n is not None)
        if missing:
            counts = self._counts([todo[i] for i in missing])
            cache.update((todo[i], n) for i, n in zip(missing, counts))
            store.store((keys[i], n) for i, n in zip(missing, counts))

    def known(self, text: str) -> int | None:
        """The count of ``text`` if this counter has it already, else None (nothing is counted)."""
        return self._cache.get(text)

    def counts_in_memory(self, texts: Sequence[str]) -> list[int]:
        """Counts of ``texts``, those not counted yet tokenised together, the short ones kept in memory only:
        pieces of other texts (:mod:`tcompact.tokenjoin`) that no later run would look up."""
        cache = self._cache
        todo = [t for t in dict.fromkeys(texts) if t not in cache]
        if not todo:
            return [cache[t] for t in texts]
        counted = dict(zip(todo, self._counts(todo)))
        cache.update((t, n) for t, n in counted.items() if len(t) <= _KEPT_PIECE)  # a long one is a copy
        return [cache[t] if t in cache else counted[t] for t in texts]

    def _counts(self, texts: Sequence[str]) -> list[int]:
        encoding = self.encoding
        self.tokenized += len(texts)
        if self._to_buffer is None:
            return [len(ids) for ids in encoding.encode_ordinary_batch(list(texts))]
        items = [(i, s, e) for i, t in enumerate(texts) for s, e in pieces(t)]
        if len(items) == 1:
            return [self._buffer_count(texts[0])]
        counts = [0] * len(texts)
        parts = _slices(items, _pool()._max_workers * _CHUNKS_PER_WORKER)
        for part, part_counts in zip(parts, _pool().map(lambda p: self._piece_counts(texts, p), parts)):
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
