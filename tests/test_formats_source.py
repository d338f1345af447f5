"""formats/_source.py: bytes to records — JSON Lines or one document, every bad line one exact error."""

from __future__ import annotations

import gc

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcompact.errors import InputError
from tcompact.formats._source import (
    MAX_DEPTH,
    ReadContext,
    ReadOptions,
    gc_paused,
    load_bytes,
    load_records,
    parse_json,
    too_deep,
)
from tcompact.model import Record

SKIP = "fix or remove that line, or pass --skip-bad-lines to read on without it"
GOOD = b'{"role":"user","content":"a"}\n'


def load(data: bytes, **options):
    ctx = ReadContext(path="f.jsonl", options=ReadOptions(**options))
    records, document = load_bytes(data, ctx)
    return records, document, ctx


def error(data: bytes, **options) -> tuple[str, str]:
    with pytest.raises(InputError) as exc:
        load(data, **options)
    return type(exc.value).__name__, str(exc.value)


@pytest.mark.parametrize(("data", "expected"), [
    (b"", ("NotATranscriptError", "f.jsonl: the file is empty — pass a transcript with at least one record")),
    (b"\n \r\n\t\n", ("NotATranscriptError", "f.jsonl: the file is empty — pass a transcript with at least one record")),
    (b"\xef\xbb\xbf\n", ("NotATranscriptError", "f.jsonl: the file is empty — pass a transcript with at least one record")),
    ('{"role":"user"}'.encode("utf-16"), ("InputError", "f.jsonl: the file is UTF-16 text, tcompact reads UTF-8 — "
                                          "convert it first: iconv -f UTF-16 -t UTF-8 FILE > FILE.utf8.jsonl")),
    (b"\xfe\xff\x00{", ("InputError", "f.jsonl: the file is UTF-16 text, tcompact reads UTF-8 — convert it first: "
                                      "iconv -f UTF-16 -t UTF-8 FILE > FILE.utf8.jsonl")),
    (b"\xff\xfe\x00\x00{\x00\x00\x00", ("InputError", "f.jsonl: the file is UTF-32 text, tcompact reads UTF-8 — "
                                                      "convert it first: iconv -f UTF-32 -t UTF-8 FILE > FILE.utf8.jsonl")),
    (GOOD + b'{"role": user}\n', ("InputError", "f.jsonl:2: not valid JSON (unexpected character, expected a JSON "
                                                f"value at column 10) — {SKIP}")),
    (GOOD + b'{"role":"user"\n' + GOOD, ("InputError", "f.jsonl:2: not valid JSON (unexpected end of data at column "
                                                    f"15) — {SKIP}")),  # where the line ends, not past its newline
    (GOOD + b'{"role":"user"\r\n' + GOOD, ("InputError", "f.jsonl:2: not valid JSON (unexpected end of data at "
                                                      f"column 15) — {SKIP}")),
    (GOOD + b'{"role":"user","con', ("InputError", "f.jsonl:2: the last line is cut off (truncated JSON) — the file "
                                                   "may still be being written; pass --skip-bad-lines to read the "
                                                   "complete lines")),
    (GOOD + b'{"content":"caf\xe9"}\n', ("InputError", "f.jsonl:2: bytes that are not UTF-8 (0xe9 at byte 16) — "
                                                      "re-encode the file as UTF-8 (e.g. iconv -f LATIN1 -t UTF-8)")),
    (GOOD + b"\xff\x00\x01\x02\x03\x04\n", ("InputError", "f.jsonl:2: binary data, not JSON text — this does not look "
                                                          "like a transcript; pass a JSONL or JSON file")),
    (GOOD + b"[1, 2]\n", ("InputError", f"f.jsonl:2: expected a JSON object, got an array — {SKIP}")),
    (GOOD + b'"text"\n', ("InputError", f"f.jsonl:2: expected a JSON object, got a string — {SKIP}")),
    (GOOD + b"3.5\n", ("InputError", f"f.jsonl:2: expected a JSON object, got a number — {SKIP}")),
    (GOOD + b"null\n", ("InputError", f"f.jsonl:2: expected a JSON object, got null — {SKIP}")),
    (GOOD + b"false\n", ("InputError", f"f.jsonl:2: expected a JSON object, got true/false — {SKIP}")),
    (b'{"role":"user","content":NaN}\n', ("InputError", "f.jsonl:1: not valid JSON (unexpected character, expected a "
                                                        f"JSON value at column 26) — {SKIP}")),
    (GOOD + b'{"x":' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}\n",
     ("InputError", f"f.jsonl:2: JSON nested more than 200 levels deep — {SKIP}")),
    (GOOD + b'{"x":' + b"[" * 300 + b"]" * 300 + b"}\n",  # past orjson's own limit: its error, said the same way
     ("InputError", f"f.jsonl:2: JSON nested more than 200 levels deep — {SKIP}")),
    (b"[" * 210 + b"]" * 210, ("InputError", "f.jsonl: JSON nested more than 200 levels deep — this is no transcript "
                                             "tcompact can read; pass a transcript file")),
    (b'[\n{"role":"user","content":"a"},\n{"role": }\n]\n',
     ("InputError", "f.jsonl:3: not valid JSON (unexpected character, expected a JSON value at column 10) — fix the "
                    "JSON document")),
    (b'{"role":"user",\n"content":"a"}\n' + GOOD,  # a record over two lines, then JSON Lines: neither one
     ("InputError", "f.jsonl:3: not valid JSON (unexpected content after document at column 1) — fix the JSON "
                    "document")),
])
def test_each_bad_input_is_one_exact_error(data, expected):
    assert error(data) == expected


