"""The needed-token recall's parts: what a token is, the cut points, the needed tokens (first seen in a tool
result, used within the next 40 calls, not shown again), the spread of cuts, the baselines and the session
as it stood at a cut."""

from __future__ import annotations

import orjson
from conftest import SAMPLES
from needed_sessions import SETTINGS, claude_session

from tcompact.evaluation.baselines import head_tail, keep_tail
from tcompact.evaluation.needed import (CALLS_AHEAD, SessionIndex, action_points, call_tokens, choose_cuts, token_kind,
                                        tokens_of)
from tcompact.evaluation.prefix import prefix_source
from tcompact.formats import ReadOptions, read_file
from tcompact.model import Message, ToolCall

SWE_FIXTURE = SAMPLES.parent / "tests" / "fixtures" / "swe_agent_small.traj"


def test_tokens_are_paths_identifiers_urls_and_numbers_of_eight_characters_not_words():
    text = ("Traceback (most recent call last): connection refused in src/app/settings_loader.py, see "
            "https://example.com/docs/errors?id=7. Calls parse_config() and HttpClient.fetch; this.getUserPrompts "
            "and .dataPaths; id 019b7f04-0b04 at 12345678 (not 1234567). read-only RFC-compliant IMPORTANT "
            "--no-verify --max-count=20 ../../.. ~/.codex/config.toml .gitignore .eslintrc.json config.py.")
    assert tokens_of(text) == {"src/app/settings_loader.py", "https://example.com/docs/errors?id=7", "parse_config",
                               "HttpClient.fetch", "this.getUserPrompts", "dataPaths", "019b7f04-0b04", "12345678",
                               "~/.codex/config.toml", "eslintrc.json", "config.py"}


def test_token_kinds():
    assert [token_kind(t) for t in ("https://a.example/x", "src/app.py", "12345678", "2026-01-05", "parse_config",
                                    "README.md")] == ["url", "path", "number", "number", "identifier", "identifier"]


def test_call_arguments_are_read_as_json_strings_or_as_raw_input():
    edit = ToolCall("t1", "Edit", orjson.dumps({"old_string": "x = 1\nreturn load_settings()", "limit": 12345678,
                                                "paths": ["src/app/one.py", {"more": "lib/two_file.rs"}]}).decode())
    assert call_tokens(edit) == {"load_settings", "src/app/one.py", "lib/two_file.rs"}  # not "nreturn", no number
    patch = ToolCall("c3", "apply_patch", "*** Update File: lib/net/retry_policy.rs\n-MAX_RETRY_LIMIT", "custom")
    assert call_tokens(patch) == {"lib/net/retry_policy.rs", "MAX_RETRY_LIMIT"}


def _call(cid, name="Bash", args=None, kind="function"):
    return ToolCall(cid, name, orjson.dumps(args or {}).decode(), kind)


def test_cut_points_are_calls_before_which_every_call_is_answered():
    messages = [Message("user", "go"),
                Message("assistant", tool_calls=(_call("a"), _call("b"))),  # no tool result before: no cut
                Message("tool", "one", tool_call_ids=("a",)),
                Message("assistant", tool_calls=(_call("c"),)),  # "b" is still open
                Message("tool", "two", tool_call_ids=("b",)),
                Message("tool", "three", tool_call_ids=("c",)),
                Message("assistant", tool_calls=(_call("w", "web_search", kind="server"),)),  # a cut
                Message("assistant", tool_calls=(_call("d"),)),  # the server call has no result and is not waited for
                Message("tool", "four", tool_call_ids=("d",)),
                Message("assistant", "done")]
    assert action_points(messages) == [6, 7]


def test_needed_tokens_of_the_claude_session(tmp_path):
    messages = read_file(claude_session(tmp_path / "s.jsonl")).transcript().messages
    index = SessionIndex(messages)
    assert action_points(messages) == [3, 5, 7, 9]
    found = {c: [(n.token, n.source, n.source_tool, n.use, n.call, n.tool) for n in index.needed_at(c)]
             for c in (3, 5, 7, 9)}
    assert found == {
        3: [("src/app/settings_loader.py", 2, "Glob", 3, 1, "Read")],
        # the loader's path is shown again by grep's result (6) before the Edit (7) uses it: not needed at 5
        5: [("parse_yaml_file", 4, "Read", 5, 1, "Bash"), ("load_settings", 4, "Read", 7, 2, "Edit"),
            ("45000000", 4, "Read", 9, 3, "Bash"), ("DEFAULT_TIMEOUT_MS", 4, "Read", 9, 3, "Bash")],
        7: [("load_settings", 4, "Read", 7, 1, "Edit"), ("src/app/settings_loader.py", 2, "Glob", 7, 1, "Edit"),
            ("45000000", 4, "Read", 9, 2, "Bash"), ("DEFAULT_TIMEOUT_MS", 4, "Read", 9, 2, "Bash")],
        9: [("45000000", 4, "Read", 9, 1, "Bash"), ("DEFAULT_TIMEOUT_MS", 4, "Read", 9, 1, "Bash")]}
    # read_settings first appears in the agent's own Edit: never needed; parse_yaml_file is not needed at 3,
    # where the file holding it was not read yet


