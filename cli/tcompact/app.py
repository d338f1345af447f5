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
import sys
from typing import Any

import typer
from typer.core import TyperGroup

from . import __version__
from .commands._help import HelpContext
from .errors import TcompactError

__all__ = ["app", "main"]

_INTERNAL_ERROR = 70
#: Ctrl-C: the status a shell reports for a command SIGINT ended (128 + 2).
INTERRUPTED = 130
#: A reader that closed stdout early (``tcompact inspect f | head -2``): the command ends quietly
#: with the status a shell reports for a Unix tool that SIGPIPE ended (``yes | head -1``): 128 + 13.
CLOSED_PIPE = 141


def _fail(message: str, code: int) -> typer.Exit:
    typer.echo(f"Error: {' '.join(message.split())}", err=True)
    return typer.Exit(code)


def _closed_pipe() -> typer.Exit:
    """End quietly: stdout goes to /dev/null, so that the interpreter's last flush fails no more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (a test runner's capture): nothing to silence
        pass
    return typer.Exit(CLOSED_PIPE)


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

    context_class = HelpContext  # the help of every command as commands/_help.py writes it

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


def _register() -> None:
    from .commands import batch, compact, compressors, convert, eval, hooks, inspect, replay, restore
    from .commands._help import Command

    inspect.register(app)
    compact.register(app)
    replay.register(app)
    compressors.register(app)
    restore.register(app)
    convert.register(app)
    eval.register(app)
    batch.register(app)
    hooks.register(app)
    groups = [group.typer_instance for group in app.registered_groups]
    for info in [c for t in (app, *groups) for c in t.registered_commands]:  # metavars (commands/_help.py)
        info.cls = Command


_register()


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
            _exit_now(INTERRUPTED)
        raise


def _exit_now(code: int) -> None:
    """End the process at once: what the command had to say is flushed, and it has taken back what it
    wrote; threads still waiting (a summariser call in flight, which a normal exit would join) end with it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
