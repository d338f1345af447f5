"""inspect of a file that grew (tcompact.inspection.growing): read on from the state kept after the last read, every
figure equal to a read from scratch — on every shared session grown line by line as a live agent appends,
and on files rewritten in the middle, truncated, replaced, torn, and grown in ways a reader cannot go on from."""

from __future__ import annotations

import orjson
import pytest
from codex_lines import item, ln, message, rollout, token_count
from conftest import REAL_FILES, SAMPLES, SESSION, jsonl, msg, real_file

from tcompact.counting import helper
from tcompact.forked import enabled as forked_enabled
from tcompact.inspection import growing
from tcompact.counting import cache as tokencache
from tcompact.errors import TcompactError
from tcompact.formats import ReadOptions, read_file, steps
from tcompact.inspection import InspectOptions, inspect_file, inspect_source


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(tokencache.CACHE_ENV, str(folder))
    return folder


@pytest.fixture
def reads(monkeypatch):
    """How each inspect of a file with a kept state went: "resumed" or "whole"."""
    seen: list[str] = []
    resumed, whole = growing._resumed, growing._read_whole

    def spy_resumed(*args, **kwargs):
        report = resumed(*args, **kwargs)
        if report is not None:
            seen.append("resumed")
        return report

    def spy_whole(*args, **kwargs):
        seen.append("whole")
        return whole(*args, **kwargs)

    monkeypatch.setattr(growing, "_resumed", spy_resumed)
    monkeypatch.setattr(growing, "_read_whole", spy_whole)
    return seen


def _inspect(path, options, *, scratch=False):
    try:
        return inspect_source(read_file(path, options.read), options) if scratch else inspect_file(path, options)
    except TcompactError as exc:
        return f"{type(exc).__name__}: {exc}"


def _scratch(path, options, monkeypatch):
    """The report of the file read whole (no kept report or state; counts from the token cache, which
    gives what counting gives: tests/test_tokencache.py)."""
    return _inspect(path, options, scratch=True)


def _grow_line_by_line(source, target, options, monkeypatch):
    """Append ``source``'s lines to ``target`` one at a time; after each, inspect (kept states on) and
    from scratch must agree. The numbers of lines read so far where they did not."""
    lines = source.read_bytes().splitlines(keepends=True)
    target.write_bytes(b"")
    wrong = []
    for n, line in enumerate(lines, 1):
        with open(target, "ab") as fh:  # as a live agent appends: the same file, one write a line
            fh.write(line)
        if _inspect(target, options) != _scratch(target, options, monkeypatch):
            wrong.append(n)
    return wrong, len(lines)


@pytest.mark.parametrize("key", [k for k, name in REAL_FILES.items() if name.endswith(".jsonl")])
def test_every_shared_session_grown_line_by_line_reads_as_from_scratch(key, tmp_path, own_cache, reads, monkeypatch):
    wrong, count = _grow_line_by_line(real_file(key), tmp_path / "live.jsonl", InspectOptions(top=5), monkeypatch)
    assert wrong == []
    first = reads.index("resumed")  # once the format is known for good, every later read resumes
    assert reads[first:] == ["resumed"] * (count - first) and first < 30


@pytest.mark.parametrize("name", ["chat_tool_session.jsonl", "claude_code_session.jsonl", "codex_rollout.jsonl"])
def test_every_sample_grown_line_by_line_reads_as_from_scratch(name, tmp_path, own_cache, reads, monkeypatch):
    options = InspectOptions(read=ReadOptions(keep_raw=False, full_history=True, skip_bad_lines=True), top=2)
    wrong, count = _grow_line_by_line(SAMPLES / name, tmp_path / "live.jsonl", options, monkeypatch)
    assert wrong == [] and reads.count("resumed") > 0


def test_a_resumed_read_parses_only_the_appended_lines(tmp_path, own_cache, reads, monkeypatch):
    path = tmp_path / "live.jsonl"
    lines = real_file("codemie").read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:200]))
    inspect_file(path)
    parsed = []
    load_appended = steps.load_appended

    def spy(data, ctx, *, first_line, start):
        parsed.append((len(data), first_line, start))
        return load_appended(data, ctx, first_line=first_line, start=start)

    monkeypatch.setattr(steps, "load_appended", spy)
    with open(path, "ab") as fh:
        fh.write(b"".join(lines[200:]))
    grown = inspect_file(path)
    assert parsed == [(sum(map(len, lines[200:])), 201, sum(map(len, lines[:200])))]
    assert reads == ["whole", "resumed"] and grown == _scratch(path, InspectOptions(), monkeypatch)


