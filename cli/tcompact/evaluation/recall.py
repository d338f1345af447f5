"""The needed-token recall of one session: cut, compact the part before each cut, score what is still there.

At each chosen cut point (:mod:`.needed`) the session as it stood then (:mod:`.prefix`) is
compacted with every chain exactly as ``compact --now`` would (:mod:`.runs`) and shortened by
each baseline (:mod:`.baselines`). A needed token is *kept* when it stands verbatim in what the
model would see (message texts, tool call names and arguments, as :func:`.scoring.seen_texts`);
*recoverable* when it is not kept but stands in an original the context names — an offloaded
message whose handle it holds, or a message whose place (``path:line``, as truncate's and micro's
markers give it) it holds. Size is the tokens of that context over the tokens before the cut. A
failed compaction keeps nothing and has no size.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..compaction import CompactionRun, locate
from ..model import Message, SourceFile, Transcript
from ..counting.tokens import TokenCounter
from .baselines import BASELINES
from .needed import CALLS_AHEAD, MIN_CHARS, Needed, SessionIndex, action_points, choose_cuts, message_line
from .options import EvalOptions
from .prefix import prefix_source
from .runs import run_chain
from .scoring import seen_texts

if TYPE_CHECKING:
    from .shapes import (FileEntry, NeededCounts, NeededCut, NeededEntry, NeededRow, NeededScore, NeededSettings,
                         NeededTotal, Score)

__all__ = ["needed_entry", "needed_settings", "NeededSummary"]


def needed_settings(options: EvalOptions) -> NeededSettings:
    """The rules of the measure, as the report states them."""
    return {"cuts_per_session": options.cuts, "calls_ahead": CALLS_AHEAD, "min_chars": MIN_CHARS,
            "baselines": [{"name": b.name, "description": b.description} for b in BASELINES]}


def needed_entry(source: SourceFile, transcript: Transcript, *, chains: Sequence[str],
                 options: EvalOptions) -> NeededEntry:
    """The needed-token part of one file's entry: the cut points considered and chosen, and per cut the
    needed tokens and every chain's and baseline's score; then per chain the cuts added up."""
    messages = transcript.messages
    index = SessionIndex(messages)
    candidates = action_points(messages)
    found = {c: index.needed_at(c) for c in candidates}
    eligible = [c for c in candidates if found[c]]
    counter = TokenCounter.for_model(options.model or transcript.model, encoding=options.encoding)
    cuts = [_cut(source, transcript, cut=c, needed=found[c], chains=chains, options=options, counter=counter)
            for c in choose_cuts(eligible, options.cuts)]
    names = [*chains, *(b.name for b in BASELINES)]
    return {"candidates": len(candidates), "eligible": len(eligible), "cuts": cuts,
            "results": [_total(name, [r for cut in cuts for r in cut["results"] if r["chain"] == name],
                               befores=[cut["tokens_before"] for cut in cuts], reference=name not in chains)
                        for name in names]}


def _cut(source: SourceFile, transcript: Transcript, *, cut: int, needed: Sequence[Needed], chains: Sequence[str],
         options: EvalOptions, counter: TokenCounter) -> NeededCut:
    prefix = prefix_source(source, transcript, cut=cut, read=options.read_options())
    before = prefix.transcript(transcript.id).messages
    tokens = counter.total(before)
    results: list[NeededScore] = []
    for chain in chains:
        run, after = run_chain(prefix, chain, options=options, cut=cut)
        failed = run.status == "failed"
        originals = _named_originals(run, before=before, after=after) if not failed else ""
        results.append({"chain": chain, "reference": False, "status": run.status, "reason": run.message,
                        **_score(needed, after, originals=originals, counter=counter, before=tokens, failed=failed)})
    for baseline in BASELINES:
        results.append({"chain": baseline.name, "reference": True, "status": "compacted",
                        "reason": baseline.description,
                        **_score(needed, baseline.apply(before), originals="", counter=counter, before=tokens)})
    return {"at": cut, "line": message_line(transcript.messages[cut]), "messages_before": cut, "tokens_before": tokens,
            "needed": [n.to_json(transcript.messages) for n in needed], "results": results}


def _score(needed: Sequence[Needed], after: Sequence[Message], *, originals: str, counter: TokenCounter,
           before: int, failed: bool = False) -> Score:
    """Kept, recoverable and lost tokens, and the size; a failed run keeps nothing and has no size."""
    seen = "\n".join(seen_texts(after)) if not failed else ""
    kept = [n.token for n in needed if n.token in seen]
    recovered = [n.token for n in needed if n.token not in seen and n.token in originals]
    tokens = counter.total(after) if not failed else None
    return {"tokens_after": tokens, "ratio": round(tokens / before, 4) if before and tokens is not None else None,
            "needed": len(needed), "kept": len(kept), "recoverable": len(recovered), "recovered": recovered,
            "lost": [n.token for n in needed if n.token not in kept and n.token not in recovered]}


def _named_originals(run: CompactionRun, *, before: Sequence[Message], after: Sequence[Message]) -> str:
    """The texts of the originals the context after names: offloaded messages by their handle, and
    messages before the cut by their place (``path:line``; a format without lines: a tool result
    answering the same call that names the file)."""
    seen = "\n".join(seen_texts(after))
    texts = [b.message.text for s in run.stages if s.result.applied for b in s.result.blobs if b.handle in seen]
    lines = {int(n) for n in re.findall(re.escape(run.source.path) + r":(\d+)", seen)}
    answers = {m.tool_call_ids: m.text for m in after if m.tool_call_ids}
    for m in before:
        where = locate(run.source, m)
        line = message_line(m)
        if line in lines or (line is None and m.tool_call_ids and where in answers.get(m.tool_call_ids, "")):
            texts.append(m.text)
    return "\n".join(texts)


def _total(name: str, results: Sequence[NeededScore], *, befores: Sequence[int], reference: bool
           ) -> NeededTotal:
    """One chain's (or baseline's) scores added up over the cuts of a file; sizes of the runs that did not fail."""
    sized = [(b, r["tokens_after"]) for b, r in zip(befores, results) if r["tokens_after"] is not None]
    before, after = sum(b for b, _ in sized), sum(a for _, a in sized)
    return {"chain": name, "reference": reference, "cuts": len(results),
            "failed": sum(r["status"] == "failed" for r in results), "needed": sum(r["needed"] for r in results),
            "kept": sum(r["kept"] for r in results), "recoverable": sum(r["recoverable"] for r in results),
            "tokens_before": before, "tokens_after": after, "ratio": round(after / before, 4) if before else None}


class NeededSummary:
    """The needed-token totals over many files, added up one file's entry at a time (``tcompact batch
    eval`` folds its lines into one): ``add`` each entry, then ``result``."""

    def __init__(self, chains: Sequence[str]) -> None:
        self.names = [*chains, *(b.name for b in BASELINES)]
        self.reference = {b.name for b in BASELINES}
        self.sessions = self.cuts = self.needed = 0
        self._acc = {name: dict.fromkeys(_SUMS, 0) for name in self.names}

    def add(self, file: FileEntry) -> None:
        """Count one file's entry (its ``needed`` part); results of other chains are ignored."""
        part = file["needed"]
        self.sessions += 1
        self.cuts += len(part["cuts"])
        self.needed += sum(len(cut["needed"]) for cut in part["cuts"])
        for r in part["results"]:
            acc = self._acc.get(r["chain"])
            if acc is not None:
                for key in _SUMS:
                    acc[key] += r[key]

    def rows(self) -> list[NeededRow]:
        """Per chain, then per baseline: the sums, the shares kept and recoverable, the size, and for a
        chain none of whose runs failed the baselines that keep a larger share than it (``loses_to``)."""
        rows = [_row(name, acc, reference=name in self.reference) for name, acc in self._acc.items()]
        bases = [r for r in rows if r["reference"]]
        for r in rows:
            r["loses_to"] = [] if r["reference"] or r["failed"] or r["kept_share"] is None else [
                b["chain"] for b in bases if b["kept_share"] is not None and b["kept_share"] > r["kept_share"]]
        return rows

    def result(self) -> NeededCounts:
        """The counts and the rows (the report's ``needed`` totals)."""
        return {"sessions": self.sessions, "cuts": self.cuts, "needed": self.needed, "summary": self.rows()}


_SUMS = ("cuts", "failed", "needed", "kept", "recoverable", "tokens_before", "tokens_after")


def _row(name: str, acc: Mapping[str, int], *, reference: bool) -> NeededRow:
    def share(n: int) -> float | None:
        return round(n / acc["needed"], 4) if acc["needed"] else None

    return {"chain": name, "reference": reference, **acc, "kept_share": share(acc["kept"]),
            "recoverable_share": share(acc["recoverable"]),
            "ratio": round(acc["tokens_after"] / acc["tokens_before"], 4) if acc["tokens_before"] else None}
