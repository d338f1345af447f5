"""``tcompact inspect``: where a session's tokens go."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._options import (ContextWindowOpt, CountModelOpt, EncodingOpt, FormatOpt, FullHistoryOpt, GroupByOpt, JsonOpt,
                       NoCacheOpt, NoCostOpt, SkipBadLinesOpt, TranscriptOpt, read_options, with_selectors)


@with_selectors
def inspect(
    paths: Annotated[list[Path] | None, typer.Argument(help="Transcript files or folders (searched recursively); "
                                                       "none: the sessions on this machine.", show_default=False)
                     ] = None,
    json_out: JsonOpt = False,
    no_cache: NoCacheOpt = False,
    encoding: EncodingOpt = None,
    model: CountModelOpt = None,
    context_window: ContextWindowOpt = None,
    spans: Annotated[str | None, typer.Option("--spans", help="Show the span layout a compressor uses: "
                                                 "current-round, dialogue, round-level or full.",
                                                 show_default=False)] = None,
    keep_recent: Annotated[int | None, typer.Option("--keep-recent", help="With --spans: tail messages the "
                                                       "span keeps raw (default: the compressor's).",
                                                    show_default=False)] = None,
    top: Annotated[int, typer.Option("--top", help="How many of the largest messages to list.")] = 10,
    html: Annotated[Path | None, typer.Option("--html", help="Also write a self-contained HTML report with charts "
                                              "(needs tcompact[html]; replaces an existing page).",
                                              show_default=False)] = None,
    transcript: TranscriptOpt = None,
    fmt: FormatOpt = None,
    full_history: FullHistoryOpt = False,
    skip_bad_lines: SkipBadLinesOpt = False,
    group_by: GroupByOpt = "session",
    no_cost: NoCostOpt = False,
    selector=None,
) -> None:
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
    from .. import render
    from ..inspection import InspectOptions, inspect_counted
    from ._sessions import check_no_path, list_or_pick

    check_no_path(paths, selector, group_by=group_by, what="PATH")
    options = InspectOptions(read=read_options(fmt, full_history, skip_bad_lines, keep_raw=False), encoding=encoding,
                             model=model, context_window=context_window, spans=spans, keep_recent=keep_recent, top=top)
    session = None
    if not paths:
        session = list_or_pick(selector, options, group_by=group_by, cost=not no_cost, json_out=json_out,
                               transcript=transcript, html=html)
        if session is None:
            return
        paths = list(session.files)
    if html is not None:  # a report page is a view: it replaces an older page, never an input
        from ..pages import check_html

        check_html(html, force=True, keep=paths)
    with render.file_progress(enabled=not json_out) as on_file:
        report, counted = inspect_counted(paths, options, on_file=on_file, counted=html is not None)
    if session is not None:
        from ..sessions.report import session_detail

        report = session_detail(session, report, read=options.read, cost=not no_cost, timezone_name=selector.timezone)
    render.inspect_outcome(report, json_out=json_out, transcript=transcript)
    if html is not None:
        from ..pages import write_inspect_page

        written = write_inspect_page(html, report, counted, options, wanted=transcript)
        if not json_out:
            render.console().print(f"Wrote the HTML report: {written}", markup=False)
    render.warn_skipped(report)
    if report["errors"]:
        raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("inspect")(inspect)
