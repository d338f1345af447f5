"""``tcompact convert``: one transcript format to another."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..formats.family import spoken, writable
from ._options import FormatOpt, FullHistoryOpt, SkipBadLinesOpt, TranscriptOpt, read_options


def convert(
    path: Annotated[Path, typer.Argument(help="The transcript to convert.", show_default=False)],
    to: Annotated[str, typer.Option("--to", help=f"Target format: {spoken(writable())}.", show_default=False)],
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write here (default: stdout).",
                                                   show_default=False)] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing output file.")] = False,
    lossy: Annotated[bool, typer.Option("--lossy", help="Go on when the target cannot hold some messages, "
                                        "dropping them (they are listed).")] = False,
    transcript: TranscriptOpt = None,
    fmt: FormatOpt = None,
    full_history: FullHistoryOpt = False,
    skip_bad_lines: SkipBadLinesOpt = False,
) -> None:
    """Convert a transcript to chat, Claude Code or Codex.

    Writes chat JSONL, a Claude Code session or a Codex rollout, to stdout or -o FILE.

    Chat is always possible. When the target cannot represent part of the input (Claude Code has
    no system messages), the command stops and lists what would be lost; --lossy converts anyway.

    Example:

    \b
      tcompact convert rollout.jsonl --to chat -o session.chat.jsonl
    """
    from .. import render
    from ..conversion import convert_file

    result = convert_file(path, to, read=read_options(fmt, full_history, skip_bad_lines, keep_raw=True),
                          transcript=transcript, lossy=lossy)
    for note in result.notes:
        render.warn(note)
    if output is None:
        render.write_stdout(result.data)
    else:
        from ..artifacts import write_bytes

        write_bytes(output, result.data, force=force, inputs=(path,))


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("convert")(convert)
