"""``tcompact compressors``: every compressor with its settings and defaults."""

from __future__ import annotations

import typer

from ._options import JsonOpt


def compressors(json_out: JsonOpt = False) -> None:
    """List the compressors with their settings and defaults.

    One entry per compressor: what it does, whether it calls a summariser, and every setting
    with its default and meaning (set them with compact --set or --config).

    Example:

    \b
      tcompact compressors --json
    """
    from .. import render
    from ..compressors import describe

    rows = describe()
    if json_out:
        render.print_json({"compressors": rows})
    else:
        render.compressors_table(rows)


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("compressors")(compressors)
