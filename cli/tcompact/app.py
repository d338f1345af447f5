"""The ``tcompact`` command line: the root typer app and the one place errors become output.

Every failure reaches the user as a single ``Error: …`` line on stderr with a non-zero exit code:
tcompact's own errors (exit 2 for bad input or options, 1 for failed work), the parser's usage
errors (exit 2), and — as a last resort — unexpected exceptions (exit 70, with the traceback only
when TCOMPACT_DEBUG is set). A reader that closes stdout early ends the command quietly with
exit 141, as SIGPIPE ends a Unix tool; Ctrl-C ends it with exit 130 at once, without waiting for
threads still in a summariser call. Commands are imported lazily so ``--help`` stays fast.
"""

from __future__ import annotations

import os
from typing import Any

import typer
from typer.core import TyperGroup

from . import __version__
from .commands._help import HelpContext
from .errors import TcompactError, error_line
from .launch import CLOSED_PIPE, INTERRUPTED, exit_now, silence_stdout

__all__ = ["app", "main"]

_INTERNAL_ERROR = 70


def _fail(message: str, code: int) -> typer.Exit:
    typer.echo(error_line(message), err=True)
    return typer.Exit(code)


def _closed_pipe() -> typer.Exit:
    """End quietly (:func:`tcompact.launch.silence_stdout`)."""
    silence_stdout()
    return typer.Exit(CLOSED_PIPE)


def _is_usage_error(exc: BaseException) -> bool:
    """A parser error (unknown option, bad value, missing argument) from click or typer's copy of it."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return "ClickException" in names and hasattr(exc, "format_message")


def _usage_message(exc: Any) -> str:
    ctx = getattr(exc, "ctx", None)
    where = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    return f"{exc.format_message()}{where}"


#: The commands, in the order ``--help`` lists them, and the module of ``commands/`` that registers each: a module
#: (with what it imports) is imported only when one of its commands runs or ``--help`` lists them all, so that a
#: command's start-up pays for no other command.
COMMANDS = {"inspect": "inspect", "compact": "compact", "replay": "replay", "compressors": "compressors",
            "restore": "restore", "convert": "convert", "eval": "eval", "statusline": "hooks", "batch": "batch",
            "hooks": "hooks", "hook": "hooks"}


class _Group(TyperGroup):
    """Turns every exception into one error line and an exit code; builds each command when it is asked for."""

    context_class = HelpContext  # the help of every command as commands/_help.py writes it

    @property
    def commands(self) -> dict[str, Any]:  # type: ignore[override]
        """Every command (all of them built: what asks for them all, such as a test, gets them all)."""
        for name in COMMANDS:
            self._command(name)
        return self._commands

    @commands.setter
    def commands(self, value: dict[str, Any]) -> None:
        self._commands = value

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(n for n in self._commands if n not in COMMANDS)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        return self._command(cmd_name)

    def _command(self, name: str) -> Any:
        if name not in self._commands and name in COMMANDS:
            self._commands[name] = _build(name)
        return self._commands.get(name)

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().make_context(*args, **kwargs)
        except BrokenPipeError:  # the help, or --version, written to a closed pipe
            raise _closed_pipe() from None
        except Exception as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # bare `tcompact`: the help, and no error line
                try:
                    typer.echo(exc.ctx.get_help())  # type: ignore[attr-defined]
                except BrokenPipeError:
                    raise _closed_pipe() from None
                raise typer.Exit(0) from None
            if _is_usage_error(exc):
                raise _fail(_usage_message(exc), getattr(exc, "exit_code", 2)) from None
            raise

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except TcompactError as exc:
            raise _fail(str(exc), exc.exit_code) from None
        except (typer.Exit, typer.Abort):
            raise
        except KeyboardInterrupt:  # Ctrl-C where the command has nothing of its own to say
            raise _fail("interrupted", INTERRUPTED) from None
        except BrokenPipeError:
            raise _closed_pipe() from None
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
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    rich_markup_mode=None,  # plain help: texts rewrapped to the terminal, [brackets] shown as written
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
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


def _build(name: str) -> Any:
    """The click command of ``name``, built from its module as the root app would build it."""
    from importlib import import_module

    from typer.main import get_command_from_info, get_group_from_info

    from .commands._help import Command

    own = typer.Typer(rich_markup_mode=None, pretty_exceptions_enable=False, add_completion=False)
    import_module(f".commands.{COMMANDS[name]}", __package__).register(own)
    for info in [c for t in (own, *(g.typer_instance for g in own.registered_groups)) for c in t.registered_commands]:
        info.cls = Command  # the metavars and help of commands/_help.py
    for group in own.registered_groups:
        if group.name == name:
            return get_group_from_info(group, pretty_exceptions_short=app.pretty_exceptions_short,
                                       suggest_commands=True, rich_markup_mode=None)
    info = next(c for c in own.registered_commands if c.name == name)
    return get_command_from_info(info, pretty_exceptions_short=app.pretty_exceptions_short, rich_markup_mode=None)


def main() -> None:
    """Entry point of the ``tcompact`` script.

    A command is one short process whose data (records, messages, counts) holds no reference
    cycles, so the cyclic garbage collector is turned off: each of its full passes walked every
    record read again, a fifth of a cached ``inspect``; a whole run leaves under a thousand
    cyclic objects behind (measured on a 40 MB session).
    """
    import gc

    gc.disable()
    try:
        app(prog_name="tcompact")
    except SystemExit as exc:
        if exc.code == INTERRUPTED:  # stop now: worker threads may be waiting on a summariser's answer
            exit_now(INTERRUPTED)  # it has taken back what it wrote
        raise
