"""``tcompact compressors``: every compressor with its settings and defaults."""

from __future__ import annotations

import typer

from ._options import JsonOpt


def compressors(json_out: JsonOpt = False) -> None:
    """List the compressors, what each does, and its settings with their defaults.

    Example: tcompact compressors --json
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
