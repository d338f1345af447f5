"""Every reader on the real third-party sessions in ../shared/transcripts (skipped, visibly, without them).

Expected figures are checked two ways: counted straight from the raw JSON here (tool uses,
error results, provider usage with its de-duplication), and pinned as exact values so any
change in reading or counting shows up. The checks that hold for any session also run on the
invented sessions of sample_transcripts/, so a clone without ../shared still runs them.
"""

from __future__ import annotations

import orjson
import pytest
from conftest import SAMPLES, call, real_file

from tcompact.formats import ReadOptions, read_file, serialize
from tcompact.inspection import InspectOptions, inspect_file, inspect_source
from tcompact.model import index_tool_calls

# key: (format, [(transcript id, kind, messages, tool calls, tokens)])
EXPECTED = {
    "ccviewer": ("claude-code", [("main", "main", 25, 13, 6186), ("sidechain-6340ddef", "subagent", 6, 2, 866),
                                 ("sidechain-83e2917c", "subagent", 14, 6, 6219)]),
    "codemie": ("claude-code", [("main", "main", 156, 76, 99069)]),
    "drmaciver": ("claude-code", [("main", "main", 80, 39, 14384)]),
    "codex": ("codex", [("main", "main", 62, 38, 134099)]),
    "sweagent": ("swe-agent", [("main", "main", 28, 13, 8022)]),
}


SAMPLE_FILES = {"sample-chat": "chat_tool_session.jsonl", "sample-claude": "claude_code_session.jsonl",
                "sample-codex": "codex_rollout.jsonl"}


def path_of(key):
    """A sample of the repository, or a real file (skipped without ../shared)."""
    return SAMPLES / SAMPLE_FILES[key] if key in SAMPLE_FILES else real_file(key)


def raw_lines(key):
    return [orjson.loads(line) for line in path_of(key).read_bytes().splitlines() if line.strip()]


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_reader_figures(key):
    fmt, transcripts = EXPECTED[key]
    report = inspect_file(real_file(key))
    assert report["format"] == fmt
    got = [(t["id"], t["kind"], t["messages"], t["tool_calls"], t["tokens"]["total"]) for t in report["transcripts"]]
    assert got == transcripts
    for t in report["transcripts"]:
        assert sum(t["tokens"]["by_kind"].values()) == t["tokens"]["total"]
        assert sum(t["tokens"]["by_role"].values()) == t["tokens"]["total"]
        assert t["orphans"] == {"tool_results": 0, "unanswered_calls": 0}
        assert sum(r["tokens"] for r in t["rounds"]) == t["tokens"]["total"]
    assert report["skipped_lines"] == [] and report["unknown_records"] == {}


@pytest.mark.parametrize("key", ["sample-claude", "ccviewer", "codemie", "drmaciver"])
def test_claude_tool_calls_and_errors_match_the_raw_blocks(key):
    uses, errors = {}, 0
    for d in raw_lines(key):
        content = (d.get("message") or {}).get("content")
        if d.get("isSidechain") or not isinstance(content, list):
            continue
        for block in content:
            if block.get("type") == "tool_use":
                uses[block["id"]] = block["name"]
            if block.get("type") == "tool_result" and block.get("is_error") is True:
                errors += 1
    (main, *_) = read_file(path_of(key), ReadOptions(full_history=True)).transcripts  # the sample has a compaction
    assert sorted(c.id for m in main.messages for c in m.tool_calls) == sorted(uses)
    assert sum(m.is_error for m in main.messages) == errors
    assert len(index_tool_calls(main.messages).links) == len(uses)


@pytest.mark.parametrize("key", ["sample-claude", "ccviewer", "codemie", "drmaciver"])
def test_claude_provider_usage_equals_a_naive_last_line_dedupe(key):
    last = {}
    for d in raw_lines(key):
        if d.get("type") == "assistant" and not d.get("isSidechain") and "usage" in d["message"]:
            last[(d["message"]["id"], d.get("requestId"))] = d["message"]["usage"]
    (main, *_) = read_file(path_of(key)).transcripts
    u = main.provider_usage
    assert u["requests"] == len(last)
    for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"):
        assert u[k] == sum(x.get(k, 0) for x in last.values())


