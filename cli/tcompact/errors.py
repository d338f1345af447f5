"""One root for every error tcompact reports to a user.

Each error knows what happened, where (file and line when there is one) and what to do about
it, so the command line can print it as a single line and exit with the right code. Nothing
in the library prints or exits; only ``app.py`` turns these into output.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["TcompactError", "InputError", "NotATranscriptError", "UsageError", "OutputError", "WorkFailed",
           "Interrupted", "plain_rule", "bad_value", "error_line"]


def error_line(message: str) -> str:
    """The one line a failure is to the user (its whitespace folded), as the command line and the entry point's
    fast paths print it."""
    return f"Error: {' '.join(message.split())}"


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


def _number(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


#: What a value must be, by pydantic's error type, in the words of the rest of the tool.
_RULES: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "literal_error": lambda c: "must be " + str(c["expected"]).replace("'", ""),
    "greater_than_equal": lambda c: f"must be {_number(c['ge'])} or more",
    "greater_than": lambda c: f"must be more than {_number(c['gt'])}",
    "less_than_equal": lambda c: f"must be {_number(c['le'])} or less",
    "less_than": lambda c: f"must be less than {_number(c['lt'])}",
    "string_too_short": lambda c: "must not be empty" if c["min_length"] == 1 else
    f"must be at least {c['min_length']} characters long",
    "string_too_long": lambda c: f"must be at most {c['max_length']} characters long",
    "too_short": lambda c: f"must have at least {c['min_length']} item(s)",
    "too_long": lambda c: f"must have at most {c['max_length']} item(s)",
    **dict.fromkeys(("int_parsing", "int_type", "int_from_float"), lambda c: "must be a whole number"),
    **dict.fromkeys(("float_parsing", "float_type"), lambda c: "must be a number"),
    **dict.fromkeys(("bool_parsing", "bool_type"), lambda c: "must be true or false"),
    **dict.fromkeys(("string_type",), lambda c: "must be a text"),
    **dict.fromkeys(("list_type", "tuple_type"), lambda c: "must be a list"),
    "extra_forbidden": lambda c: "is not known",
    "missing": lambda c: "is required",
}


def plain_rule(error: Mapping[str, Any]) -> str:
    """One validation error of a typed value (an item of pydantic's ``ValidationError.errors()``) as what
    the value must be, and what it was: ``must be claude or codex, not 'gemini'`` — not the library's
    "Input should be …". (A dict is read: nothing of pydantic is imported here.)"""
    kind = str(error.get("type"))
    if kind in ("value_error", "assertion_error"):
        return str(error.get("msg", "")).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    rule = _RULES.get(kind)
    text = rule(error.get("ctx") or {}) if rule is not None else str(error.get("msg", "is not valid"))
    if "input" in error and kind not in ("missing", "extra_forbidden") and error["input"] != "":
        value = error["input"]
        shown = repr(value) if isinstance(value, str) else str(value)
        text += f", not {shown if len(shown) <= 40 else shown[:39] + '…'}"
    return text


def bad_value(name: str, error: Mapping[str, Any]) -> str:
    """``NAME must be …, not …`` (or ``NAME: why`` for a rule of the value's own): what a bad option or
    setting value is told (:func:`plain_rule`)."""
    rule = plain_rule(error)
    return f"{name} {rule}" if rule.startswith(("must ", "is ")) else f"{name}: {rule}"