def _changes(path, original):
    """Ways a file read before may have changed that are no growth: each a function writing ``path``."""
    middle = len(original) // 2
    return {
        "rewritten in the middle": lambda: path.write_bytes(original[:middle] + original[middle:].replace(
            b"session", b"SESSION", 1)),
        "truncated": lambda: path.write_bytes(original[:original.rindex(b"\n", 0, middle) + 1]),
        "replaced by another session": lambda: path.write_bytes(real_file("drmaciver").read_bytes()),
        "replaced and grown": lambda: path.write_bytes(real_file("drmaciver").read_bytes() + original),
        "emptied": lambda: path.write_bytes(b""),
    }


@pytest.mark.parametrize("change", ["rewritten in the middle", "truncated", "replaced by another session",
                                    "replaced and grown", "emptied"])
def test_a_file_that_did_not_just_grow_is_read_whole(change, tmp_path, own_cache, reads, monkeypatch):
    path = tmp_path / "live.jsonl"
    original = real_file("codemie").read_bytes()
    assert b"session" in original[len(original) // 2:]
    path.write_bytes(original)
    inspect_file(path)
    _changes(path, original)[change]()
    assert _inspect(path, InspectOptions()) == _scratch(path, InspectOptions(), monkeypatch)
    assert reads[1:] == (["whole"] if change != "emptied" else ["whole"])


def test_a_torn_last_line_keeps_no_state_and_its_rest_reads_as_from_scratch(tmp_path, own_cache, reads, monkeypatch):
    path = tmp_path / "live.jsonl"
    lines = real_file("drmaciver").read_bytes().splitlines(keepends=True)
    options = InspectOptions(read=ReadOptions(keep_raw=False, skip_bad_lines=True))
    path.write_bytes(b"".join(lines[:60]))
    inspect_file(path, options)
    half = len(lines[60]) // 2
    for part in (lines[60][:half], lines[60][half:], b"".join(lines[61:])):  # the line written in two goes
        with open(path, "ab") as fh:
            fh.write(part)
        assert _inspect(path, options) == _scratch(path, options, monkeypatch)
    assert reads == ["whole", "resumed", "resumed", "resumed"]  # each from the state after line 60, then 61


def _codex(tmp_path, extra):
    """A Codex rollout long enough to be known as one for good, and then ``extra`` lines."""
    lines = rollout() + [token_count(3000 + n, 100, 1500, 40) for n in range(30)]
    return jsonl(tmp_path / "rollout.jsonl", lines), extra


@pytest.mark.parametrize(("case", "extra", "how"), [
    ("a turn", [message("user", "and the docs"), message("assistant", "Done.", "output_text")], "resumed"),
    ("a compaction", [ln("compacted", {"message": "Summary.", "replacement_history": []})], "whole"),
    ("the system prompt", [ln("session_meta", {"id": "1", "base_instructions": {"text": "Be brief."}})], "whole"),
    ("a mirror of a user message read from its event", [message("user", "fix it")], "whole"),
    ("another model's encoding", [ln("turn_context", {"model": "gpt-4-turbo"}), message("user", "again")], "whole"),
])
def test_codex_lines_that_change_what_was_read_before_make_a_whole_read(case, extra, how, tmp_path, own_cache,
                                                                          reads, monkeypatch):
    path, extra = _codex(tmp_path, extra)
    with open(path, "ab") as fh:  # a user turn Codex Desktop recorded as an event only
        fh.write(orjson.dumps(ln("event_msg", {"type": "user_message", "message": "fix it"})) + b"\n")
    inspect_file(path)
    with open(path, "ab") as fh:
        fh.write(b"".join(orjson.dumps(d) + b"\n" for d in extra))
    assert inspect_file(path) == _scratch(path, InspectOptions(), monkeypatch)
    assert reads == ["whole", how]


def test_an_assistant_message_assembled_over_the_old_end_goes_on(tmp_path, own_cache, reads, monkeypatch):
    path, _ = _codex(tmp_path, [])
    with open(path, "ab") as fh:
        fh.write(orjson.dumps(item({"type": "reasoning", "summary": [{"type": "summary_text", "text": "plan"}]}))
                 + b"\n")
    before = inspect_file(path)
    with open(path, "ab") as fh:
        fh.write(orjson.dumps(item({"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c9"}))
                 + b"\n")
    grown = inspect_file(path)
    assert grown == _scratch(path, InspectOptions(), monkeypatch) and reads == ["whole", "resumed"]
    assert grown["transcripts"][0]["messages"] == before["transcripts"][0]["messages"]  # the same message grew
    assert grown["transcripts"][0]["tool_calls"] == before["transcripts"][0]["tool_calls"] + 1


def test_a_reply_going_on_beyond_the_kept_lines_makes_a_whole_read(tmp_path, own_cache, reads, monkeypatch):
    monkeypatch.setattr(steps, "_KEEP_LINES", 3)
    path = tmp_path / "live.jsonl"
    lines = real_file("codemie").read_bytes().splitlines(keepends=True)
    records = [orjson.loads(x) for x in lines]
    reply = next(i for i, d in enumerate(records) if d.get("type") == "assistant" and i > 100)
    cut = reply + 10  # the reply's line is 10 lines before the end, 3 are kept
    path.write_bytes(b"".join(lines[:cut]))
    inspect_file(path)
    late = dict(records[reply], uuid="late-line", parentUuid=records[cut + 4].get("uuid"))  # the same message.id
    with open(path, "ab") as fh:
        fh.write(b"".join(lines[cut:cut + 5]) + orjson.dumps(late) + b"\n")
    assert inspect_file(path) == _scratch(path, InspectOptions(), monkeypatch)
    assert reads == ["whole", "whole"]


def test_chat_episodes_and_short_files_keep_no_state(tmp_path, own_cache, reads, monkeypatch):
    episodes = jsonl(tmp_path / "episodes.jsonl", [{"messages": SESSION[:3]}] * 30 + [msg("user", "hi")] * 30)
    short = jsonl(tmp_path / "short.jsonl", SESSION)
    for path in (episodes, short):
        inspect_file(path)
        assert list((own_cache / growing.FOLDER).glob("*.state")) == []
        with open(path, "ab") as fh:
            fh.write(orjson.dumps(msg("assistant", "more")) + b"\n")
        assert inspect_file(path) == _scratch(path, InspectOptions(), monkeypatch)
    assert reads == ["whole"] * 4


def test_a_damaged_state_is_no_state_and_no_cache_keeps_none(tmp_path, own_cache, reads, monkeypatch):
    path = tmp_path / "live.jsonl"
    lines = real_file("drmaciver").read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:50]))
    inspect_file(path)
    (state,) = (own_cache / growing.FOLDER).glob("*.state")
    state.write_bytes(state.read_bytes()[:-7] + b"damaged")
    with open(path, "ab") as fh:
        fh.write(b"".join(lines[50:]))
    assert inspect_file(path) == _scratch(path, InspectOptions(), monkeypatch)
    assert reads == ["whole", "whole"]
    other = tmp_path / "other.jsonl"
    other.write_bytes(path.read_bytes())
    monkeypatch.setenv(tokencache.NO_CACHE_ENV, "1")
    inspect_file(other)
    assert len(list((own_cache / growing.FOLDER).glob("*.state"))) == 1


