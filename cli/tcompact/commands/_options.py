"""Options shared by several commands (reading a transcript, the token cache), declared once."""

from __future__ import annotations

from typing import Annotated

import typer

from ..formats import FORMATS

FormatOpt = Annotated[
    str | None,
    typer.Option("--format", help=f"Read as this format instead of detecting it: {', '.join(FORMATS)}.",
                 show_default=False),
]
FullHistoryOpt = Annotated[
    bool,
    typer.Option("--full-history", help="Claude Code / Codex: read through compactions (Claude: logicalParentUuid)."),
]
SkipBadLinesOpt = Annotated[
    bool, typer.Option("--skip-bad-lines", help="Read on past malformed lines, counting and reporting them."),
]
TranscriptOpt = Annotated[
    str | None,
    typer.Option("--transcript", help="Which transcript of the file (main, a sub-agent or episode id).",
                 show_default=False),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document to stdout instead of tables.")]


def _no_cache(value: bool) -> bool:
    """``--no-cache`` turns the token cache off for this process and the ones it starts."""
    if value:
        import os

        from ..tokencache import NO_CACHE_ENV

        os.environ[NO_CACHE_ENV] = "1"
    return value


NoCacheOpt = Annotated[
    bool,
    typer.Option("--no-cache", callback=_no_cache, help="Count every text afresh: neither read nor write the "
                 "token cache (TCOMPACT_NO_CACHE=1 does the same)."),
]


def read_options(fmt: str | None, full_history: bool, skip_bad_lines: bool, *, keep_raw: bool):
    """ReadOptions from the shared options (validated here, at the boundary)."""
    from ..errors import UsageError
    from ..formats import ReadOptions

    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}", hint=f"use one of: {', '.join(FORMATS)}")
    return ReadOptions(format=fmt, full_history=full_history, skip_bad_lines=skip_bad_lines, keep_raw=keep_raw)
