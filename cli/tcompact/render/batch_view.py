"""The terminal side of ``tcompact batch``: the progress bar (rate and ETA) and the summary."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
from rich.progress import TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from . import plural, stderr_console, thousands, percent, console
from .inspect_tables import kinds_table, tools_table

__all__ = ["batch_progress", "batch_summary"]

_PLAIN_EVERY_S = 10.0
_TOP_TOOLS = 10


class _Rate(ProgressColumn):
    """Tasks a second, as rich estimates it over the last half minute."""

    def render(self, task: Any) -> Text:
        return Text(f"{task.speed:,.1f}/s" if task.speed else "–/s")


@contextlib.contextmanager
def batch_progress(kind: str, *, enabled: bool) -> Iterator[Callable[[Any], None] | None]:
    """A bar on a terminal; elsewhere (a log, ``ray job logs``) a status line every 10 seconds."""
    err = stderr_console()
    if not enabled:
        yield None
        return
    if not err.is_terminal:
        yield _plain_lines(kind, err)
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), _Rate(),
               TextColumn("{task.fields[failed]} failed"), TimeElapsedColumn(), TextColumn("ETA"),
               TimeRemainingColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(f"batch {kind}", total=None, failed=0)

        def update(p: Any) -> None:
            bar.update(task, completed=p.done, total=p.total, failed=p.failed)

        yield update


def _plain_lines(kind: str, err: Any) -> Callable[[Any], None]:
    start = last = time.monotonic()

    def update(p: Any) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last < _PLAIN_EVERY_S:
            return
        last = now
        rate = p.done / (now - start)
        eta = f", ETA {(p.total - p.done) / rate:,.0f} s" if p.total and rate else ""
        of = f" of {p.total:,}" if p.total else ""
        err.print(Text(f"batch {kind}: {p.done:,}{of} done, {p.failed:,} failed, {rate:,.1f}/s{eta}"))

    return update


def batch_summary(summary: Mapping[str, Any]) -> None:
    """The summary of a batch run: counts, the kind's totals, the first failures."""
    out = console()
    t = summary["tasks"]
    rate = summary["tasks_per_second"]
    out.print(Text(f"Batch {summary['kind']}: {plural(t['total'], 'task')} in {summary['seconds']:,.1f} s"
                   + (f" ({rate:,.1f}/s)" if rate else "") + f" on {summary['engine']} × {summary['workers']}"
                   f" → {summary['results']}"))
    parts = [f"{thousands(t['ok'])} ok", f"{thousands(t['failed'])} failed", f"{thousands(t['resumed'])} from earlier runs"]
    parts += [f"{thousands(t['not_transcript'])} not transcripts"] if t["not_transcript"] else []
    parts += [f"{thousands(t['duplicates'])} duplicates dropped"] if t["duplicates"] else []
    out.print(Text(", ".join(parts)))
    view = _VIEWS.get(summary["kind"], _generic)
    view(out, summary["totals"])
    if summary["failures"]:
        table = Table(title=f"Failed (first {len(summary['failures'])} of {t['failed']:,})", title_justify="left")
        table.add_column("error", overflow="fold")
        for f in summary["failures"]:
            table.add_row(f["error"])
        out.print(table)


def _inspect(out: Any, totals: Mapping[str, Any]) -> None:
    if not totals:
        return
    formats = ", ".join(f"{name} {n:,}" for name, n in sorted(totals["format"].items()))  # files of each format
    files = sum(totals["format"].values())
    out.print(Text(f"{plural(files, 'file')} ({formats}): {plural(totals['transcripts'], 'transcript')}, "
                   f"{plural(totals['messages'], 'message')}, "
                   f"{plural(totals['tool_calls'], 'tool call')}, {plural(totals['tokens'], 'token')}; "
                   f"{thousands(totals['main'].get('over_trigger', 0))} over the 0.8 trigger"))
    kinds_table(out, {"total": totals["tokens"], "by_kind": totals["by_kind"], "by_role": totals["by_role"]})
    tools = sorted(({"name": k, **v} for k, v in totals.get("tools", {}).items()),
                   key=lambda r: (-(r["argument_tokens"] + r["result_tokens"]), r["name"]))
    if tools:
        tools_table(out, tools[:_TOP_TOOLS])


def _compact(out: Any, totals: Mapping[str, Any]) -> None:
    if not totals:
        return
    statuses = ", ".join(f"{name} {n:,}" for name, n in sorted(totals["status"].items()))
    before, after = totals["before"], totals["after"]
    out.print(Text(f"{statuses}; {thousands(before['tokens'])} → {thousands(after['tokens'])} tokens "
                   f"({percent(before['tokens'] - after['tokens'], before['tokens'])} saved), "
                   f"{thousands(before['messages'])} → {thousands(after['messages'])} messages, "
                   f"{thousands(totals['calls'])} summariser calls, {thousands(totals['invariants'])} invariant warnings"))


def _eval(out: Any, totals: Mapping[str, Any]) -> None:
    if totals["sessions"]:
        from .eval_view import chains_table
        from .needed_view import needed_tables

        if "summary" in totals:
            chains_table(out, totals)
        if "needed" in totals:
            needed_tables(out, {**totals["needed"], "default_chain": totals["default_chain"]})


def _generic(out: Any, totals: Mapping[str, Any]) -> None:
    numbers = ", ".join(f"{k} {v:,}" for k, v in totals.items() if isinstance(v, int))
    if numbers:
        out.print(Text(numbers))


_VIEWS = {"inspect": _inspect, "compact": _compact, "eval": _eval}