def test_states_are_kept_per_path_and_options(tmp_path, own_cache, reads, monkeypatch):
    path = tmp_path / "live.jsonl"
    lines = real_file("drmaciver").read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:50]))
    for options in (InspectOptions(), InspectOptions(top=1), InspectOptions(encoding="cl100k_base")):
        inspect_file(path, options)
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(path.read_bytes())
    inspect_file(copy)  # the same bytes and options: the report kept, no read, no state
    assert len(list((own_cache / growing.FOLDER).glob("*.state"))) == 3
    for grown in (path, copy):
        with open(grown, "ab") as fh:
            fh.write(b"".join(lines[50:]))
    for options in (InspectOptions(), InspectOptions(top=1), InspectOptions(encoding="cl100k_base")):
        assert inspect_file(path, options) == _scratch(path, options, monkeypatch)
    assert inspect_file(copy) == {**inspect_file(path), "path": str(copy)}  # the copy: the report kept for its bytes
    assert reads == ["whole"] * 3 + ["resumed"] * 3


def test_a_claude_file_without_parents_grows_in_file_order_until_a_line_names_one(tmp_path, own_cache, reads,
                                                                                   monkeypatch):
    """Lines that name no parent are read in file order (issue 23 item 7); appended ones too — until the
    first parent named makes the file a tree: then it is read whole."""
    records = [orjson.loads(x) for x in real_file("drmaciver").read_bytes().splitlines()]
    loose = [orjson.dumps({k: v for k, v in d.items() if k != "parentUuid"}) + b"\n" for d in records]
    path = tmp_path / "old.jsonl"
    path.write_bytes(b"".join(loose[:60]))
    inspect_file(path)
    for tail in (loose[60:80], [orjson.dumps(records[80]) + b"\n"], loose[81:]):
        with open(path, "ab") as fh:
            fh.write(b"".join(tail))
        assert inspect_file(path) == _scratch(path, InspectOptions(), monkeypatch)
    assert reads == ["whole", "resumed", "whole", "resumed"]


