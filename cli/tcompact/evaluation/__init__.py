"""``tcompact eval``: how much of what an agent must remember survives each compressor or chain.

Two measures, each on the user's own sessions, every chain run exactly as ``tcompact compact
--now`` would run it (the same library call; nothing written but the dumps asked for):

* the **canaries** (:mod:`.canary_eval`): seeded facts of seven kinds planted in a copy of the
  session, compacted, and looked for verbatim in what the model would see;
* the **needed-token recall** (:mod:`.needed`, :mod:`.recall`): at points where the agent is about
  to act, the paths, identifiers and values it learned from its tools and used in its next calls,
  looked for in the compacted part before the point — beside two baselines (keep the tail; cut
  every tool output to its head and tail).

:func:`evaluate_file` gives the JSON-serialisable entry of one file and is deterministic (the
canaries' places and texts come from the seed and the file's bytes, the cut points from its
messages; never from its path or the clock); :class:`Totals` adds many entries up;
:func:`evaluate_paths` does both for files and folders. Summaries are always forced: the point is
to see what a compaction keeps, whether or not the session has reached its trigger yet.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__
from ..errors import NotATranscriptError, TcompactError
from ..formats import find_files, read_file
from .canaries import KINDS
from .canary_eval import Summary, canary_entry, summarize
from .options import METRICS, EvalOptions, default_chains
from .recall import NeededSummary, needed_entry, needed_settings

if TYPE_CHECKING:
    from ..inspection.shapes import FileError
    from .shapes import EvalReport, EvalTotals, FileEntry

__all__ = ["EvalOptions", "METRICS", "KINDS", "evaluate_file", "evaluate_paths", "summarize", "Summary",
           "NeededSummary", "Totals", "default_chains"]

SCHEMA_VERSION = 1


def evaluate_file(path: str | Path, options: EvalOptions) -> FileEntry:
    """Measure one session with every chain; a JSON-serialisable dict.

    Raises :class:`~tcompact.errors.TcompactError` when the file cannot be read; a chain whose
    summariser fails is a result with status "failed"."""
    chains = options.chain_list()
    source = read_file(path, options.read_options())
    transcript = source.transcript(options.transcript)
    entry: FileEntry = {"path": str(path), "format": source.format, "transcript": transcript.id,
                             "messages": len(transcript.messages)}
    if options.canaries:
        entry.update(canary_entry(source, transcript, chains=chains, options=options))
    if options.needed:
        entry["needed"] = needed_entry(source, transcript, chains=chains, options=options)
    return entry


class Totals:
    """What the report adds up over many files, one entry at a time: the canary :class:`Summary` and the
    :class:`NeededSummary`, each when its metric is measured."""

    def __init__(self, options: EvalOptions, chains: list[str]) -> None:
        self.options = options
        self.canaries = Summary(chains) if options.canaries else None
        self.needed = NeededSummary(chains) if options.needed else None

    def add(self, entry: FileEntry) -> None:
        """Count one file's entry."""
        for part in (self.canaries, self.needed):
            if part is not None:
                part.add(entry)

    def result(self) -> EvalTotals:
        """``summary`` (the canary rows) and ``needed`` (its settings, counts and rows), as measured."""
        out: EvalTotals = {}
        if self.canaries is not None:
            out["summary"] = self.canaries.rows()
        if self.needed is not None:
            out["needed"] = {**needed_settings(self.options), **self.needed.result()}
        return out


def evaluate_paths(paths: Iterable[str | Path], options: EvalOptions, *,
                   on_file: Callable[[int, int, Path], None] | None = None) -> EvalReport:
    """Evaluate every session of ``paths`` (files, or folders searched as inspect does): the whole report."""
    chains = options.chain_list()
    paths = list(paths)
    named = {Path(p) for p in paths if Path(p).is_file()}
    files = find_files(paths)
    totals = Totals(options, chains)
    results: list[FileEntry] = []
    errors: list[FileError] = []
    passed: list[FileError] = []
    for n, path in enumerate(files, start=1):
        if on_file is not None:
            on_file(n - 1, len(files), path)
        try:
            results.append(evaluate_file(path, options))
            totals.add(results[-1])
        except NotATranscriptError as exc:
            (errors if path in named else passed).append({"path": str(path), "error": str(exc)})
        except TcompactError as exc:
            errors.append({"path": str(path), "error": str(exc)})
    return {"tool": "tcompact", "version": __version__, "schema_version": SCHEMA_VERSION, "metric": options.metric,
            "seed": options.seed, "per_kind": options.per_kind, "kinds": list(KINDS), "chains": chains,
            "default_chain": options.default_chain, "files": results, "errors": errors,
            "not_transcripts": [{"path": p["path"], "reason": p["error"]} for p in passed], **totals.result()}
