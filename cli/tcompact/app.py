"""The ``tcompact`` command line: the root typer app and the one place errors become output.

Every failure reaches the user as a single ``Error: …`` line on stderr with a non-zero exit code:
tcompact's own errors (exit 2 for bad input or options, 1 for failed work), the parser's usage
errors (exit 2), and — as a last resort — unexpected exceptions (exit 70, with the traceback only
when TCOMPACT_DEBUG is set). Commands are imported lazily so ``--help`` stays fast.
"""

from __future__ import annotations

import os
from typing import Any

import typer
from typer.core import TyperGroup

from . import __version__
from .errors import TcompactError

__all__ = ["app", "main"]

_INTERNAL_ERROR = 70


def _fail(message: str, code: int) -> typer.Exit:
    typer.echo(f"Error: {' '.join(message.split())}", err=True)
    return typer.Exit(code)


def _is_usage_error(exc: BaseException) -> bool:
    """A parser error (unknown option, bad value, missing argument) from click or typer's copy of it."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return "ClickException" in names and hasattr(exc, "format_message")


def _usage_message(exc: Any) -> str:
    ctx = getattr(exc, "ctx", None)
    where = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    return f"{exc.format_message()}{where}"


class _Group(TyperGroup):
    """Turns every exception into one error line and an exit code."""

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().make_context(*args, **kwargs)
        except Exception as exc:
            if _is_usage_error(exc):
                raise _fail(_usage_message(exc), getattr(exc, "exit_code", 2)) from None
            raise

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except TcompactError as exc:
            raise _fail(str(exc), exc.exit_code) from None
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except Exception as exc:
            if type(exc).__name__ == "NoArgsIsHelpError" or type(exc).__name__ == "Exit":
                raise
            if _is_usage_error(exc):
                raise _fail(_usage_message(exc), getattr(exc, "exit_code", 2)) from None
            if os.environ.get("TCOMPACT_DEBUG"):
                raise
            raise _fail(
                f"internal error ({type(exc).__name__}: {exc}) — please report it with the command you ran; "
                "set TCOMPACT_DEBUG=1 to see the traceback",
                _INTERNAL_ERROR,
            ) from None


app = typer.Typer(
    cls=_Group,
    name="tcompact",
    help="Inspect, compact and replay AI-agent session transcripts (Claude Code, Codex, OpenAI chat, SWE-agent).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tcompact {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Inspect, compact and replay AI-agent session transcripts.

    Reads Claude Code sessions, Codex rollouts, OpenAI-style chat JSONL, SWE-agent trajectories
    and tau-bench results; counts tokens offline with the tokenizers shipped in the package.
    """


def _register() -> None:
    from .commands import compact, compressors, convert, eval, inspect, replay, restore

    inspect.register(app)
    compact.register(app)
    replay.register(app)
    compressors.register(app)
    restore.register(app)
    convert.register(app)
    eval.register(app)


_register()


def main() -> None:
    """Entry point of the ``tcompact`` script."""
    app(prog_name="tcompact")
