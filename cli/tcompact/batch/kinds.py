"""The task kinds of ``tcompact batch``: a name, a function of (path, settings) and how its figures add up.

A kind is a few declarations: the function that turns one file into a JSON-ready dict of figures
(raising a :class:`~tcompact.errors.TcompactError` when the file cannot be done), the part of its
settings that decides the figures (the fingerprint a resumed run must match), and how the figures
of many files add up — by default :func:`fold` (numbers summed, category strings counted); eval
adds them up with ``tcompact eval``'s own per-chain :class:`~tcompact.evaluation.Totals`. The
registry is an explicit tuple; a duplicate name fails at import and an unknown one is an error
listing the known ones (as for compressors).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from .. import evaluation
from ..compaction import (CompactOptions, OutputPaths, as_written, compact_file, default_paths, run_failure,
                          strict_failure, write_run)
from ..errors import UsageError
from ..evaluation import KINDS as CANARY_KINDS
from ..evaluation import EvalOptions, evaluate_file
from ..inspection import InspectOptions, inspect_file

__all__ = ["Kind", "KINDS", "get_kind", "CompactTask", "mirror_output", "fold", "Totals", "failed_chains"]


class Totals:
    """How a kind adds up the figures of its ok lines: :func:`fold` with the kind's category figures."""

    def __init__(self, categories: frozenset[str]) -> None:
        self.categories = categories
        self.doc: dict[str, Any] = {}

    def add(self, figures: Mapping[str, Any]) -> None:
        """Count one ok line's figures."""
        fold(self.doc, figures, self.categories)

    def result(self) -> dict[str, Any]:
        """The totals so far (the summary's ``totals``)."""
        return self.doc


@dataclass(frozen=True)
class Kind:
    """One kind of batch task."""

    name: str
    run: Callable[[str, Any], dict[str, Any]]
    fingerprint: Callable[[Any], dict[str, Any]]
    categories: frozenset[str] = frozenset()  # string figures whose values are counted in the totals
    check: Callable[[Any], None] | None = None  # refuses bad settings in the driver, before any task
    bind: Callable[[Any, str, str], Any] | None = None  # (settings, out folder, root) → the settings tasks get
    totals: Callable[[Any], Totals] | None = None  # settings → what adds the figures up (default: fold)
    unfinished: Callable[[Mapping[str, Any]], bool] | None = None  # an ok line's figures --retry-failed redoes

    def make_totals(self, settings: Any) -> Totals:
        """A fresh accumulator of this kind's totals."""
        return self.totals(settings) if self.totals is not None else Totals(self.categories)


def _plain(value: Any) -> Any:
    """Settings as JSON values (paths as text), for fingerprints."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value) if isinstance(value, Path) else value


# --- inspect -----------------------------------------------------------------------------------

def inspect_figures(path: str, options: InspectOptions) -> dict[str, Any]:
    """One file's inspect figures, summed over its transcripts (the main one's window apart)."""
    report = inspect_file(path, options)
    ts = report["transcripts"]
    tools: dict[str, dict[str, int]] = {}
    by_role: dict[str, int] = {}
    for t in ts:
        for role, n in t["tokens"]["by_role"].items():
            by_role[role] = by_role.get(role, 0) + n
        for row in t["tools"]:
            acc = tools.setdefault(row["name"], {"calls": 0, "argument_tokens": 0, "result_tokens": 0, "errors": 0})
            for key in acc:
                acc[key] += row[key]
    main = next((t for t in ts if t["kind"] == "main"), ts[0])
    return {
        "format": report["format"], "records": report["records"], "skipped_lines": len(report["skipped_lines"]),
        "transcripts": len(ts), "messages": sum(t["messages"] for t in ts),
        "tool_calls": sum(t["tool_calls"] for t in ts), "tokens": sum(t["tokens"]["total"] for t in ts),
        "estimated": sum(t["tokens"]["estimated"] for t in ts), "rounds": sum(len(t["rounds"]) for t in ts),
        "compactions": sum(len(t["compactions"]) for t in ts),
        "by_kind": {k: sum(t["tokens"]["by_kind"][k] for t in ts) for k in main["tokens"]["by_kind"]},
        "by_role": by_role, "tools": tools,
        "main": {"model": main["model"], "encoding": main["encoding"], "approximate": main["approximate"],
                 "tokens": main["tokens"]["total"], "context_window": main["window"]["context_window"],
                 "utilisation": main["window"]["utilisation"], "over_trigger": main["window"]["over_trigger"],
                 "would_compact": main["span"]["would_compact"] if main["span"] else None},
    }


def _inspect_fingerprint(options: InspectOptions) -> dict[str, Any]:
    return _plain({**asdict(options), "top": None})  # --top changes no batch figure


# --- compact -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class CompactTask:
    """``tcompact compact``'s options plus where the batch writes: ``out``/<path below ``root``>."""

    options: CompactOptions
    out: str = ""
    root: str = ""
    strict: bool = False

    def check(self) -> None:
        """Refuse an unreadable replay folder before any task runs (the options were checked when they
        were made, as ``tcompact compact``'s are)."""
        _check_replay(self.options)


