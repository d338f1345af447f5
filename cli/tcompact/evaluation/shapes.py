"""The shape of ``tcompact eval``'s report (README, "eval --json"), declared: what :mod:`.canary_eval`,
:mod:`.recall` and :func:`tcompact.evaluation.evaluate_paths` build, what ``batch eval`` adds up, and what
:mod:`tcompact.render.eval_view` and :mod:`tcompact.render.needed_view` read.

Plain ``TypedDict`` s: the report stays the JSON-ready dict it always was (the same bytes). Imported for
annotations only (under ``TYPE_CHECKING``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NotRequired, TypedDict

if TYPE_CHECKING:
    from ..inspection.shapes import FileError, PassedOver

__all__ = ["Survival", "SurvivalShare", "CanaryRow", "CanaryResult", "KeptOf", "ChainRow", "NeededFrom", "NeededUse",
           "NeededToken", "Score", "NeededScore", "NeededCut", "NeededTotal", "NeededEntry", "CanaryPart", "FileEntry",
           "Baseline", "NeededSettings", "NeededRow", "NeededCounts", "NeededTotals", "EvalTotals", "EvalReport"]


class Survival(TypedDict):
    """Canaries of one kind: how many were planted and how many the context after still holds."""

    kept: int
    planted: int


class SurvivalShare(Survival):
    share: float | None


class CanaryRow(TypedDict):
    id: str
    kind: str
    values: list[str]


class CanaryResult(TypedDict):
    """One chain over a file's planted copy: its outcome, size, the canaries kept by kind and those lost."""

    chain: str
    status: str
    reason: str
    tokens_before: int
    tokens_after: int | None
    ratio: float | None
    survival: dict[str, Survival]
    lost: list[str]
    pairing_violations: int
    last_request_kept: bool
    invariants: list[str]


class KeptOf(TypedDict):
    kept: int
    of: int


class ChainRow(TypedDict):
    """One chain over every file (the report's ``summary``)."""

    chain: str
    files: int
    failed: int
    survival: dict[str, SurvivalShare]
    overall: SurvivalShare
    tokens_before: int
    tokens_after: int
    ratio: float | None
    worst_ratio: float | None
    pairing_violations: int
    last_request_kept: KeptOf


class NeededFrom(TypedDict):
    """The tool result a needed token first appeared in: its message, line, and the tool answered."""

    message: int
    line: int | None
    tool: str


class NeededUse(TypedDict):
    """Where the agent used it: the message, line, the call's number from the cut on, its tool."""

    message: int
    line: int | None
    call: int
    tool: str


#: A needed token: where the agent learned it (``from``, a keyword: hence this form) and where it used it.
NeededToken = TypedDict("NeededToken", {"token": str, "kind": str, "from": NeededFrom, "used": NeededUse})


class Score(TypedDict):
    """The needed tokens at a cut kept, recoverable (and which) and lost by a context after, its size."""

    tokens_after: int | None
    ratio: float | None
    needed: int
    kept: int
    recoverable: int
    recovered: list[str]
    lost: list[str]


class NeededScore(Score):
    """One chain's (or baseline's) run at a cut, and its score."""

    chain: str
    reference: bool
    status: str
    reason: str


class NeededCut(TypedDict):
    at: int
    line: int | None
    messages_before: int
    tokens_before: int
    needed: list[NeededToken]
    results: list[NeededScore]


class NeededTotal(TypedDict):
    """One chain's (or baseline's) scores over the cuts of a file."""

    chain: str
    reference: bool
    cuts: int
    failed: int
    needed: int
    kept: int
    recoverable: int
    tokens_before: int
    tokens_after: int
    ratio: float | None


class NeededEntry(TypedDict):
    candidates: int
    eligible: int
    cuts: list[NeededCut]
    results: list[NeededTotal]


class CanaryPart(TypedDict):
    """The canary part of a file's entry: the planted copy's size, the kinds with no place, the canaries, the
    chains' results."""

    messages: int
    skipped_kinds: list[str]
    canaries: list[CanaryRow]
    results: list[CanaryResult]


class FileEntry(TypedDict):
    """One file's entry: the canary part and the needed part, each when its metric is measured."""

    path: str
    format: str
    transcript: str
    messages: int
    skipped_kinds: NotRequired[list[str]]
    canaries: NotRequired[list[CanaryRow]]
    results: NotRequired[list[CanaryResult]]
    needed: NotRequired[NeededEntry]


class Baseline(TypedDict):
    name: str
    description: str


class NeededSettings(TypedDict):
    """The rules of the needed-token measure, as the report states them."""

    cuts_per_session: int
    calls_ahead: int
    min_chars: int
    baselines: list[Baseline]


class NeededRow(NeededTotal):
    """One chain (or baseline) over every file: the sums, the shares kept and recoverable, the size, the
    baselines it loses to."""

    kept_share: float | None
    recoverable_share: float | None
    loses_to: NotRequired[list[str]]


class NeededCounts(TypedDict):
    """The needed-token totals over many files: sessions, cuts, needed tokens and the rows."""

    sessions: int
    cuts: int
    needed: int
    summary: list[NeededRow]


class NeededTotals(NeededSettings, NeededCounts):
    """The report's ``needed``: its rules, the counts and the rows."""


class EvalTotals(TypedDict, total=False):
    """What the report adds up over the files: ``summary`` (canaries) and ``needed``, each when measured."""

    summary: list[ChainRow]
    needed: NeededTotals


class EvalReport(TypedDict):
    """The whole ``eval --json`` document."""

    tool: str
    version: str
    schema_version: int
    metric: str
    seed: int
    per_kind: int
    kinds: list[str]
    chains: list[str]
    default_chain: str
    files: list[FileEntry]
    errors: list[FileError]
    not_transcripts: list[PassedOver]
    summary: NotRequired[list[ChainRow]]
    needed: NotRequired[NeededTotals]
