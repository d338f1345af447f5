"""The names of the transcript formats: what ``--format`` and ``--to`` accept, known without the readers.

Every command's options name the formats, and the command line is built before any command runs;
keeping the names here lets it be built without importing the readers and writers
(:mod:`tcompact.formats` re-exports them).
"""

from __future__ import annotations

__all__ = ["FORMATS", "WRITABLE"]

#: Every format name, in the order ``--format`` lists them.
FORMATS = ("chat", "claude-code", "codex", "swe-agent", "tau-bench")
#: The formats tcompact writes.
WRITABLE = ("chat", "claude-code", "codex")
