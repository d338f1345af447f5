"""formats/family: the format registry — one class per format, asked instead of the format's name.

The last tests define a whole new format here, register it as its own module would (one more entry
in ``REGISTRY``), and run the command line on a file of it: detection, reading, inspect, compact
(written back in the same format) and convert need nothing else.
"""

from __future__ import annotations

import orjson
import pytest
from conftest import SAMPLES, jsonl
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.errors import TcompactError
from tcompact.formats import ReadOptions, family, find_files, read_bytes, read_file
from tcompact.formats._merge import join_lines
from tcompact.formats._source import ReadContext
from tcompact.formats.family import Format
from tcompact.formats.requests import requests_of
from tcompact.model import Message, Record, SourceFile, Transcript


def test_the_registry_names_every_format_once_in_order():
    assert family.names() == ("chat", "claude-code", "codex", "swe-agent", "tau-bench")
    assert family.writable() == ("chat", "claude-code", "codex")
    assert [f.name for f in family.line_formats()] == ["chat", "claude-code", "codex"]
    # a document is matched with the specific shapes first, chat's loose message list last
    assert [f.name for f in family.document_order()] == ["claude-code", "codex", "swe-agent", "tau-bench", "chat"]
    assert family.suffixes() == (".jsonl", ".json", ".traj", ".ndjson")  # the JSON ones, SWE-agent's, chat's
    assert family.spoken(family.writable()) == "chat, claude-code or codex"
    assert family.spoken(("chat",)) == "chat"


def test_an_unknown_format_is_an_error_naming_the_known_ones():
    assert family.find("xml") is None
    with pytest.raises(Exception) as caught:
        family.get("xml")
    assert (type(caught.value).__name__, str(caught.value)) == (
        "UsageError", "unknown format 'xml' — use one of: chat, claude-code, codex, swe-agent, tau-bench")


def test_each_format_words_its_provider_usage():
    number = "{:,}".format
    assert family.get("codex").usage_head({"source": "codex", "requests": 2, "events": 3,
                                           "total": {"input_tokens": 1200, "cached_input_tokens": 200,
                                                     "output_tokens": 30},
                                           "last": {"input_tokens": 700}}, number) == (
        "Provider usage (codex, 2 requests from 3 token_count events): input 1,200 (cached 200), output 30; "
        "last request input 700")
    assert family.get("claude-code").usage_head(
        {"source": "claude-code", "requests": 1, "lines": 2, "input_tokens": 5, "cache_read_input_tokens": 1000,
         "cache_creation_input_tokens": 40, "output_tokens": 9}, number) == (
        "Provider usage (claude-code, 1 requests from 2 lines): input 5, cache read 1,000, cache creation 40, output 9")
    assert family.get("swe-agent").usage_head({"source": "swe-agent", "requests": 4, "input_tokens": 10000,
                                               "output_tokens": 12}, number) == (
        "Provider usage (swe-agent, 4 requests): input 10,000, output 12")


def test_a_format_that_reads_no_json_lines_says_so():
    swe = family.get("swe-agent")
    with pytest.raises(NotImplementedError, match="swe-agent files are not read as JSON Lines"):
        swe.reading(None)
    with pytest.raises(NotImplementedError, match="tcompact does not write swe-agent files"):
        swe.write(Transcript(id="main", kind="main", messages=()), now="", session="")
    assert swe.requests(()) == ()


def _read(value, fmt=None):
    return read_bytes(orjson.dumps(value), "doc.json", ReadOptions(format=fmt))


def test_a_document_is_matched_with_the_specific_shapes_before_chat():
    history = [{"role": "user", "content": "fix it"}, {"role": "assistant", "content": "done"}]
    both = _read({"history": history, "messages": history[:1]})  # a SWE-agent history beside chat's key
    assert (both.format, len(both.transcript().messages)) == ("swe-agent", 2)
    episodes = _read([{"role": "user", "traj": history, "task_id": 7}])  # tau-bench episodes with a role key
    assert (episodes.format, [t.id for t in episodes.transcripts]) == ("tau-bench", ["task-7"])
    chat = _read({"messages": history})
    assert (chat.format, len(chat.transcript().messages)) == ("chat", 2)


def _error(fn, *args, **kw):
    with pytest.raises(TcompactError) as caught:
        fn(*args, **kw)
    return type(caught.value).__name__, str(caught.value)