@pytest.mark.parametrize("data", [b'{\n  "history": [\n    {"role": "user", "content": "hi"},\n',
                                  b'{\n  "history": [\n    {"role": "user", "content": "h'])
def test_a_truncated_document_names_its_last_line_and_not_skipping_which_cannot_save_it(data):
    expected = ("InputError", "f.jsonl:3: the last line is cut off (truncated JSON) — the file may still be being "
                              "written; read it again once it is complete")
    assert error(data) == expected
    assert error(data, skip_bad_lines=True) == expected  # a document is read whole or not at all


def test_a_line_nested_exactly_to_the_limit_is_read():
    records, _, _ = load(b'{"x":' + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b"}\n")
    assert records[0].line == 1 and isinstance(records[0].data["x"], list)


@pytest.mark.parametrize(("limit", "size", "said"), [(100, 200, "100 bytes"), (2 << 20, 3 << 20, "2 MiB")])
def test_an_over_long_line_is_named_with_the_limit(limit, size, said):
    data = GOOD + b'{"content":"' + b"x" * size + b'"}\n' + GOOD
    assert error(data, max_line_bytes=limit) == ("InputError", f"f.jsonl:2: line is longer than {said} — {SKIP}")
    records, _, ctx = load(data, max_line_bytes=limit, skip_bad_lines=True)
    assert ctx.skipped == [(2, f"line is longer than {said}")]
    assert [(r.line, r.data) for r in records] == [(1, {"role": "user", "content": "a"}), (2, None),
                                                   (3, {"role": "user", "content": "a"})]
    assert b"".join(r.raw for r in records) == data  # skipped, but every byte kept for writing back


def test_skipped_lines_keep_their_bytes_and_their_reason():
    data = GOOD + b'{"role": user}\n[1]\n\n\xff\xfe\n{"role":"user","content":"b"}'
    records, document, ctx = load(data, skip_bad_lines=True)
    assert document is False
    assert ctx.skipped == [(2, "not valid JSON (unexpected character, expected a JSON value at column 10)"),
                           (3, "expected a JSON object, got an array"), (5, "bytes that are not UTF-8 (0xff at byte 1)")]
    assert [(r.line, r.data) for r in records] == [(1, {"role": "user", "content": "a"}), (2, None), (3, None),
                                                   (4, None), (5, None), (6, {"role": "user", "content": "b"})]
    assert b"".join(r.raw for r in records) == data


