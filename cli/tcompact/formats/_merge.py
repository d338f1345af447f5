"""Writing a transcript back over the records it was read from.

A message that is unchanged gives back its original record bytes; records that are no message
at all (Codex event_msg lines, unknown record types, blank or skipped lines) stay where they
were; changed and new messages are rendered by the format and placed where their source was, or
after the message before them. With nothing changed the output is the input, byte for byte.
The output always holds the messages in the order of ``new``: an unchanged message that a
compressor moved before records of the file it comes after (a system prompt that was not on
the first line, moved to the top) is rendered again in its new place, not reused where it was.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from ..model import Message, Record

__all__ = ["merge_records", "join_lines"]


def merge_records(
    records: Sequence[Record],
    original: Sequence[Message],
    new: Sequence[Message],
    render: Callable[[Message], list[bytes]],
) -> list[bytes]:
    """Lines of ``new`` laid over ``records``, reusing the bytes of every unchanged record."""
    users: dict[int, list[Message]] = defaultdict(list)
    for m in original:
        for i in m.source:
            users[i].append(m)
    survivors = _survivors(original, new)
    intact = {i for i, ms in users.items() if all(id(m) in survivors for m in ms)}
    while moved := _out_of_order(new, survivors, intact):
        intact -= moved  # rendered in their new place instead
    items: list[tuple[tuple[int, int, int], bytes]] = []
    anchor, seq = -1, 0
    for m in new:
        if id(m) in survivors and set(m.source) <= intact:
            anchor = max(anchor, max(m.source))
            continue  # its records are emitted below, in file order
        if m.source:
            anchor = max(anchor, min(m.source))
        for line in render(m):
            seq += 1
            items.append(((anchor, 1, seq), line))
    for i, rec in enumerate(records):
        if rec.raw is not None and (i in intact or i not in users):
            items.append(((i, 0, 0), rec.raw))
    items.sort(key=lambda item: item[0])
    return [line for _, line in items]


def _out_of_order(new: Sequence[Message], survivors: set[int], intact: set[int]) -> set[int]:
    """Records of unchanged messages that sit, in the file, before a message ``new`` puts ahead of them."""
    moved: set[int] = set()
    anchor, last = -1, -1  # where the last message goes, and the last record index reused
    for m in new:
        if id(m) in survivors and set(m.source) <= intact:
            if min(m.source) <= max(anchor, last):
                moved.update(m.source)
                continue
            last = max(m.source)
            anchor = max(anchor, last)
        elif m.source:
            anchor = max(anchor, min(m.source))
    return moved


def _survivors(original: Sequence[Message], new: Sequence[Message]) -> set[int]:
    """Ids of the original messages found unchanged in ``new``, and of the new messages matching them."""
    by_source: dict[tuple[int, ...], list[Message]] = defaultdict(list)
    for m in original:
        if m.source:
            by_source[m.source].append(m)
    found: set[int] = set()
    for m in new:
        for o in by_source.get(m.source, ()):
            if id(o) not in found and o == m:
                found.update((id(o), id(m)))
                break
    return found


def join_lines(lines: Sequence[bytes]) -> bytes:
    """Join lines, adding a newline to any line but the last that lacks one."""
    out = bytearray()
    for n, line in enumerate(lines):
        out += line
        if n < len(lines) - 1 and not line.endswith(b"\n"):
            out += b"\n"
    return bytes(out)
