"""The working set of a session: the files being worked on, and the exact names its tools returned.

After a compaction an agent goes on with what it was doing, and what it then needs is seldom the
story of the session — a summary tells that — but its working set: the text of the file it just
changed and is about to change again, the files it read for that, and the ids, paths and names a
listing or a search gave it. :func:`working_set` picks them from a transcript within a token
budget, for the working-set compaction (``compressors/working_set.py``) and for the hooks that hand
a session over after the agent's own compaction:

* **files** by relevance to the open task — the files the session changed, newest change first,
  with their text as it is now (the last read with every later edit replayed, :mod:`.files`);
  then the files it read and named again afterwards; then other source files read. Data files
  (CSV, JSON lines, logs) come only when the user named them. Each file is cut in its own middle
  at most, none shorter than a useful excerpt;
* **index** — the terms of the hidden tool outputs, ranked and grouped by output (:mod:`.index`).

``WorkingSet.text`` is the block a compaction re-injects; ``files`` and ``index`` are the data.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass

from ..model import Message
from ..counting.tokens import TokenCounter
from .files import FileView, clean_read, file_views
from .index import IndexEntry, Ranked, build_index, rank_terms, render_index, terms
from .picking import WorkingFile, pick_files

__all__ = ["WorkingSet", "WorkingFile", "working_set", "file_views", "FileView", "clean_read", "terms",
           "IndexEntry", "FILES_SHARE", "pick_files", "working_files", "Ranked", "rank_terms"]

#: The share of the budget the files may take (the index takes the rest, and what the files leave).
FILES_SHARE = 0.6


@dataclass(frozen=True, slots=True)
class WorkingSet:
    """The files and the index of a working set, and the tokens its text takes."""

    files: tuple[WorkingFile, ...]
    index: tuple[IndexEntry, ...]
    tokens: int

    @property
    def text(self) -> str:
        """The working set as one block of text ('' when it is empty)."""
        parts = [f.render() for f in self.files]
        if self.index:
            parts.append(render_index(self.index))
        return "\n\n".join(parts)


def working_set(messages: Sequence[Message], counter: TokenCounter, budget: int, *,
                hidden: Container[int] | None = None, shown: str = "",
                locator: Callable[[Message], str] | None = None,
                files: Sequence[WorkingFile] | None = None, ranked: Ranked | None = None) -> WorkingSet:
    """The working set of ``messages`` within ``budget`` tokens.

    ``hidden``: the indices whose content the reader no longer sees (default: all); only their files
    and outputs are candidates. ``shown``: text the reader does see (a summary, kept messages) —
    terms standing in it are not repeated. ``locator`` names where a message's original is. ``files``: the
    files :func:`working_files` picked for the same messages, ``hidden`` and ``budget``; ``ranked``: the
    :func:`rank_terms` of the same messages and ``hidden`` (both made beforehand)."""
    hidden = range(len(messages)) if hidden is None else hidden
    if files is None:
        files = working_files(messages, counter, budget, hidden=hidden)
    used = sum(counter.count(f.render()) for f in files)
    seen = shown + "\n" + "\n".join(f.text for f in files)
    index = build_index(messages, counter, budget - used, hidden=hidden, shown=seen, locator=locator, ranked=ranked)
    return WorkingSet(tuple(files), tuple(index), used + (counter.count(render_index(index)) if index else 0))


def working_files(messages: Sequence[Message], counter: TokenCounter, budget: int, *,
                  hidden: Container[int]) -> list[WorkingFile]:
    """The files of the working set of ``budget`` tokens (they do not depend on what the reader is shown)."""
    return pick_files(messages, int(budget * FILES_SHARE), hidden=hidden, size=counter.count)
