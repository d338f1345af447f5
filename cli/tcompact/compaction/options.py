"""What ``tcompact compact`` can be told, typed, and the checks that refuse a bad option before any work."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import summarizers
from ..compressors import Override, chain_settings, parse_chain
from ..compressors.base import Compressor, Settings
from ..defaults import DEFAULT_CHAIN
from ..encodings import ENCODINGS
from ..errors import UsageError
from ..formats import ReadOptions, writable
from ..summarizers import RunSettings

__all__ = ["CompactOptions", "check_options", "resolve_chain", "output_format"]


@dataclass(frozen=True)
class CompactOptions:
    """Everything ``tcompact compact`` can be told, typed: the chain and its settings (``overrides``:
    parsed ``--set`` values), the summariser and how its calls are made (``run``), and how to count.
    ``now``: compact even below the compressors' triggers (``--now``; a fork or an in-place run always does);
    ``into_session``: "fork" or "in-place" when the result becomes a session of the agent's store."""

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


def check_options(options: CompactOptions) -> None:
    """Refuse a bad option before any file is read or output probed (a typo in ``-c`` is named as
    such, not as an output that exists): the chain and its settings, the output format, the
    window, the encoding and what the summariser needs."""
    chain, _ = resolve_chain(options)
    output_format(options)
    if options.context_window is not None and options.context_window <= 0:
        raise UsageError("--context-window must be a positive number of tokens")
    if options.encoding is not None and options.encoding not in ENCODINGS:
        raise UsageError(f"unknown encoding {options.encoding!r}", hint=f"use one of: {', '.join(ENCODINGS)}")
    summarizers.check(options, used=any(c.uses_summarizer for c in chain))


def resolve_chain(options: CompactOptions) -> tuple[list[Compressor], list[Settings]]:
    """The compressors of ``options.chain`` and their validated settings (``--set``, ``--config``, ``--trigger-ratio``)."""
    chain = parse_chain(options.chain)
    return chain, chain_settings(chain, overrides=options.overrides, config=options.config,
                                 trigger_ratio=options.trigger_ratio)


def output_format(options: CompactOptions) -> str | None:
    if options.to is not None and options.to not in writable():
        raise UsageError(f"cannot write {options.to!r}", hint=f"use --to {', '.join(writable())}")
    return options.to
