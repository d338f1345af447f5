"""formats/_merge.py: new messages laid over the original records — unchanged bytes reused, order kept."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcompact.formats._merge import join_lines, merge_records
from tcompact.model import Message, Record


def file_of(kinds: str) -> tuple[list[Record], list[Message]]:
    """Records from a pattern: ``m`` a message line (``M<i>``), ``x`` a non-message line (``X<i>``), ``-``
    a line without bytes; the messages read from the ``m`` lines."""
    records, messages = [], []
    for i, k in enumerate(kinds):
        raw = None if k == "-" else f"{k.upper()}{i}\n".encode()
        records.append(Record(line=i + 1, data={} if k != "-" else None, raw=raw))
        if k == "m":
            messages.append(Message(role="user", content=f"m{i}", source=(i,)))
    return records, messages


def render(m: Message) -> list[bytes]:
    return [f"R{m.text}\n".encode()]


def merged(records, original, new) -> list[str]:
    return [line.decode().rstrip("\n") for line in merge_records(records, original, new, render)]


def test_nothing_changed_gives_every_record_back():
    records, messages = file_of("xmmxmx")
    assert merged(records, messages, messages) == ["X0", "M1", "M2", "X3", "M4", "X5"]
    copies = [replace(m) for m in messages]  # equal values, other objects: unchanged all the same
    assert merged(records, messages, copies) == ["X0", "M1", "M2", "X3", "M4", "X5"]


def test_a_changed_message_is_rendered_where_its_record_was():
    records, messages = file_of("xmmxmx")
    new = [messages[0], replace(messages[1], content="changed"), messages[2]]
    assert merged(records, messages, new) == ["X0", "M1", "Rchanged", "X3", "M4", "X5"]


def test_a_dropped_message_leaves_its_record_out_and_the_rest_as_it_was():
    records, messages = file_of("xmmxmx")
    assert merged(records, messages, [messages[0], messages[2]]) == ["X0", "M1", "X3", "M4", "X5"]
    assert merged(records, messages, []) == ["X0", "X3", "X5"]


def test_a_new_message_goes_after_the_message_before_it():
    records, messages = file_of("xmmxmx")
    summary = Message(role="user", content="summary")
    assert merged(records, messages, [summary, *messages[1:]]) == ["Rsummary", "X0", "M2", "X3", "M4", "X5"]
    assert merged(records, messages, [messages[0], summary, messages[2]]) == ["X0", "M1", "Rsummary", "X3", "M4", "X5"]
    assert merged(records, messages, [*messages, summary]) == ["X0", "M1", "M2", "X3", "M4", "Rsummary", "X5"]


def test_messages_put_before_one_that_the_file_has_after_them_are_rendered_after_it():
    # a system prompt read from line 5 that a compressor puts first (as Codex's base instructions are): the
    # output holds the messages in the new order, so the ones the file had before it are written again
    records, messages = file_of("xmmxmx")
    assert merged(records, messages, [messages[2], messages[0], messages[1]]) == ["X0", "X3", "M4", "Rm1", "Rm2", "X5"]


def test_a_message_of_several_records_is_reused_as_all_of_them():
    records = [Record(1, {}, b"M0\n"), Record(2, {}, b"X1\n"), Record(3, {}, b"M2\n"), Record(4, {}, b"M3\n")]
    reply = Message(role="assistant", content="r", source=(2, 3))
    first = Message(role="user", content="q", source=(0,))
    assert merged(records, [first, reply], [first, reply]) == ["M0", "X1", "M2", "M3"]
    assert merged(records, [first, reply], [first, replace(reply, content="s")]) == ["M0", "X1", "Rs"]


def test_records_without_bytes_are_not_written():
    records, messages = file_of("m-xm")
    assert merged(records, messages, messages) == ["M0", "X2", "M3"]


@pytest.mark.parametrize(("lines", "joined"), [
    ([], b""),
    ([b"a"], b"a"),
    ([b"a", b"b"], b"a\nb"),
    ([b"a\n", b"b\n"], b"a\nb\n"),
    ([b"a\r\n", b"b"], b"a\r\nb"),
    ([b"", b"b"], b"\nb"),
])
def test_join_lines_adds_only_the_missing_newlines(lines, joined):
    assert join_lines(lines) == joined


@st.composite
def edits(draw):
    kinds = draw(st.text(alphabet="mmx", min_size=0, max_size=14))
    records, messages = file_of(kinds)
    new: list[Message] = []
    for n, m in enumerate(messages):
        op = draw(st.sampled_from(["keep", "keep", "drop", "change", "insert"]))
        if op == "insert":
            new.append(Message(role="user", content=f"new{n}"))
        if op in ("keep", "insert"):
            new.append(m)
        elif op == "change":
            new.append(replace(m, content=f"{m.text}'"))
    if new and draw(st.booleans()):  # one message moved to the front, as a system prompt is
        new.insert(0, new.pop(draw(st.integers(0, len(new) - 1))))
    return records, messages, new


@settings(max_examples=150, deadline=None)
@given(edits())
def test_the_output_holds_the_new_messages_in_their_order_and_every_other_record(case):
    records, original, new = case
    out = merged(records, original, new)
    as_messages = [line[1:] if line[0] == "R" else f"m{line[1:]}" for line in out if line[0] in "MR"]
    assert as_messages == [m.text for m in new]
    assert [line for line in out if line[0] == "X"] == [r.raw.decode().rstrip() for r in records
                                                       if r.raw.startswith(b"X")]
    unchanged = {m.source for m in original} & {m.source for m in new if m in original}
    reused = {int(line[1:]) for line in out if line[0] == "M"}
    assert reused <= {i for (i,) in unchanged}  # bytes reused only for unchanged messages
    if new == original:
        assert out == [r.raw.decode().rstrip() for r in records]
