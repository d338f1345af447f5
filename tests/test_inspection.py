"""tcompact.inspection: the options and their checks, one file's report field by field, files and
folders with the errors and non-transcripts among them, what a page gets (inspect_counted), previews."""

from __future__ import annotations

import orjson
import pytest
from conftest import SAMPLES, SESSION, call, jsonl, msg

from tcompact import __version__
from tcompact.errors import InputError, NotATranscriptError, UsageError
from tcompact.formats import ReadOptions, read_file
from tcompact.inspection import (SCHEMA_VERSION, InspectOptions, inspect_counted, inspect_file, inspect_paths,
                                 inspect_source, message_preview, preview)
from tcompact.model import Message, Reasoning, ToolCall

CLAUDE = SAMPLES / "claude_code_session.jsonl"


@pytest.fixture
def session(tmp_path):
    return jsonl(tmp_path / "s.jsonl", SESSION)


# options -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "error"), [
    ({"encoding": "p50k"}, "unknown encoding 'p50k' — use one of: o200k_base, cl100k_base"),
    ({"spans": "all"}, "unknown span layout 'all' — use one of: current-round, dialogue, round-level, full, working-set"),
    ({"spans": "full", "keep_recent": -1}, "--keep-recent must be 0 or more"),
    ({"keep_recent": 2}, "--keep-recent sets the raw tail of a --spans layout, and no --spans was given — add "
                         "--spans with one of: current-round, dialogue, round-level, full, working-set"),
    ({"spans": "dialogue", "keep_recent": 2}, "--keep-recent does not apply to dialogue, whose span keeps no number "
                                              "of recent messages — leave --keep-recent out"),
    ({"context_window": 0}, "--context-window must be a positive number of tokens"),
    ({"top": -1}, "--top must be 0 or more"),
])
def test_a_bad_option_is_one_error(kwargs, error):
    with pytest.raises(UsageError) as exc:
        InspectOptions(**kwargs)
    assert (str(exc.value), exc.value.exit_code) == (error, 2)


def test_good_options():
    for spans in ("current-round", "round-level", "full"):
        assert InspectOptions(spans=spans, keep_recent=0).keep_recent == 0
    assert InspectOptions().read == ReadOptions(keep_raw=False)


# one file ----------------------------------------------------------------------------------------

def test_the_report_of_a_small_session(session):
    report = inspect_file(session, InspectOptions(top=3))
    (t,) = report.pop("transcripts")
    assert report == {"path": str(session), "format": "chat", "records": 7, "skipped_lines": [], "unknown_records": {}}
    assert t == {
        "id": "main", "kind": "main", "model": None, "parent_tool_call": None, "encoding": "o200k_base",
        "approximate": True, "messages": 7, "tool_calls": 1,
        "tokens": {"total": 83, "estimated": 0, "by_role": {"system": 10, "user": 24, "assistant": 29, "tool": 20},
                   "by_kind": {"system": 10, "user": 24, "injected": 0, "assistant": 23, "reasoning": 0,
                               "tool_arguments": 6, "tool_results": 20, "images": 0}},
        "tools": [{"name": "run_tests", "calls": 1, "argument_tokens": 6, "result_tokens": 20, "results": 1,
                   "errors": 0}],
        "orphans": {"tool_results": 0, "unanswered_calls": 0},
        "rounds": [
            {"number": 0, "start": 0, "end": 1, "request": None, "messages": 1, "tokens": 10, "tool_calls": 0},
            {"number": 1, "start": 1, "end": 5, "request": "Fix the failing test in parser.py", "messages": 4,
             "tokens": 54, "tool_calls": 1},
            {"number": 2, "start": 5, "end": 7, "request": "Thanks. Now add a changelog entry.", "messages": 2,
             "tokens": 19, "tool_calls": 0}],
        "top_messages": [
            {"index": 3, "role": "tool", "tool": "run_tests", "tokens": 20,
             "preview": "FAILED test_parser.py::test_empty - IndexError: list index out of range"},
            {"index": 4, "role": "assistant", "tool": None, "tokens": 13,
             "preview": "The parser indexes an empty list; fixed."},
            {"index": 5, "role": "user", "tool": None, "tokens": 13, "preview": "Thanks. Now add a changelog entry."}],
        "compactions": [], "provider_usage": None,
        "window": {"context_window": 200000, "source": "default", "tokens": 83, "utilisation": 0.0004,
                   "trigger_ratio": 0.8, "trigger_tokens": 160000, "over_trigger": False, "min_target_ratio": 0.1,
                   "min_target_tokens": 20000},
        "span": None, "notes": []}


