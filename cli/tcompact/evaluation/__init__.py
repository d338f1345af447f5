"""``tcompact eval``: how much of what an agent must remember survives each compressor or chain.

For every session: plant seeded canaries in a copy (:mod:`.planting`, carried out on the file's own
records by :mod:`.editors`, read back with the real reader), compact that copy with each chain
exactly as ``tcompact compact --now`` would (the same library call; nothing is written), read
the compacted transcript back as the agent would resume it, and score (:mod:`.scoring`): per
kind the share of canaries found verbatim, the tokens against the planted copy's, the tool
pairing violations and whether the last real request is still there.

:func:`evaluate_file` gives the JSON-serialisable result of one file and is deterministic for a
seed (the positions and texts come from the seed and the file's bytes, never from its path or
the clock); :func:`summarize` adds the results of many files up per chain; :func:`evaluate_paths`
does both for files and folders. Summaries are always forced: the point is to see what a
compaction keeps, whether or not the session has reached its trigger yet.
"""

from __future__ import annotations

import hashlib
import os
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .. import __version__
from ..compaction import CompactOptions, check_options, compact_source
from ..compressors import names, parse_sets
from ..defaults import DEFAULT_CHAIN
from ..errors import NotATranscriptError, TcompactError
from ..formats import ReadOptions, find_files, read_bytes, read_file
from ..model import SourceFile, Transcript
from ..summarizers import RunSettings
from .canaries import KINDS, Canary
from .editors import plant_records
from .planting import plan
from .scoring import last_request_kept, pairing_violations, seen_texts, share, survivors, tally, visible_messages

__all__ = ["EvalOptions", "KINDS", "evaluate_file", "evaluate_paths", "summarize", "Summary", "default_chains"]

SCHEMA_VERSION = 1


class EvalOptions(BaseModel):
    """What ``tcompact eval`` can be told (validated here, at the boundary)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    chains: tuple[str, ...] = Field(default=(), description="Chains to run; empty = every compressor and the "
                                    "default chain.")
    default_chain: str = Field(DEFAULT_CHAIN, min_length=1, description="The default chain of compact.")
    seed: int = Field(1, ge=0, description="Seed of the canary texts and places.")
    per_kind: int = Field(2, ge=1, le=20, description="Canaries of each kind per session.")
    summarizer: str = Field("extractive", description="extractive, openai or replay.")
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = Field(None, repr=False, description="The openai summariser's key (default: "
                                "OPENAI_API_KEY where the compaction runs); never in a fingerprint or report.")
    timeout: float = Field(60.0, gt=0)
    replay_dir: Path | None = None
    encoding: str | None = None
    context_window: int | None = None  # checked with the rest of compact's options (check_options)
    sets: tuple[str, ...] = ()
    config: Path | None = None
    preserve: str | None = None
    transcript: str | None = None
    format: str | None = None
    full_history: bool = False
    skip_bad_lines: bool = False

    def chain_list(self) -> list[str]:
        """The chains to run, each with its options checked as ``compact`` checks them (an unknown
        compressor, a bad setting or a summariser without what it needs is an error before any work)."""
        chains = list(self.chains) or default_chains(self.default_chain)
        for spec in chains:
            check_options(self.compact_options(spec))
        return chains

    def read_options(self) -> ReadOptions:
        """How the sessions are read."""
        return ReadOptions(format=self.format, full_history=self.full_history, skip_bad_lines=self.skip_bad_lines,
                           keep_raw=True)

    def compact_options(self, chain: str) -> CompactOptions:
        """The options of the ``compact --now`` run of one chain (below the trigger too)."""
        return CompactOptions(chain=chain, overrides=parse_sets(self.sets), config=self.config,
                              summarizer=self.summarizer, model=self.model, base_url=self.base_url,
                              api_key=self.api_key if self.api_key is not None else os.environ.get("OPENAI_API_KEY"),
                              run=RunSettings(timeout=self.timeout), replay_dir=self.replay_dir, encoding=self.encoding,
                              context_window=self.context_window, now=True, transcript=self.transcript,
                              preserve=self.preserve, read=self.read_options())


def default_chains(default: str) -> list[str]:
    """Every compressor alone, then the default chain of compact when it is not one of them."""
    return names() + ([default] if default not in names() else [])


def evaluate_file(path: str | Path, options: EvalOptions) -> dict[str, Any]:
    """Plant, compact with every chain and score one session; a JSON-serialisable dict.

    Raises :class:`~tcompact.errors.TcompactError` when the file cannot be read; a chain whose
    summariser fails is a result with status "failed"."""
    chains = options.chain_list()
    source = read_file(path, options.read_options())
    transcript = source.transcript(options.transcript)
    rng = random.Random(f"{options.seed}:{_digest(source)}:{transcript.id}")
    taken = "\n".join(seen_texts(transcript.messages))
    layout = plan(transcript.messages, rng, per_kind=options.per_kind, taken=taken)
    planted_source = read_bytes(plant_records(source, transcript, layout), f"{source.path} (planted)",
                                _same_format(options, source))
    planted = planted_source.transcript(transcript.id)
    seen = seen_texts(planted.messages)
    missing = [c.id for c in layout.canaries if c.id not in survivors([c], seen)]
    if missing:  # the copy must hold every canary before compaction, or the scores mean nothing
        raise TcompactError(f"planting failed for {', '.join(missing)}", path=str(path),
                            hint="please report it: tcompact eval could not plant into this session")
    results = [_run(planted_source, planted, chain, options, layout.canaries) for chain in chains]
    return {"path": str(path), "format": source.format, "transcript": transcript.id,
            "messages": len(planted.messages), "skipped_kinds": list(layout.skipped),
            "canaries": [_canary(c) for c in layout.canaries], "results": results}


def _same_format(options: EvalOptions, source: SourceFile) -> ReadOptions:
    return ReadOptions(format=source.format, full_history=options.full_history,
                       skip_bad_lines=options.skip_bad_lines, keep_raw=True)


def _digest(source: SourceFile) -> str:
    digest = hashlib.sha256()
    for r in source.records:
        digest.update(r.raw or b"")
    return digest.hexdigest()[:16]


def _canary(c: Canary) -> dict[str, Any]:
    return {"id": c.id, "kind": c.kind, "values": list(c.values)}


def _run(source: SourceFile, planted: Transcript, chain: str, options: EvalOptions,
         canaries: Sequence[Canary]) -> dict[str, Any]:
    """One chain over the planted copy, scored."""
    run = compact_source(source, options.compact_options(chain))
    after = visible_messages(run)
    kept = survivors(canaries, seen_texts(after)) if run.status != "failed" else set()
    before_tokens = run.counter.total(planted.messages)
    after_tokens = run.counter.total(after)
    return {"chain": chain, "status": run.status, "reason": run.message, "tokens_before": before_tokens,
            "tokens_after": after_tokens, "ratio": round(after_tokens / before_tokens, 4) if before_tokens else None,
            "survival": tally(canaries, kept), "lost": [c.id for c in canaries if c.id not in kept],
            "pairing_violations": pairing_violations(planted.messages, after),
            "last_request_kept": last_request_kept(planted.messages, after),
            "invariants": list(run.report.get("invariants") or [])}


class Summary:
    """The per-chain totals of :func:`summarize`, added up one file at a time (``tcompact batch eval``
    folds its result lines into one without holding them): ``add`` each file's entry, then ``rows``."""

    def __init__(self, chains: Sequence[str]) -> None:
        self.chains = list(chains)
        self._acc = {chain: _ChainTotals() for chain in self.chains}

    def add(self, file: Mapping[str, Any]) -> None:
        """Count one file's entry (as :func:`evaluate_file` returns it); results of other chains are ignored."""
        for r in file["results"]:
            acc = self._acc.get(r["chain"])
            if acc is not None:
                acc.add(r)

    def rows(self) -> list[dict[str, Any]]:
        """Per chain, over every file added: survival per kind, tokens, worst ratio, violations, requests kept."""
        return [self._acc[chain].row(chain) for chain in self.chains]


