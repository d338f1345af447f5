"""The shape of ``inspect`` with no PATH (README, "Sessions --json schema"), declared: what
:mod:`tcompact.sessions.report` and :mod:`tcompact.sessions.groups` build and
:mod:`tcompact.render.sessions_view` reads.

Plain ``TypedDict`` s: the document stays the JSON-ready dict it always was (the same bytes), its keys named
once here. Imported for annotations only (under ``TYPE_CHECKING``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NotRequired, TypedDict

if TYPE_CHECKING:
    from ..inspection.shapes import FileError, PassedOver

__all__ = ["Cost", "Prices", "UsageSums", "RowUsage", "Context", "SessionRow", "SummedTotals", "SummedGroup",
           "ModelGroup", "ToolTotals", "ToolGroup", "Group", "GroupTotals", "SessionSkippedLine", "SessionsReport"]


class Cost(TypedDict):
    """Dollars for some requests (:mod:`tcompact.sessions.pricing`): ``usd`` in all, the priced share, what had no price."""

    usd: float | None
    priced_usd: float
    requests: int
    unpriced_requests: int
    unpriced_models: list[str]


class Prices(TypedDict):
    """The price table the costs come from: its package and version."""

    package: str
    version: str


class UsageSums(TypedDict):
    """Provider-reported usage of some requests, added up."""

    requests: int
    input: int
    output: int
    cache_write: int
    cache_read: int


class RowUsage(UsageSums):
    """A session's usage, and the requests copied from another session (counted there)."""

    copied_requests: int


class Context(TypedDict):
    """The main transcript's context at its end, against its window."""

    tokens: int
    context_window: int
    utilisation: float


class SessionRow(TypedDict):
    """One session (``cost`` only when costs are asked for)."""

    agent: str
    id: str
    project: str | None
    first_activity: str | None
    last_activity: str | None
    models: list[str]
    files: list[str]
    transcripts: int
    messages: int
    tool_calls: int
    tokens: int
    context: Context | None
    usage: RowUsage | None
    cost: NotRequired[Cost | None]


class SummedTotals(TypedDict):
    """Session rows added up (the totals of every grouping but ``tool``)."""

    sessions: int
    messages: int
    tool_calls: int
    tokens: int
    usage: UsageSums | None
    cost: NotRequired[Cost | None]


class SummedGroup(SummedTotals):
    """A ``project`` or ``day`` group: the sessions of one ``key``, added up."""

    key: str


class ModelGroup(TypedDict):
    """A ``model`` group: the requests of one model, their usage and cost, the sessions that made them."""

    key: str
    sessions: int
    usage: UsageSums
    cost: NotRequired[Cost | None]


class ToolTotals(TypedDict):
    sessions: int
    calls: int
    argument_tokens: int
    result_tokens: int
    results: int
    errors: int


class ToolGroup(ToolTotals):
    """A ``tool`` group: one tool name's calls and results over the sessions."""

    key: str


Group = SummedGroup | ModelGroup | ToolGroup
GroupTotals = SummedTotals | ToolTotals


class SessionSkippedLine(TypedDict):
    path: str
    line: int
    reason: str


class SessionsReport(TypedDict):
    """The whole sessions document (``groups`` is None for ``--group-by session``)."""

    tool: str
    version: str
    schema_version: int
    view: str
    group_by: str
    timezone: str
    prices: Prices | None
    sessions: list[SessionRow]
    groups: list[Group] | None
    totals: GroupTotals | None
    errors: list[FileError]
    not_transcripts: list[PassedOver]
    skipped_lines: list[SessionSkippedLine]