def test_claude_usage_figures_pinned():
    (main, side1, side2) = read_file(real_file("ccviewer")).transcripts
    assert main.provider_usage == {"source": "claude-code", "requests": 10, "lines": 16, "input_tokens": 64,
                                   "cache_read_input_tokens": 190261, "cache_creation_input_tokens": 26074,
                                   "output_tokens": 2003, "last_context_tokens": 26080, "last_line": 53}
    assert (side1.parent_tool_call, side2.parent_tool_call) == ("toolu_014YF9TXhDRR7BnpasNJ7gjC",
                                                                "toolu_01LKfUwrsnof18CpWZQcJH44")
    # codemie's assistant lines carry no requestId (Bedrock ids): message.id alone identifies a reply
    (main,) = read_file(real_file("codemie")).transcripts
    assert (main.provider_usage["requests"], main.provider_usage["lines"], main.provider_usage["output_tokens"]) == (
        67, 172, 34781)


def test_codex_desktop_rollout():
    records = raw_lines("codex")
    (t,) = read_file(real_file("codex")).transcripts
    calls = [r["payload"]["call_id"] for r in records if r["payload"].get("type") == "function_call"]
    assert [c.id for m in t.messages for c in m.tool_calls] == calls
    users = [r["payload"]["message"] for r in records if r["payload"].get("type") == "user_message"]
    assert [m.text for m in t.messages if m.role == "user"] == users  # user turns exist only as events here
    assert t.provider_usage is None  # no token_count events: "none recorded", not zero
    enc = [r["payload"]["encrypted_content"] for r in records if r["payload"].get("type") == "reasoning"]
    assert sum(r.encrypted_chars for m in t.messages for r in m.reasoning) == sum(map(len, enc))
    assert t.messages[0].role == "system" and t.messages[0].text.startswith("You are Codex")


def test_swe_agent_pairs_reused_call_ids_with_the_nearest_call():
    (t,) = read_file(real_file("sweagent")).transcripts
    links = index_tool_calls(t.messages).links
    assert len(links) == 13
    assert all(link.result_at == link.call_at + 1 for link in links)


def test_swe_agent_ids_reused_across_turns_pair_with_the_nearest_call(tmp_path):
    # a replayed demonstration answers the same call id in several turns, as the real file above does
    turn = [{"role": "assistant", "content": "", "tool_calls": [call("call_demo", "bash", {"command": "ls"})]},
            {"role": "tool", "content": "setup.py", "tool_call_ids": ["call_demo"]}]
    path = tmp_path / "demo.traj"
    path.write_bytes(orjson.dumps({"history": [{"role": "user", "content": "Solve it"}, *turn * 3], "trajectory": []}))
    (t,) = read_file(path).transcripts
    assert [(link.call_at, link.result_at) for link in index_tool_calls(t.messages).links] == [(1, 2), (3, 4), (5, 6)]


@pytest.mark.parametrize("key", [*SAMPLE_FILES, "ccviewer", "codemie", "drmaciver", "codex"])
def test_write_back_is_byte_identical(key):
    path = path_of(key)
    source = read_file(path)
    fmt = source.format
    for t in source.transcripts:
        assert serialize(t, fmt, source=source).data == path.read_bytes()


@pytest.mark.parametrize("key", [*SAMPLE_FILES, *sorted(EXPECTED)])
@pytest.mark.parametrize("target", ["chat", "claude-code", "codex"])
def test_conversions_keep_messages_pairs_and_tokens(key, target, tmp_path):
    source = read_file(path_of(key))
    for t in source.transcripts:
        out = tmp_path / f"{t.id}.{target}.jsonl"
        rendered = serialize(t, target, source=source, now="2026-01-01T00:00:00.000Z")
        out.write_bytes(rendered.data)
        again = read_file(out)
        same = target == source.format  # the whole file comes back, every transcript in it
        (back,) = [x for x in again.transcripts if x.id == t.id or (not same and x.kind == "main")]
        dropped = len(rendered.losses)
        assert len(back.messages) == len(t.messages) - dropped
        assert index_tool_calls(back.messages).orphan_results == ()
        assert index_tool_calls(back.messages).unanswered == ()
        before = inspect_source(source, InspectOptions())["transcripts"][source.transcripts.index(t)]
        after = inspect_source(again, InspectOptions(model=t.model))["transcripts"][again.transcripts.index(back)]
        assert after["tool_calls"] == before["tool_calls"]
        if not rendered.losses:
            # only opaque encrypted reasoning cannot leave a Codex file
            opaque = before["tokens"]["estimated"] if source.format == "codex" and not same else 0
            assert after["tokens"]["total"] == before["tokens"]["total"] - opaque


@pytest.mark.parametrize("key", ["sample-chat", "sample-codex", "ccviewer", "codemie", "drmaciver", "codex"])
def test_full_history_changes_nothing_without_compactions(key):
    plain = read_file(path_of(key))
    full = read_file(path_of(key), ReadOptions(full_history=True))
    assert [t.messages for t in plain.transcripts] == [t.messages for t in full.transcripts]
