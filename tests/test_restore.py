"""Putting offloaded originals back (restore.py): a compaction's output restored byte for byte, wherever the store
is; the stored lines put back in place of a marker; and each store that cannot be used refused in one line."""

from __future__ import annotations

import orjson
import pytest
from conftest import SAMPLES, call, jsonl, msg
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.compressors.offload import marker_for
from tcompact.errors import InputError
from tcompact.formats import ReadOptions
from tcompact.restore import MARKER, restore_file

BIG = "".join(f"collected item {i}\n" for i in range(300))


@pytest.mark.parametrize(("text", "found"), [
    (marker_for("ab12_-Z", "out.offload/ab12_-Z.json"), [("ab12_-Z", "out.offload/ab12_-Z.json")]),
    ("[[OFFLOAD: handle=h1, type=filesystem]]", [("h1", "")]),
    ("first lines...\n" + marker_for("h1", "/a b/h1.json") + " and " + marker_for("h2", "/c/h2.json"),
     [("h1", "/a b/h1.json"), ("h2", "/c/h2.json")]),
    # a store in a folder whose name has brackets, as file managers name copies
    (marker_for("h1", "/runs/session [2]/out.offload/h1.json"), [("h1", "/runs/session [2]/out.offload/h1.json")]),
    ("[[OFFLOAD: handle=h 1, type=filesystem, path=x]]", []),  # no blank in a handle
    ("[[OFFLOAD: handle=h1, type=filesystem, path=x\ny]]", []),  # nor a line break in a path
    ("[[OFFLOAD: handle=h1]]", []),
])
def test_the_marker(text, found):
    assert MARKER.findall(text) == found


def _compact(src, out):
    result = CliRunner().invoke(app, ["compact", str(src), "-c", "offload", "--now", "-o", str(out),
                                      "--set", "large_message_tokens=200", "--set", "protected_tools=[]"])
    assert result.exit_code == 0, result.stderr
    return sorted(out.with_suffix(".offload").iterdir())


@pytest.mark.parametrize("name", ["chat_tool_session.jsonl", "claude_code_session.jsonl", "codex_rollout.jsonl"])
def test_a_compaction_is_restored_byte_for_byte_from_its_markers_or_a_store(tmp_path, name):
    src = SAMPLES / name
    out = tmp_path / "run [2]" / "out.jsonl"  # brackets in the folder are in every marker's path
    out.parent.mkdir()
    blobs = _compact(src, out)
    data, count, skipped = restore_file(out)
    assert (data, skipped) == (src.read_bytes(), ())
    assert count >= len(blobs) > 0
    moved = tmp_path / "moved"
    out.with_suffix(".offload").rename(moved)
    assert restore_file(out, store=moved) == (data, count, ())


def _claude(uuid, parent, kind, message):
    return {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/x", "sessionId": "s1",
            "version": "2.1.3", "type": kind, "message": message, "uuid": uuid,
            "timestamp": f"2026-02-03T09:14:0{uuid[-1]}.000Z"}


