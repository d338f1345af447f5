"""The ``tcompact`` entry point: the commands an agent runs many times a session start without the CLI.

``tcompact hook …`` (every compaction, and Claude Code's every prompt) and ``tcompact statusline``
(every refresh of Claude Code's status line) must answer in a fraction of a second; importing the
command line (typer, every command's options) alone takes about 0.3 s. So this looks at the
arguments first: those two commands run straight from :mod:`tcompact.hooks` and end the process
(``os._exit``, after flushing — nothing else is left to clean up, and a hook past its time limit is
not waited for); so does the plainest ``inspect PATH... [--json]`` (a second look at a file is most of
all start-up: :mod:`tcompact.commands._inspect_run`), unless it fails before any output other than on bad
input; everything else,
``--help`` of those included, goes to :func:`tcompact.app.main`, and the process ends when it returns
(:func:`finish`: the exit functions run, the interpreter's teardown skipped).
"""

from __future__ import annotations

import os
import sys

__all__ = ["main", "finish", "exit_now", "silence_stdout", "INTERRUPTED", "CLOSED_PIPE"]

#: Ctrl-C: the status a shell reports for a command SIGINT ended (128 + 2).
INTERRUPTED = 130
#: A reader that closed stdout early (``tcompact inspect f | head -2``): the command ends quietly
#: with the status a shell reports for a Unix tool that SIGPIPE ended (``yes | head -1``): 128 + 13.
CLOSED_PIPE = 141


def main() -> None:
    """Run ``tcompact`` with the process's arguments."""
    args = sys.argv[1:]
    if args[:1] in (["hook"], ["statusline"]) and not {"-h", "--help"} & set(args):
        _fast(args)
    if args[:1] == ["inspect"]:
        _inspect(args[1:])
    from .app import main as app_main

    try:
        app_main()
    except SystemExit as end:
        finish(end.code)


def _fast(args: list[str]) -> None:
    if args[0] == "hook":
        from .hooks.run import run_hook

        run_hook(args[1:], stdin=sys.stdin.buffer, stdout=sys.stdout, stderr=sys.stderr)
        code = 0
    else:
        from .hooks.statusline import run_statusline

        code = run_statusline(args[1:], stdin=sys.stdin.buffer, stdout=sys.stdout, stderr=sys.stderr)
    exit_now(code)


def _inspect(args: list[str]) -> None:
    """``inspect PATH... [--json]`` without the command line (and the process ended with its status); any
    other command line, or a failure before output, returns (then the command line runs)."""
    import gc

    from .commands._inspect_run import run_plain

    gc.disable()  # (as app.main: a command's data holds no reference cycles)
    code = run_plain(args)
    if code is not None:
        exit_now(code)


def finish(code: object) -> None:
    """End the process once a command has returned with ``code`` (a :class:`SystemExit`'s): what was registered
    to run at exit runs — the copies of the process still working are stopped (:mod:`tcompact.forked`) —, what
    was printed is flushed, and the interpreter's teardown is skipped: it frees every object the command made,
    one by one (0.2-0.3 s after a 40 MB session, a tenth of an ``inspect`` of it), and joins the threads still
    waiting on a summariser's answer. A status that is no number is printed, and the status is 1, as Python
    does."""
    import atexit

    run_exit_functions = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_functions is None:  # (an interpreter without it: the usual exit)
        raise SystemExit(code)
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    run_exit_functions()
    exit_now(code or 0)


def exit_now(code: int) -> None:
    """End the process at once: what the command had to say is flushed; threads still waiting (a hook
    past its time limit, a summariser call in flight, which a normal exit would join) end with it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def silence_stdout() -> None:
    """After a reader closed stdout: stdout goes to /dev/null, so that the interpreter's last flush fails no more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (a test runner's capture): nothing to silence
        pass
