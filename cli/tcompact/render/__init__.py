"""All terminal output: rich tables, bars and progress. No logic beyond layout.

Human output goes to stdout through rich; warnings to stderr; ``--json`` documents are printed
here too so that every command writes its output the same way. One module per view:
:mod:`~tcompact.render.inspect_view` and :mod:`~tcompact.render.compact_view`.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

__all__ = [
    "print_json",
    "inspect_report",
    "compact_report",
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
]


class _Console(Console):
    """A console that leaves a closed pipe to the app (rich would exit 1 itself)."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def console() -> Console:
    """The stdout console (plain text when stdout is not a terminal)."""
    return _Console(highlight=False, soft_wrap=True)


def _err() -> Console:
    return _Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(document: Any) -> None:
    """Write one JSON document to stdout."""
    import orjson

    sys.stdout.write(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n")


def warn(message: str) -> None:
    """One warning line on stderr."""
    _err().print(Text(f"Warning: {message}"))


def warn_skipped(report: Mapping[str, Any]) -> None:
    """Say how many bad lines were skipped, and which files could not be read."""
    for f in report["files"]:
        warn_skipped_lines(f["path"], [(s["line"], s["reason"]) for s in f["skipped_lines"]])
    for e in report["errors"]:
        _err().print(Text(f"Error: {e['error']}"))


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
    err = _err()
    if not enabled or not err.is_terminal:
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


def _n(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "—"


def write_stdout(data: bytes) -> None:
    """Raw bytes to stdout (converted transcripts)."""
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


from .compact_view import compact_report, compressors_table  # noqa: E402  (views use the helpers above)
from .replay_view import check_dict, replay_checks, replay_table, rerun_dict, rerun_view  # noqa: E402
from .inspect_view import inspect_report  # noqa: E402
