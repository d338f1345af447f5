"""One chain over one session as ``tcompact compact --now`` runs it, and what the model then sees.

Both metrics compact this way: the library call ``compact`` makes, nothing written but, on
request (``--dump-dir``), the dumps of the summariser calls — into ``DIR/<session>/<chain>/``,
with the cut point between them for the needed-token recall (``DIR/<session>/cut-<N>/<chain>/``),
so that ``tcompact replay`` can verify or re-run every call.
"""

from __future__ import annotations

from pathlib import Path

from ..artifacts import make_folder, write_json_all
from ..compaction import CompactionRun, compact_source
from ..dump import safe_name
from ..model import Message, SourceFile
from .options import EvalOptions
from .scoring import visible_messages

__all__ = ["run_chain"]


def run_chain(source: SourceFile, chain: str, *, options: EvalOptions, cut: int | None = None
              ) -> tuple[CompactionRun, tuple[Message, ...]]:
    """The run of ``chain`` over ``source`` (its dumps written when asked) and the context after it."""
    run = compact_source(source, options.compact_options(chain), dumps_ahead=options.dump_dir is not None)
    if options.dump_dir is not None and run.calls:
        folder = options.dump_dir / safe_name(run.dump_context.session)
        folder = (folder / f"cut-{cut}" if cut is not None else folder) / safe_name(chain)
        _write_dumps(run, folder)
    return run, visible_messages(run)


def _write_dumps(run: CompactionRun, folder: Path) -> None:
    make_folder(folder)
    write_json_all(((folder / name, doc) for name, doc in run.dumps()), sync=False)
