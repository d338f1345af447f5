"""The settings of one compaction: a frozen value, validated when it is made and trusted everywhere below.

``compact``, ``batch compact`` and ``eval`` make it once, at the boundary, from the one option table
(:mod:`tcompact.commands._compaction`); the chain is resolved there — its compressors and each one's
validated settings — and the run (:func:`tcompact.compaction.compact_source`) reads them as they are.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import summarizers
from ..compressors import Override, chain_settings, parse_chain
from ..compressors.base import Compressor, Settings
from ..defaults import DEFAULT_CHAIN
from ..counting.encodings import ENCODINGS
from ..errors import UsageError
from ..formats import ReadOptions, writable
from ..summarizers import RunSettings

__all__ = ["CompactOptions"]

#: what may change between the making of the settings and their run, without another check: where the
#: offloaded originals go, a session of the agent's store, --now for a fork, the progress view
_PLACED = frozenset({"offload_dir", "into_session", "now", "progress"})


@dataclass(frozen=True)
class CompactOptions:
    """Everything one compaction is told, typed and checked when made (a bad value is a
    :class:`~tcompact.errors.UsageError` naming its option): the chain and its settings
    (``overrides``: parsed ``--set`` values; resolved once into ``compressors`` and ``settings``), the
    summariser and how its calls are made (``run``), how to count, the output format (``to``).
    ``now``: compact even below the compressors' triggers (``--now``; a fork or an in-place run always
    does); ``into_session``: "fork" or "in-place" when the result becomes a session of the agent's store."""

    chain: str = DEFAULT_CHAIN
    overrides: tuple[Override, ...] = ()
    config: Path | None = None
    trigger_ratio: float | None = None
    summarizer: str = "extractive"
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    replay_dir: Path | None = None
    run: RunSettings = field(default_factory=RunSettings)
    encoding: str | None = None
    context_window: int | None = None
    now: bool = False
    into_session: str | None = None
    to: str | None = None
    transcript: str | None = None
    preserve: str | None = None
    offload_dir: str = "offload"
    read: ReadOptions = field(default_factory=ReadOptions)
    #: hears each summariser call's progress (a terminal view; None: not shown, and replies are not streamed)
    progress: Any = field(default=None, repr=False, compare=False)
    #: the chain's compressors and their validated settings (``--set``, ``--config``, ``--trigger-ratio``)
    compressors: tuple[Compressor, ...] = field(init=False, repr=False, compare=False)
    settings: tuple[Settings, ...] = field(init=False, repr=False, compare=False)
    #: what the one call into the summarisers (:func:`tcompact.summarizers.check`) gives for these options
    summarizer_settings: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Refuse a bad option before any file is read or output probed (a typo in ``-c`` is named as
        such, not as an output that exists): the chain and its settings, the output format, the
        window, the encoding and what the summariser needs."""
        chain = parse_chain(self.chain)
        settings = chain_settings(chain, overrides=self.overrides, config=self.config,
                                  trigger_ratio=self.trigger_ratio)
        if self.to is not None and self.to not in writable():
            raise UsageError(f"cannot write {self.to!r}", hint=f"use --to {', '.join(writable())}")
        if self.context_window is not None and self.context_window <= 0:
            raise UsageError("--context-window must be a positive number of tokens")
        if self.encoding is not None and self.encoding not in ENCODINGS:
            raise UsageError(f"unknown encoding {self.encoding!r}", hint=f"use one of: {', '.join(ENCODINGS)}")
        chosen = summarizers.check(self, used=any(c.uses_summarizer for c in chain))  # the one call into them
        object.__setattr__(self, "compressors", tuple(chain))
        object.__setattr__(self, "settings", tuple(settings))
        object.__setattr__(self, "summarizer_settings", chosen)

    @property
    def uses_summarizer(self) -> bool:
        """Whether a compressor of the chain calls the summariser."""
        return any(c.uses_summarizer for c in self.compressors)

    def placed(self, **changes: Any) -> CompactOptions:
        """The same settings for one run of them: where the offloaded originals go, a session of the
        agent's store, ``now``, the progress view — nothing the checks looked at, so not checked again."""
        assert changes.keys() <= _PLACED, changes.keys() - _PLACED
        placed = copy.copy(self)
        for name, value in changes.items():
            object.__setattr__(placed, name, value)
        return placed