def test_inspect_source_is_inspect_file_of_the_file_read(session):
    options = InspectOptions(top=2)
    assert inspect_source(read_file(session, options.read), options) == inspect_file(session, options)


@pytest.mark.parametrize("name", ["chat_tool_session.jsonl", "claude_code_session.jsonl", "codex_rollout.jsonl"])
def test_the_figures_add_up(name):
    report = inspect_paths([SAMPLES / name], InspectOptions(top=1000))
    for t in report["files"][0]["transcripts"]:
        total = t["tokens"]["total"]
        assert sum(t["tokens"]["by_role"].values()) == sum(t["tokens"]["by_kind"].values()) == total
        assert sum(r["tokens"] for r in t["rounds"]) == sum(m["tokens"] for m in t["top_messages"]) == total
        assert sum(r["messages"] for r in t["rounds"]) == len(t["top_messages"]) == t["messages"]
        assert sum(r["calls"] for r in t["tools"]) == t["tool_calls"] == sum(r["tool_calls"] for r in t["rounds"])
        assert t["window"]["tokens"] == total
    ts = report["files"][0]["transcripts"]
    assert report["totals"] == {"files": 1, "transcripts": len(ts), "messages": sum(t["messages"] for t in ts),
                                "tool_calls": sum(t["tool_calls"] for t in ts),
                                "tokens": sum(t["tokens"]["total"] for t in ts), "skipped_lines": 0}


def test_tools_orphans_and_long_names(tmp_path):
    long = "x" * 200
    path = jsonl(tmp_path / "t.jsonl", [
        msg("user", "go"),
        msg("assistant", "", tool_calls=[call("c1", "read", {"p": "a"}), call("c2", "read", {"p": "b"}),
                                         call("c3", long, "{}")]),
        msg("tool", "content of a", tool_call_id="c1"),
        msg("tool", "stray", tool_call_id="zz"),
        msg(long, "odd role"),
    ])
    t = inspect_file(path, InspectOptions(top=5))["transcripts"][0]
    cut = "x" * 79 + "…"
    assert t["tools"] == [  # by tokens, arguments and results together
        {"name": cut, "calls": 1, "argument_tokens": 29, "result_tokens": 0, "results": 0, "errors": 0},
        {"name": "read", "calls": 2, "argument_tokens": 18, "result_tokens": 7, "results": 1, "errors": 0},
        {"name": "(no matching call)", "calls": 0, "argument_tokens": 0, "result_tokens": 6, "results": 1, "errors": 0}]
    assert t["orphans"] == {"tool_results": 1, "unanswered_calls": 2}
    assert cut in t["tokens"]["by_role"] and [m["role"] for m in t["top_messages"]].count(cut) == 1
    assert t["top_messages"][0]["tool"] == f"read, {long}"[:79] + "…" and t["top_messages"][0]["index"] == 1
    assert t["top_messages"][0]["preview"].startswith('read({"p":"a"}); read({"p":"b"}); xxx')


