"""``tcompact restore``: put offloaded originals back into a compacted transcript, put back a session
compacted in place, and list or clean what tcompact keeps of the sessions it forked or replaced."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from ._options import FormatOpt, JsonOpt, SkipBadLinesOpt, option_group, with_selectors


PathArg = Annotated[Path | None, typer.Argument(help="A transcript compacted with -c offload.", show_default=False)]
OutputOpt = Annotated[Path | None, typer.Option("-o", "--output", help="Where to write the restored transcript.",
                                                show_default=False)]
StoreOpt = Annotated[Path | None, typer.Option("--store", help="The offload store folder (default: the paths in the "
                                               "markers).", show_default=False)]
ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite an existing output file.")]
ListOpt = Annotated[bool, typer.Option("--list", help="List what tcompact keeps of the sessions it forked or "
                                       "compacted in place: the runs in its state folder and the in-place backups, "
                                       "with their sizes.")]
CleanOpt = Annotated[bool, typer.Option("--clean", help="Remove what --list shows that is older than --older-than "
                                        "(backups too).")]
OlderThanOpt = Annotated[str | None, typer.Option("--older-than", help="With --list or --clean: the entries older "
                                                  "than AGE: 30d, 12h, 2w, 90m (0d: all).", show_default=False)]
PreCompactionOpt = Annotated[bool, typer.Option("--pre-compaction", help="With --session: write the transcript the "
                                                "hooks kept before the agent's last compaction as a new session.")]


#: restore's options, in the order --help shows them: (parameter, option, default).
RESTORE_OPTIONS = (("output", OutputOpt, None), ("store", StoreOpt, None), ("force", ForceOpt, False),
                   ("fmt", FormatOpt, None), ("skip_bad_lines", SkipBadLinesOpt, False), ("list_", ListOpt, False),
                   ("clean", CleanOpt, False), ("older_than", OlderThanOpt, None), ("json_out", JsonOpt, False),
                   ("pre_compaction", PreCompactionOpt, False))


@dataclass(frozen=True)
class _Asked:
    """What a restore command line asks for, beside its PATH and selectors."""

    output: Path | None
    store: Path | None
    force: bool
    fmt: str | None
    skip_bad_lines: bool
    list_: bool
    clean: bool
    older_than: str | None
    json_out: bool
    pre_compaction: bool


@with_selectors
@option_group("asked", RESTORE_OPTIONS, _Asked)
def restore(path: PathArg = None, asked=None, selector=None) -> None:
    """Put offloaded originals back into a compacted transcript.

    Rebuilds the original transcript from one compacted with -c offload and its offload store. Lines
    skipped as malformed (--skip-bad-lines) are written back as they are.

    With --session ID instead: put back the session that `compact --in-place` replaced, from the
    backup kept next to it (--force restores even when the agent wrote to the session since). With
    --session ID --pre-compaction: the session as it was before the agent's own last compaction (kept
    by `tcompact hooks install`'s hooks), written as a new session to resume.

    --list shows what tcompact keeps of the sessions it forked or compacted in place (its state
    folder, ~/.local/state/tcompact, and the in-place backups); --clean --older-than AGE removes
    what is older.

    Examples:

    \b
      tcompact restore out.jsonl --store out.offload -o original.jsonl
      tcompact restore --session last
      tcompact restore --list
      tcompact restore --clean --older-than 30d
      tcompact restore --session 4b2e6300 --pre-compaction
    """
    _restore(path, asked, selector)


def _restore(path: Path | None, a: _Asked, selector: Any) -> None:
    """What the options ask: list or clean what tcompact keeps, a session put back, or an offload's originals."""
    if a.list_ or a.clean or a.older_than is not None:
        from ._sessions import kept_by_tcompact

        return kept_by_tcompact(listing=a.list_, clean=a.clean, older_than=a.older_than, json_out=a.json_out,
                                other=path is not None or a.output is not None or a.store is not None or
                                selector.narrows)
    if a.json_out:
        from ..errors import UsageError

        raise UsageError("--json goes with --list or --clean", hint="leave it out to restore")
    if a.pre_compaction:
        from ._sessions import restore_pre_compaction

        return restore_pre_compaction(path, selector, output=a.output)
    if path is None or selector.narrows:
        from ._sessions import restore_session

        return restore_session(path, selector, output=a.output, force=a.force)
    _restore_offload(path, a)


def _restore_offload(path: Path, a: _Asked) -> None:
    """``restore FILE -o OUT``: the originals of an offload put back."""
    from .. import render
    from ..artifacts import write_bytes
    from ..restore import restore_file
    from ._options import read_options

    if a.output is None:
        from ..errors import UsageError

        raise UsageError("Missing option '-o' / '--output'", hint="say where to write the restored transcript")
    data, count, skipped = restore_file(path, store=a.store,
                                        read=read_options(a.fmt, False, a.skip_bad_lines, keep_raw=True))
    render.warn_skipped_lines(str(path), skipped)
    write_bytes(a.output, data, force=a.force, inputs=(path,))
    render.console().print(f"Restored {count} offloaded line(s) into {a.output}")


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("restore")(restore)