def _check_replay(options: CompactOptions) -> None:
    """A replay folder that would fail every file is an error before any task."""
    if options.summarizer == "replay":
        from ..dump import dumps_of

        dumps_of(str(options.replay_dir))  # an empty or unreadable folder would fail every file


def mirror_output(path: str, *, out: str, root: str) -> Path:
    """Where the compacted copy of ``path`` goes: its place below ``root``, under ``out``
    (``_outside/`` + its absolute path when it is not below ``root``); a name not ending in
    ``.jsonl`` gets ``.jsonl`` added, since the output is JSON Lines."""
    rel = Path(path).relative_to(root) if Path(path).is_relative_to(root) else Path("_outside", path.lstrip("/"))
    return Path(out) / (rel if rel.suffix == ".jsonl" else rel.with_name(rel.name + ".jsonl"))


def _compact_paths(path: str, task: CompactTask) -> OutputPaths:
    target = mirror_output(path, out=task.out, root=task.root)
    return default_paths(target, output=target, dump_dir=None, store=None, report=None)


def compact_figures(path: str, task: CompactTask) -> dict[str, Any]:
    """Compact one file into the batch folder, as ``tcompact compact`` would write it, and return its figures.

    Whatever an interrupted attempt left at this file's outputs is removed first: the batch
    folder is the batch's own (``batch.json`` says so), and only a finished task has a result line.
    """
    from ..artifacts import make_folder, remove_paths

    paths = _compact_paths(path, task)
    remove_paths((paths.output, paths.dump_dir, paths.store, paths.report))
    make_folder(paths.output.parent)
    run = compact_file(path, task.options.placed(offload_dir=str(paths.store.resolve())))
    written, problems = write_run(run, paths, force=False, source=Path(path), strict=task.strict)
    failure = (strict_failure(problems) if task.strict else None) or run_failure(
        as_written(run, written=written, output=paths.output, problems=problems, strict=task.strict), paths,
        dry_run=False)
    if failure is not None:  # the same errors as `tcompact compact` (a transcript that was not written too)
        raise failure
    report = run.report
    rel = Path(task.out)
    return {
        "status": report["status"], "reason": run.message, "format": report["source"]["format"], "output_format": report["output_format"],
        "before": dict(report["before"]), "after": dict(report["after"]),
        "calls": report["summarizer"]["calls"], "failed_calls": report["summarizer"]["failed_calls"],
        "stages": [{"processor": s["processor"], "applied": s["applied"], "tokens_before": s["tokens_before"],
                    "tokens_after": s["tokens_after"]} for s in report["stages"]],
        "invariants": len(problems), "problems": problems,
        "outputs": {"transcript": str(paths.output.relative_to(rel)) if paths.output in written else None,
                    "report": str(paths.report.relative_to(rel)) if paths.report in written else None,
                    "dumps": sum(p.parent == paths.dump_dir for p in written)},
    }


def _bind_compact(task: CompactTask, out: str, root: str) -> CompactTask:
    return replace(task, out=out, root=root)


def _options_fingerprint(o: CompactOptions) -> dict[str, Any]:
    """What of compact's options decides a result: the validated settings of each compressor (--set and
    --config's content resolved), not the key, the deadline or where the store goes."""
    config = hashlib.sha256(Path(o.config).read_bytes()).hexdigest() if o.config else None
    kept: dict[str, Any] = {}
    for k in (f.name for f in fields(o) if f.init):
        if k not in ("api_key", "run", "offload_dir", "overrides", "config", "trigger_ratio", "read"):
            kept[k] = getattr(o, k)
        if k == "base_url":  # the request settings of the run, where a batch.json has always listed them
            kept.update(request_mode=o.run.request_mode, summarizer_window=o.run.summarizer_window)
    return {**kept, "chain": [c.name for c in o.compressors], "settings": [s.model_dump(mode="json") for s in o.settings],
            "config_sha256": config, "read": {**asdict(o.read), "keep_raw": None}}