def test_two_originals_from_one_claude_line_go_back_as_that_line(tmp_path):
    # one user record answers two parallel calls: two messages, two stored originals, one line
    reply = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": BIG + str(n)}
                                         for n in (1, 2)]}
    calls = {"model": "claude-sonnet-4-5", "id": "m1", "type": "message", "role": "assistant",
             "content": [{"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"file_path": f"f{n}"}}
                         for n in (1, 2)]}
    src = jsonl(tmp_path / "s.jsonl", [
        _claude("u1", None, "user", {"role": "user", "content": "read both files"}),
        _claude("a2", "u1", "assistant", calls), _claude("u3", "a2", "user", reply),
        _claude("a4", "u3", "assistant", {"model": "claude-sonnet-4-5", "id": "m2", "type": "message",
                                          "role": "assistant", "content": [{"type": "text", "text": "Both read."}]})])
    out = tmp_path / "out.jsonl"
    assert len(_compact(src, out)) == 2
    assert [line.count(b"[[OFFLOAD: handle=") for line in out.read_bytes().splitlines()] == [0, 0, 2, 0]
    assert restore_file(out) == (src.read_bytes(), 1, ())  # the count is of lines put back


def _blob(store, handle, *, raw, fmt="chat", messages=None, **changes):
    doc = {"offload_handle": handle, "messages": messages or [], "source": {"format": fmt, "raw": raw}, **changes}
    store.mkdir(exist_ok=True)
    (store / f"{handle}.json").write_bytes(orjson.dumps(doc))
    return store / f"{handle}.json"


def _marked(tmp_path, handle, path):
    line = msg("tool", "collected item 0\n...\n" + marker_for(handle, str(path)), tool_call_id="c1")
    return jsonl(tmp_path / "out.jsonl", [msg("user", "run them"),
                                          msg("assistant", "", tool_calls=[call("c1", "bash", {"cmd": "ls"})]), line,
                                          msg("assistant", "Done.")])


def test_the_stored_line_takes_the_markers_place_exactly(tmp_path):
    original = orjson.dumps(msg("tool", BIG + "naïve ✓", tool_call_id="c1")).decode() + "\n"
    blob = _blob(tmp_path / "store", "h1", raw=[original])
    out = _marked(tmp_path, "h1", blob)
    lines = out.read_bytes().splitlines(keepends=True)
    assert restore_file(out) == (b"".join([lines[0], lines[1], original.encode(), lines[3]]), 1, ())


def test_an_original_from_a_json_document_goes_back_as_its_chat_line(tmp_path):
    stored = msg("tool", BIG, tool_call_id="c1")
    blob = _blob(tmp_path / "store", "h1", raw=[], fmt="swe-agent", messages=[stored])
    out = _marked(tmp_path, "h1", blob)
    data, count, _ = restore_file(out)
    assert count == 1 and data.splitlines()[2] == orjson.dumps(stored)


def test_bad_lines_skipped_on_reading_are_written_back_as_they_were(tmp_path):
    blob = _blob(tmp_path / "store", "h1", raw=[orjson.dumps(msg("tool", BIG, tool_call_id="c1")).decode() + "\n"])
    out = _marked(tmp_path, "h1", blob)
    out.write_bytes(out.read_bytes() + b"{not json\n")
    data, count, skipped = restore_file(out, read=ReadOptions(skip_bad_lines=True))
    assert (count, skipped) == (1, ((5, "not valid JSON (unexpected character, expected a string key at column 2)"),))
    assert data.endswith(b"\n{not json\n")


def _error(out, **kw):
    with pytest.raises(InputError) as info:
        restore_file(out, **kw)
    return str(info.value)


def test_a_file_without_markers_is_refused(tmp_path):
    plain = jsonl(tmp_path / "plain.jsonl", [msg("user", "hi")])
    assert _error(plain) == (f"{plain}: no offload markers in this transcript — pass a file written by "
                             "`tcompact compact -c offload`")


def test_a_missing_original_names_where_it_was_looked_for(tmp_path):
    out = _marked(tmp_path, "h1", tmp_path / "gone" / "h1.json")
    assert _error(out) == (f"{out}: the offloaded original h1 is missing ({tmp_path}/gone/h1.json) — pass --store "
                           "with the folder the compaction wrote")
    assert _error(out, store=tmp_path / "elsewhere") == (
        f"{out}: the offloaded original h1 is missing ({tmp_path}/elsewhere/h1.json) — pass --store with the folder "
        "the compaction wrote")


def test_a_damaged_original_is_refused(tmp_path):
    blob = tmp_path / "h1.json"
    blob.write_bytes(b'{"offload_handle": "h1", ')
    out = _marked(tmp_path, "h1", blob)
    assert _error(out) == (f"{out}: cannot read the offloaded original {blob}: unexpected end of data: line 1 column 26 "
                           "(char 25) — the offload store is damaged")
    blob.unlink()
    blob.mkdir()  # a folder where the file should be
    assert _error(out).startswith(f"{out}: cannot read the offloaded original {blob}: [Errno 21] Is a directory")


@pytest.mark.parametrize("changes", [
    {"offload_handle": "other"},
    {"source": None},
    {"source": {"format": "chat", "raw": "one line"}},
    {"source": {"format": "chat"}},
])
def test_a_record_that_is_not_the_markers_is_refused(tmp_path, changes):
    blob = _blob(tmp_path / "store", "h1", raw=["x\n"], **changes)
    out = _marked(tmp_path, "h1", blob)
    assert _error(out) == f"{out}: {blob} is not the offload record of h1 — pass --store with the folder the compaction wrote"


def test_a_json_array_is_no_offload_record(tmp_path):
    blob = tmp_path / "h1.json"
    blob.write_bytes(b"[1, 2]")
    out = _marked(tmp_path, "h1", blob)
    assert _error(out) == f"{out}: {blob} is not the offload record of h1 — pass --store with the folder the compaction wrote"


def test_an_original_of_another_format_is_refused(tmp_path):
    blob = _blob(tmp_path / "store", "h1", raw=['{"type":"user"}\n'], fmt="claude-code")
    out = _marked(tmp_path, "h1", blob)
    assert _error(out) == (f"{out}: the offloaded original h1 (claude-code) cannot be put back into a chat file — "
                           "restore the file the compaction wrote, in the format it wrote")