def test_the_window_span_and_would_compact(session):
    t = inspect_file(session, InspectOptions(context_window=100, spans="full", top=0))["transcripts"][0]
    assert t["window"] == {"context_window": 100, "source": "--context-window", "tokens": 83, "utilisation": 0.83,
                           "trigger_ratio": 0.8, "trigger_tokens": 80, "over_trigger": True, "min_target_ratio": 0.1,
                           "min_target_tokens": 10}
    assert t["span"] == {"compressor": "full", "keep_recent": 0,
                         "prefix": {"start": 0, "end": 1, "messages": 1, "tokens": 10},
                         "body": {"start": 1, "end": 7, "messages": 6, "tokens": 73},
                         "tail": {"start": 7, "end": 7, "messages": 0, "tokens": 0}, "would_compact": True}
    assert t["top_messages"] == []
    rl = inspect_file(session, InspectOptions(context_window=100, spans="round-level", keep_recent=1))
    assert rl["transcripts"][0]["span"] == {"compressor": "round-level", "keep_recent": 1,
                                            "prefix": {"start": 0, "end": 0, "messages": 0, "tokens": 0},
                                            "body": {"start": 0, "end": 6, "messages": 6, "tokens": 77},
                                            "tail": {"start": 6, "end": 7, "messages": 1, "tokens": 6},
                                            "would_compact": False}  # its trigger is a token count, not the window
    dialogue = inspect_file(session, InspectOptions(spans="dialogue"))["transcripts"][0]["span"]
    assert (dialogue["keep_recent"], dialogue["body"]["messages"], dialogue["would_compact"]) == (None, 5, False)


def _with_boundary(tmp_path, timestamp):
    """The Claude sample with a manual compaction appended after its last reply (written at ``timestamp``)."""
    lines = CLAUDE.read_bytes().splitlines()
    boundary, last = orjson.loads(lines[11]), orjson.loads(lines[-1])
    boundary.update(uuid="b0000000-0000-4000-8000-000000000001", parentUuid=last["uuid"],
                    logicalParentUuid=last["uuid"], timestamp=timestamp,
                    compactMetadata={"trigger": "manual", "preTokens": 31000})
    return jsonl(tmp_path / "c.jsonl", [*lines, orjson.dumps(boundary)])


def test_provider_usage_says_when_it_predates_a_compaction(tmp_path):
    main = inspect_file(CLAUDE)["transcripts"][0]
    assert (main["provider_usage"]["last_line"], main["provider_usage"]["predates_compaction"]) == (44, None)
    assert main["compactions"] == [{"index": 0, "line": 12, "kind": "claude_compact_boundary", "trigger": "auto",
                                    "pre_tokens": 152340}]
    after = inspect_file(_with_boundary(tmp_path, "2026-02-03T10:59:00.000Z"))["transcripts"][0]
    assert after["provider_usage"]["predates_compaction"] == 45
    assert after["compactions"][1] == {"index": None, "line": 45, "kind": "claude_compact_boundary",
                                       "trigger": "manual", "pre_tokens": 31000}
    # written last but stamped before the last reply: time decides, not place
    earlier = inspect_file(_with_boundary(tmp_path, "2026-02-03T09:00:00.000Z"))["transcripts"][0]
    assert earlier["provider_usage"]["predates_compaction"] is None


