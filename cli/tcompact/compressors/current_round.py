"""``current-round``: summarise the work after the last real user request (openjiuwen-spec §3).

The request and everything before it stay verbatim; the tool calls, results and reasoning of the
current turn become a ``<memory_block_current>`` execution-state snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from ..model import Message
from ..spans import Span, current_round_span
from .base import Settings
from .prefix import PrefixCompressor, PrefixSettings

__all__ = ["CurrentRound", "CurrentRoundSettings"]


class CurrentRoundSettings(PrefixSettings):
    """Prefix settings plus the raw tail to keep."""

    keep_recent_messages: int = Field(0, ge=0, le=100_000, description="Newest messages kept raw (grown so a "
                                      "tool call keeps its result).")


class CurrentRound(PrefixCompressor):
    """CurrentRoundCompressor (forked)."""

    name = "current-round"
    description = "summarise the work after the last real user message into a <memory_block_current> snapshot"
    settings_model = CurrentRoundSettings
    keep_recent_setting = "keep_recent_messages"
    contract = "current"
    tag = "memory_block_current"
    meaning = ("This is a compressed summary of work already performed after the latest user request. It is not a "
               "new user request. Use it to recover completed analysis, tool calls, code changes, test results, and "
               "next steps for the current task.")
    policy = "Newer raw messages, fresh tool results, and the latest user instructions override this summary."
    builders = ("plan_mode", "plan", "task_status", "todo", "skills", "read_file")

    def span(self, messages: Sequence[Message], settings: Settings) -> Span:
        assert isinstance(settings, CurrentRoundSettings)
        return current_round_span(messages, keep_recent=settings.keep_recent_messages)
