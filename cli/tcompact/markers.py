"""The texts that mark a message as an earlier compaction's memory block, declared once.

Compressors write them (the openJiuwen memory-block tags of spec §2.7, the round-level
``[ROUND_LEVEL_MEMORY_BLOCK]`` marker and its acknowledgement, Claude Code's continuation
preamble), :mod:`tcompact.rounds` recognises them as injected context rather than user requests,
``inspect`` lists them as compactions, and the summarisers carry their content over when a
compacted session is compacted again. Keeping the texts in one place keeps those four in step.
"""

from __future__ import annotations

import re

__all__ = [
    "OPENJIUWEN_TAGS",
    "MEMORY_TAGS",
    "LEGACY_MARKERS",
    "ROUND_LEVEL_MARKER",
    "ROUND_LEVEL_ACK",
    "RECOVERED_CONTEXT",
    "STATE_REINJECTION",
    "CONTINUATION",
    "MEMORY_BLOCKS",
    "CHECKPOINT_PREFIXES",
    "is_checkpoint_text",
    "is_summary_text",
    "OFFLOAD_PATTERN",
]

#: openJiuwen memory-block tags (spec §1.4, §2.7): ``<tag>`` opens the block; the base processor's
#: ``<memory_block>`` is the last.
OPENJIUWEN_TAGS = ("memory_block_current", "memory_block_dialogue", "memory_block_round", "memory_block_session")
MEMORY_TAGS = (*OPENJIUWEN_TAGS, "memory_block")
#: The round-level pipeline's marker (spec §8.1.7), the first line of each of its memory blocks.
ROUND_LEVEL_MARKER = "[ROUND_LEVEL_MEMORY_BLOCK]"
#: An assistant acknowledgement that may follow a round-level memory block (recognised, never written).
ROUND_LEVEL_ACK = "Understood. I have recorded this compressed context."
#: Legacy openJiuwen processors' markers (spec §1.4 notes upstream forgets them).
LEGACY_MARKERS = ("[CURRENT_ROUND_MEMORY_BLOCK]", "[DIALOGUE_MEMORY_BLOCK]", ROUND_LEVEL_MARKER, "[FULL_COMPACT_STATE]")
#: State re-injected after a compaction (spec §6).
RECOVERED_CONTEXT = "<recovered_context>"
STATE_REINJECTION = "[STATE_REINJECTION]"
#: The marker ``offload`` leaves in place of a tool result (``[[OFFLOAD: handle=H, type=filesystem, path=P]]``):
#: the handle, and the path, which is the last field and runs to the closing "]]" (a folder may be "run [2]").
OFFLOAD_PATTERN = re.compile(r"\[\[OFFLOAD: handle=([0-9A-Za-z_-]+), type=\w+(?:, path=([^\n]+?))?\]\]")
#: How Claude Code (and the ``full`` compressor) opens the summary of a compacted conversation.
CONTINUATION = "This session is being continued from a previous conversation"

#: (prefix, kind) of every memory block a chat transcript can record, for ``inspect``'s compactions.
MEMORY_BLOCKS: tuple[tuple[str, str], ...] = (
    *((f"<{tag}>", tag) for tag in MEMORY_TAGS),
    ("[CURRENT_ROUND_MEMORY_BLOCK]", "current_round_memory_block"),
    ("[DIALOGUE_MEMORY_BLOCK]", "dialogue_memory_block"),
    (ROUND_LEVEL_MARKER, "round_level_memory_block"),
    ("[FULL_COMPACT_BOUNDARY]", "full_compact_boundary"),
    (CONTINUATION, "continuation_summary"),  # the `full` compressor's summary, as Claude Code opens its own
)

#: Starts of a message that holds an earlier checkpoint whose content a new summary carries over.
CHECKPOINT_PREFIXES = ("<memory_block", *LEGACY_MARKERS, STATE_REINJECTION, RECOVERED_CONTEXT, CONTINUATION)


def is_checkpoint_text(text: str) -> bool:
    """Whether a text starts (after blanks) as an earlier compaction's memory block or summary."""
    return text.lstrip()[:200].startswith(CHECKPOINT_PREFIXES)


def is_summary_text(text: str) -> bool:
    """Whether a text is an earlier compaction's summary (a checkpoint that is not re-injected state)."""
    head = text.lstrip()[:200]
    return head.startswith(CHECKPOINT_PREFIXES) and not head.startswith((RECOVERED_CONTEXT, STATE_REINJECTION))