@pytest.mark.skipif(not forked_enabled(), reason="copies of the process are made on Linux with two CPUs or more")
def test_a_grown_file_is_counted_by_a_copy_that_built_the_tokenizer_meanwhile(tmp_path, own_cache, reads,
                                                                                monkeypatch):
    """Issue 26: from GROWN_FROM bytes read on, a copy of the process builds the tokenizer while they are read
    and counts the new texts; the reports are those of reads from scratch."""
    monkeypatch.setattr(tokencache, "GROWN_FROM", 0)
    answered = []
    real = helper.CountingCopy.counts

    def spied(self, texts):
        got = real(self, texts)
        answered.append(got is not None)
        return got

    monkeypatch.setattr(helper.CountingCopy, "counts", spied)
    lines = real_file("codemie").read_bytes().splitlines(keepends=True)
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"")
    options = InspectOptions(top=5)
    for n in (len(lines) // 3, 2 * len(lines) // 3, len(lines)):
        path.write_bytes(b"".join(lines[:n]))  # (the same first bytes: a read going on from the last)
        assert _inspect(path, options) == _scratch(path, options, monkeypatch)
    assert reads == ["whole", "resumed", "resumed"]  # (the first read: no state yet)
    assert answered and all(answered)


def test_where_the_last_read_of_a_file_stopped_is_kept_for_its_path(tmp_path, own_cache):
    """The hint a plain inspect reads before anything else (to start the tokenizer's copy): the bytes appended
    since the last read of that path; 0 when nothing was kept, the file is unchanged, or it shrank."""
    lines = real_file("codemie").read_bytes().splitlines(keepends=True)
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(lines[:40]))
    assert tokencache.grown_by(path) == 0  # never read
    inspect_file(path)
    assert tokencache.grown_by(path) == 0
    more = b"".join(lines[40:60])
    with open(path, "ab") as fh:
        fh.write(more)
    assert tokencache.grown_by(tmp_path / "." / "live.jsonl") == len(more)  # (the path resolved)
    inspect_file(path)
    assert tokencache.grown_by(path) == 0
    path.write_bytes(b"".join(lines[:10]))  # rewritten shorter
    assert tokencache.grown_by(path) == 0


@pytest.mark.skipif(not forked_enabled(), reason="copies of the process are made on Linux with two CPUs or more")
def test_a_plain_inspect_of_a_grown_session_starts_the_tokenizers_copy_before_loading_its_state(
        tmp_path, own_cache, reads, monkeypatch, capsys):
    """Issue 26: ``inspect PATH --json`` of a session that grew starts the copy that builds the tokenizer first
    thing — before the readers are imported and the kept state is loaded — and prints what a read from scratch
    gives; an unchanged session starts none."""
    import json

    from tcompact.commands._inspect_run import plain_options, run_plain

    monkeypatch.setattr(helper, "_RUNNING", {})  # (this test's copies only; reaped when it ends)
    monkeypatch.setattr(tokencache, "GROWN_FROM", 1000)
    at_find = []
    find = growing.find
    monkeypatch.setattr(growing, "find", lambda *a: at_find.append(helper.running("o200k_base") is not None) or find(*a))
    lines = real_file("codemie").read_bytes().splitlines(keepends=True)
    path = tmp_path / "live.jsonl"
    for n in (len(lines) // 2, len(lines) // 2, len(lines)):
        path.write_bytes(b"".join(lines[:n]))
        assert run_plain([str(path), "--json"]) == 0
        shown = json.loads(capsys.readouterr().out)
        assert shown["files"][0] == _scratch(path, plain_options(), monkeypatch)
    assert at_find == [False, False, True] and reads == ["whole", "resumed"]


def test_the_ends_kept_are_evicted_with_the_states(tmp_path, own_cache, monkeypatch):
    """One end is kept per path read: they are held within the states' bounds, the least recently written first."""
    monkeypatch.setattr(growing, "MAX_STATES", 2)
    monkeypatch.setattr(growing, "_EVICT_EVERY", 2)  # (evicted after the 1st, 3rd, 5th state written)
    monkeypatch.setattr(growing, "_writes", 0)
    data = (SAMPLES / "chat_tool_session.jsonl").read_bytes()
    for n in range(5):
        (tmp_path / f"s{n}.jsonl").write_bytes(data + orjson.dumps(msg("user", f"and now {n}")) + b"\n")  # (distinct)
        inspect_file(tmp_path / f"s{n}.jsonl")
    assert len(list((own_cache / growing.FOLDER).glob("*.state"))) == 2
    assert len(list((own_cache / tokencache.ENDS).glob("*.end"))) == 2
    assert [tokencache.grown_by(tmp_path / f"s{n}.jsonl") for n in range(5)] == [0] * 5