def test_a_forced_format_the_file_is_not_is_an_error():
    assert _error(_read, {"messages": [{"role": "user", "content": "x"}]}, "codex") == (
        "InputError", "doc.json: this JSON document is not a codex file — leave --format out to detect the format")
    lines = b'{"role": "user", "content": "x"}\n'
    assert _error(read_bytes, lines, "s.jsonl", ReadOptions(format="tau-bench")) == (
        "UsageError", "tau-bench files are one JSON document, but s.jsonl is JSON Lines — pass --format chat, "
                      "claude-code or codex, or leave --format out")
    assert _error(read_bytes, b'{"x": 1}\n', "s.jsonl") == (
        "NotATranscriptError", "s.jsonl:1: cannot tell the format (first record has keys: x) — pass --format chat, "
                               "claude-code or codex")


def test_each_format_finds_the_messages_of_its_document():
    history = [{"role": "user", "content": "a"}]
    swe = _read({"history": history})
    assert family.get("swe-agent").document_items({"history": ["h"]}, swe, swe.transcript()) == ["h"]
    tau = _read([{"traj": history, "task_id": 1}, {"traj": history + history, "task_id": 2}])
    second = tau.transcripts[1]
    assert family.get("tau-bench").document_items([{"traj": ["t1"]}, {"traj": ["t2"]}], tau, second) == ["t2"]
    chat = family.get("chat")
    assert chat.document_items(["m"], swe, swe.transcript()) == ["m"]
    assert chat.document_items({"messages": ["m2"]}, swe, swe.transcript()) == ["m2"]


@pytest.mark.parametrize(("name", "layout"), [
    ("chat_tool_session.jsonl", "chat-lines"), ("claude_code_session.jsonl", "claude-code"),
    ("codex_rollout.jsonl", "codex")])
def test_each_format_names_how_its_records_take_canaries(name, layout):
    source = read_file(SAMPLES / name)
    assert family.get(source.format).planting(source) == layout
    document = _read([{"role": "user", "content": "a"}])
    assert family.get("chat").planting(document) == "document"


@pytest.mark.parametrize(("name", "late"), [
    ("chat_tool_session.jsonl", False), ("claude_code_session.jsonl", True), ("codex_rollout.jsonl", False)])
def test_every_reading_keeps_and_finishes_the_same_way(name, late):
    """The protocol the steps of a JSON Lines read rely on, for every format that reads lines."""
    whole = read_file(SAMPLES / name)
    form = family.get(whole.format)
    ctx = ReadContext(path=name, options=ReadOptions())
    reading = form.reading(ctx)
    assert reading.LATE_STATE is late
    reading.prepare(whole.records)
    reading.feed(whole.records, 0, ctx)
    state = None if late else reading.state()
    transcripts, unknown, _ = reading.finish(whole.records, ctx, None)
    assert (transcripts, unknown) == (list(whole.transcripts), whole.unknown_types)
    kept = reading.kept([t.messages for t in transcripts])
    again = form.restore(reading.state() if late else state, ctx)
    assert again.resumes([]) is True
    assert again.finish(whole.records, ctx, kept)[0] == list(whole.transcripts)  # nothing read since: all kept


@pytest.mark.parametrize("name", ["chat_tool_session.jsonl", "claude_code_session.jsonl", "codex_rollout.jsonl"])
def test_an_unchanged_transcript_written_back_is_its_files_bytes(name):
    source = read_file(SAMPLES / name, ReadOptions(keep_raw=True))
    form = family.get(source.format)
    rendered = form.write_back(source, source.transcript(), source.transcript(), now="2026-01-05T10:00:00.000Z",
                               pre_tokens=None)
    assert (rendered.data, rendered.losses, rendered.notes) == ((SAMPLES / name).read_bytes(), (), ())


def test_only_the_formats_that_record_requests_give_them():
    assert requests_of("chat", [Record(line=1, data={"role": "assistant", "usage": {"prompt_tokens": 5}})]) is None
    assert requests_of("swe-agent", []) is None
    claude = read_file(SAMPLES / "claude_code_session.jsonl")
    assert len(requests_of("claude-code", claude.records)) == 16  # one per (message.id, requestId)
    codex = read_file(SAMPLES / "codex_rollout.jsonl")
    assert [r.input + r.cache_read for r in requests_of("codex", codex.records)][:2] == [11873, 12421]