class _ChainTotals:
    """Sums (and the worst ratio) of one chain's results."""

    def __init__(self) -> None:
        self.files = self.failed = self.before = self.after = self.pairs = self.kept = self.of = 0
        self.worst: float | None = None
        self.counts = {k: {"kept": 0, "planted": 0} for k in KINDS}

    def add(self, r: Mapping[str, Any]) -> None:
        self.files += 1
        self.failed += r["status"] == "failed"
        for k, c in self.counts.items():
            c["kept"] += r["survival"][k]["kept"]
            c["planted"] += r["survival"][k]["planted"]
        self.before += r["tokens_before"]
        self.after += r["tokens_after"]
        if r["ratio"] is not None and (self.worst is None or r["ratio"] > self.worst):
            self.worst = r["ratio"]
        self.pairs += r["pairing_violations"]
        if r["last_request_kept"] is not None:
            self.kept += r["last_request_kept"]
            self.of += 1

    def row(self, chain: str) -> dict[str, Any]:
        total = {"kept": sum(c["kept"] for c in self.counts.values()),
                 "planted": sum(c["planted"] for c in self.counts.values())}
        return {"chain": chain, "files": self.files, "failed": self.failed,
                "survival": {k: {**c, "share": share(c)} for k, c in self.counts.items()},
                "overall": {**total, "share": share(total)},
                "tokens_before": self.before, "tokens_after": self.after,
                "ratio": round(self.after / self.before, 4) if self.before else None,
                "worst_ratio": self.worst, "pairing_violations": self.pairs,
                "last_request_kept": {"kept": self.kept, "of": self.of}}


def summarize(files: Iterable[Mapping[str, Any]], chains: Sequence[str]) -> list[dict[str, Any]]:
    """Per chain, over every file evaluated: survival per kind, tokens, worst ratio, violations, requests kept."""
    summary = Summary(chains)
    for f in files:
        summary.add(f)
    return summary.rows()


def evaluate_paths(paths: Iterable[str | Path], options: EvalOptions, *,
                   on_file: Callable[[int, int, Path], None] | None = None) -> dict[str, Any]:
    """Evaluate every session of ``paths`` (files, or folders searched as inspect does): the whole report."""
    chains = options.chain_list()
    paths = list(paths)
    named = {Path(p) for p in paths if Path(p).is_file()}
    files = find_files(paths)
    results, errors, passed = [], [], []
    for n, path in enumerate(files, start=1):
        if on_file is not None:
            on_file(n - 1, len(files), path)
        try:
            results.append(evaluate_file(path, options))
        except NotATranscriptError as exc:
            (errors if path in named else passed).append({"path": str(path), "error": str(exc)})
        except TcompactError as exc:
            errors.append({"path": str(path), "error": str(exc)})
    return {"tool": "tcompact", "version": __version__, "schema_version": SCHEMA_VERSION, "seed": options.seed,
            "per_kind": options.per_kind, "kinds": list(KINDS), "chains": chains,
            "default_chain": options.default_chain, "files": results, "errors": errors,
            "not_transcripts": [{"path": p["path"], "reason": p["error"]} for p in passed],
            "summary": summarize(results, chains)}
