"""All terminal output: rich tables, bars and progress. No logic beyond layout.

Human output goes to stdout through rich; warnings to stderr; ``--json`` documents are printed
here too so that every command writes its output the same way. One module per view:
:mod:`~tcompact.render.inspect_view` and :mod:`~tcompact.render.compact_view`.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich is imported on first use: a --json run never draws anything
    from rich.console import Console

    from ..inspection.shapes import InspectReport

__all__ = [
    "print_json",
    "inspect_report",
    "inspect_outcome",
    "compact_report",
    "compact_outcome",
    "compressors_table",
    "file_progress",
    "warn",
    "warn_skipped",
    "warn_skipped_lines",
    "console",
    "write_stdout",
    "replay_checks",
    "check_dict",
    "replay_table",
    "rerun_view",
    "rerun_dict",
    "hooks_outcomes",
    "hooks_status",
]


@functools.cache
def _console_class() -> type[Console]:
    """A console that leaves a closed pipe to the app (rich would exit 1 itself); made on first use."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

    return _Console


def console() -> Console:
    """The stdout console (plain text when stdout is not a terminal)."""
    return _console_class()(highlight=False, soft_wrap=True)


def stderr_console() -> Console:
    """The stderr console: warnings, errors and progress."""
    return _console_class()(stderr=True, highlight=False, soft_wrap=True)


def print_json(document: Any) -> None:
    """Write one JSON document to stdout."""
    import orjson

    sys.stdout.write(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n")


def inspect_outcome(report: InspectReport, *, json_out: bool, transcript: str | None = None,
                    fold: bool = False) -> None:
    """What ``inspect`` prints: the JSON document (no rich imported), or the view of the report."""
    if json_out:
        print_json(report)
        return
    from .inspect_view import inspect_outcome as view

    view(report, transcript=transcript, fold=fold)


def warn(message: str) -> None:
    """One warning line on stderr."""
    from rich.text import Text

    stderr_console().print(Text(f"Warning: {message}"))


def warn_skipped(report: InspectReport) -> None:
    """Say how many bad lines were skipped, and which files could not be read."""
    for f in report["files"]:
        warn_skipped_lines(f["path"], [(s["line"], s["reason"]) for s in f["skipped_lines"]])
    for e in report["errors"]:
        from rich.text import Text

        stderr_console().print(Text(f"Error: {e['error']}"))


def warn_skipped_lines(path: str, skipped: Sequence[tuple[int, str]]) -> None:
    """``path: skipped N bad line(s) (l1, l2, …); line l1: reason`` — nothing when none was skipped."""
    if not skipped:
        return
    lines = ", ".join(str(line) for line, _ in skipped[:10])
    more = " …" if len(skipped) > 10 else ""
    warn(f"{path}: skipped {len(skipped)} bad line(s) ({lines}{more}); line {skipped[0][0]}: {skipped[0][1]}")


@contextlib.contextmanager
def file_progress(*, enabled: bool) -> Iterator[Callable[[int, int, Path], None] | None]:
    """A progress bar over files, shown on a terminal when there are several files."""
    err = stderr_console() if enabled else None
    if err is None or not err.is_terminal:
        yield None
        return
    from rich.progress import Progress

    with Progress(console=err, transient=True) as progress:
        task = None

        def on_file(done: int, total: int, path: Path) -> None:
            nonlocal task
            if total < 2:
                return
            if task is None:
                task = progress.add_task("inspecting", total=total)
            progress.update(task, completed=done, description=path.name[:40])

        yield on_file


def thousands(value: int | None) -> str:
    """A count with thousands separators (``12,345``), or ``—`` when there is none."""
    return "—" if value is None else f"{value:,}"


def plural(n: int, noun: str) -> str:
    """``n`` and the noun, plural unless ``n`` is 1: ``1 file``, ``2,000 tokens``."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def percent(part: int, whole: int) -> str:
    """``part`` as a share of ``whole`` with one decimal (``12.5%``), or ``—`` when ``whole`` is 0."""
    return f"{100 * part / whole:.1f}%" if whole else "—"


def write_stdout(data: bytes) -> None:
    """Raw bytes to stdout (converted transcripts)."""
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


_VIEWS = {"compact_report": "compact_view", "compact_outcome": "compact_view", "compressors_table": "compact_view", "check_dict": "replay_view",
          "replay_checks": "replay_view", "replay_table": "replay_view", "rerun_dict": "replay_view",
          "rerun_view": "replay_view", "inspect_report": "inspect_view",
          "hooks_outcomes": "hooks_view", "hooks_status": "hooks_view", "call_progress": "call_view"}


def __getattr__(name: str) -> Any:
    """The views, imported on first use (they import rich)."""
    module = _VIEWS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{module}", __name__), name)
