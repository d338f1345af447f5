"""How a command's ``--help`` reads: usage, arguments and options named as Unix tools name them.

The help is typer's plain (click-style) help: every paragraph rewrapped to the terminal (up to
120 columns), a paragraph after a line holding only ``\\b`` kept as written (the examples),
brackets shown as written (rich markup would eat ``tcompact[html]``). What differs from typer's
own: arguments appear by their metavar in the usage line (``PATH...``; typer writes
``{paths}...``) and without a type tag in the argument list (``<list[Path]>``), and every option
that takes a value shows a metavar (``--top N``, ``--html FILE``) instead of its type
(``<int>``): the ones of :data:`METAVARS`, else one made from its type, so an option added
later gets one too. And a line never breaks at a hyphen: ``current-round`` or ``--skip-bad-lines``
stay whole.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from typer.core import TyperCommand, TyperGroup

__all__ = ["Command", "Group", "HelpContext", "METAVARS"]

#: The metavar of each option that takes a value, as the README writes it.
METAVARS = {
    "--encoding": "NAME", "--model": "M", "--context-window": "N", "--spans": "NAME", "--keep-recent": "N",
    "--top": "N", "--html": "FILE", "--transcript": "ID", "--format": "NAME", "--compressor": "CHAIN",
    "--summarizer": "NAME", "--output": "FILE", "--dump-dir": "DIR", "--report": "FILE", "--offload-dir": "DIR",
    "--to": "FORMAT", "--set": "KEY=VALUE", "--config": "FILE", "--base-url": "URL", "--timeout": "S",
    "--max-retries": "N", "--concurrency": "N", "--request-mode": "MODE", "--replay-dir": "DIR",
    "--trigger-ratio": "R", "--preserve": "TEXT", "--prompt": "FILE", "--store": "DIR",
    "--session": "ID", "--last": "N", "--project": "PATH", "--agent": "NAME", "--since": "DATE", "--until": "DATE",
    "--timezone": "TZ", "--summarizer-window": "N", "--out": "DIR", "--engine": "NAME", "--workers": "N",
    "--address": "ADDRESS", "--seed": "N", "--per-kind": "N", "--older-than": "AGE", "--scope": "SCOPE",
    "--budget": "N", "--trigger": "PERCENT",
}
#: Arguments whose metavar is not their name in capitals.
ARGUMENTS = {("inspect", "paths"): "PATH", ("replay", "paths"): "DUMP|DIR", ("inspect", "sources"): "SOURCE",
             ("compact", "sources"): "SOURCE", ("eval", "paths"): "PATH", ("eval", "sources"): "SOURCE"}
_BY_TYPE = {int: "N", float: "X", Path: "PATH"}


_HYPHEN = re.compile(r"(?<=\w)-(?=\w)")
_NO_BREAK = "\u2011"  # a non-breaking hyphen while wrapping; the help shows the ASCII one


class _Formatter(TyperCommand.context_class.formatter_class):  # type: ignore[name-defined,misc]
    """Click's help formatter, wrapping words at spaces only."""

    def write_text(self, text: str) -> None:
        start = len(self.buffer)
        super().write_text(_HYPHEN.sub(_NO_BREAK, text))
        self._restore(start)

    def write_dl(self, rows: Any, col_max: int = 30, col_spacing: int = 2) -> None:
        start = len(self.buffer)
        super().write_dl([(first, _HYPHEN.sub(_NO_BREAK, second)) for first, second in rows], col_max, col_spacing)
        self._restore(start)

    def _restore(self, start: int) -> None:
        self.buffer[start:] = [piece.replace(_NO_BREAK, "-") for piece in self.buffer[start:]]


class HelpContext(TyperCommand.context_class):  # type: ignore[name-defined,misc]
    """The context of every tcompact command: its help goes through :class:`_Formatter`."""

    formatter_class = _Formatter


def _option_metavar(param: Any) -> str:
    longs = [o for o in param.opts if o.startswith("--")]
    if longs and longs[0] in METAVARS:
        return METAVARS[longs[0]]
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    return _BY_TYPE.get(annotation, "TEXT") if isinstance(annotation, type) else "TEXT"


def _argument_metavar(param: Any) -> str:
    name = param.metavar or param.name.upper()
    name = name if param.required else f"[{name}]"
    return name + ("..." if param.nargs != 1 else "")


class Command(TyperCommand):
    """A command whose usage line, argument list and options show metavars, not types."""

    context_class = HelpContext

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if param.param_type_name == "argument" and param.metavar is None:
                param.metavar = ARGUMENTS.get((self.name, param.name), (param.name or "").upper())
            elif param.param_type_name == "option" and not param.is_flag and param.metavar is None:
                param.metavar = _option_metavar(param)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        return pieces + [_argument_metavar(p) for p in self.get_params(ctx) if p.param_type_name == "argument"]

    def format_options(self, ctx: Any, formatter: Any) -> None:
        params = self.get_params(ctx)
        arguments = [(_argument_metavar(p), p.help or "") for p in params
                     if p.param_type_name == "argument" and not getattr(p, "hidden", False)]
        options = [record for p in params if p.param_type_name == "option" and (record := p.get_help_record(ctx))]
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


class Group(TyperGroup):
    """A command group (``tcompact batch``) whose own help is written as its commands' is."""

    context_class = HelpContext
