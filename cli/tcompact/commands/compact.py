"""``tcompact compact``: run a compressor or a chain and write the compacted transcript, dumps and report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ._compaction import COMPACTION, compact_values, pick
from ._options import JsonOpt, NoCacheOpt, option_group, with_selectors


PathArg = Annotated[Path | None, typer.Argument(help="The transcript to compact (none: the session --session names).",
                                                show_default=False)]
OutputOpt = Annotated[Path | None, typer.Option("-o", "--output", help="The compacted transcript (default: beside "
                                                "the input, s.compacted.jsonl for s.jsonl).", show_default=False)]
DumpDirOpt = Annotated[Path | None, typer.Option("--dump-dir", help="Folder of compression dumps (default: beside "
                                                 "the output, out.dumps/ for out.jsonl; with --fork or --in-place, in "
                                                 "the state folder).", show_default=False)]
ReportOpt = Annotated[Path | None, typer.Option("--report", help="Token report JSON (default: beside the output, "
                                                "out.report.json for out.jsonl; with --fork or --in-place, in the "
                                                "state folder).", show_default=False)]
OffloadDirOpt = Annotated[Path | None, typer.Option("--offload-dir", help="Offload store (default: beside the "
                                                    "output, out.offload/ for out.jsonl; with --fork or --in-place, "
                                                    "in the state folder).", show_default=False)]
HtmlOpt = Annotated[Path | None, typer.Option("--html", help="Also write a self-contained HTML report with charts "
                                              "(needs tcompact[html]).", show_default=False)]
NowOpt = Annotated[bool, typer.Option("--now", help="Compact even below the compressors' triggers (--fork and "
                                     "--in-place always do).")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite existing outputs.")]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Show what would happen; write nothing.")]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Fail (exit 1, transcript not written) when the output "
                                         "breaks an invariant; the default warns.")]
AllowMismatchOpt = Annotated[bool, typer.Option("--allow-read-back-mismatch", help="Write the compacted transcript "
                                                "even when it does not read back as the compacted messages (a "
                                                "warning instead of a failure).")]
ForkOpt = Annotated[bool, typer.Option("--fork", help="Write the result as a new session of the agent and print the "
                                       "command that resumes it.")]
InPlaceOpt = Annotated[bool, typer.Option("--in-place", help="Replace the session, keeping a backup that `tcompact "
                                          "restore --session ID` brings back.")]

#: compact's options, in the order --help shows them: (parameter, option, default); those of every
#: compaction come from the one table (:mod:`._compaction`).
COMPACT_OPTIONS = (
    *pick("compressor", "summarizer"), ("output", OutputOpt, None), ("dump_dir", DumpDirOpt, None),
    ("report", ReportOpt, None), ("offload_dir", OffloadDirOpt, None),
    *pick("to", "sets", "config", "model", "base_url", "timeout", "max_retries", "concurrency", "request_mode",
          "summarizer_window", "replay_dir", "context_window", "trigger_ratio", "encoding", "preserve"),
    ("html", HtmlOpt, None), ("now", NowOpt, False), ("force", ForceOpt, False), ("dry_run", DryRunOpt, False),
    ("strict", StrictOpt, False), ("allow_mismatch", AllowMismatchOpt, False), ("json_out", JsonOpt, False),
    ("no_cache", NoCacheOpt, False), *pick("transcript", "fmt", "full_history", "skip_bad_lines"),
    ("fork", ForkOpt, False), ("in_place", InPlaceOpt, False),
)


def compact_job(**values: Any):
    """The CompactJob of compact's option values (its PATH and selectors added by the command): its
    settings made and checked here, at the boundary, once."""
    from ..errors import Interrupted

    try:  # the library's modules load here: most of a start-up that Ctrl-C may cut short
        from ..compaction import CompactJob, CompactOptions
    except KeyboardInterrupt:
        raise Interrupted.nothing_written() from None

    options = CompactOptions(**compact_values(values), now=values.pop("now"))
    job = {name: value for name, value in values.items() if name not in COMPACTION and name != "no_cache"}
    return CompactJob(None, options, **job)


@with_selectors
@option_group("job", COMPACT_OPTIONS, compact_job, keep=("json_out",))
def compact(path: PathArg = None, job=None, selector=None, *, json_out: bool = False) -> None:
    """Compact a transcript with a compressor or a chain of them.

    Writes the compacted transcript (in the input's format unless --to), one dump per summariser
    call, the offloaded originals and a token report. "Nothing to do" (below the trigger) is a
    normal outcome: exit 0, nothing written (--now compacts anyway). A summariser failure leaves
    the input untouched, writes the failed dumps and exits 1.

    A session of this machine is named with --session ID (or last) instead of a PATH; --fork writes
    the result as a new session of its agent, --in-place replaces it (keeping a backup); both
    compact whatever the trigger says.

    Examples:

    \b
      tcompact compact session.jsonl -c truncate,dialogue -o out.jsonl
      tcompact compact rollout.jsonl -c full --summarizer openai --model M
      tcompact compact --session last --fork
    """
    from dataclasses import replace

    from ..errors import Interrupted

    try:
        from .. import render
        from ..compaction import run_job

        with render.call_progress(enabled=not json_out) as progress:
            job = replace(job, path=path, selector=selector, options=job.options.placed(progress=progress))
            outcome = run_job(job, warn=render.warn, warn_skipped=render.warn_skipped_lines)
    except KeyboardInterrupt:  # before the job began (the job takes back what it wrote itself)
        raise Interrupted.nothing_written() from None
    render.compact_outcome(outcome, json_out=json_out)
    if outcome.failure is not None:
        raise outcome.failure


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("compact")(compact)
