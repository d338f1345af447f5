"""tcompact.dump: the stored form of a message, names and hashes (values), building a run's dumps
(writing), and reading them back checked, a run's shared context resolved (reading)."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import orjson
import pytest
from conftest import SAMPLES, SESSION, FakeSummarizer, jsonl, msg
from hypothesis import given, settings
from hypothesis import strategies as st

from tcompact.artifacts import write_json
from tcompact.compaction import CompactOptions, compact_file
from tcompact.compressors import parse_sets
from tcompact.dump import (READABLE_SCHEMAS, SCHEMA_VERSION, DumpContext, build_dumps, content_hashes, digest,
                           dump_name, dumps_of, load_dumps, message_dict, message_from_dict, messages_of, read_dump,
                           safe_name, sibling_dump)
from tcompact.errors import InputError
from tcompact.model import Message, Reasoning, ToolCall
from tcompact.summarizers.base import SummarizerError

CHAT = SAMPLES / "chat_tool_session.jsonl"
KEY = "sk-proj-TESTKEY1234567890abcdefTESTKEY1234567890"


def _fields(m: Message) -> tuple:
    return (m.role, m.content, m.tool_calls, m.tool_call_ids, m.name, m.reasoning, m.is_error, m.internal)


@pytest.fixture(scope="module")
def one_call():
    """A forced dialogue run over the chat sample: one summariser call, accepted."""
    return compact_file(CHAT, CompactOptions(chain="dialogue", now=True))


@pytest.fixture(scope="module")
def two_calls():
    """A round-level run over the chat sample that makes two calls (the second names the first's context)."""
    sets = parse_sets(["round-level.first_pass_target_tokens=300", "round-level.compression_call_max_tokens=3000"])
    return compact_file(CHAT, CompactOptions(chain="round-level", now=True, overrides=sets))


def _write(run, folder):
    return [write_json(folder / name, doc, sync=False) for name, doc in run.dumps()]


# values ------------------------------------------------------------------------------------------

def test_schema_versions():
    assert (SCHEMA_VERSION, READABLE_SCHEMAS) == (3, (1, 2, 3))


@pytest.mark.parametrize(("raw", "safe"), [
    ("chat_tool_session", "chat_tool_session"), ("a b/c::d", "a-b-c-d"), ("-a-", "a"), ("v1.2_x-y", "v1.2_x-y"),
    ("", "unknown"), ("///", "unknown"), ("é中", "unknown"), ("x" * 200, "x" * 80)])
def test_safe_name(raw, safe):
    assert safe_name(raw) == safe


def test_dump_name():
    assert dump_name(1700000000123, "round level", "s/1") == "1700000000123_round-level_s-1.json"
    assert dump_name(5, "dialogue", "") == "5_dialogue_unknown.json"


def test_digest_is_the_sha256_of_the_json_with_sorted_keys():
    assert digest({"b": 1, "a": [2, None]}) == digest({"a": [2, None], "b": 1}) == \
        hashlib.sha256(b'{"a":[2,null],"b":1}').hexdigest()
    assert digest(None) == hashlib.sha256(b"null").hexdigest()
    assert digest([1]) != digest([2])


def test_content_hashes_cover_what_a_replay_rebuilds_from():
    doc = {"context_before": {"messages": [{"role": "user", "content": "hi"}]},
           "context_after": {"messages": [{"role": "user", "content": "s"}]}, "request": {"prompt": "p"},
           "response": {"raw_content": "r"}, "processor": {"name": "dialogue"}}
    assert content_hashes(doc) == {"context_before": digest([{"role": "user", "content": "hi"}]),
                                   "context_after": digest([{"role": "user", "content": "s"}]),
                                   "request": digest({"prompt": "p"}), "response": digest({"raw_content": "r"}),
                                   "processor": digest({"name": "dialogue"})}
    assert content_hashes(doc, context_before="given")["context_before"] == "given"
    empty = content_hashes({})  # a failed call: no context after, no response
    assert empty == dict.fromkeys(("context_before", "context_after", "request", "response", "processor"),
                                  digest(None))


MESSAGES = [
    Message("system", "You are a coding agent."),
    Message("user", "Fix it", internal=True),
    Message("assistant", "", tool_calls=(ToolCall("c1", "run", '{"a": 1}'), ToolCall("c2", "apply", "*** patch",
                                                                                       type="custom"))),
    Message("tool", "boom", tool_call_ids=("c1",), is_error=True),
    Message("assistant", "done", reasoning=(Reasoning("", 420, "encrypted"), Reasoning("step", 0, "summary"))),
    Message("assistant", "plain", reasoning=(Reasoning("why", 0, "reasoning_content"),)),
]


def test_message_dict_keeps_what_the_chat_shape_cannot_hold():
    dicts = [message_dict(m) for m in MESSAGES]
    assert dicts[0] == {"role": "system", "content": "You are a coding agent."}
    assert dicts[1]["_internal"] is True and "_is_error" not in dicts[1]
    assert dicts[2]["_tool_types"] == ["function", "custom"]
    assert dicts[3]["_is_error"] is True and dicts[3]["tool_call_id"] == "c1"
    assert dicts[4]["_reasoning"] == [{"text": "", "encrypted_chars": 420, "kind": "encrypted"},
                                      {"text": "step", "encrypted_chars": 0, "kind": "summary"}]
    assert "reasoning_content" not in dicts[4]
    assert dicts[5]["reasoning_content"] == "why" and "_reasoning" not in dicts[5]


def test_messages_stored_then_read_are_the_same():
    back = messages_of([orjson.loads(orjson.dumps(message_dict(m))) for m in MESSAGES])
    assert [_fields(m) for m in back] == [_fields(m) for m in MESSAGES]
    assert _fields(message_from_dict(message_dict(MESSAGES[2]))) == _fields(MESSAGES[2])


# writing -----------------------------------------------------------------------------------------

def test_one_call_dump(one_call):
    (name, doc), = build_dumps(one_call.stages[0].result, before=one_call.stages[0].before,
                               settings=one_call.stages[0].settings, counter=one_call.counter,
                               ctx=one_call.dump_context)
    call = one_call.stages[0].result.calls[0]
    ms = int(call.started * 1000)
    assert name == f"{ms}_dialogue_chat_tool_session.json"
    assert (doc["schema_version"], doc["tool"]["name"], doc["processor"]["name"], doc["session_id"]) == (
        3, "tcompact", "dialogue", "chat_tool_session")
    assert doc["run"] == {"id": f"{ms}-dialogue-chat_tool_session", "call": 1, "calls": 1}
    assert doc["source"] == {"path": str(CHAT), "format": "chat", "transcript": "main",
                             "sha256": hashlib.sha256(CHAT.read_bytes()).hexdigest()}
    assert doc["encoding"] == {"name": "o200k_base", "approximate": True}
    assert doc["call"] == {"number": 1, "attempt": 1, "of": 1, "status": "ok", "retried": False, "reason": "ok"}
    assert doc["span"] == {"prefix": {"start": 0, "end": 0, "count": 0}, "body": {"start": 0, "end": 18, "count": 18},
                           "tail": {"start": 18, "end": 33, "count": 15}, "preserved_prefix_count": 0,
                           "messages_to_compress_count": 18, "protected_tail_count": 15}
    assert doc["trigger"] == {"context_window": 200000, "total_tokens_before": 11796, "trigger_ratio": 0.8,
                              "threshold": 160000, "body_tokens": 8277, "min_target_tokens": 20000, "forced": True}
    assert doc["benefit"] == {"tokens_before": 11796, "tokens_after": 4964, "reduction": 6832,
                              "reduction_ratio": 0.5792, "accepted": True, "reason": "compacted"}
    req = doc["request"]
    assert (req["summarizer"], req["contract"], req["target_tokens"], req["exclude_recent_messages"]) == (
        "extractive", "dialogue", 1076, 15)
    assert req["messages_sent"][-1] == {"role": "user", "content": req["prompt"]}
    assert (doc["error"], doc["redactions"], doc["response"]["raw_content"]) == (None, 0, call.response.text)
    assert doc["created_at"].endswith("+00:00") and doc["timestamp"] == call.started
    assert len(doc["context_before"]["messages"]) == 33 and doc["context_before"]["total_tokens"] == 11796
    assert doc["context_after"]["total_tokens_after"] == 4964
    assert [_fields(m) for m in messages_of(doc["context_after"]["messages"])] == [
        _fields(m) for m in one_call.messages]
    assert doc["hashes"] == content_hashes(doc)


def test_a_run_of_two_calls_stores_the_context_once(two_calls):
    (n1, one), (n2, two) = two_calls.dumps()
    assert n1 != n2 and one["run"]["id"] == two["run"]["id"]
    assert [(d["run"]["call"], d["run"]["calls"]) for d in (one, two)] == [(1, 2), (2, 2)]
    assert two["context_before"] == {"in_call": 1, "messages_sha256": digest(one["context_before"]["messages"]),
                                     "total_tokens": 11796}
    assert one["context_after"] is None and two["context_after"] is not None
    # the second hashes its reference as it stands (no messages); the reference is checked by messages_sha256
    assert (two["hashes"]["context_before"], one["hashes"]["context_before"]) == (
        digest(None), two["context_before"]["messages_sha256"])


def test_calls_started_in_the_same_millisecond_get_distinct_names(two_calls):
    stage = two_calls.stages[0]
    first = stage.result.calls[0]
    result = replace(stage.result, calls=tuple(replace(c, started=first.started) for c in stage.result.calls))
    names = [n for n, _ in build_dumps(result, before=stage.before, settings=stage.settings,
                                       counter=two_calls.counter, ctx=two_calls.dump_context)]
    ms = int(first.started * 1000)
    assert names == [f"{ms}_round-level_chat_tool_session.json", f"{ms}_round-level_chat_tool_session-2.json"]


def test_a_key_in_a_long_prompt_sent_by_two_calls_is_redacted_in_both_dumps(two_calls):
    """Each text is redacted once per run and taken from there by the later dumps; a long text is looked
    through needle by needle (tcompact.redact)."""
    stage = two_calls.stages[0]
    long = "The quick brown fox jumps over the lazy dog. " * 100 + f"\nexport OPENAI_API_KEY={KEY}\n"
    calls = tuple(replace(c, request=replace(c.request, prompt=long + c.request.prompt)) for c in stage.result.calls)
    docs = [doc for _, doc in build_dumps(replace(stage.result, calls=calls), before=stage.before,
                                          settings=stage.settings, counter=two_calls.counter,
                                          ctx=two_calls.dump_context)]
    assert len(docs) == 2
    for doc, call in zip(docs, calls, strict=True):
        assert KEY not in orjson.dumps(doc).decode()
        assert doc["request"]["prompt"] == call.request.prompt.replace(KEY, "[REDACTED:openai_key]")
    assert [doc["redactions"] for doc in docs] == [1, 2]  # texts changed by redaction so far in the run: one prompt each


def test_a_refused_summary_is_dumped_with_its_figures_and_secrets_redacted(tmp_path):
    path = jsonl(tmp_path / "s.jsonl", [*SESSION, msg("user", f"my key is {KEY} keep it")])
    run = compact_file(path, CompactOptions(chain="dialogue", now=True))
    assert (run.status, run.message) == ("nothing to do", "dialogue: no benefit (359 ≥ 109 tokens); original kept")
    (_, doc), = run.dumps()
    assert doc["benefit"] == {"tokens_before": 109, "tokens_after": 359, "reduction": 0, "reduction_ratio": 0.0,
                              "accepted": False, "reason": "no benefit (359 ≥ 109 tokens); original kept"}
    assert doc["context_after"] is None and doc["redactions"] == 1
    assert doc["context_before"]["messages"][-1] == {"role": "user", "content": "my key is [REDACTED:openai_key] keep it"}
    assert KEY not in orjson.dumps(doc).decode()
    assert doc["hashes"] == content_hashes(doc)


def test_a_failed_call_is_dumped_with_its_error():
    fake = FakeSummarizer(SummarizerError("auth", "401 Unauthorized", status=401))
    run = compact_file(CHAT, CompactOptions(chain="dialogue", now=True), summarizer=fake)
    assert (run.status, run.message, run.calls) == ("failed", "dialogue: summariser failed: 401 Unauthorized", 1)
    (_, doc), = run.dumps()
    assert doc["call"] == {"number": 1, "attempt": 1, "of": 1, "status": "failed", "retried": False,
                           "reason": "auth is not retried"}
    assert doc["error"] == {"kind": "auth", "message": "401 Unauthorized", "status": 401, "retry_after": None,
                            "context_window": None, "prompt_tokens": None}
    assert doc["attempts"] == [{"number": 1, "status": "failed", "error_kind": "auth", "latency_s": None,
                                "reason": "auth is not retried"}]
    assert (doc["response"], doc["context_after"], doc["request"]["summarizer"]) == (None, None, "fake")
    assert doc["benefit"] == {"tokens_before": 11796, "tokens_after": None, "reduction": None, "reduction_ratio": 0.0,
                              "accepted": False, "reason": "summariser failed: 401 Unauthorized"}


def test_a_run_without_calls_has_no_dumps(one_call):
    stage = one_call.stages[0]
    result = replace(stage.result, calls=())
    assert build_dumps(result, before=stage.before, settings=stage.settings, counter=one_call.counter,
                       ctx=DumpContext(session="s", source={}, summarizer="none")) == []


# reading -----------------------------------------------------------------------------------------

def test_dumps_written_then_read_are_the_documents_built(two_calls, tmp_path):
    built = list(two_calls.dumps())
    paths = _write(two_calls, tmp_path)
    assert [p.name for p in paths] == [n for n, _ in built]
    assert [(d.name, dict(d.doc)) for d in map(read_dump, paths)] == built
    assert [d.name for d in dumps_of(tmp_path)] == sorted(n for n, _ in built)
    assert [d.name for d in dumps_of(paths[1])] == [paths[1].name]
    # loaded, the later call carries the messages of the first, checked against their sha256
    one, two = load_dumps([tmp_path])
    assert two.doc["context_before"] == one.doc["context_before"] == built[0][1]["context_before"]
    assert [_fields(m) for m in messages_of(two.doc["context_before"]["messages"])] == [
        _fields(m) for m in two_calls.stages[0].before]
    (alone,) = load_dumps([paths[1]])  # the first is found beside it
    assert alone.doc["context_before"] == built[0][1]["context_before"]


def _dump_file(tmp_path, one_call, edit=None, name="d.json"):
    (_, doc), = one_call.dumps()
    if edit:
        edit(doc)
    path = tmp_path / name
    path.write_bytes(orjson.dumps(doc))
    return path


@pytest.mark.parametrize(("content", "what", "hint"), [
    (b'{"schema_version": 3,', "not a valid JSON dump (unexpected end of data at line 1)",
     "the dump is truncated or damaged; compact again to get a new one"),
    (b"\xff\xfe", "not a valid JSON dump (str is not valid UTF-8: surrogates not allowed at line 1)",
     "the dump is truncated or damaged; compact again to get a new one"),
    (b"[1, 2]", "not a tcompact compression dump (no schema_version)", "pass dumps written by tcompact compact --dump-dir"),
    (b'{"a": 1}', "not a tcompact compression dump (no schema_version)", "pass dumps written by tcompact compact --dump-dir"),
    (b'{"schema_version": 4}', "schema_version 4 is not supported (this tcompact reads 1, 2 and 3)",
     "replay it with the tcompact that wrote it"),
    (b'{"schema_version": true}', "schema_version True is not supported (this tcompact reads 1, 2 and 3)",
     "replay it with the tcompact that wrote it"),
    (b'{"schema_version": "3"}', "schema_version '3' is not supported (this tcompact reads 1, 2 and 3)",
     "replay it with the tcompact that wrote it"),
    (b'{"schema_version": 3}', "field processor is missing", "the dump was edited or cut"),
])
def test_a_dump_that_cannot_be_read_is_one_error(tmp_path, content, what, hint):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(InputError) as exc:
        read_dump(path)
    assert (exc.value.what, exc.value.path, exc.value.hint, exc.value.exit_code) == (what, str(path), hint, 2)
    assert str(exc.value) == f"{path}: {what} — {hint}"


def test_a_folder_read_as_a_dump_is_one_error(tmp_path):
    with pytest.raises(InputError) as exc:
        read_dump(tmp_path)
    assert str(exc.value) == f"{tmp_path}: cannot read: Is a directory — check the permissions"


def _set(path, value):
    def edit(doc):
        *keys, last = path
        for k in keys:
            doc = doc[k]
        doc[last] = value
    return edit


@pytest.mark.parametrize(("edit", "what", "hint"), [
    (lambda d: d.pop("hashes"), "field hashes is missing", "the dump was edited or cut"),
    (lambda d: d.pop("encoding"), "field encoding is missing", "the dump was edited or cut"),
    (_set(["run"], "r1"), 'field run is not {"id": str, "call": int, ...}', "the dump was edited or cut"),
    (_set(["run", "call"], "1"), 'field run is not {"id": str, "call": int, ...}', "the dump was edited or cut"),
    (_set(["context_before"], {"total_tokens": 1}),
     "field context_before holds neither messages nor the call that has them", "the dump was edited or cut"),
    (_set(["context_before", "messages", 0, "content"], "edited"), "field context_before does not match its "
     "recorded hash", "the dump was edited after it was written; compact again to get a new one"),
    (_set(["request", "prompt"], "edited"), "field request does not match its recorded hash",
     "the dump was edited after it was written; compact again to get a new one"),
    (_set(["response", "raw_content"], "edited"), "field response does not match its recorded hash",
     "the dump was edited after it was written; compact again to get a new one"),
    (_set(["processor", "name"], "full"), "field processor does not match its recorded hash",
     "the dump was edited after it was written; compact again to get a new one"),
    (_set(["hashes"], None), "field context_before does not match its recorded hash",
     "the dump was edited after it was written; compact again to get a new one"),
])
def test_an_edited_dump_names_its_field(tmp_path, one_call, edit, what, hint):
    path = _dump_file(tmp_path, one_call, edit)
    with pytest.raises(InputError) as exc:
        read_dump(path)
    assert str(exc.value) == f"{path}: {what} — {hint}"


def test_an_unedited_dump_reads(tmp_path, one_call):
    dump = read_dump(_dump_file(tmp_path, one_call))
    assert (dump.name, dump.doc["run"]["call"]) == ("d.json", 1)


def test_dumps_of_needs_dump_files(tmp_path):
    for where in (tmp_path, tmp_path / "missing.json"):
        with pytest.raises(InputError) as exc:
            dumps_of(where)
        assert str(exc.value) == f"{where}: no dumps to replay from — pass --replay-dir with dump files"


def test_load_dumps_refuses_an_empty_folder_and_a_missing_path(tmp_path):
    with pytest.raises(InputError) as exc:
        load_dumps([tmp_path])
    assert str(exc.value) == f"{tmp_path}: no dumps in this folder or below it — pass a folder written by --dump-dir"
    with pytest.raises(InputError) as exc:
        load_dumps([tmp_path / "gone.json"])
    assert str(exc.value) == f"{tmp_path / 'gone.json'}: no such file or folder — check the path"


def test_a_later_call_without_its_first_dump_is_refused(two_calls, tmp_path):
    first, second = _write(two_calls, tmp_path)
    first.unlink()
    with pytest.raises(InputError) as exc:
        load_dumps([second])
    assert str(exc.value) == (f"{second}: the messages before this run are in its call 1, whose dump is not in "
                              f"{tmp_path} — keep the dumps of a run together in one folder")


def test_a_later_call_whose_first_dump_holds_other_messages_is_refused(two_calls, tmp_path):
    first, second = _write(two_calls, tmp_path)
    doc = orjson.loads(first.read_bytes())
    doc["context_before"]["messages"] = doc["context_before"]["messages"][:-1]
    doc["hashes"] = content_hashes(doc)  # consistent in itself: only its sibling tells
    first.write_bytes(orjson.dumps(doc))
    with pytest.raises(InputError) as exc:
        load_dumps([tmp_path])
    assert str(exc.value) == (f"{second}: field context_before does not match the messages of call 1 ({first.name}) "
                              "— the dumps of this run were edited or mixed with another run's; compact again to "
                              "get new ones")


def test_on_error_hears_each_bad_dump_and_the_rest_are_kept(two_calls, one_call, tmp_path):
    run_dir, other = tmp_path / "run", tmp_path / "other"
    run_dir.mkdir(), other.mkdir()
    first, second = _write(two_calls, run_dir)
    first.unlink()
    good = _dump_file(other, one_call, name="good.json")
    bad = other / "bad.json"
    bad.write_bytes(b"{")
    heard = []
    kept = load_dumps([second, other], on_error=lambda p, e: heard.append((p, e.what)))
    assert [d.path for d in kept] == [good]
    assert heard == [(bad, "not a valid JSON dump (unexpected end of data at line 1)"),
                     (second, f"the messages before this run are in its call 1, whose dump is not in {run_dir}")]


def test_sibling_dump_indexes_a_folder_once_and_passes_over_other_files(two_calls, tmp_path):
    first, second = _write(two_calls, tmp_path)
    (tmp_path / "broken.json").write_bytes(b"{")
    (tmp_path / "norun.json").write_bytes(b'{"schema_version": 3}')
    (tmp_path / "list.json").write_bytes(b"[]")
    run_id = orjson.loads(first.read_bytes())["run"]["id"]
    folders: dict = {}
    assert sibling_dump(second, (run_id, 1), folders) == first
    assert folders == {tmp_path: {(run_id, 1): first, (run_id, 2): second}}
    first.unlink()  # the index is not read again
    assert sibling_dump(second, (run_id, 1), folders) == first
    assert sibling_dump(second, (run_id, 3), folders) is None
    assert sibling_dump(second, (run_id, 1), {}) is None


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_CALLS = st.lists(st.builds(ToolCall, id=st.from_regex(r"c[0-9a-z]{1,6}", fullmatch=True), name=st.sampled_from(
    ["bash", "read", "apply_patch"]), arguments=_TEXT, type=st.sampled_from(["function", "custom"])), max_size=3,
    unique_by=lambda c: c.id)
_REASONING = st.lists(st.builds(Reasoning, text=_TEXT, encrypted_chars=st.integers(0, 5000),
                                kind=st.sampled_from(["reasoning_content", "thinking", "encrypted", "summary"])),
                      max_size=2).filter(  # the chat shape's own field holds one plain reasoning text, as readers give it
    lambda rs: any(r.encrypted_chars or r.kind != "reasoning_content" for r in rs) or len(rs) == 0 or
    (len(rs) == 1 and rs[0].text != ""))


@st.composite
def _message(draw):
    role = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
    kw = {"internal": draw(st.booleans()), "is_error": draw(st.booleans())}
    if role == "assistant":
        kw |= {"tool_calls": tuple(draw(_CALLS)), "reasoning": tuple(draw(_REASONING))}
    if role == "tool":
        kw["tool_call_ids"] = (draw(st.from_regex(r"c[0-9a-z]{1,6}", fullmatch=True)),)
    return Message(role, draw(_TEXT), **kw)


@settings(max_examples=100, deadline=None)
@given(st.lists(_message(), max_size=6))
def test_any_message_stored_then_read_through_json_is_the_same(messages):
    stored = orjson.loads(orjson.dumps([message_dict(m) for m in messages]))
    assert [_fields(m) for m in messages_of(stored)] == [_fields(m) for m in messages]
