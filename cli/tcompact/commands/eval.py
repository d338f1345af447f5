"""``tcompact eval``: compact copies of sessions and report what survived: planted canaries, needed tokens.

Its options are declared here once; ``tcompact batch eval`` takes the same ones.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated, Any

import typer

from ._compaction import pick, run_settings
from ._options import JsonOpt, NoCacheOpt, api_key, option_group, say_unknown_model, with_selectors

ChainsOpt = Annotated[list[str] | None, typer.Option("-c", "--compressor", help="A compressor or chain to evaluate "
                                                     "(repeatable; default: every compressor and the default chain "
                                                     "of compact).", show_default=False)]
MetricOpt = Annotated[str, typer.Option("--metric", help="What to measure: canaries (planted facts), needed (the "
                                        "needed-token recall at cut points, beside two baselines) or both.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the canaries' texts and places.")]
PerKindOpt = Annotated[int, typer.Option("--per-kind", help="Canaries of each kind planted per session.")]
CutsOpt = Annotated[int, typer.Option("--cuts", help="Needed tokens: cut points per session at most (1-50).")]
DumpDirOpt = Annotated[Path | None, typer.Option("--dump-dir", help="Write the dump of every summariser call here: "
                                                 "DIR/<session>/<chain>/ (needed: DIR/<session>/cut-<N>/<chain>/).",
                                                 show_default=False)]


#: The options that make up an EvalOptions: (parameter, option, default), in the order --help shows them;
#: those of every compaction come from the one table (:mod:`._compaction`), as compact takes them.
EVAL_OPTIONS = (("chains", ChainsOpt, None), ("metric", MetricOpt, "canaries"), ("seed", SeedOpt, 1),
                ("per_kind", PerKindOpt, 2), ("cuts", CutsOpt, 4),
                *pick("summarizer", "model", "base_url", "timeout", "max_retries", "concurrency", "request_mode",
                      "summarizer_window", "replay_dir"), ("dump_dir", DumpDirOpt, None),
                *pick("sets", "config", "context_window", "encoding", "preserve", "transcript", "fmt", "full_history",
                      "skip_bad_lines"))


def eval_options(*, command: str, chains: list[str] | None, sets: list[str] | None, fmt: str | None,
                 **values: Any):
    """EvalOptions from the command's values (validated here, at the boundary, each chain's compaction
    settings made once); a bad value is one UsageError naming its option (the summariser's run settings
    in compact's words). A batch's paths are made absolute, and the key read here: its workers run elsewhere."""
    from pydantic import ValidationError

    from ..errors import UsageError, bad_value
    from ..evaluation import METRICS, EvalOptions

    if values["metric"] not in METRICS:
        raise UsageError(f"unknown --metric {values['metric']!r}", hint=f"use one of: {', '.join(METRICS)}")
    run = run_settings(values)
    if command.startswith("batch"):
        values.update({k: values[k].resolve() for k in ("replay_dir", "config", "dump_dir") if values[k] is not None},
                      api_key=api_key())
    try:
        return EvalOptions(chains=tuple(chains or ()), sets=tuple(sets or ()), format=fmt, run=run, **values)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UsageError(bad_value(f"--{str(first['loc'][0]).replace('_', '-')}", first),
                         hint=f"see tcompact {command} --help") from None


def with_eval_options(command: str):
    """Give a command eval's options: its ``options`` parameter receives them as one EvalOptions."""
    return option_group("options", EVAL_OPTIONS, functools.partial(eval_options, command=command))


PathsArg = Annotated[list[Path] | None, typer.Argument(help="Session files or folders (searched recursively); none: "
                                                      "the sessions on this machine.", show_default=False)]


@with_selectors
@with_eval_options("eval")
def eval_(paths: PathsArg = None, options=None, json_out: JsonOpt = False, no_cache: NoCacheOpt = False,
          selector=None) -> None:
    """Measure what each compressor keeps: canaries, needed tokens.

    --metric canaries (the default): in a copy of each session it plants seeded facts — an error
    line inside a tool output, a file written, a command run and its outcome, a user constraint,
    a user preference, a decision, a fact stated once early — compacts the copy with each chain
    as `compact --now` would (below the trigger too), and reports per chain and kind the share found verbatim in what
    the model would see, the tokens against the original, tool-pairing violations and whether
    the last real request was kept. Nothing is written but the dumps --dump-dir asks for.

    --metric needed: at up to --cuts points where the agent is about to act, the paths,
    identifiers and numbers it learned from its tools and used in its next 40 calls; the session
    before each point is compacted with each chain and cut by two baselines (the last 20
    messages; every tool output cut to its head and tail), and the report gives per chain the
    share kept, the share recoverable from an original the context names, and the size.
    --metric both does both.

    With no PATH: the sessions of Claude Code and Codex on this machine (all of them, or those the
    selectors name), newest first.

    Examples:

    \b
      tcompact eval ~/.claude/projects/-home-me-app/
      tcompact eval session.jsonl -c full -c truncate,dialogue --seed 7 --json
      tcompact eval sessions/ --metric needed -c full -c truncate,dialogue
      tcompact eval --last 5 --agent claude
    """
    _evaluate(paths, options, selector, json_out=json_out)


def _evaluate(paths: list[Path] | None, options: Any, selector: Any, *, json_out: bool) -> None:
    """Evaluate the PATHs (or the selected sessions), show the report; exit 2 on a file's error, 1 on a failed chain."""
    from .. import render
    from ..evaluation import evaluate_paths
    from ..render.eval_view import eval_outcome
    from ._sessions import paths_or_sessions

    say_unknown_model(options.model, context_window=options.context_window, encoding=options.encoding,
                      summarizer=options.summarizer)
    # bad options are the error before the stores are searched
    paths = paths_or_sessions(paths, selector, before_search=options.chain_list)
    with render.file_progress(enabled=not json_out) as on_file:
        report = evaluate_paths(paths, options, on_file=on_file)
    eval_outcome(report, json_out=json_out)
    render.warn_skipped({"files": [], "errors": report["errors"]})
    if report["errors"]:
        raise typer.Exit(2)
    fail_on_failed_chains(measured_rows(report), hint="their rows count nothing as kept; see the reasons with --json")


def measured_rows(totals: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-chain rows of every metric measured (the canaries' ``summary``, the needed tokens' ``summary``)."""
    return [*totals.get("summary", []), *totals.get("needed", {}).get("summary", [])]


def fail_on_failed_chains(rows: list[dict[str, Any]], *, hint: str) -> None:
    """Exit 1 when a chain's compaction failed somewhere (its summariser), naming how many and the first chain."""
    failed = [r for r in rows if r["failed"]]
    if failed:
        from ..errors import WorkFailed

        raise WorkFailed(f"{sum(r['failed'] for r in failed)} compaction(s) failed ({failed[0]['chain']} first)",
                         hint=hint)


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("eval")(eval_)