def test_a_token_the_user_or_the_agent_said_first_is_not_needed():
    messages = [Message("user", "Look at src/billing/invoice_totals.py please"),
                Message("assistant", tool_calls=(_call("a", args={"command": "ls src/billing"}),)),
                Message("tool", "src/billing/invoice_totals.py\nsrc/billing/tax_rules.py", tool_call_ids=("a",)),
                Message("assistant", tool_calls=(_call("b", "Read", {"file_path": "src/billing/invoice_totals.py"}),
                                                 _call("c", "Read", {"file_path": "src/billing/tax_rules.py"})))]
    assert [n.token for n in SessionIndex(messages).needed_at(3)] == ["src/billing/tax_rules.py"]


def test_only_the_next_calls_count():
    listing = Message("tool", "lib/far_away_module.rs", tool_call_ids=("a",))
    filler = [Message("assistant", tool_calls=(_call(f"f{n}", args={"command": "true"}),)) for n in range(CALLS_AHEAD)]
    answers = [Message("tool", "ok", tool_call_ids=(f"f{n}",)) for n in range(CALLS_AHEAD)]
    steps = [m for pair in zip(filler, answers) for m in pair]
    late = Message("assistant", tool_calls=(_call("z", "Read", {"file_path": "lib/far_away_module.rs"}),))
    messages = [Message("assistant", tool_calls=(_call("a"),)), listing, *steps, late]
    index = SessionIndex(messages)
    assert index.needed_at(2) == []  # the use is call 41 from the cut
    assert [n.call for n in index.needed_at(4)] == [CALLS_AHEAD]  # one call later, it is call 40


def test_the_cuts_are_spread_over_the_eligible_points():
    assert choose_cuts([3, 5, 7], 4) == [3, 5, 7]
    assert choose_cuts(list(range(10)), 4) == [1, 3, 6, 8]
    assert choose_cuts([3, 5, 7, 9], 2) == [5, 9]
    assert choose_cuts(list(range(100)), 1) == [50]


def test_keep_tail_keeps_system_developer_the_last_request_and_twenty_messages():
    messages = [Message("system", "s"), Message("developer", "d"), Message("user", "the real request")]
    messages += [Message("assistant" if n % 2 else "user", f"m{n}", internal=not n % 2) for n in range(30)]
    kept = keep_tail(messages)
    assert [m.text for m in kept] == ["s", "d", "the real request", *(f"m{n}" for n in range(10, 30))]
    assert keep_tail(messages[:15]) == tuple(messages[:15])


def test_head_tail_cuts_long_tool_results_to_500_characters_each_end():
    long = "a" * 500 + "MIDDLE" + "z" * 500
    messages = [Message("user", long), Message("tool", long, tool_call_ids=("x",)),
                Message("tool", "b" * 1000, tool_call_ids=("y",)),
                Message("tool", ({"type": "text", "text": long}, {"type": "image", "source": "…"}),
                        tool_call_ids=("z",))]
    out = head_tail(messages)
    assert out[0] is messages[0] and out[2] is messages[2]  # not a tool result; not longer than 1,000
    assert out[1].text == "a" * 500 + "\n[...]\n" + "z" * 500
    assert out[3].content == ({"type": "text", "text": "a" * 500 + "\n[...]\n" + "z" * 500},
                              {"type": "image", "source": "…"})


def test_the_session_at_a_cut_is_the_file_as_it_stood_then(tmp_path):
    path = claude_session(tmp_path / "s.jsonl")
    source = read_file(path, ReadOptions(keep_raw=True))
    transcript = source.transcript()
    prefix = prefix_source(source, transcript, cut=5, read=ReadOptions())
    assert b"".join(r.raw for r in prefix.records) == b"".join(path.read_bytes().splitlines(keepends=True)[:5])
    assert prefix.path == source.path and prefix.format == "claude-code"
    assert [m.text for m in prefix.transcript().messages][-1] == SETTINGS
    swe = read_file(SWE_FIXTURE, ReadOptions(keep_raw=True))
    cut = read_file(SWE_FIXTURE).transcript().messages
    part = prefix_source(swe, swe.transcript(), cut=6, read=ReadOptions())
    assert part.format == "swe-agent" and len(part.records[0].data["history"]) == 6
    assert [m.text for m in part.transcript().messages] == [m.text for m in cut[:6]]
