"""The chat format: OpenAI chat messages, one per line (or ``{"messages": [...]}`` episodes), or one JSON
document holding them (:mod:`tcompact.formats.chat` reads them, :mod:`tcompact.formats.chat_write` writes them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .base import Format

if TYPE_CHECKING:
    from ...model import Record, SourceFile, Transcript
    from .._source import ReadContext
    from ..writers import Rendered

__all__ = ["Chat"]


class Chat(Format):
    """Chat JSON Lines and chat documents; written back line by line, unchanged lines keeping their bytes."""

    name = "chat"
    writable = True
    lines = True
    general = True
    suffixes = (".ndjson",)  # newline-delimited JSON: chat logs and datasets

    def sniff(self, record: Mapping[str, Any]) -> bool:
        from .. import chat

        return chat.sniff(record)

    def is_document(self, value: Any) -> bool:
        items = value.get("messages") if isinstance(value, dict) else value
        return isinstance(items, list) and all(isinstance(m, dict) and "role" in m for m in items)

    def reading(self, ctx: ReadContext) -> Any:
        from .. import chat

        return chat.Reading()

    def restore(self, state: Any, ctx: ReadContext) -> Any:
        from .. import chat

        return chat.Reading.restore(state)

    def read_document(self, record: Record, ctx: ReadContext) -> list[Transcript]:
        from .. import chat

        return chat.read_document(record, ctx)

    def write(self, transcript: Transcript, *, now: str, session: str) -> tuple[list[bytes], list[str]]:
        from ..chat_write import write

        return write(transcript, None, None), []

    def write_back(self, source: SourceFile, original: Transcript, transcript: Transcript, *, now: str,
                   pre_tokens: int | None) -> Rendered:
        from .._merge import join_lines
        from ..chat_write import write
        from ..writers import Rendered

        return Rendered(join_lines(write(transcript, original, source.records)))
