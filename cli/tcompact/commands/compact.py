"""``tcompact compact``: run a compressor or a chain and write the compacted transcript, dumps and report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..defaults import DEFAULT_CHAIN
from ._options import (BaseUrlOpt, ChainOpt, ConcurrencyOpt, ConfigOpt, ContextWindowOpt, EncodingOpt, FormatOpt,
                       FullHistoryOpt, JsonOpt, MaxRetriesOpt, ModelOpt, NoCacheOpt, PreserveOpt, ReplayDirOpt,
                       RequestModeOpt, SetOpt, SkipBadLinesOpt, SummarizerOpt, SummarizerWindowOpt, TimeoutOpt, ToOpt,
                       TranscriptOpt, TriggerRatioOpt, api_key, read_options, with_selectors)


@with_selectors
def compact(
    path: Annotated[Path | None, typer.Argument(help="The transcript to compact (none: the session --session "
                                                "names).", show_default=False)] = None,
    compressor: ChainOpt = DEFAULT_CHAIN,
    summarizer: SummarizerOpt = "extractive",
    output: Annotated[Path | None, typer.Option("-o", "--output", help="The compacted transcript (default: "
                                                "<input>.compacted.jsonl).", show_default=False)] = None,
    dump_dir: Annotated[Path | None, typer.Option("--dump-dir", help="Folder of compression dumps (default: "
                                                  "<output>.dumps/).", show_default=False)] = None,
    report: Annotated[Path | None, typer.Option("--report", help="Token report JSON (default: "
                                                "<output>.report.json).", show_default=False)] = None,
    offload_dir: Annotated[Path | None, typer.Option("--offload-dir", help="Offload store (default: "
                                                     "<output>.offload/).", show_default=False)] = None,
    to: ToOpt = None,
    sets: SetOpt = None,
    config: ConfigOpt = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    timeout: TimeoutOpt = 60.0,
    max_retries: MaxRetriesOpt = 2,
    concurrency: ConcurrencyOpt = 4,
    request_mode: RequestModeOpt = None,
    summarizer_window: SummarizerWindowOpt = None,
    replay_dir: ReplayDirOpt = None,
    context_window: ContextWindowOpt = None,
    trigger_ratio: TriggerRatioOpt = None,
    encoding: EncodingOpt = None,
    preserve: PreserveOpt = None,
    html: Annotated[Path | None, typer.Option("--html", help="Also write a self-contained HTML report with charts "
                                              "(needs tcompact[html]).", show_default=False)] = None,
    force: Annotated[bool, typer.Option("--force", help="Compact even below the trigger, and overwrite outputs.")
                     ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would happen; write nothing.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Fail (exit 1, transcript not written) when the output "
                                         "breaks an invariant; the default warns.")] = False,
    allow_mismatch: Annotated[bool, typer.Option("--allow-read-back-mismatch", help="Write the compacted transcript "
                                                 "even when it does not read back as the compacted messages (a "
                                                 "warning instead of a failure).")] = False,
    json_out: JsonOpt = False,
    no_cache: NoCacheOpt = False,
    transcript: TranscriptOpt = None,
    fmt: FormatOpt = None,
    full_history: FullHistoryOpt = False,
    skip_bad_lines: SkipBadLinesOpt = False,
    fork: Annotated[bool, typer.Option("--fork", help="Write the result as a new session of the agent and print "
                                       "the command that resumes it.")] = False,
    in_place: Annotated[bool, typer.Option("--in-place", help="Replace the session, keeping a backup that "
                                           "`tcompact restore --session ID` brings back.")] = False,
    selector=None,
) -> None:
    """Compact a transcript with a compressor or a chain of them.

    Writes the compacted transcript (in the input's format unless --to), one dump per summariser
    call, the offloaded originals and a token report. "Nothing to do" (below the trigger) is a
    normal outcome: exit 0, nothing written. A summariser failure leaves the input untouched,
    writes the failed dumps and exits 1.

    A session of this machine is named with --session ID (or last) instead of a PATH; --fork writes
    the result as a new session of its agent, --in-place replaces it (keeping a backup).

    Examples:

    \b
      tcompact compact session.jsonl -c truncate,dialogue -o out.jsonl
      tcompact compact rollout.jsonl -c full --summarizer openai --model M
      tcompact compact --session last --fork
    """
    from .. import render
    from ..compaction import CompactJob, CompactOptions, run_job
    from ..compressors import parse_sets
    from ..summarizers import RunSettings

    run = RunSettings.checked(retries=max_retries, timeout=timeout, concurrency=concurrency,
                              request_mode=request_mode, summarizer_window=summarizer_window)
    options = CompactOptions(
        chain=compressor, overrides=parse_sets(sets), config=config, trigger_ratio=trigger_ratio,
        summarizer=summarizer, model=model, base_url=base_url, api_key=api_key(), replay_dir=replay_dir, run=run,
        encoding=encoding, context_window=context_window, force=force, to=to, transcript=transcript,
        preserve=preserve, read=read_options(fmt, full_history, skip_bad_lines, keep_raw=True))
    job = CompactJob(path, options, output=output, dump_dir=dump_dir, report=report, offload_dir=offload_dir,
                     html=html, dry_run=dry_run, strict=strict, allow_mismatch=allow_mismatch, fork=fork,
                     in_place=in_place, selector=selector)
    outcome = run_job(job, warn=render.warn, warn_skipped=render.warn_skipped_lines)
    render.compact_outcome(outcome, json_out=json_out)
    if outcome.failure is not None:
        raise outcome.failure


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("compact")(compact)
