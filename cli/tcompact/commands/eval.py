"""``tcompact eval``: plant canaries in copies of sessions, compact them, report what survived."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._options import FormatOpt, FullHistoryOpt, JsonOpt, SkipBadLinesOpt, TranscriptOpt
from ..defaults import DEFAULT_CHAIN


def eval_(
    paths: Annotated[list[Path], typer.Argument(help="Session files or folders (searched recursively).",
                                                show_default=False, metavar="PATH")],
    chains: Annotated[list[str] | None, typer.Option("-c", "--compressor", help="A compressor or chain to "
                                                     "evaluate (repeatable; default: every compressor and the "
                                                     "default chain of compact).", show_default=False)] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the canaries' texts and places.")] = 1,
    per_kind: Annotated[int, typer.Option("--per-kind", help="Canaries of each kind planted per session.")] = 2,
    summarizer: Annotated[str, typer.Option("--summarizer", help="extractive (offline), openai or replay.")
                          ] = "extractive",
    model: Annotated[str | None, typer.Option("--model", help="Model: its encoding and window, and the model the "
                                              "openai summariser calls.", show_default=False)] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint (default: "
                                                 "OPENAI_BASE_URL).", show_default=False)] = None,
    replay_dir: Annotated[Path | None, typer.Option("--replay-dir", help="Dumps the replay summariser answers "
                                                    "from.", show_default=False)] = None,
    sets: Annotated[list[str] | None, typer.Option("--set", help="A setting, key=value or compressor.key=value "
                                                   "(repeatable).", show_default=False)] = None,
    config: Annotated[Path | None, typer.Option("--config", help="TOML or JSON file with a table of settings per "
                                                "compressor.", show_default=False)] = None,
    context_window: Annotated[int | None, typer.Option("--context-window", help="Context window in tokens.",
                                                       show_default=False)] = None,
    encoding: Annotated[str | None, typer.Option("--encoding", help="o200k_base or cl100k_base.",
                                                 show_default=False)] = None,
    preserve: Annotated[str | None, typer.Option("--preserve", help="What the summaries must keep, in your words.",
                                                 show_default=False)] = None,
    json_out: JsonOpt = False,
    transcript: TranscriptOpt = None,
    fmt: FormatOpt = None,
    full_history: FullHistoryOpt = False,
    skip_bad_lines: SkipBadLinesOpt = False,
) -> None:
    """Measure what each compressor keeps of planted canaries.

    In a copy of each session (nothing is written) it plants seeded facts — an error line inside
    a tool output, a file written, a command run and its outcome, a user constraint, a user
    preference, a decision, a fact stated once early — compacts the copy with each chain as
    `compact --force` would, and reports per chain and kind the share found verbatim in what the
    model would see, the tokens against the original, tool-pairing violations and whether the
    last real request was kept.

    Examples:

    \b
      tcompact eval ~/.claude/projects/-home-me-app/
      tcompact eval session.jsonl -c full -c truncate,dialogue --seed 7 --json
    """
    from pydantic import ValidationError

    from .. import render
    from ..errors import UsageError, WorkFailed
    from ..evaluation import EvalOptions, evaluate_paths

    try:
        options = EvalOptions(chains=tuple(chains or ()), default_chain=DEFAULT_CHAIN, seed=seed, per_kind=per_kind,
                              summarizer=summarizer, model=model, base_url=base_url, replay_dir=replay_dir,
                              sets=tuple(sets or ()), config=config,
                              context_window=context_window, encoding=encoding, preserve=preserve,
                              transcript=transcript, format=fmt, full_history=full_history,
                              skip_bad_lines=skip_bad_lines)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UsageError(f"--{str(first['loc'][0]).replace('_', '-')}: {first['msg']}",
                         hint="see tcompact eval --help") from None
    with render.file_progress(enabled=not json_out) as on_file:
        report = evaluate_paths(paths, options, on_file=on_file)
    if json_out:
        render.print_json(report)
    else:
        from ..render.eval_view import eval_report

        eval_report(report)
    render.warn_skipped({"files": [], "errors": report["errors"]})
    if report["errors"]:
        raise typer.Exit(2)
    failed = [r for r in report["summary"] if r["failed"]]
    if failed:
        raise WorkFailed(f"{sum(r['failed'] for r in failed)} compaction(s) failed ({failed[0]['chain']} first)",
                         hint="their rows count nothing as kept; see the reasons with --json")


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("eval")(eval_)
