"""``tcompact batch inspect|compact|eval SOURCE… --out DIR``: one kind of task over a whole corpus."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from ._compaction import compact_values, pick
from ._help import Group
from ._options import (ContextWindowOpt, CountModelOpt, EncodingOpt, FormatOpt, FullHistoryOpt, JsonOpt, NoCacheOpt,
                       SkipBadLinesOpt,
                       option_group, read_options, say_unknown_model)
from .eval import fail_on_failed_chains, measured_rows, with_eval_options

batch_app = typer.Typer(
    name="batch", no_args_is_help=True, cls=Group,
    help="Inspect, compact or evaluate a whole corpus on a pool or Ray.\n\nEvery file is one task; each task's "
         "result is one line of DIR/results.jsonl, and the same command run again goes on where it stopped.")

SourcesArg = Annotated[list[str], typer.Argument(
    help="Folders, globs (quoted), transcript files, or manifests (one path per line; - reads one from stdin).",
    show_default=False)]
OutOpt = Annotated[Path, typer.Option("--out", help="The batch folder: results.jsonl, batch.json and the outputs "
                                      "of compact (a re-run with the same options goes on from it).",
                                      show_default=False)]
EngineOpt = Annotated[str, typer.Option("--engine", help="pool (local processes) or ray.")]
WorkersOpt = Annotated[int | None, typer.Option("--workers", help="Tasks at once: pool processes (default: the "
                                                "cores); with ray, the CPUs of a local Ray, or at most this many "
                                                "tasks on a cluster (default: all its CPUs).", show_default=False)]
AddressOpt = Annotated[str | None, typer.Option("--address", help="The Ray cluster (default: RAY_ADDRESS, else a "
                                                "local Ray started for the run).", show_default=False)]
RetryOpt = Annotated[bool, typer.Option("--retry-failed", help="Run again the files whose recorded result failed.")]


@dataclass(frozen=True)
class _How:
    """How a batch runs (the options every batch command takes), validated."""

    options: Any  # BatchOptions
    json_out: bool


def _how(*, out: Path, engine: str, workers: int | None, address: str | None, retry_failed: bool, json_out: bool,
         no_cache: bool) -> _How:
    from pydantic import ValidationError

    from ..batch import BatchOptions
    from ..errors import UsageError, bad_value

    try:
        options = BatchOptions(out=out, engine=engine, workers=workers, address=address, retry_failed=retry_failed)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise UsageError(bad_value(f"--{str(err['loc'][0]).replace('_', '-')}", err),
                         hint="see 'tcompact batch --help'") from None
    return _How(options, json_out)  # --no-cache has done its work: it set TCOMPACT_NO_CACHE, which the jobs carry


#: The options of every batch command (declared once): the batch folder, the engine, resuming, the output.
with_batch_options = option_group("how", (
    ("out", OutOpt, inspect.Parameter.empty), ("engine", EngineOpt, "pool"), ("workers", WorkersOpt, None),
    ("address", AddressOpt, None), ("retry_failed", RetryOpt, False), ("json_out", JsonOpt, False),
    ("no_cache", NoCacheOpt, False)), _how)


def _run(kind: str, sources: list[str], settings: Any, how: _How) -> dict[str, Any]:
    """Run the batch and show its summary; exit 1 when a task failed, else the summary."""
    from .. import render
    from ..batch import run_batch
    from ..render.batch_view import batch_progress, batch_summary

    with batch_progress(kind, enabled=not how.json_out) as on_progress:
        summary = run_batch(kind, sources, settings, how.options, on_progress=on_progress)
    for note in summary["warnings"]:
        render.warn(note)
    if how.json_out:
        render.print_json(summary)
    else:
        batch_summary(summary)
    if summary["tasks"]["failed"]:
        raise typer.Exit(1)
    return summary


BatchSpansOpt = Annotated[str | None, typer.Option("--spans", help="Also tell per file whether this compressor would "
                                                   "compact it: current-round, dialogue or round-level.",
                                                   show_default=False)]
BatchKeepRecentOpt = Annotated[int | None, typer.Option("--keep-recent", help="Tail messages the span keeps.",
                                                        show_default=False)]

#: batch inspect's options, in the order --help shows them: (parameter, option, default).
BATCH_INSPECT_OPTIONS = (
    ("encoding", EncodingOpt, None), ("model", CountModelOpt, None), ("context_window", ContextWindowOpt, None),
    ("spans", BatchSpansOpt, None), ("keep_recent", BatchKeepRecentOpt, None), ("fmt", FormatOpt, None),
    ("full_history", FullHistoryOpt, False), ("skip_bad_lines", SkipBadLinesOpt, False),
)


def inspect_settings(*, fmt: str | None, full_history: bool, skip_bad_lines: bool, **values: Any):
    """The InspectOptions of batch inspect's option values (validated here, at the boundary)."""
    from ..inspection import InspectOptions

    say_unknown_model(values["model"], context_window=values["context_window"], encoding=values["encoding"])
    return InspectOptions(read=read_options(fmt, full_history, skip_bad_lines, keep_raw=False), **values)