def _compact_fingerprint(task: CompactTask) -> dict[str, Any]:
    return _plain({**_options_fingerprint(task.options), "strict": task.strict})


# --- eval --------------------------------------------------------------------------------------

def eval_figures(path: str, options: EvalOptions) -> dict[str, Any]:
    """One file's entry of ``tcompact eval --json`` (its canaries and every chain's result)."""
    return evaluate_file(path, options)


def _check_eval(options: EvalOptions) -> None:
    chains = options.chain_list()  # every chain's options checked as `tcompact eval` checks them
    _check_replay(options.compact_options(chains[0]))


def _eval_fingerprint(options: EvalOptions) -> dict[str, Any]:
    """The seed, the canaries per kind and, per chain in order, what decides its compaction; with the
    needed tokens, the metric and the cuts a session."""
    chains = options.chain_list()
    needed = {"metric": options.metric, "cuts": options.cuts} if options.needed else {}
    return _plain({"seed": options.seed, "per_kind": options.per_kind, **needed, "order": chains,
                   "chains": {c: _options_fingerprint(options.compact_options(c)) for c in chains}})


class EvalTotals(Totals):
    """The totals of batch eval: ``tcompact eval``'s per-chain summaries of the same files, with the
    sessions, canaries and skipped kinds counted (the header of eval's table)."""

    def __init__(self, options: EvalOptions) -> None:
        super().__init__(frozenset())
        self.options = options
        self.chains = options.chain_list()
        self.totals = evaluation.Totals(options, self.chains)
        self.sessions = self.canaries = 0
        self.skipped = {k: 0 for k in CANARY_KINDS}

    def add(self, figures: Mapping[str, Any]) -> None:
        self.totals.add(figures)
        self.sessions += 1
        self.canaries += len(figures.get("canaries", ()))
        for kind in figures.get("skipped_kinds", ()):
            self.skipped[kind] += 1

    def result(self) -> dict[str, Any]:
        o = self.options
        return {"metric": o.metric, "seed": o.seed, "per_kind": o.per_kind, "kinds": list(CANARY_KINDS),
                "chains": self.chains, "default_chain": o.default_chain, "sessions": self.sessions,
                "canaries": self.canaries, "skipped_kinds": self.skipped, **self.totals.result()}


def failed_chains(figures: Mapping[str, Any]) -> bool:
    """Whether a chain's compaction failed in this eval line (its summariser): --retry-failed runs it again."""
    needed = figures.get("needed", {}).get("cuts", ())
    return any(r["status"] == "failed" for r in [*figures.get("results", ()),
                                                 *(r for cut in needed for r in cut["results"])])


# --- the registry ------------------------------------------------------------------------------

KINDS: tuple[Kind, ...] = (
    Kind("inspect", inspect_figures, _inspect_fingerprint, frozenset({"format", "model", "encoding"})),
    Kind("compact", compact_figures, _compact_fingerprint, frozenset({"status", "format", "output_format"}),
         check=CompactTask.check, bind=_bind_compact),
    Kind("eval", eval_figures, _eval_fingerprint, check=_check_eval, totals=EvalTotals, unfinished=failed_chains),
)
_BY_NAME = {k.name: k for k in KINDS}
if len(_BY_NAME) != len(KINDS):
    raise RuntimeError("two batch kinds share a name")


def get_kind(name: str) -> Kind:
    """The kind of this name; an unknown name is an error listing the known ones."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UsageError(f"unknown batch kind {name!r}", hint=f"use one of: {', '.join(_BY_NAME)}") from None


def fold(totals: dict[str, Any], figures: Mapping[str, Any], categories: frozenset[str]) -> dict[str, Any]:
    """Add one file's figures to the totals: numbers are summed, ``True`` counted, category strings
    counted per value, mappings added key by key; other values (free text, lists, ratios) are left out."""
    for key, value in figures.items():
        if isinstance(value, bool):
            totals[key] = totals.get(key, 0) + int(value)
        elif isinstance(value, int):
            totals[key] = totals.get(key, 0) + value
        elif isinstance(value, str) and key in categories:
            counts = totals.setdefault(key, {})
            counts[value] = counts.get(value, 0) + 1
        elif isinstance(value, Mapping):
            fold(totals.setdefault(key, {}), value, categories)
    return totals
