"""``tcompact compact``: run a compressor or a chain and write the compacted transcript, dumps and report."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from ..defaults import DEFAULT_CHAIN
from ._options import (FormatOpt, FullHistoryOpt, JsonOpt, NoCacheOpt, SkipBadLinesOpt, TranscriptOpt, read_options,
                       with_selectors)

PathOpt = Annotated[Path | None, typer.Option(show_default=False)]
#: The chain ``compact`` runs when -c is not given (chosen with ``tcompact eval``; README, "Default chain").


@with_selectors
def compact(
    path: Annotated[Path | None, typer.Argument(help="The transcript to compact (none: the session --session "
                                                "names).", show_default=False)] = None,
    compressor: Annotated[str, typer.Option("-c", "--compressor", help="A compressor, or a chain run in order: "
                                            "-c truncate,dialogue. The default, full, keeps the most of what "
                                            "`tcompact eval` plants (README, \"Default chain\"). See `tcompact "
                                            "compressors`.")] = DEFAULT_CHAIN,
    summarizer: Annotated[str, typer.Option("--summarizer", help="extractive (offline), openai or replay.")
                          ] = "extractive",
    output: Annotated[Path | None, typer.Option("-o", "--output", help="The compacted transcript (default: "
                                                "<input>.compacted.jsonl).", show_default=False)] = None,
    dump_dir: Annotated[Path | None, typer.Option("--dump-dir", help="Folder of compression dumps (default: "
                                                  "<output>.dumps/).", show_default=False)] = None,
    report: Annotated[Path | None, typer.Option("--report", help="Token report JSON (default: "
                                                "<output>.report.json).", show_default=False)] = None,
    offload_dir: Annotated[Path | None, typer.Option("--offload-dir", help="Offload store (default: "
                                                     "<output>.offload/).", show_default=False)] = None,
    to: Annotated[str | None, typer.Option("--to", help="Output format: chat, claude-code or codex (default: "
                                           "the input's).", show_default=False)] = None,
    sets: Annotated[list[str] | None, typer.Option("--set", help="A setting, key=value or compressor.key=value "
                                                   "(repeatable).", show_default=False)] = None,
    config: Annotated[Path | None, typer.Option("--config", help="TOML or JSON file with a table of settings per "
                                                "compressor.", show_default=False)] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model: its encoding and window for counting, and "
                                              "the model the openai summariser calls.", show_default=False)] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint (default: "
                                                 "OPENAI_BASE_URL). The key comes from OPENAI_API_KEY.",
                                                 show_default=False)] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Deadline in seconds for each summariser attempt "
                                                             "(the whole answer).")] = 60.0,
    max_retries: Annotated[int, typer.Option("--max-retries", help="Retries of a transient summariser error.")] = 2,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Summariser calls run at once (round-level).")
                           ] = 4,
    request_mode: Annotated[str | None, typer.Option("--request-mode", help="openai: send the conversation as "
                                                     "chat messages (conversation, the default) or as one "
                                                     "serialised text (serialized).", show_default=False)] = None,
    summarizer_window: Annotated[int | None, typer.Option("--summarizer-window", help="openai: the summariser "
                                                          "model's context window in tokens (default: what the "
                                                          "server reports, else learned from its refusals).",
                                                          show_default=False)] = None,
    replay_dir: Annotated[Path | None, typer.Option("--replay-dir", help="Dumps the replay summariser answers "
                                                    "from.", show_default=False)] = None,
    context_window: Annotated[int | None, typer.Option("--context-window", help="Context window in tokens.",
                                                       show_default=False)] = None,
    trigger_ratio: Annotated[float | None, typer.Option("--trigger-ratio", help="Compact at this share of the "
                                                        "window (sets trigger_context_ratio).",
                                                        show_default=False)] = None,
    encoding: Annotated[str | None, typer.Option("--encoding", help="o200k_base or cl100k_base.",
                                                 show_default=False)] = None,
    preserve: Annotated[str | None, typer.Option("--preserve", help="What the summary must keep, in your words.",
                                                 show_default=False)] = None,
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
    from ..compaction import CompactOptions, check_options, compact_file
    from ..errors import InputError
    from ..outputs import check_paths, default_paths, write_run

    from ..compressors import parse_sets
    from ..summarizers import RunSettings

    run_settings = RunSettings.checked(retries=max_retries, timeout=timeout, concurrency=concurrency,
                                       request_mode=request_mode, summarizer_window=summarizer_window)
    options = CompactOptions(
        chain=compressor, overrides=parse_sets(sets), config=config, summarizer=summarizer, model=model,
        base_url=base_url, api_key=os.environ.get("OPENAI_API_KEY"), run=run_settings, replay_dir=replay_dir,
        encoding=encoding, context_window=context_window, trigger_ratio=trigger_ratio, force=force, to=to,
        transcript=transcript, preserve=preserve,
        read=read_options(fmt, full_history, skip_bad_lines, keep_raw=True))
    check_options(options)  # options, then the input, then the outputs: each error names its own cause
    into = original = None
    if fork or in_place or path is None or selector.narrows:  # a stored session (README, "Sessions on this machine")
        from ._sessions import session_to_compact

        path, into, original, output = session_to_compact(path, selector, fork=fork, in_place=in_place,
                                                          output=output, to=to)
        if into is not None:
            from ..sessions.fork import output_paths

            output, dump_dir, report, offload_dir = output_paths(into, dump_dir=dump_dir, report=report,
                                                                 offload_dir=offload_dir, dry_run=dry_run)
    paths = default_paths(path, output=output, dump_dir=dump_dir, store=offload_dir, report=report)
    options = replace(options, offload_dir=str(paths.store.resolve()))
    if not path.is_file():
        raise InputError("no such file" if not path.exists() else "is a folder", path=str(path),
                         hint="pass the transcript file to compact")
    if not dry_run:
        check_paths(paths, source=path, force=force)
    if html is not None:
        from ..render.html_common import check_target

        check_target(html, force=force, keep=(path, paths.output, paths.report))
    run = compact_file(path, options)
    if into is not None:
        from ..sessions.fork import with_new_ids

        run = with_new_ids(run, into)
    render.warn_skipped_lines(str(path), run.source.skipped)
    for note in run.report["notes"]:
        render.warn(note)
    written, problems = ([], list(run.report.get("invariants") or [])) if dry_run else \
        write_run(run, paths, force=force, source=path, strict=strict, allow_mismatch=allow_mismatch)
    for problem in problems:
        render.warn(f"invariant: {problem}")
    resumed = None
    if into is not None and not dry_run:
        from ..sessions.fork import finish

        resumed = finish(into, run, written, original=original)
    page = None
    if html is not None:  # after the run's outputs, so that it can link them; a dry run writes only the page
        from ..render.html_compact import write_compact_html

        page = write_compact_html(run, html, written=written, problems=problems, paths=paths, dry_run=dry_run,
                                  force=force)
        written = [*written, page]
    if json_out:  # printed when the run fails (--strict, not written, summariser) too
        render.print_json({**run.report, "invariants": problems, "written": [str(p) for p in written],
                           "dry_run": dry_run, **({"session": resumed} if into is not None else {})})
    else:
        render.compact_report(run.report, written=written, output=paths.output, dry_run=dry_run)
        if resumed is not None:
            from ..render.sessions_view import resume_lines

            resume_lines(resumed)
        if page is not None:
            render.console().print(f"Wrote the HTML report: {page}", markup=False)
    if strict and problems:
        from ..errors import WorkFailed

        raise WorkFailed(f"the compaction breaks {len(problems)} invariant(s): {problems[0]}",
                         hint="the compacted transcript was not written (--strict)")
    if run.status == "compacted" and not dry_run and paths.output not in written:
        from ..errors import WorkFailed

        raise WorkFailed(f"the compaction was not written: {problems[-1]}", path=str(paths.output),
                         hint="nothing was replaced; the report says why (--allow-read-back-mismatch writes it anyway)")
    if run.status == "failed":
        from ..errors import WorkFailed

        where = "" if dry_run or not run.calls else f"; the failed call(s) are dumped in {paths.dump_dir}"
        raise WorkFailed(f"{run.message}", hint=f"the input is untouched{where}")


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("compact")(compact)