def test_crlf_a_bom_and_blank_lines_stay_in_the_raw_bytes():
    data = b'\xef\xbb\xbf\r\n{"role":"user","content":"a"}\r\n\r\n{"role":"assistant","content":"b"}\r\n'
    records, document, _ = load(data)
    assert document is False
    assert [(r.line, r.data, r.raw) for r in records] == [
        (1, None, b"\xef\xbb\xbf\r\n"),
        (2, {"role": "user", "content": "a"}, b'{"role":"user","content":"a"}\r\n'),
        (3, None, b"\r\n"),
        (4, {"role": "assistant", "content": "b"}, b'{"role":"assistant","content":"b"}\r\n')]


def test_without_keep_raw_no_bytes_are_held():
    records, _, _ = load(GOOD + b"\n", keep_raw=False)
    assert records == [Record(line=1, data={"role": "user", "content": "a"}), Record(line=2, data=None)]


@pytest.mark.parametrize("data", [
    b'[{"role":"user","content":"a"}]',
    b'\n\n  [{"role":"user","content":"a"}]\n',
    b'\xef\xbb\xbf[{"role":"user","content":"a"}]',
    b'{"messages":[{"role":"user","content":"a"}]}',
    b'{\n  "messages": [\n    {"role": "user", "content": "a"}\n  ]\n}\n',
    b'{"history":[],"trajectory":[]}\n',
])
def test_one_json_document_is_one_record_with_all_the_bytes(data):
    records, document, ctx = load(data)
    assert document is True and ctx.document is True
    assert len(records) == 1 and records[0].line == 1 and records[0].raw == data
    assert records[0].data == orjson.loads(data.lstrip(b"\xef\xbb\xbf"))


@pytest.mark.parametrize(("data", "values"), [
    (b'{"messages":[]}\n{"messages":[]}\n', [{"messages": []}, {"messages": []}]),  # episodes, one per line
    (b'{"role":"user","content":"a"}', [{"role": "user", "content": "a"}]),  # a record, not a document
    (b'{"type":"x","messages":[]}\n', [{"type": "x", "messages": []}]),
])
def test_a_first_line_that_is_a_record_makes_json_lines(data, values):
    records, document, _ = load(data)
    assert document is False and [r.data for r in records] == values


def test_file_errors_name_the_path(tmp_path):
    ctx = ReadContext(path="shown.jsonl", options=ReadOptions())
    with pytest.raises(InputError) as missing:
        load_records(tmp_path / "nothere.jsonl", ctx)
    assert str(missing.value) == "shown.jsonl: no such file — check the path"
    with pytest.raises(InputError) as folder:
        load_records(tmp_path, ctx)
    assert str(folder.value) == "shown.jsonl: is a folder — pass files, or a folder to inspect"
    (tmp_path / "a.jsonl").write_bytes(GOOD)
    records, document = load_records(tmp_path / "a.jsonl", ctx)
    assert (records, document) == ([Record(line=1, data={"role": "user", "content": "a"}, raw=GOOD)], False)


def test_reject_raises_or_notes_the_record():
    record = Record(line=7, data={"role": 5})
    strict = ReadContext(path="f.jsonl", options=ReadOptions())
    with pytest.raises(InputError) as exc:
        strict.reject(record, '"role" must be a string', where="messages[2]")
    assert str(exc.value) == f'f.jsonl:7: messages[2]: "role" must be a string — {SKIP}'
    lenient = ReadContext(path="f.jsonl", options=ReadOptions(skip_bad_lines=True))
    lenient.reject(record, "wrong shape")
    assert lenient.skipped == [(7, "wrong shape")]
    document = ReadContext(path="f.json", options=ReadOptions(skip_bad_lines=True), document=True)
    with pytest.raises(InputError) as doc:  # one document has no line to skip
        document.reject(record, "wrong shape", where="[0]")
    assert str(doc.value) == "f.json: [0]: wrong shape — fix the file, or pass --format if it is another format"
    assert document.skipped == []


