"""The canary metric: plant seeded canaries in a copy of a session, compact it, count what survived.

:func:`canary_entry` plants (:mod:`.planting`, carried out on the file's own records by
:mod:`.editors`, read back with the real reader), compacts the copy with each chain
(:mod:`.runs`) and scores (:mod:`.scoring`): per kind the share of canaries found verbatim, the
tokens against the planted copy's, the tool pairing violations and whether the last real request
is still there. A failed compaction keeps nothing: no canary, no last request, and no token figure
(it wrote nothing). :class:`Summary` adds the entries of many files up per chain.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..errors import TcompactError
from ..formats import ReadOptions, read_bytes
from ..model import SourceFile, Transcript
from .canaries import KINDS, Canary
from .editors import plant_records
from .options import EvalOptions
from .planting import plan
from .runs import run_chain
from .scoring import last_request_kept, pairing_violations, seen_texts, share, survivors, tally

if TYPE_CHECKING:
    from .shapes import CanaryPart, CanaryResult, CanaryRow, ChainRow, FileEntry

__all__ = ["canary_entry", "Summary", "summarize"]


def canary_entry(source: SourceFile, transcript: Transcript, *, chains: Sequence[str],
                 options: EvalOptions) -> CanaryPart:
    """The canary part of one file's entry: the planted copy's size, the kinds with no place, the
    canaries and one result per chain."""
    rng = random.Random(f"{options.seed}:{_digest(source)}:{transcript.id}")
    taken = "\n".join(seen_texts(transcript.messages))
    layout = plan(transcript.messages, rng, per_kind=options.per_kind, taken=taken)
    planted_source = read_bytes(plant_records(source, transcript, layout), f"{source.path} (planted)",
                                _same_format(options, source))
    planted = planted_source.transcript(transcript.id)
    seen = seen_texts(planted.messages)
    missing = [c.id for c in layout.canaries if c.id not in survivors([c], seen)]
    if missing:  # the copy must hold every canary before compaction, or the scores mean nothing
        raise TcompactError(f"planting failed for {', '.join(missing)}", path=source.path,
                            hint="please report it: tcompact eval could not plant into this session")
    results = [_run(planted_source, planted, chain=chain, options=options, canaries=layout.canaries)
               for chain in chains]
    return {"messages": len(planted.messages), "skipped_kinds": list(layout.skipped),
            "canaries": [_canary(c) for c in layout.canaries], "results": results}


def _same_format(options: EvalOptions, source: SourceFile) -> ReadOptions:
    return ReadOptions(format=source.format, full_history=options.full_history,
                       skip_bad_lines=options.skip_bad_lines, keep_raw=True)


def _digest(source: SourceFile) -> str:
    digest = hashlib.sha256()
    for r in source.records:
        digest.update(r.raw or b"")
    return digest.hexdigest()[:16]


def _canary(c: Canary) -> CanaryRow:
    return {"id": c.id, "kind": c.kind, "values": list(c.values)}


def _run(source: SourceFile, planted: Transcript, *, chain: str, options: EvalOptions,
         canaries: Sequence[Canary]) -> CanaryResult:
    """One chain over the planted copy, scored; a failed run keeps nothing and has no size."""
    run, after = run_chain(source, chain, options=options)
    failed = run.status == "failed"
    kept = survivors(canaries, seen_texts(after)) if not failed else set()
    before_tokens = run.counter.total(planted.messages)
    after_tokens = run.counter.total(after) if not failed else None
    return {"chain": chain, "status": run.status, "reason": run.message, "tokens_before": before_tokens,
            "tokens_after": after_tokens,
            "ratio": round(after_tokens / before_tokens, 4) if before_tokens and after_tokens is not None else None,
            "survival": tally(canaries, kept), "lost": [c.id for c in canaries if c.id not in kept],
            "pairing_violations": pairing_violations(planted.messages, after),
            "last_request_kept": last_request_kept(planted.messages, after) and not failed,
            "invariants": list(run.report.get("invariants") or [])}


class Summary:
    """The per-chain totals of :func:`summarize`, added up one file at a time (``tcompact batch eval``
    folds its result lines into one without holding them): ``add`` each file's entry, then ``rows``."""

    def __init__(self, chains: Sequence[str]) -> None:
        self.chains = list(chains)
        self._acc = {chain: _ChainTotals() for chain in self.chains}

    def add(self, file: FileEntry) -> None:
        """Count one file's entry (as :func:`evaluate_file` returns it); results of other chains are ignored."""
        for r in file["results"]:
            acc = self._acc.get(r["chain"])
            if acc is not None:
                acc.add(r)

    def rows(self) -> list[ChainRow]:
        """Per chain, over every file added: survival per kind, tokens, worst ratio, violations, requests kept."""
        return [self._acc[chain].row(chain) for chain in self.chains]


class _ChainTotals:
    """Sums (and the worst ratio) of one chain's results; the tokens of the runs that did not fail."""

    def __init__(self) -> None:
        self.files = self.failed = self.before = self.after = self.pairs = self.kept = self.of = 0
        self.worst: float | None = None
        self.counts = {k: {"kept": 0, "planted": 0} for k in KINDS}

    def add(self, r: CanaryResult) -> None:
        self.files += 1
        self.failed += r["status"] == "failed"
        for k, c in self.counts.items():
            c["kept"] += r["survival"][k]["kept"]
            c["planted"] += r["survival"][k]["planted"]
        if r["tokens_after"] is not None:
            self.before += r["tokens_before"]
            self.after += r["tokens_after"]
        if r["ratio"] is not None and (self.worst is None or r["ratio"] > self.worst):
            self.worst = r["ratio"]
        self.pairs += r["pairing_violations"]
        if r["last_request_kept"] is not None:
            self.kept += r["last_request_kept"]
            self.of += 1

    def row(self, chain: str) -> ChainRow:
        total = {"kept": sum(c["kept"] for c in self.counts.values()),
                 "planted": sum(c["planted"] for c in self.counts.values())}
        return {"chain": chain, "files": self.files, "failed": self.failed,
                "survival": {k: {**c, "share": share(c)} for k, c in self.counts.items()},
                "overall": {**total, "share": share(total)},
                "tokens_before": self.before, "tokens_after": self.after,
                "ratio": round(self.after / self.before, 4) if self.before else None,
                "worst_ratio": self.worst, "pairing_violations": self.pairs,
                "last_request_kept": {"kept": self.kept, "of": self.of}}


def summarize(files: Iterable[FileEntry], chains: Sequence[str]) -> list[ChainRow]:
    """Per chain, over every file evaluated: survival per kind, tokens, worst ratio, violations, requests kept."""
    summary = Summary(chains)
    for f in files:
        summary.add(f)
    return summary.rows()
