"""formats/__init__.py: detection from content, --format overrides, find_files, and the serialize door."""

from __future__ import annotations

import orjson
import pytest
from conftest import SAMPLES, SESSION, jsonl

from tcompact.errors import TcompactError
from tcompact.formats import FORMATS, WRITABLE, ReadOptions, detect_records, find_files, read_bytes, read_file, serialize
from tcompact.model import Record

CODEX = {"timestamp": "2026-01-05T10:00:00.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}}
CLAUDE = {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s", "timestamp": "2026-01-05T10:00:00Z",
          "message": {"role": "user", "content": "hi"}}
CHAT = b'[{"role":"user","content":"hi"}]'
SWE = b'{"history":[{"role":"user","content":"hi"}],"trajectory":[]}'
TAU = b'[{"task_id":1,"traj":[{"role":"user","content":"hi"}]}]'


def error(fn, *args, **kw) -> tuple[str, str]:
    with pytest.raises(TcompactError) as exc:
        fn(*args, **kw)
    return type(exc.value).__name__, str(exc.value)


@pytest.mark.parametrize(("name", "fmt", "transcripts"), [
    ("chat_tool_session.jsonl", "chat", [("main", "main", 33)]),
    ("claude_code_session.jsonl", "claude-code", [("main", "main", 18), ("sidechain-26dd4578", "subagent", 8)]),
    ("codex_rollout.jsonl", "codex", [("main", "main", 21)]),
])
def test_the_samples_are_detected_by_their_content(name, fmt, transcripts):
    sf = read_file(SAMPLES / name)
    assert (sf.path, sf.format, dict(sf.meta)["document"]) == (str(SAMPLES / name), fmt, False)
    assert [(t.id, t.kind, len(t.messages)) for t in sf.transcripts] == transcripts


@pytest.mark.parametrize(("data", "fmt"), [(CHAT, "chat"), (b'{"messages":[{"role":"user","content":"hi"}]}', "chat"),
                                           (SWE, "swe-agent"), (TAU, "tau-bench"),
                                           (b'{"task_id":1,"traj":[{"role":"user","content":"hi"}]}', "tau-bench")])
def test_documents_are_detected_by_their_shape(data, fmt):
    sf = read_bytes(data, "d.json")
    assert (sf.format, sf.meta["document"], [len(t.messages) for t in sf.transcripts]) == (fmt, True, [1])


def test_detection_takes_the_shape_most_of_the_first_records_have():
    records = [Record(1, None), Record(2, {"role": "user"}), Record(3, CODEX), Record(4, CODEX), Record(5, CLAUDE)]
    assert detect_records(records, "f.jsonl") == "codex"
    # only the first 50 records vote: 50 chat lines outvote any number of Codex lines after them
    many = [Record(n, {"role": "user"}) for n in range(50)] + [Record(50 + n, CODEX) for n in range(60)]
    assert detect_records(many, "f.jsonl") == "chat"


def test_detection_that_finds_nothing_says_what_it_saw():
    assert error(detect_records, [Record(1, None), Record(2, None)], "f.jsonl") == (
        "NotATranscriptError", "f.jsonl: no line of the file is a JSON record (all are blank or were skipped) — check "
                               "that this is a JSONL transcript")
    keys = {f"k{n}": n for n in range(10)}
    assert error(detect_records, [Record(1, None), Record(2, keys)], "f.jsonl") == (
        "NotATranscriptError", "f.jsonl:2: cannot tell the format (first record has keys: k0, k1, k2, k3, k4, k5, k6, "
                               "k7) — pass --format chat, claude-code or codex")


NO_MESSAGES = " — pass a transcript with at least one message, or --format to read it as another format"


@pytest.mark.parametrize(("data", "fmt", "expected"), [
    (CHAT, "xml", ("UsageError", "unknown format 'xml' — use one of: chat, claude-code, codex, swe-agent, tau-bench")),
    (b'{"role":"user","content":"hi"}\n', "swe-agent",
     ("UsageError", "swe-agent files are one JSON document, but f.json is JSON Lines — pass --format chat, claude-code "
                    "or codex, or leave --format out")),
    (b'{"role":"user","content":"hi"}\n', "codex", ("NotATranscriptError", f"f.json: no messages found in this codex "
                                                                          f"file{NO_MESSAGES}")),
    (b'{"role":"user","content":"hi"}\n', "claude-code",
     ("NotATranscriptError", f"f.json: no messages found in this claude-code file{NO_MESSAGES}")),
    (SWE, "chat", ("InputError", "f.json: this JSON document is not a chat file — leave --format out to detect the "
                                 "format")),
    (CHAT, "swe-agent", ("InputError", "f.json: this JSON document is not a swe-agent file — leave --format out to "
                                       "detect the format")),
    (CHAT, "tau-bench", ("InputError", "f.json: this JSON document is not a tau-bench file — leave --format out to "
                                       "detect the format")),
    (TAU, "chat", ("InputError", "f.json: this JSON document is not a chat file — leave --format out to detect the "
                                 "format")),
    (b"[]", None, ("NotATranscriptError", f"f.json: no messages found in this chat file{NO_MESSAGES}")),
    (b'{"messages":[]}', None, ("NotATranscriptError", f"f.json: no messages found in this chat file{NO_MESSAGES}")),
    (b'[\n{"x": 1}\n]', None, ("NotATranscriptError", 'f.json: a JSON array that is no transcript tcompact knows — '
                                                      'expected a chat message array, {"messages": [...]}, a SWE-agent '
                                                      '.traj or tau-bench results')),
    (b'{\n"a": 1\n}', None, ("NotATranscriptError", 'f.json: a JSON object that is no transcript tcompact knows — '
                                                    'expected a chat message array, {"messages": [...]}, a SWE-agent '
                                                    '.traj or tau-bench results')),
    (b'{"offload_handle":"h1","messages":[{"role":"tool","content":"x"}],"source":{}}', None,
     ("NotATranscriptError", "f.json: an original that `tcompact compact -c offload` moved out, not a transcript — "
                             "`tcompact restore` puts it back into its transcript")),
])
def test_what_cannot_be_read_as_asked_is_one_exact_error(data, fmt, expected):
    assert error(read_bytes, data, "f.json", ReadOptions(format=fmt)) == expected


@pytest.mark.parametrize(("fmt", "record", "unknown"), [("claude-code", CLAUDE, {"(record without type)": 2}),
                                                       ("codex", CODEX, {"None": 2})])
def test_format_override_reads_every_line_as_that_format(tmp_path, fmt, record, unknown):
    path = jsonl(tmp_path / "f.jsonl", [{"role": "user", "content": "x"}] * 2 + [record])
    assert read_file(path).format == "chat"  # most lines look like chat
    sf = read_file(path, ReadOptions(format=fmt))
    assert (sf.format, [m.text for m in sf.transcripts[0].messages], dict(sf.unknown_types)) == (fmt, ["hi"], unknown)


def test_read_bytes_reads_as_read_file_does(tmp_path):
    path = jsonl(tmp_path / "s.jsonl", SESSION)
    from_file, from_memory = read_file(path), read_bytes(path.read_bytes(), str(path))
    assert from_memory == from_file


def test_find_files_expands_folders_and_keeps_named_files(tmp_path):
    (tmp_path / "a" / "deep").mkdir(parents=True)
    for name in ("a/z.jsonl", "a/deep/b.JSON", "a/c.traj", "a/d.ndjson", "a/notes.txt", "a/deep/x.jsonl.bak"):
        (tmp_path / name).write_text("{}")
    named = tmp_path / "loose.txt"
    named.write_text("{}")
    assert find_files([tmp_path / "a", named]) == [tmp_path / "a" / p for p in ("c.traj", "d.ndjson", "deep/b.JSON",
                                                                                "z.jsonl")] + [named]
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "readme.md").write_text("x")
    assert error(find_files, [tmp_path / "empty"]) == (
        "InputError", f"{tmp_path / 'empty'}: no transcript files in this folder — tcompact looks for *.jsonl, *.json, "
                      "*.traj, *.ndjson")
    assert error(find_files, ["nothere.jsonl"]) == ("InputError", "nothere.jsonl: no such file or folder — check the "
                                                                  "path")


def test_render_writes_only_the_writable_formats(tmp_path):
    sf = read_file(jsonl(tmp_path / "s.jsonl", SESSION))
    assert FORMATS == ("chat", "claude-code", "codex", "swe-agent", "tau-bench")
    assert WRITABLE == ("chat", "claude-code", "codex")
    for fmt in ("swe-agent", "tau-bench", "xml"):
        assert error(serialize, sf.transcripts[0], fmt) == ("UsageError", f"cannot write {fmt} files — write one of: "
                                                                       "chat, claude-code, codex")
    assert serialize(sf.transcripts[0], "chat").data == b"".join(orjson.dumps(m) + b"\n" for m in SESSION)