@pytest.mark.parametrize(("raw", "value"), [
    (b'{"a":"x\\ud800y"}', {"a": "x\ufffdy"}),  # a lone surrogate (some tools write them) becomes U+FFFD
    (b'{"\\udfff":[1,"\\ud83d"]}', {"\ufffd": [1, "\ufffd"]}),
    (b'{"a":"\\ud83d\\ude00"}', {"a": "\U0001f600"}),  # a proper pair stays the character
    (b'{"n":123456789012345678901234567890}', {"n": 1.2345678901234568e29}),
    (b'{"n":-9223372036854775808}', {"n": -9223372036854775808}),
])
def test_parse_json(raw, value):
    assert parse_json(raw) == value


@pytest.mark.parametrize("raw", [b'{"a":"\\ud800","b":NaN}', b'{"a":"\\ud800","b":Infinity}', b'{"a":"\\ud800"'])
def test_parse_json_refuses_what_is_not_json_even_on_the_fallback(raw):
    with pytest.raises(orjson.JSONDecodeError):
        parse_json(raw)


def test_too_deep_counts_arrays_and_objects():
    def nested(n):
        return orjson.loads(b'{"a":' * (n - 1) + b"1" + b"}" * (n - 1)) if n > 1 else 1

    deep = nested(6)
    raw = orjson.dumps(deep)
    assert (too_deep(raw, deep, limit=5), too_deep(raw, deep, limit=4)) == (False, True)
    assert too_deep(b"[]" * 3, [[], [], []], limit=1) is True
    assert too_deep(b"[[]]", [[]], limit=5) is False  # too few brackets: not looked into


def test_gc_is_paused_inside_and_restored_after():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # left as it was found
    finally:
        gc.enable()


_LINE = st.one_of(
    st.dictionaries(st.text(max_size=5), st.one_of(st.integers(-1000, 1000), st.text(max_size=8), st.none()), max_size=3)
    .map(lambda d: orjson.dumps(d)),
    st.sampled_from([b"", b"  ", b"[1]", b"42", b'{"cut":', b"\xff\xfe", b'{"x": nope}', b'"s"', b"null"]),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_LINE, st.sampled_from([b"\n", b"\r\n"])), max_size=12),
       st.booleans(), st.sampled_from([b"", b"\n", b"\r\n"]))
def test_json_lines_records_hold_every_byte_of_the_file(lines, bom, last_end):
    data = (b"\xef\xbb\xbf" if bom else b"") + GOOD + b"".join(x + end for x, end in lines)
    data = data[: -len(lines[-1][1])] + last_end if lines else data
    records, document, ctx = load(data, skip_bad_lines=True)
    assert document is False
    assert b"".join(r.raw for r in records) == data
    assert [r.line for r in records] == list(range(1, len(records) + 1))
    assert {line for line, _ in ctx.skipped} <= {r.line for r in records if r.data is None}


def test_a_last_line_cut_inside_a_character_is_cut_off_not_bad_utf8(tmp_path):
    # a session being written can be read when the writer has put down half of a two-byte character
    path = tmp_path / "live.jsonl"
    path.write_bytes(b'{"role": "user", "content": "caf\xc3\xa9"}\n{"role": "assistant", "content": "caf\xc3')
    ctx = ReadContext(path=str(path), options=ReadOptions(skip_bad_lines=True))
    records, _ = load_records(path, ctx)
    assert len(records) == 2 and ctx.skipped == [(2, "the last line is cut off (truncated JSON)")]
