"""The shape of ``inspect --json`` (README, "inspect --json"), declared: what :mod:`tcompact.inspection` and
:mod:`tcompact.inspection.report` build and what the views in :mod:`tcompact.render` read.

Plain ``TypedDict`` s: the report stays the JSON-ready dict it always was (the same bytes written), and
its keys are named once here for the code on both sides. Imported for annotations only (under
``TYPE_CHECKING``), so a plain ``inspect`` imports nothing more at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

if TYPE_CHECKING:
    from ..sessions.shapes import Prices, SessionRow

__all__ = ["InspectReport", "FileReport", "TranscriptReport", "TokenSplit", "ToolRow", "Orphans", "RoundRow",
           "TopMessage", "CompactionRow", "Window", "SpanPart", "SpanReport", "SkippedLine", "FileError",
           "PassedOver", "Totals", "ProviderUsage"]

#: The provider-reported usage of a transcript as its format records it (keys vary by format), with
#: ``last_line`` and ``predates_compaction`` added by the report.
ProviderUsage = dict[str, Any]


class TokenSplit(TypedDict):
    """A transcript's tokens: in all, the estimated share, by role and by content kind (``tokens.KINDS``)."""

    total: int
    estimated: int
    by_role: dict[str, int]
    by_kind: dict[str, int]


class ToolRow(TypedDict):
    """One tool name: its calls and their argument tokens, its results and their tokens, errors among them."""

    name: str
    calls: int
    argument_tokens: int
    result_tokens: int
    results: int
    errors: int


class Orphans(TypedDict):
    tool_results: int
    unanswered_calls: int


class RoundRow(TypedDict):
    """One round (a real user's request and what answered it): messages ``start`` to ``end``."""

    number: int
    start: int
    end: int
    request: str | None
    messages: int
    tokens: int
    tool_calls: int


class TopMessage(TypedDict):
    index: int
    role: str
    tool: str | None
    tokens: int
    preview: str


class CompactionRow(TypedDict):
    """A compaction recorded in the file."""

    index: int | None
    line: int | None
    kind: str
    trigger: str | None
    pre_tokens: int | None


class Window(TypedDict):
    """The context window, where it came from, and the transcript's use of it against the trigger."""

    context_window: int
    source: str
    tokens: int
    utilisation: float
    trigger_ratio: float
    trigger_tokens: int
    over_trigger: bool
    min_target_ratio: float
    min_target_tokens: int


class SpanPart(TypedDict):
    start: int
    end: int
    messages: int
    tokens: int


class SpanReport(TypedDict):
    """A compressor's span layout of the transcript (``--spans``), and whether it would act."""

    compressor: str
    keep_recent: int | None
    prefix: SpanPart
    body: SpanPart
    tail: SpanPart
    would_compact: bool


class TranscriptReport(TypedDict):
    """One transcript of a file (the main one, a sub-agent's, an episode)."""

    id: str
    kind: str
    model: str | None
    parent_tool_call: str | None
    encoding: str
    approximate: bool
    messages: int
    tool_calls: int
    tokens: TokenSplit
    tools: list[ToolRow]
    orphans: Orphans
    rounds: list[RoundRow]
    top_messages: list[TopMessage]
    compactions: list[CompactionRow]
    provider_usage: ProviderUsage | None
    window: Window
    span: SpanReport | None
    notes: list[str]


class SkippedLine(TypedDict):
    line: int
    reason: str


class FileReport(TypedDict):
    """One file: its format, records, the lines skipped, record types not known, its transcripts."""

    path: str
    format: str
    records: int
    skipped_lines: list[SkippedLine]
    unknown_records: dict[str, int]
    transcripts: list[TranscriptReport]


class FileError(TypedDict):
    """A path that could not be read, and why."""

    path: str
    error: str


class PassedOver(TypedDict):
    """A file found in a folder that is no transcript, and why."""

    path: str | None
    reason: str


class Totals(TypedDict):
    files: int
    transcripts: int
    messages: int
    tool_calls: int
    tokens: int
    skipped_lines: int


class InspectReport(TypedDict):
    """The whole ``inspect --json`` document; ``inspect --session`` adds the session's row and the prices
    (:class:`tcompact.sessions.shapes.SessionRow`, :class:`~tcompact.sessions.shapes.Prices`)."""

    tool: str
    version: str
    schema_version: int
    files: list[FileReport]
    errors: list[FileError]
    not_transcripts: list[PassedOver]
    totals: Totals
    session: NotRequired[SessionRow]
    prices: NotRequired[Prices | None]
