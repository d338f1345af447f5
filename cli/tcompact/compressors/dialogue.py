"""``dialogue``: summarise the completed rounds before the last real user request (openjiuwen-spec §4).

The last real request and everything after it stay verbatim; the history before it becomes a
``<memory_block_dialogue>`` handoff. The model never sees the current turn.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model import Message
from ..spans import Span, dialogue_span
from .base import Settings
from .prefix import PrefixCompressor, PrefixSettings

__all__ = ["Dialogue"]


class Dialogue(PrefixCompressor):
    """DialogueCompressor (forked)."""

    name = "dialogue"
    description = "summarise completed earlier rounds into a <memory_block_dialogue> handoff"
    settings_model = PrefixSettings
    contract = "dialogue"
    tag = "memory_block_dialogue"
    meaning = ("This is a compressed handoff of earlier conversation history. It is not a new user request. If any "
               "information here is relevant to the latest user request or later task execution, treat it as prior "
               "context for the current response.")
    policy = "Newer raw messages and the latest explicit user intent override this handoff."
    builders = ("skills", "read_file", "plan_mode", "plan")

    def span(self, messages: Sequence[Message], settings: Settings) -> Span:
        return dialogue_span(messages)