def test_skipped_lines_and_unknown_records_are_reported(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(CLAUDE.read_bytes() + b'{"type": "frobnicate", "uuid": "u"}\n{broken\n')
    report = inspect_file(path, InspectOptions(read=ReadOptions(keep_raw=False, skip_bad_lines=True)))
    assert report["records"] == 46 and report["unknown_records"] == {"frobnicate": 1}
    assert report["skipped_lines"] == [
        {"line": 46, "reason": "not valid JSON (unexpected character, expected a string key at column 2)"}]
    assert inspect_paths([path], InspectOptions(read=ReadOptions(keep_raw=False, skip_bad_lines=True))
                         )["totals"]["skipped_lines"] == 1


# files and folders -------------------------------------------------------------------------------

def test_a_folder_passes_over_other_json_and_lists_what_it_could_not_read(tmp_path, session):
    (tmp_path / "package.json").write_text('{"name": "x"}')
    (tmp_path / "empty.jsonl").write_bytes(b"")
    seen = []
    report = inspect_paths([tmp_path, tmp_path / "missing.jsonl"], InspectOptions(top=0),
                           on_file=lambda n, total, p: seen.append((n, total, p.name)))
    assert (report["tool"], report["version"], report["schema_version"]) == ("tcompact", __version__, SCHEMA_VERSION)
    assert SCHEMA_VERSION == 1
    assert [f["path"] for f in report["files"]] == [str(session)]
    assert report["errors"] == [{"path": str(tmp_path / "missing.jsonl"),
                                 "error": f"{tmp_path / 'missing.jsonl'}: no such file or folder — check the path"}]
    assert report["not_transcripts"] == [
        {"path": str(tmp_path / "empty.jsonl"), "reason": "the file is empty"},
        {"path": str(tmp_path / "package.json"), "reason": "cannot tell the format (first record has keys: name)"}]
    assert report["totals"] == {"files": 1, "transcripts": 1, "messages": 7, "tool_calls": 1, "tokens": 83,
                                "skipped_lines": 0}
    assert seen == [(0, 3, "empty.jsonl"), (1, 3, "package.json"), (2, 3, "s.jsonl"), (3, 3, "s.jsonl")]


def test_a_non_transcript_named_among_others_is_an_error(tmp_path, session):
    other = tmp_path / "package.json"
    other.write_text('{"name": "x"}')
    report = inspect_paths([session, other])
    assert report["errors"] == [{"path": str(other), "error": f"{other}:1: cannot tell the format (first record has "
                                                              "keys: name) — pass --format chat, claude-code or codex"}]
    assert report["not_transcripts"] == [] and len(report["files"]) == 1


def test_one_path_that_cannot_be_read_is_raised(tmp_path):
    (tmp_path / "package.json").write_text('{"name": "x"}')
    (tmp_path / "empty.jsonl").write_bytes(b"")
    with pytest.raises(InputError) as exc:
        inspect_paths([tmp_path / "missing.jsonl"])
    assert str(exc.value) == f"{tmp_path / 'missing.jsonl'}: no such file or folder — check the path"
    with pytest.raises(NotATranscriptError) as exc:
        inspect_paths([tmp_path / "empty.jsonl"])
    assert (str(exc.value), exc.value.exit_code) == (
        f"{tmp_path / 'empty.jsonl'}: the file is empty — pass a transcript with at least one record", 2)
    with pytest.raises(InputError) as exc:
        inspect_paths([tmp_path])
    assert str(exc.value) == (f"no transcripts found: 2 file(s) are not transcripts (first: {tmp_path / 'empty.jsonl'}"
                              ": the file is empty) — pass transcript files or folders that hold them")


def test_inspect_counted_gives_one_files_messages_and_counts(session):
    report, counted = inspect_counted([CLAUDE])
    assert sorted(counted) == ["main", "sidechain-26dd4578"]
    for t in report["files"][0]["transcripts"]:
        c = counted[t["id"]]
        assert len(c.messages) == len(c.counts) == t["messages"]
        assert sum(n.total for n in c.counts) == t["tokens"]["total"]
    assert [m.text for m in counted["main"].messages] == [m.text for m in read_file(CLAUDE).transcript().messages]
    assert inspect_counted([CLAUDE, session])[1] is None  # a page of several files draws no message


# previews ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "width", "shown"), [
    ("  a\n\tb   c  ", 80, "a b c"),
    ("x" * 80, 80, "x" * 80),
    ("x" * 81, 80, "x" * 79 + "…"),
    ("word " * 10, 12, "word word w…"),
    ("", 80, ""),
    (" " * 5000 + "late", 80, "late"),  # a head of spaces is looked past
    ("ab " * 2_000_000, 10, "ab ab ab …"),  # a text of megabytes
])
def test_preview(text, width, shown):
    assert preview(text, width) == shown


def test_message_preview_falls_back_to_calls_reasoning_and_images():
    assert message_preview(Message("user", "  hi\nthere ")) == "hi there"
    assert message_preview(Message("assistant", " \n", tool_calls=(ToolCall("c", "ls", "{}"), ToolCall("d", "cat", "x"))
                                   )) == "ls({}); cat(x)"
    assert message_preview(Message("assistant", "", reasoning=(Reasoning("", 0), Reasoning("thinking it over", 0)))) \
        == "thinking it over"
    assert message_preview(Message("assistant", "", reasoning=(Reasoning("", 1234, "encrypted"),))) == \
        "[encrypted encrypted: 1234 chars]"
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    assert message_preview(Message("user", (image, image))) == "[2 image(s)]"
    assert message_preview(Message("user", "")) == ""
