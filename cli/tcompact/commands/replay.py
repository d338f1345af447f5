"""``tcompact replay``: verify, re-run and compare compression dumps offline."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from ._options import JsonOpt, NoCacheOpt


def replay(
    paths: Annotated[list[Path], typer.Argument(help="Dump files or folders of dumps.", show_default=False)],
    verify: Annotated[bool, typer.Option("--verify", help="Rebuild every compaction from its dumps and compare "
                                         "(the default when no --summarizer is given).")] = False,
    table: Annotated[bool, typer.Option("--table", help="One row per dump, with totals.")] = False,
    summarizer: Annotated[str | None, typer.Option("--summarizer", help="Re-run one dump with this backend: "
                                                   "extractive or openai.", show_default=False)] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model for the openai backend (default: the one "
                                              "the dump records).", show_default=False)] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint (default: "
                                                 "OPENAI_BASE_URL); the key comes from OPENAI_API_KEY.",
                                                 show_default=False)] = None,
    prompt: Annotated[Path | None, typer.Option("--prompt", help="A file whose text replaces the recorded prompt "
                                                "(the system prompt for round-level).", show_default=False)] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Deadline in seconds for each summariser attempt "
                                                             "(the whole answer).")] = 60.0,
    dump_dir: Annotated[Path | None, typer.Option("--dump-dir", help="Where a re-run writes its dumps (default: "
                                                  "a replays/ folder next to the dump).", show_default=False)] = None,
    json_out: JsonOpt = False,
    no_cache: NoCacheOpt = False,
) -> None:
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
    from .. import render
    from ..errors import UsageError
    from ..dump import load_dumps

    if sum(bool(x) for x in (verify, table, summarizer)) > 1:
        raise UsageError("choose one of --verify, --table and --summarizer")
    _check_rerun_options(summarizer, model=model, base_url=base_url, prompt=prompt, dump_dir=dump_dir)
    if not table and summarizer is None:
        _verify(paths, json_out=json_out)
        return
    dumps = load_dumps(paths)
    if table:
        from ..replaying import table_rows

        rows = table_rows(dumps)
        render.print_json({"dumps": rows}) if json_out else render.replay_table(rows)
        return
    _rerun(dumps, summarizer=summarizer or "", model=model, base_url=base_url, prompt=prompt, timeout=timeout,
           dump_dir=dump_dir, json_out=json_out)


def _verify(paths: list[Path], *, json_out: bool) -> None:
    """One line per dump: a damaged dump, or a run that cannot be rebuilt, fails its own lines only."""
    from .. import render
    from ..replaying import read_checked, verify

    dumps, failed = read_checked(paths)
    checks = sorted([*verify(dumps), *failed], key=lambda c: str(c.dump.path))
    render.print_json({"checks": [render.check_dict(c) for c in checks]}) if json_out else render.replay_checks(checks)
    if any(c.error for c in checks):
        raise typer.Exit(2)
    if not all(c.ok for c in checks):
        raise typer.Exit(1)


def _check_rerun_options(summarizer: str | None, *, model: str | None, base_url: str | None, prompt: Path | None,
                         dump_dir: Path | None) -> None:
    """Options of a re-run are refused where they would be ignored."""
    from ..errors import UsageError

    if summarizer is None:
        given = [o for o, v in (("--model", model), ("--base-url", base_url), ("--prompt", prompt),
                                ("--dump-dir", dump_dir)) if v is not None]
        if given:
            raise UsageError(f"{given[0]} applies to a re-run, and no --summarizer was given",
                             hint="add --summarizer extractive or openai")
        return
    if summarizer not in ("extractive", "openai"):
        raise UsageError(f"--summarizer {summarizer!r} cannot re-run a dump", hint="use extractive or openai")
    if summarizer == "extractive" and prompt is not None:
        raise UsageError("--prompt does not apply to the extractive summariser, which builds its summary from the "
                         "transcript and reads no prompt", hint="re-run with --summarizer openai to try a prompt")
    if summarizer == "extractive" and (model is not None or base_url is not None):
        raise UsageError(f"{'--model' if model is not None else '--base-url'} is an option of the openai summariser",
                         hint="add --summarizer openai, or leave it out")


def _rerun(dumps, *, summarizer: str, model: str | None, base_url: str | None, prompt: Path | None,
           timeout: float, dump_dir: Path | None, json_out: bool) -> None:
    from .. import render
    from ..artifacts import write_json
    from .. import summarizers
    from ..compaction import CompactOptions
    from ..errors import UsageError, WorkFailed
    from ..replaying import rerun
    from ..summarizers import MODES, RunSettings
    from ..tokens import TokenCounter

    if len(dumps) != 1:
        raise UsageError(f"--summarizer re-runs one dump; {len(dumps)} were given", hint="pass a single dump file")
    (dump,) = dumps
    recorded = dump.doc["request"].get("model") if summarizer == "openai" else None
    mode = dump.doc["request"].get("mode")
    options = CompactOptions(summarizer=summarizer, model=model or (recorded if isinstance(recorded, str) else None),
                             base_url=base_url, api_key=os.environ.get("OPENAI_API_KEY"),
                             run=RunSettings(timeout=timeout, request_mode=mode if mode in MODES else "conversation"))
    summarizers.check(options, used=True)
    backend = summarizers.build(options, TokenCounter(dump.doc["encoding"]["name"]))
    text = _read_prompt(prompt) if prompt is not None else None
    result = rerun(dump, backend, prompt=text)
    folder = dump_dir or dump.path.parent / "replays"
    written = [write_json(folder / name, doc, sync=False) for name, doc in result.dumps]
    if json_out:
        render.print_json(render.rerun_dict(result, written))
    else:
        render.rerun_view(result, written)
    if result.result.failed:
        raise WorkFailed(f"the re-run failed: {result.result.reason}", hint=f"its dumps are in {folder}")


def _read_prompt(path: Path) -> str:
    from ..errors import InputError

    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the prompt: {exc}", path=str(path), hint="pass a UTF-8 text file") from None


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("replay")(replay)