@batch_app.command("inspect")
@with_batch_options
@option_group("settings", BATCH_INSPECT_OPTIONS, inspect_settings)
def batch_inspect(sources: SourcesArg, how=None, settings=None) -> None:
    """Where the tokens go in every file of a corpus.

    One result line per file, and totals over the corpus.

    Example:

    \b
      tcompact batch inspect runs/ --out runs.inspect/ --workers 8
    """
    _run("inspect", sources, settings, how)


BatchNowOpt = Annotated[bool, typer.Option("--now", help="Compact even below the compressors' triggers.")]
BatchStrictOpt = Annotated[bool, typer.Option("--strict", help="A file whose output breaks an invariant fails (its "
                                              "transcript is not written).")]

#: batch compact's options, in the order --help shows them: (parameter, option, default); those of every
#: compaction come from the one table (:mod:`._compaction`), as compact takes them.
BATCH_COMPACT_OPTIONS = (
    *pick("compressor", "summarizer", "to", "sets", "config", "model", "base_url", "timeout", "max_retries",
          "concurrency", "request_mode", "summarizer_window", "replay_dir", "context_window", "trigger_ratio",
          "encoding", "preserve"),
    ("now", BatchNowOpt, False), ("strict", BatchStrictOpt, False), *pick("fmt", "full_history", "skip_bad_lines"),
)


def compact_task(**values: Any):
    """The CompactTask of batch compact's option values: its settings made and checked here, at the
    boundary, once (paths made absolute and the key read here: a pool or Ray worker runs elsewhere)."""
    from ..batch import CompactTask
    from ..compaction import CompactOptions

    options = CompactOptions(**compact_values(values, absolute=True), now=values["now"])
    return CompactTask(options=options, strict=values["strict"])


@batch_app.command("compact")
@with_batch_options
@option_group("task", BATCH_COMPACT_OPTIONS, compact_task)
def batch_compact(sources: SourcesArg, how=None, task=None) -> None:
    """Compact every file of a corpus into the batch folder.

    Each file's compacted transcript, dumps, offload store and report are written as
    `tcompact compact` writes them, under --out at the file's place below the folder that holds
    every input (the source tree mirrored). "Nothing to do" is a normal outcome; a file that fails
    is a failed line.

    Example:

    \b
      tcompact batch compact runs/ --out runs.compacted/ --engine ray
    """
    o = task.options
    say_unknown_model(o.model, context_window=o.context_window, encoding=o.encoding, summarizer=o.summarizer)
    _run("compact", sources, task, how)


@batch_app.command("eval")
@with_batch_options
@with_eval_options("batch eval")
def batch_eval(sources: SourcesArg, how=None, options=None) -> None:
    """Measure what each compressor keeps (canaries or needed tokens), over a whole corpus.

    Each file is evaluated as `tcompact eval` evaluates it (its line's figures are the entry
    `tcompact eval --json` gives for it), and the totals are eval's per-chain tables over every
    file. Nothing is written but the batch folder (and the dumps --dump-dir asks for).

    Example:

    \b
      tcompact batch eval runs/ --out runs.eval/ -c full -c dialogue --engine ray
      tcompact batch eval runs/ --out runs.needed/ --metric needed -c full
    """
    say_unknown_model(options.model, context_window=options.context_window, encoding=options.encoding,
                      summarizer=options.summarizer)
    summary = _run("eval", sources, options, how)
    fail_on_failed_chains(measured_rows(summary["totals"]),  # as `tcompact eval` ends
                          hint="their rows count nothing as kept; --retry-failed runs those files again")


def register(app: typer.Typer) -> None:
    """Add the command group to the app."""
    app.add_typer(batch_app, name="batch")
