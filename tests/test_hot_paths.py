"""The faster paths give what the plain ones gave: previews, blank lines, the first record, the dump hashes."""

from __future__ import annotations

import orjson
from conftest import SESSION, jsonl
from hypothesis import given, settings
from hypothesis import strategies as st

from tcompact.dump import content_hashes, digest
from tcompact.formats import ReadOptions, read_file
from tcompact.formats._source import blank as _blank
from tcompact.inspection import preview

_PIECES = ["a", "bc", " ", "  ", "\n", "\t", "\u3000", "word", "é", "日本", "\r\n", "x" * 50, " " * 40]


@settings(max_examples=400, deadline=None, database=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=200), st.integers(1, 90))
def test_preview_of_a_head_equals_the_preview_of_the_whole_text(pieces, width):
    text = "".join(pieces)
    flat = " ".join(text.split())
    assert preview(text, width) == (flat if len(flat) <= width else flat[: width - 1] + "…")


@settings(max_examples=300, deadline=None, database=None)
@given(st.binary(max_size=12) | st.sampled_from([b"", b"\n", b" \t\r\n", b"\x0b\x0c\n", b"\xef\xbb\xbf\n", b"{}\n"]))
def test_blank_is_not_strip(line):
    assert _blank(line) == (not line.strip())


def test_a_huge_first_record_reads_as_any_other(tmp_path):
    """The first line is parsed once, for its shape and as the first record; blank and BOM lines before it
    keep their bytes."""
    big = {"role": "tool", "tool_call_id": "c1", "content": "log line\n" * 200_000}
    path = jsonl(tmp_path / "s.jsonl", [b"\xef\xbb\xbf\n", b"   \n", big, *SESSION])
    source = read_file(path)
    assert [r.line for r in source.records] == list(range(1, 4 + len(SESSION)))
    assert source.records[0].raw == b"\xef\xbb\xbf\n" and source.records[1].raw == b"   \n"
    assert source.records[2].data == big and source.records[2].raw == orjson.dumps(big) + b"\n"
    (main,) = source.transcripts
    assert main.messages[0].content == big["content"] and len(main.messages) == 1 + len(SESSION)
    lean = read_file(path, ReadOptions(keep_raw=False))
    assert [r.data for r in lean.records] == [r.data for r in source.records]


def test_the_dump_context_digest_given_is_the_one_computed():
    doc = {"context_before": {"messages": [{"role": "user", "content": "x"}]}, "request": {"prompt": "p"}}
    known = digest(doc["context_before"]["messages"])
    assert content_hashes(doc, context_before=known) == content_hashes(doc)


_TAIL_PIECES = ["a", "b", "ab", " ", "\n", "\t", ".", "xyz. ", "é", "\u00a0", "\u2003", "\x1c", "line\n", "=" * 3]


@settings(max_examples=600, deadline=None, database=None)
@given(st.lists(st.sampled_from(_TAIL_PIECES), max_size=40), st.lists(st.sampled_from(_TAIL_PIECES), min_size=1,
       max_size=6), st.integers(0, 7), st.lists(st.sampled_from([" ", "\n", "\t", "\u00a0", "\x1c"]), max_size=4))
def test_the_loop_check_searches_the_tail_only_where_it_can_match(body, unit, copies, tail):
    from tcompact.summarizers.validity import _TAIL, _tail_repeat

    text = "".join(body) + "".join(unit) * copies + "".join(tail)
    plain, fast = _TAIL.search(text), _tail_repeat(text)
    assert (fast.span(), fast.groups()) == (plain.span(), plain.groups()) if plain else fast is None
