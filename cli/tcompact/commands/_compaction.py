"""How to compact, declared once: the options ``compact``, ``batch compact`` and ``eval`` take for the
chain and its settings, the summariser and how its calls are made, counting and reading — each
option's name, help and default in one table (:data:`COMPACTION`) — and the one function that makes
their values the keyword values of a :class:`tcompact.compaction.CompactOptions` (:func:`compact_values`).

A command takes the options it needs by name (:func:`pick`), in the order its ``--help`` shows them,
and receives them as one validated value through :func:`tcompact.commands._options.option_group`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..formats.family import spoken, writable
from ..defaults import CONCURRENCY, DEFAULT_CHAIN, DEFAULT_SUMMARIZER, MIN_DEADLINE, RETRIES
from ._options import (ContextWindowOpt, EncodingOpt, FormatOpt, FullHistoryOpt, SkipBadLinesOpt, TranscriptOpt,
                       api_key, read_options)

ChainOpt = Annotated[str, typer.Option("-c", "--compressor", help="A compressor, or a chain run in order: -c "
                                       f"truncate,dialogue. The default, {DEFAULT_CHAIN}, keeps the most of what "
                                       "`tcompact eval` plants (README, \"Default chain\"). See `tcompact compressors`.")]
SetOpt = Annotated[list[str] | None, typer.Option("--set", help="A setting, key=value or compressor.key=value "
                                                  "(repeatable).", show_default=False)]
ConfigOpt = Annotated[Path | None, typer.Option("--config", help="TOML or JSON file with a table of settings per "
                                                "compressor.", show_default=False)]
TriggerRatioOpt = Annotated[float | None, typer.Option("--trigger-ratio", help="Compact at this share of the window "
                                                       "(sets trigger_context_ratio).", show_default=False)]
ToOpt = Annotated[str | None, typer.Option("--to", help=f"Output format: {spoken(writable())} (default: the "
                                           "input's).", show_default=False)]
PreserveOpt = Annotated[str | None, typer.Option("--preserve", help="What the summary must keep, in your words.",
                                                 show_default=False)]
SummarizerOpt = Annotated[str, typer.Option("--summarizer", help="extractive (offline), openai or replay.")]
ModelOpt = Annotated[str | None, typer.Option("--model", help="Model: its encoding and window for counting, and the "
                                              "model the openai summariser calls.", show_default=False)]
BaseUrlOpt = Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint (default: "
                                                "OPENAI_BASE_URL). The key comes from OPENAI_API_KEY.",
                                                show_default=False)]
TimeoutOpt = Annotated[float | None, typer.Option("--timeout", help="Deadline in seconds for each summariser attempt "
                                                  "(the whole answer). Default: twice the time the call's size takes "
                                                  "at the server's measured speed, plus 30 s, at least "
                                                  f"{MIN_DEADLINE:g} s.", show_default=False)]
MaxRetriesOpt = Annotated[int, typer.Option("--max-retries", help="Retries of a transient summariser error.")]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", help="Summariser calls run at once (round-level).")]
RequestModeOpt = Annotated[str | None, typer.Option("--request-mode", help="openai: send the conversation as chat "
                                                    "messages (conversation, the default) or as one serialised text "
                                                    "(serialized).", show_default=False)]
SummarizerWindowOpt = Annotated[int | None, typer.Option("--summarizer-window", help="openai: the summariser model's "
                                                         "context window in tokens (default: what the server "
                                                         "reports, else learned from its refusals).",
                                                         show_default=False)]
ReplayDirOpt = Annotated[Path | None, typer.Option("--replay-dir", help="Dumps the replay summariser answers from.",
                                                   show_default=False)]

#: Every option of a compaction: parameter → (option, default). Each is declared here and nowhere else.
COMPACTION: dict[str, tuple[Any, Any]] = {
    "compressor": (ChainOpt, DEFAULT_CHAIN), "summarizer": (SummarizerOpt, DEFAULT_SUMMARIZER), "to": (ToOpt, None),
    "sets": (SetOpt, None), "config": (ConfigOpt, None), "model": (ModelOpt, None), "base_url": (BaseUrlOpt, None),
    "timeout": (TimeoutOpt, None), "max_retries": (MaxRetriesOpt, RETRIES),
    "concurrency": (ConcurrencyOpt, CONCURRENCY), "request_mode": (RequestModeOpt, None),
    "summarizer_window": (SummarizerWindowOpt, None), "replay_dir": (ReplayDirOpt, None),
    "context_window": (ContextWindowOpt, None), "trigger_ratio": (TriggerRatioOpt, None),
    "encoding": (EncodingOpt, None), "preserve": (PreserveOpt, None), "transcript": (TranscriptOpt, None),
    "fmt": (FormatOpt, None), "full_history": (FullHistoryOpt, False), "skip_bad_lines": (SkipBadLinesOpt, False),
}

#: How the summariser's calls are made: the options that make one RunSettings.
RUN = ("timeout", "max_retries", "concurrency", "request_mode", "summarizer_window")
#: How a transcript is read: the options that make one ReadOptions.
READ = ("fmt", "full_history", "skip_bad_lines")


def pick(*names: str) -> tuple[tuple[str, Any, Any], ...]:
    """The table's entries ``names``, in this order, as :func:`~._options.option_group` takes them."""
    return tuple((name, *COMPACTION[name]) for name in names)


def run_settings(values: dict[str, Any]):
    """The RunSettings of the RUN options' values, taken out of ``values`` (validated here, at the boundary:
    a bad value is one UsageError in the option's own words)."""
    from ..summarizers import RunSettings

    run = {name: values.pop(name) for name in RUN}
    return RunSettings.checked(retries=run.pop("max_retries"), **run)


def compact_values(given: dict[str, Any], *, absolute: bool = False) -> dict[str, Any]:
    """The keyword values of a CompactOptions from the table's options in ``given`` (the others are left
    out): the run settings, the parsed ``--set`` values and how to read, checked here, and the key, read
    here at the edge. ``absolute``: the paths made absolute (a batch's workers run elsewhere)."""
    from ..compressors import parse_sets

    values = {name: value for name, value in given.items() if name in COMPACTION}
    run = run_settings(values)
    overrides = parse_sets(values.pop("sets"))
    read = read_options(*(values.pop(name) for name in READ), keep_raw=True)
    for name in ("config", "replay_dir"):
        if absolute and values.get(name) is not None:
            values[name] = values[name].resolve()
    return {"chain": values.pop("compressor", DEFAULT_CHAIN), "overrides": overrides, "run": run, "read": read,
            "api_key": api_key(), **values}
