"""The two read-only trajectory formats, SWE-agent ``.traj`` files and tau-bench result arrays
(:mod:`tcompact.formats.trajectories` reads them; written, they become chat)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Format

if TYPE_CHECKING:
    from ...model import Record, SourceFile, Transcript
    from .._source import ReadContext

__all__ = ["SweAgent", "TauBench"]


class SweAgent(Format):
    """A SWE-agent trajectory: one JSON object, its ``history`` (or its ``trajectory`` of steps)."""

    name = "swe-agent"
    suffixes = (".traj",)

    def is_document(self, value: Any) -> bool:
        from .. import trajectories

        return trajectories.is_swe_agent(value)

    def read_document(self, record: Record, ctx: ReadContext) -> list[Transcript]:
        from .. import trajectories

        return trajectories.read_swe_agent(record, ctx)

    def document_items(self, doc: Any, source: SourceFile, transcript: Transcript) -> list[Any]:
        return doc["history"]


class TauBench(Format):
    """tau-bench results: an array of episodes (or one), each a ``traj`` message list."""

    name = "tau-bench"

    def is_document(self, value: Any) -> bool:
        from .. import trajectories

        return trajectories.is_tau_bench(value)

    def read_document(self, record: Record, ctx: ReadContext) -> list[Transcript]:
        from .. import trajectories

        return trajectories.read_tau_bench(record, ctx)

    def document_items(self, doc: Any, source: SourceFile, transcript: Transcript) -> list[Any]:
        episodes = [doc] if isinstance(doc, dict) else doc
        return episodes[list(source.transcripts).index(transcript)]["traj"]