# ---- a new format, defined here as its own module would define it ----------------------------------


class _TinyReading:
    """Lines ``{"who": role, "said": text}``, one message each (never kept between reads)."""

    LATE_STATE = False

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def prepare(self, records):
        pass

    def resumes(self, records):
        return True

    def feed(self, records, start, ctx):
        for i, rec in enumerate(records, start):
            if rec.data is not None:
                self.messages.append(Message(role=rec.data["who"], content=rec.data["said"], source=(i,),
                                             meta={"line": rec.line}))

    def state(self):
        return None

    def finish(self, records, ctx, kept=None):
        return [Transcript(id="main", kind="main", messages=tuple(self.messages))], {}, {}

    def kept(self, messages):
        return []


class Tiny(Format):
    """A made-up JSON Lines format: who said what."""

    name = "tiny"
    writable = True
    lines = True
    suffixes = (".tiny",)

    def sniff(self, record):
        return set(record) == {"who", "said"}

    def reading(self, ctx):
        return _TinyReading()

    def write(self, transcript, *, now, session):
        return [orjson.dumps({"who": m.role, "said": m.text}) + b"\n" for m in transcript.messages], []

    def write_changed(self, source: SourceFile, original, transcript, *, now, pre_tokens):
        from tcompact.formats.writers import Rendered

        return Rendered(join_lines(self.write(transcript, now=now, session="")[0]))


def _talk(rounds):
    out = []
    for n in range(rounds):
        out += [{"who": "user", "said": f"step {n}: rename the helper in module_{n}.py and run the tests"},
                {"who": "assistant", "said": f"Renamed it in module_{n}.py; the 12 tests pass. " + f"line {n} of the log. " * 150}]
    return out


@pytest.fixture
def tiny(monkeypatch):
    """Tiny registered, as one more entry of the registry tuple."""
    monkeypatch.setattr(family, "REGISTRY", (*family.REGISTRY, Tiny()))


def test_a_new_format_needs_only_its_class_and_a_registry_entry(tmp_path, monkeypatch, tiny):
    monkeypatch.chdir(tmp_path)
    session = jsonl(tmp_path / "talk.tiny", _talk(6))
    runner = CliRunner()
    inspected = runner.invoke(app, ["inspect", str(session), "--json"])
    assert (inspected.exit_code, inspected.stderr) == (0, "")
    (report,) = orjson.loads(inspected.stdout)["files"]
    assert (report["format"], report["records"], [t["messages"] for t in report["transcripts"]]) == ("tiny", 12, [12])
    assert ".tiny" in family.suffixes() and find_files([tmp_path]) == [session]  # found in a folder too

    compacted = runner.invoke(app, ["compact", str(session), "-c", "dialogue", "--now", "-o", "out.tiny", "--json"])
    assert (compacted.exit_code, compacted.stderr) == (0, "")
    assert orjson.loads(compacted.stdout)["status"] == "compacted"
    lines = [orjson.loads(x) for x in (tmp_path / "out.tiny").read_bytes().splitlines()]
    assert all(set(x) == {"who", "said"} for x in lines)  # written back in its own format
    assert [x["who"] for x in lines] == ["user", "user", "assistant"]  # the summary, then the last round
    assert lines[0]["said"].startswith("<memory_block_dialogue>") and lines[1:] == _talk(6)[-2:]
    assert read_file(tmp_path / "out.tiny").format == "tiny"

    converted = runner.invoke(app, ["convert", "out.tiny", "--to", "chat"])
    assert [orjson.loads(x)["role"] for x in converted.stdout.splitlines()] == [x["who"] for x in lines]
    back = runner.invoke(app, ["convert", str(session), "--format", "tiny", "--to", "tiny"])
    assert back.stdout.encode() == session.read_bytes()  # unchanged: the file's own bytes


def test_without_its_registry_entry_the_new_format_is_unknown(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    session = jsonl(tmp_path / "talk.jsonl", _talk(1))
    result = CliRunner().invoke(app, ["inspect", str(session), "--format", "tiny"])
    assert (result.exit_code, result.stderr) == (
        2, "Error: unknown format 'tiny' — use one of: chat, claude-code, codex, swe-agent, tau-bench\n")
