"""``tcompact replay``: verify, re-run and compare compression dumps offline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._compaction import TimeoutOpt
from ._options import JsonOpt, NoCacheOpt, api_key


DumpsArg = Annotated[list[Path], typer.Argument(help="Dump files or folders of dumps.", show_default=False)]
VerifyOpt = Annotated[bool, typer.Option("--verify", help="Rebuild every compaction from its dumps and compare (the "
                                         "default when no --summarizer is given).")]
TableOpt = Annotated[bool, typer.Option("--table", help="One row per dump, with totals.")]
RerunOpt = Annotated[str | None, typer.Option("--summarizer", help="Re-run one dump with this backend: extractive or "
                                              "openai.", show_default=False)]
RerunModelOpt = Annotated[str | None, typer.Option("--model", help="Model for the openai backend (default: the one "
                                                   "the dump records).", show_default=False)]
RerunBaseUrlOpt = Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint (default: "
                                                     "OPENAI_BASE_URL); the key comes from OPENAI_API_KEY.",
                                                     show_default=False)]
PromptOpt = Annotated[Path | None, typer.Option("--prompt", help="A file whose text replaces the recorded prompt "
                                                "(the system prompt for round-level).", show_default=False)]
RerunDumpDirOpt = Annotated[Path | None, typer.Option("--dump-dir", help="Where a re-run writes its dumps (default: "
                                                      "a replays/ folder next to the dump).", show_default=False)]


def replay(paths: DumpsArg, verify: VerifyOpt = False, table: TableOpt = False, summarizer: RerunOpt = None,
           model: RerunModelOpt = None, base_url: RerunBaseUrlOpt = None, prompt: PromptOpt = None,
           timeout: TimeoutOpt = None, dump_dir: RerunDumpDirOpt = None, json_out: JsonOpt = False,
           no_cache: NoCacheOpt = False) -> None:
    """Verify, re-run or tabulate compression dumps, offline.

    Verifying rebuilds each compaction from its dumps alone — no transcript needed — and exits 1
    on any mismatch (2 when a dump cannot be read). Re-running sends one dump's request to another
    backend or with another prompt, shows the recorded and the new summary side by side and writes
    the new dump, linked to the original. --table gives one row per dump.

    Examples:

    \b
      tcompact replay dumps/ --verify
      tcompact replay dumps/DUMP.json --summarizer openai --model M
    """
    from ..errors import UsageError
    from ..replaying import check_rerun_options

    if sum(bool(x) for x in (verify, table, summarizer)) > 1:
        raise UsageError("choose one of --verify, --table and --summarizer")
    check_rerun_options(summarizer, model=model, base_url=base_url, prompt=prompt, dump_dir=dump_dir)
    if not table and summarizer is None:
        _verify(paths, json_out=json_out)
    elif table:
        _table(paths, json_out=json_out)
    else:
        _rerun(paths, summarizer, model=model, base_url=base_url, prompt=prompt, timeout=timeout, dump_dir=dump_dir,
               json_out=json_out)


def _verify(paths: list[Path], *, json_out: bool) -> None:
    """Check every dump; exit 2 when one cannot be read or rebuilt, 1 on a mismatch."""
    from .. import render
    from ..replaying import verify_paths

    checks = verify_paths(paths)
    render.print_json({"checks": [render.check_dict(c) for c in checks]}) if json_out else render.replay_checks(checks)
    if any(c.error for c in checks):
        raise typer.Exit(2)
    if not all(c.ok for c in checks):
        raise typer.Exit(1)


def _table(paths: list[Path], *, json_out: bool) -> None:
    """One row per dump."""
    from .. import render
    from ..dump import load_dumps
    from ..replaying import table_rows

    rows = table_rows(load_dumps(paths))
    render.print_json({"dumps": rows}) if json_out else render.replay_table(rows)


def _rerun(paths: list[Path], summarizer: str, *, model: str | None, base_url: str | None, prompt: Path | None,
           timeout: float | None, dump_dir: Path | None, json_out: bool) -> None:
    """Re-run the one dump given with ``summarizer``; exit 1 when the re-run failed (after showing it)."""
    from .. import render
    from ..dump import load_dumps
    from ..replaying.rerun import RerunOptions, rerun_dump
    from ..summarizers import RunSettings

    options = RerunOptions(summarizer=summarizer, model=model, base_url=base_url, api_key=api_key(),
                           run=RunSettings(timeout=timeout))
    outcome = rerun_dump(load_dumps(paths), options, prompt=_read_prompt(prompt) if prompt is not None else None,
                         dump_dir=dump_dir)
    render.print_json(render.rerun_dict(outcome.rerun, outcome.written)) if json_out else \
        render.rerun_view(outcome.rerun, outcome.written)
    if outcome.failure is not None:
        raise outcome.failure


def _read_prompt(path: Path) -> str:
    """The text of ``--prompt``, read at the boundary."""
    from ..errors import InputError

    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the prompt: {exc}", path=str(path), hint="pass a UTF-8 text file") from None


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("replay")(replay)
