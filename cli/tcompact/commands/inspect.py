"""``tcompact inspect``: where a session's tokens go."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._options import (ContextWindowOpt, CountModelOpt, EncodingOpt, FormatOpt, FullHistoryOpt, GroupByOpt, JsonOpt,
                       NoCacheOpt, NoCostOpt, SkipBadLinesOpt, TranscriptOpt, option_group, read_options,
                       say_unknown_model, with_selectors)


PathsArg = Annotated[list[Path] | None, typer.Argument(help="Transcript files or folders (searched recursively); "
                                                      "none: the sessions on this machine.", show_default=False)]
SpansOpt = Annotated[str | None, typer.Option("--spans", help="Show the span layout a compressor uses: current-round, "
                                              "dialogue, round-level or full.", show_default=False)]
KeepRecentOpt = Annotated[int | None, typer.Option("--keep-recent", help="With --spans: tail messages the span keeps "
                                                   "raw (default: the compressor's).", show_default=False)]
TopOpt = Annotated[int, typer.Option("--top", help="How many of the largest messages to list.")]
FoldOpt = Annotated[bool, typer.Option("--fold", help="One row per file: its sub-agents and episodes are counted "
                                       "in it, not listed one by one.")]
HtmlOpt = Annotated[Path | None, typer.Option("--html", help="Also write a self-contained HTML report with charts "
                                              "(needs tcompact[html]; replaces an existing page).",
                                              show_default=False)]

#: inspect's options, in the order --help shows them: (parameter, option, default).
INSPECT_OPTIONS = (
    ("json_out", JsonOpt, False), ("no_cache", NoCacheOpt, False), ("encoding", EncodingOpt, None),
    ("model", CountModelOpt, None), ("context_window", ContextWindowOpt, None), ("spans", SpansOpt, None),
    ("keep_recent", KeepRecentOpt, None), ("top", TopOpt, 10), ("fold", FoldOpt, False), ("html", HtmlOpt, None),
    ("transcript", TranscriptOpt, None), ("fmt", FormatOpt, None), ("full_history", FullHistoryOpt, False),
    ("skip_bad_lines", SkipBadLinesOpt, False), ("group_by", GroupByOpt, "session"), ("no_cost", NoCostOpt, False),
)


def inspect_options(*, fmt: str | None, full_history: bool, skip_bad_lines: bool, no_cache: bool, **values):
    """The InspectOptions of inspect's option values, validated here at the boundary (--no-cache has done
    its work in its callback)."""
    from ..inspection import InspectOptions

    return InspectOptions(read=read_options(fmt, full_history, skip_bad_lines, keep_raw=False), **values)


@with_selectors
@option_group("options", INSPECT_OPTIONS, inspect_options,
              keep=("json_out", "html", "transcript", "group_by", "no_cost", "fold"))
def inspect(paths: PathsArg = None, options=None, selector=None, *, json_out: bool = False, html: Path | None = None,
            transcript: str | None = None, group_by: str = "session", no_cost: bool = False, fold: bool = False) -> None:
    """Show where the tokens of one or many transcripts go.

    Per transcript: tokens by role, by content kind and by tool, per round, the largest messages,
    compactions found, provider-reported usage next to our count, and the context-window use
    with the 0.8 trigger and 0.1 minimum-target lines. Several files: one row per file and totals.

    With no PATH: one row per session of Claude Code and Codex on this machine, newest first, with
    its provider-reported usage and cost; the selectors narrow it, --session shows one in detail.

    Examples:

    \b
      tcompact inspect session.jsonl --model gpt-5 --spans dialogue
      tcompact inspect ~/.claude/projects/ --html report.html
      tcompact inspect --last 5
    """
    from ._inspect_run import inspect_report, show
    from ._sessions import paths_or_session

    if fold and json_out:
        from ..errors import UsageError

        raise UsageError("--fold shapes the tables; --json gives every transcript", hint="leave one of them out")
    say_unknown_model(options.model, context_window=options.context_window, encoding=options.encoding)
    found = paths_or_session(paths, selector, options, group_by=group_by, cost=not no_cost, json_out=json_out,
                             transcript=transcript, html=html)
    if found is None:  # the sessions were listed
        return
    paths, session = found
    report, counted = inspect_report(paths, options, json_out=json_out, session=session, html=html, cost=not no_cost,
                                     timezone_name=selector.timezone)
    if show(report, counted, options, json_out=json_out, html=html, transcript=transcript, fold=fold):
        raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("inspect")(inspect)
