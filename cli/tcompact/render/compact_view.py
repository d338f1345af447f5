"""The terminal views of ``tcompact compact`` and ``tcompact compressors``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from . import percent, console

if TYPE_CHECKING:
    from ..compaction.report import CompactReport, StageReport

__all__ = ["compact_outcome", "compact_report", "compressors_table"]


def compact_outcome(outcome: Any, *, json_out: bool) -> None:
    """What ``compact`` prints of a job (:class:`tcompact.compaction.JobOutcome`): its JSON document, or
    the report, where each output went, the command that resumes a forked session and the HTML report."""
    from . import print_json

    if json_out:
        print_json(outcome.document())
        return
    compact_report(outcome.run.report, written=outcome.written, dry_run=outcome.dry_run,
                   where=_where(outcome, outcome.written))
    if outcome.outputs["state"] is not None:
        console().print(Text(f"Kept in tcompact's state folder: {outcome.outputs['state']} (`tcompact restore "
                             "--list` lists what it keeps, `--clean --older-than AGE` removes it)"))
    if outcome.session is not None:
        from .sessions_view import resume_lines

        resume_lines(outcome.session)
    if outcome.page is not None and outcome.dry_run:  # the one file a dry run writes
        console().print(f"Wrote the HTML report: {outcome.page}", markup=False)


def _where(outcome: Any, written: Sequence[Path]) -> list[str]:
    """Where the files written went: the transcript, the dumps, the originals, the report, the backup."""
    o, paths = outcome.outputs, outcome.paths
    dumps, store = len(o["dumps"]), o["offload_store"]
    backup = (outcome.session or {}).get("backup")
    return [part for part, shown in (
        (f"the transcript {o['transcript']}", o["transcript"]),
        (f"{dumps} dump(s) in {paths.dump_dir}", dumps),
        (f"{sum(1 for p in written if p.parent.resolve() == Path(store or '.').resolve())} offloaded original(s) in "
         f"{store}", store),
        (f"the report {paths.report}", paths.report in written),
        (f"the backup {backup} and its note", backup),
        (f"the HTML report {outcome.page}", outcome.page)) if shown]


def compact_report(report: CompactReport, *, written: Sequence[Path], dry_run: bool,
                   where: Sequence[str] = ()) -> None:
    """The terminal view of a compaction report; ``where``: the outputs written, as the last line names them."""
    out = console()
    before, after = report["before"], report["after"]
    saved = before["tokens"] - after["tokens"]
    head = {
        "compacted": f"Compacted: {before['tokens']:,} → {after['tokens']:,} tokens "
        f"({percent(saved, before['tokens'])} saved), {before['messages']:,} → {after['messages']:,} "
        "messages",
        "nothing to do": f"Nothing to do: {before['tokens']:,} tokens, {before['messages']:,} messages; "
        f"the transcript stays as it is ({report['reason']})",
        "failed": "Compaction failed; the input is untouched",
    }[report["status"]]
    approx = ", approximate" if report["approximate"] else ""
    out.print(
        Text(
            f"{report['source']['path']} · {report['source']['format']} · window "
            f"{report['context_window']:,} · {report['encoding']}{approx}"
        )
    )
    out.print(Text(head))
    out.print(_stages_table(report["stages"]))
    sm = report["summarizer"]
    if sm["calls"]:
        usage = sm["usage"] or {}
        extra = f", {usage.get('total_tokens', 0):,} tokens used" if usage else ""
        out.print(Text(f"Summariser {sm['name']}: {sm['calls']} call(s), {sm['failed_calls']} failed{extra}"))
    if dry_run:  # with --html the page is the one file written, said after this line
        out.print(Text("Dry run: no transcript, dump or report was written." if written else
                       "Dry run: nothing was written."))
    elif written:
        out.print(Text(f"Wrote {len(written)} file(s)" + (f": {', '.join(where)}" if where else "")))


def _stages_table(stages: Sequence[StageReport]) -> Table:
    """One row per compressor of the chain: tokens and messages before → after, calls, outcome."""
    table = Table(title="Stages", title_justify="left")
    for col, justify in (
        ("compressor", "left"),
        ("tokens", "right"),
        ("messages", "right"),
        ("calls", "right"),
        ("outcome", "left"),
    ):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for s in stages:
        calls = s["calls"]
        failed = sum(1 for c in calls if c["status"] == "failed")
        table.add_row(
            s["processor"],
            f"{s['tokens_before']:,} → {s['tokens_after']:,}",
            f"{s['messages_before']:,} → {s['messages_after']:,}",
            f"{len(calls)}" + (f" ({failed} failed)" if failed else ""),
            s["reason"],
        )
    return table


def compressors_table(rows: Sequence[Mapping[str, Any]]) -> None:
    """The terminal view of ``tcompact compressors``."""
    out = console()
    for row in rows:
        uses = " (uses a summariser)" if row["uses_summarizer"] else ""
        out.print(Text(f"{row['name']}: {row['description']}{uses}", style="bold"))
        table = Table(show_header=True, box=None, padding=(0, 2))
        # a setting name is what --set needs: never cut; a long default folds, the description wraps
        table.add_column("setting", no_wrap=True, min_width=max((len(f["name"]) for f in row["settings"]), default=7))
        table.add_column("default", overflow="fold", max_width=20)
        table.add_column("description", overflow="fold")
        for f in row["settings"]:
            table.add_row(Text(f["name"]), Text(_default(f["default"])), Text(f["description"]))
        out.print(table)
        out.print()


def _default(value: Any) -> str:
    import orjson

    return orjson.dumps(value).decode()
