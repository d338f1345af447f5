"""What a compressor is: a name, validated settings, and a pure ``compress`` function.

A compressor takes messages, its settings and a :class:`Context` (token counter, summariser,
context window, clock) and returns a :class:`CompressionResult`: the new messages plus what
should be written — summariser call records (dumps), offloaded originals, human notes. It never
touches files or the network itself; the summariser it is handed may.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from ..defaults import CONCURRENCY, RETRIES
from ..model import Message
from ..spans import Span
from ..summarizers.base import Summarizer
from ..summarizers.calls import CallRecord
from ..counting.tokens import TokenCounter

__all__ = [
    "Settings",
    "Context",
    "CallRecord",  # (the summarisers' record of a call, kept here for the compressors that make them)
    "OffloadBlob",
    "Trigger",
    "Status",
    "CompressionResult",
    "Compressor",
    "unchanged",
]


class Settings(BaseModel):
    """Base of every compressor's settings: unknown keys rejected, values frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


@dataclass(frozen=True)
class Context:
    """What a compressor gets besides messages and settings.

    ``window`` is the context window in tokens; ``force`` skips the trigger checks (the span must
    still hold something); ``locator`` names where a message's full original can be found (for
    recovery markers); ``offload_dir`` is the path offloaded originals will be written under;
    ``dumped`` hears texts the dumps will hold (a stage's prompts), which may then be redacted meanwhile.
    """

    counter: TokenCounter
    window: int
    summarizer: Summarizer | None = None
    force: bool = False
    preserve: str | None = None
    offload_dir: str = "offload"
    locator: Callable[[Message], str] = lambda m: "the original transcript"
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.time
    transient_retries: int = RETRIES
    concurrency: int = CONCURRENCY
    dumped: Callable[[Sequence[str]], None] = lambda texts: None


@dataclass(frozen=True)
class OffloadBlob:
    """An original message moved out of the transcript, and the handle its marker names."""

    handle: str
    message: Message
    path: str


@dataclass(frozen=True)
class Trigger:
    """The figures a compressor's trigger decided on (the ``trigger`` of its dumps).

    ``threshold``: the total it acts at; ``trigger_ratio``: the share of the window that threshold is
    (None for an absolute threshold); ``body_tokens``: what its span's body holds; ``min_target_tokens``:
    the least body it acts on (None: it has no minimum); ``forced``: ``--force`` skipped the checks.
    """

    context_window: int
    total_tokens_before: int
    trigger_ratio: float | None
    threshold: int
    body_tokens: int
    min_target_tokens: int | None
    forced: bool


class Status(StrEnum):
    """What a compressor (:attr:`CompressionResult.status`) or a whole chain (``CompactionRun.status``,
    never ``BELOW_TRIGGER``: that is "nothing to do" there) did. The values are the words the reports
    and ``--json`` have always used."""

    COMPACTED = "compacted"
    NOTHING_TO_DO = "nothing to do"
    BELOW_TRIGGER = "below the trigger"
    FAILED = "failed"


@dataclass(frozen=True)
class CompressionResult:
    """The outcome of one compressor run.

    ``applied`` is False for every "nothing to do" outcome and for rejected or failed attempts,
    and then ``messages`` are the input unchanged; ``reason`` says which. ``failed`` is True when
    the summariser could not produce a summary (the command then exits 1). ``trigger`` holds the
    figures its trigger decided on, for a compressor that has one; ``below_trigger``: it was left
    alone because its trigger did not fire (``--now`` would act).
    """

    processor: str
    messages: tuple[Message, ...]
    applied: bool
    reason: str
    tokens_before: int
    tokens_after: int
    span: Span | None = None
    calls: tuple[CallRecord, ...] = ()
    blobs: tuple[OffloadBlob, ...] = ()
    notes: tuple[str, ...] = ()
    failed: bool = False
    figures: Mapping[str, Any] = field(default_factory=dict)
    trigger: Trigger | None = None
    below_trigger: bool = False

    @property
    def status(self) -> Status:
        """What the compressor did, as a value."""
        if self.failed:
            return Status.FAILED
        if self.applied:
            return Status.COMPACTED
        return Status.BELOW_TRIGGER if self.below_trigger else Status.NOTHING_TO_DO


def unchanged(name: str, messages: Sequence[Message], reason: str, tokens: int, **kw: Any) -> CompressionResult:
    """A result that leaves the messages as they were."""
    return CompressionResult(processor=name, messages=tuple(messages), applied=False, reason=reason,
                             tokens_before=tokens, tokens_after=tokens, **kw)


class Compressor:
    """Base class: subclasses set ``name``, ``description``, ``settings_model`` and implement ``compress``.

    A compressor that replaces the body of a span also implements :meth:`span` and :meth:`acts`,
    the ones its ``compress`` uses, and names the setting of its raw tail (``keep_recent_setting``):
    ``inspect --spans`` asks the compressor through them, so the preview is the layout it uses.
    ``may_cut_last_request`` says it may shorten an over-budget last request around a marker (the
    invariant checker then accepts that cut instead of the request verbatim).
    """

    name: ClassVar[str]
    description: ClassVar[str]
    settings_model: ClassVar[type[Settings]]
    uses_summarizer: ClassVar[bool] = False
    #: the setting holding how many newest messages its span keeps raw (None: it has none)
    keep_recent_setting: ClassVar[str | None] = None
    may_cut_last_request: ClassVar[bool] = False

    def compress(self, messages: Sequence[Message], settings: Settings, ctx: Context) -> CompressionResult:
        """Compress ``messages``; never raises for "nothing to do" or summariser failures."""
        raise NotImplementedError

    def span(self, messages: Sequence[Message], settings: Settings) -> Span | None:
        """The preserved prefix, compressed body and protected tail; None when it has no span (it
        acts on tool results one by one)."""
        return None

    def acts(self, total: int, body_tokens: int, *, window: int, settings: Settings, empty: bool) -> bool:
        """Whether, unforced, it compacts ``total`` tokens whose span body holds ``body_tokens``."""
        return False

    def preview_settings(self, keep_recent: int | None = None) -> Settings:
        """Its default settings, with ``keep_recent`` as the raw tail when given."""
        if keep_recent is None:
            return self.settings_model()
        if self.keep_recent_setting is None:
            from ..errors import UsageError

            raise UsageError(f"--keep-recent does not apply to {self.name}, whose span keeps no number of recent "
                             "messages", hint="leave --keep-recent out")
        return self.settings_model(**{self.keep_recent_setting: keep_recent})
