"""Lines skipped in reading (``--skip-bad-lines``) and what a compaction writes.

A skipped line is written back as it was — ``tcompact restore`` gives the input back byte for byte
— and the report says so, since the output holds a line no reader can parse. One exception: a
session written into the agent's own store (a fork, or in place) leaves out a cut-off last line.
That line is most often the one the agent is still writing; in the new session it would sit
before the compaction's boundary and summary as broken JSON (the original, or the in-place
backup, keeps it).
"""

from __future__ import annotations

import dataclasses

from ..model import SourceFile

__all__ = ["without_cut_off_line", "kept_note"]

#: what a session written into the store is called in the notes, by ``CompactOptions.into_session``
_WHAT = {"fork": "the fork", "in-place": "the compacted session"}
_LISTED = 10


def without_cut_off_line(source: SourceFile, into_session: str | None) -> tuple[SourceFile, list[str]]:
    """``source`` without its cut-off last line when the result goes into the agent's store, and the
    note saying so (none when there is no such line, or the result is a file)."""
    if into_session is None or not source.records:
        return source, []
    last = source.records[-1]
    if last.data is not None or last.raw is None or last.raw.endswith(b"\n"):
        return source, []
    skipped = tuple(s for s in source.skipped if s[0] != last.line)
    note = f"{source.path}: line {last.line} is cut off (the agent may still be writing it): left out of {_WHAT[into_session]}"
    return dataclasses.replace(source, records=source.records[:-1], skipped=skipped), [note]


def kept_note(source: SourceFile, fmt: str) -> list[str]:
    """The note of an output in format ``fmt`` about the lines skipped in reading: written as they were in
    the input (an output of its own format), or not in it (another format has no place for them)."""
    if not source.skipped:
        return []
    lines = ", ".join(str(line) for line, _ in source.skipped[:_LISTED]) + (" …" if len(source.skipped) > _LISTED
                                                                             else "")
    first, why = source.skipped[0]
    where = "are written into the output as they were in the input" if fmt == source.format and not \
        source.meta.get("document") else f"are not in the output (a {fmt} file has no place for them)"
    return [f"{len(source.skipped)} line(s) skipped in reading as unreadable ({lines}) {where} (line {first}: {why})"]
