"""One root for every error tcompact reports to a user.

Each error knows what happened, where (file and line when there is one) and what to do about
it, so the command line can print it as a single line and exit with the right code. Nothing
in the library prints or exits; only ``app.py`` turns these into output.
"""

from __future__ import annotations

__all__ = ["TcompactError", "InputError", "NotATranscriptError", "UsageError", "OutputError", "WorkFailed",
           "Interrupted"]


class TcompactError(Exception):
    """Root error: a message, an optional location and a hint saying what to do."""

    exit_code = 1

    def __init__(
        self,
        what: str,
        *,
        path: str | None = None,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(what)
        self.what = what
        self.path = path
        self.line = line
        self.hint = hint

    @property
    def where(self) -> str | None:
        """``path:line``, ``path`` or None."""
        if self.path is None:
            return None
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    def __str__(self) -> str:
        text = self.what
        if self.where:
            text = f"{self.where}: {text}"
        if self.hint:
            text = f"{text} — {self.hint}"
        return " ".join(text.split("\n"))


class InputError(TcompactError):
    """The input (a transcript, a dump, a path) cannot be used as it is."""

    exit_code = 2


class NotATranscriptError(InputError):
    """Well-formed JSON that holds no transcript tcompact knows (a folder scan passes over these)."""


class UsageError(TcompactError):
    """An option or a combination of options is not valid."""

    exit_code = 2


class OutputError(TcompactError):
    """An output cannot be written (exists already, folder not writable, ...)."""

    exit_code = 2


class WorkFailed(TcompactError):
    """The work could not be done (a summariser failed); inputs are untouched."""

    exit_code = 1


class Interrupted(WorkFailed):
    """Ctrl-C: the command stopped, and says what it kept (exit 130, as a shell reports SIGINT)."""

    exit_code = 130

    @classmethod
    def nothing_written(cls) -> Interrupted:
        """A command stopped before it wrote anything, or once it had taken back all it wrote."""
        return cls("interrupted, nothing written", hint="the input is untouched; run the same command again")
