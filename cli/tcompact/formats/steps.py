"""Reading a JSON Lines transcript in steps: the state after its last line, and the lines appended since.

A live session grows by whole lines at its end (Claude Code and Codex append to their files, and so
does any chat log), and ``inspect`` — the hooks and the status line too — reads it again and again.
Each JSON Lines format gives a ``Reading`` (:mod:`tcompact.formats.family.base` says what one does)
that can give its state as plain values and be fed the records of bytes appended later. What they
share is here: the format (detected once for good from the first records), how many records were read, the lines skipped, the records' own time stamps (inspect
compares some), and where the last lines end — a unit of lines that straddles the old end (a reply
that goes on) is built again from the bytes of those lines, which the caller hands over together
with the appended ones, read in the same pass as the digest that vouches for them.

Which bytes are unchanged is the caller's to check (the sha256 of the prefix the state was taken
at): this module is only given the bytes after such a prefix (and the kept last lines of it).
Whatever it cannot resume exactly — a reader that says the new lines change what it read before, a
unit reaching further back than the kept lines — raises :class:`NotResumable`, and the file is then
read whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import NotATranscriptError, UsageError
from ..model import Record
from ._source import ReadContext, load_appended, parse_json
from .family import get, line_formats, spoken

if TYPE_CHECKING:
    from .family.base import Finished

__all__ = ["Steps", "NotResumable", "begin", "resume", "STATE_VERSION"]

STATE_VERSION = 1
_KEEP_LINES = 256  # the last lines whose bytes a later read gets back, for units that straddle its start


class NotResumable(Exception):
    """The appended lines cannot be read on from the kept state: the file is to be read whole."""


@dataclass
class Steps:
    """A JSON Lines transcript read up to some line: its format, its reader's state, the records to
    build units from, and the bookkeeping of the lines read."""

    ctx: ReadContext
    format: str
    reading: Any
    records: Sequence[Record]
    count: int = 0  # records (lines) read
    final: bool = False  # the format is known for good: forced, or no appended line can change it
    stamps: dict[int, str] = field(default_factory=dict)  # line -> the record's "timestamp"
    #: Where the last lines start and end: ``ends[0]`` is the start of record ``count - len(ends) + 1``,
    #: ``ends[k]`` the end of the k-th record from there; None when some line's length is not known.
    ends: list[int] | None = None

    def feed(self, records: Sequence[Record], start: int) -> None:
        """Take in ``records``, records ``start`` on of the file."""
        stamps = self.stamps
        for rec in records:
            d = rec.data
            if d is not None and isinstance(d.get("timestamp"), str):
                stamps[rec.line] = d["timestamp"]
        self.reading.feed(records, start, self.ctx)
        self.count = start + len(records)

    def snapshot(self, end: int) -> dict[str, Any] | None:
        """The state to keep (plain values), the file read to byte ``end``; None when a later read could
        not go on from it. Taken before :meth:`finish`."""
        ends = self.ends
        if not self.final or not self.ctx.lines_by_first_line or ends is None or not self.ctx.ended:
            return None  # (a last line without its line break may go on: the state would end inside it)
        # a reading whose state does not change in finish (Claude Code's lines) gives it after
        state = "later" if self.reading.LATE_STATE else self.reading.state()
        if state is None:
            return None
        return {"version": STATE_VERSION, "format": self.format, "count": self.count, "end": end,
                "skipped": list(self.ctx.skipped), "stamps": self.stamps,
                "ends": ends[-(_KEEP_LINES + 1):], "reading": state}

    def complete(self, state: dict[str, Any]) -> dict[str, Any]:
        """``state`` (from :meth:`snapshot`) with what is taken last, once the records are no longer needed
        (they go first: a read's memory peaks here)."""
        self.records = ()
        if state["reading"] == "later":
            state["reading"] = self.reading.state()
        return state

    def finish(self, kept: Any = None) -> Finished:
        """The transcripts, unknown record types and file details, as a Reading's ``finish`` gives them; the
        messages ``kept`` from an earlier step (as :meth:`kept` gave them) take the place of theirs."""
        out = self.reading.finish(self.records, self.ctx, kept)
        if not any(t.messages for t in out[0]):
            raise NotATranscriptError(
                f"no messages found in this {self.format} file", path=self.ctx.path,
                hint="pass a transcript with at least one message, or --format to read it as another format")
        return out

    def kept(self, messages: Sequence[Sequence[Any]]) -> Any:
        """What a later :meth:`finish` takes as ``kept``, given each transcript's messages in the form the
        caller keeps them, in the order :meth:`finish` gave them (after :meth:`snapshot`)."""
        return self.reading.kept(messages)


def begin(records: Sequence[Record], ctx: ReadContext) -> Steps:
    """The steps of a JSON Lines file read whole (``ctx.line_ends`` filled as it was read)."""
    from . import detect_records, detected_for_good

    fmt = ctx.options.format or detect_records(records, ctx.path)
    form = get(fmt)
    if not form.lines:
        raise UsageError(f"{fmt} files are one JSON document, but {ctx.path} is JSON Lines",
                         hint=f"pass --format {spoken(tuple(f.name for f in line_formats()))}, or leave --format out")
    reading: Any = form.reading(ctx)
    reading.prepare(records)  # (what a reader takes from the whole file first)
    steps = Steps(ctx, fmt, reading, records, final=ctx.options.format is not None or detected_for_good(records))
    steps.feed(records, 0)
    lines = ctx.line_ends
    steps.ends = [0, *lines] if lines is not None and len(lines) == len(records) else None
    return steps


def resume(state: dict[str, Any], ctx: ReadContext, data: bytes) -> Steps:
    """The steps of ``state`` fed the records of the lines appended since: ``data`` holds the file's
    bytes from ``state["ends"][0]`` (the start of the last kept lines) to its end. Raises :class:`NotResumable` when they cannot be read on."""
    ends: list[int] = state["ends"]
    end, count = state["end"], state["count"]
    old = end - ends[0]
    ctx.skipped = [tuple(s) for s in state["skipped"]]
    ctx.line_ends = []
    ctx.lines_by_first_line = True
    new = load_appended(data[old:], ctx, first_line=count + 1, start=end) if len(data) > old else []
    fmt = state["format"]
    reading: Any = get(fmt).restore(state["reading"], ctx)
    if not reading.resumes(new):
        raise NotResumable("the appended lines change what was read before")
    records = _Records(new, count, ends, data[:old])
    steps = Steps(ctx, fmt, reading, records, count=count, final=True, stamps=dict(state["stamps"]))
    steps.feed(new, count)
    lines = ctx.line_ends
    steps.ends = [*ends, *lines] if lines is not None and len(lines) == len(new) else None
    return steps


class _Records(Sequence[Record]):
    """The records a reader may build units from in a resumed step: those read in this step, and those
    of the last kept lines of the step before (parsed again from their bytes); no earlier one."""

    def __init__(self, new: Sequence[Record], count: int, ends: Sequence[int], old: bytes) -> None:
        self.new, self.count, self.ends, self.old = new, count, ends, old
        self.first = count - (len(ends) - 1)  # the first record whose bytes are in ``old``

    def __len__(self) -> int:
        return self.count + len(self.new)

    def __getitem__(self, i: Any) -> Any:
        if not isinstance(i, int) or i < 0:
            raise TypeError("records are looked up one by one, by index")
        if i >= self.count:
            return self.new[i - self.count]
        if i < self.first:
            raise NotResumable("a unit of lines reaches back beyond the kept lines")
        base = self.ends[0]
        raw = self.old[self.ends[i - self.first] - base:self.ends[i - self.first + 1] - base]
        return Record(line=i + 1, data=parse_json(raw[3:] if i == 0 and raw.startswith(b"\xef\xbb\xbf") else raw))
