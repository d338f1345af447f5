"""tcompact eval's canaries, plans and editors on their own: the same seed draws the same texts, every value
is plain and carries its token, each kind goes where it belongs, too few places are reused, and planting a
generated chat session or an invented SWE-agent trajectory keeps it well-formed with every canary in it."""

from __future__ import annotations

import random

import orjson
import pytest
from generated_sessions import chat_bytes, sessions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_evaluation import _one_step, check_well_formed

from tcompact.evaluation.canary_eval import _digest
from tcompact.evaluation.canaries import KINDS, draw
from tcompact.evaluation.editors import plant_records
from tcompact.evaluation.planting import plan
from tcompact.evaluation.scoring import seen_texts, survivors
from tcompact.formats import ReadOptions, read_bytes
from tcompact.model import Message, ToolCall


def test_the_same_seed_draws_the_same_canaries():
    rng = random.Random(7)
    got = [(c.id, c.values, c.exit_code, c.token) for c in (draw(rng, kind, 1, taken="") for kind in KINDS)]
    assert got == [
        ("error_line-1", ("fatal: unable to access 'https://git.example.com/m9epxb.git/': Could not resolve host",),
         0, "m9epxb"),
        ("file_written-1", ("src/vb8tgb/__init__.py",), 0, "vb8tgb"),
        ("command-1", ("python scripts/reindex.py --shard hcuqb5", "reindexed 9364 documents into shard hcuqb5"), 0,
         "hcuqb5"),
        ("user_constraint-1", ("Keep the public function load_u6ekqe() backwards compatible.",), 0, "u6ekqe"),
        ("user_preference-1", ("I like short commit messages prefixed with [u5yfdv].",), 0, "u5yfdv"),
        ("decision-1", ("I decided to keep the 3mrv8r_v2 endpoint and deprecate the old one rather than remove "
                        "it.",), 0, "3mrv8r"),
        ("early_fact-1", ("The license server for z3hcvk answers on port 73 of lic-z3hcvk.example.org.",), 0,
         "z3hcvk")]


@settings(max_examples=200, deadline=None, database=None)
@given(st.integers(min_value=0, max_value=2**32), st.sampled_from(KINDS), st.integers(min_value=1, max_value=20))
def test_every_value_is_plain_ascii_and_carries_its_fresh_token(seed, kind, number):
    taken = "session text with abc234 in it"
    c = draw(random.Random(seed), kind, number, taken=taken)
    assert c.id == f"{kind}-{number}" and c.kind == kind
    assert len(c.token) == 6 and c.token not in taken
    assert any(ch.isdigit() for ch in c.token) and any(ch.isalpha() for ch in c.token)
    assert all(v.isascii() and '"' not in v and "\\" not in v and c.token in v for v in c.values)
    if kind == "command":
        assert c.values == (c.command, c.text) and c.exit_code in (0, 1, 2)
    elif kind == "file_written":
        assert c.text == f"# {c.token}\nwritten for the {c.token} task\n"
    else:
        assert c.values == (c.text,) and c.exit_code == 0


def _call(cid, name, args):
    return Message(role="assistant", tool_calls=(ToolCall(cid, name, orjson.dumps(args).decode()),))


def _messages():
    return [Message(role="system", content="sys"),
            Message(role="user", content="Fix the parser."),  # 1
            Message(role="assistant", content="Looking at it."),  # 2
            _call("a", "Bash", {"command": "pytest"}),  # 3
            Message(role="tool", content="line 1\nline 2\nline 3", tool_call_ids=("a",)),  # 4
            _call("t", "TodoWrite", {"todos": []}),  # 5
            Message(role="tool", content="todo 1\ntodo 2\ntodo 3", tool_call_ids=("t",)),  # 6: a plan update
            Message(role="assistant", content="Fixed it."),  # 7
            Message(role="user", content="<system-reminder>x</system-reminder>"),  # 8: harness
            Message(role="user", content="<command-name>/review</command-name><command-args>a.py</command-args>"),
            Message(role="assistant", content="Reviewed."),  # 10
            _call("b", "Bash", {"command": "ls"}),  # 11
            Message(role="tool", content="one line", tool_call_ids=("b",)),  # 12
            Message(role="assistant", content="All done.")]  # 13


def test_each_kind_goes_where_it_belongs():
    layout = plan(_messages(), random.Random(3), per_kind=1, taken="")
    where = {e.canary.kind: (e.message, e.mode) for e in layout.edits}
    steps = {s.canary.kind: (s.after, s.action, s.call_id) for s in layout.steps}
    assert where["error_line"] == (4, "line")  # the one output of several lines that is no plan update
    assert where["early_fact"] == (2, "append")  # the first quarter of the assistant texts
    assert where["user_constraint"][0] in (1, 9) and where["user_preference"][0] in (1, 9)  # never the reminder
    assert where["decision"][0] in (7, 10, 13)
    token = next(c.token for c in layout.canaries if c.kind == "command")
    assert steps["command"][1:] == ("shell", f"call_eval_{token}") and steps["file_written"][1] == "write"
    hosts = plan(_messages(), random.Random(3), per_kind=9, taken="").steps
    assert {s.after for s in hosts} == {4, 6, 12}  # each result followed by an assistant message, none else
    assert layout.skipped == () and [c.kind for c in layout.canaries] == list(KINDS)
    at = next(e.at for e in layout.edits if e.mode == "line")
    assert 0.25 <= at <= 0.75


def test_too_few_places_are_reused_and_missing_ones_skip_the_kind():
    chat = [Message(role="user", content="Book a table."), Message(role="assistant", content="Booked for 8pm.")]
    layout = plan(chat, random.Random(1), per_kind=3, taken="")
    assert layout.skipped == ("error_line", "file_written", "command")
    assert [e.message for e in layout.edits if e.canary.kind == "user_constraint"] == [0, 0, 0]
    assert len({c.token for c in layout.canaries}) == len(layout.canaries) == 12  # every token fresh
    many = plan(_messages(), random.Random(1), per_kind=2, taken="")
    users = [e.message for e in many.edits if e.canary.kind == "user_constraint"]
    assert sorted(users) == [1, 9]  # distinct while there are enough


def test_steps_follow_an_answer_when_no_result_is_followed_by_one():
    chat = [Message(role="user", content="a"), Message(role="assistant", content="b"),
            Message(role="user", content="c"), Message(role="assistant", content="d")]
    layout = plan(chat, random.Random(2), per_kind=2, taken="")
    assert sorted({s.after for s in layout.steps}) == [1]  # the answer before the next real request


@settings(max_examples=25, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sessions(), st.integers(min_value=0, max_value=1000), st.integers(min_value=1, max_value=4))
def test_planting_a_generated_session_keeps_it_well_formed_with_every_canary(messages, seed, per_kind):
    source = read_bytes(chat_bytes(messages), "generated.jsonl", ReadOptions(keep_raw=True))
    transcript = source.transcript()
    rng = random.Random(f"{seed}:{_digest(source)}")
    layout = plan(transcript.messages, rng, per_kind=per_kind, taken="\n".join(seen_texts(transcript.messages)))
    copy = read_bytes(plant_records(source, transcript, layout), "planted.jsonl", ReadOptions(format="chat"))
    check_well_formed(source, transcript, layout, copy)
    assert survivors(layout.canaries, seen_texts(copy.transcript().messages)) == {c.id for c in layout.canaries}


def _trajectory():
    """An invented SWE-agent trajectory: its messages carry ``agent`` and ``message_type``, its tool
    messages a ``tool_call_ids`` list."""
    def step(cid, command, output):
        return [{"role": "assistant", "content": f"Run {command}.", "agent": "main", "message_type": "action",
                 "tool_calls": [{"id": cid, "type": "function", "function": {
                     "name": "bash", "arguments": orjson.dumps({"command": command}).decode()}}]},
                {"role": "tool", "content": output, "agent": "main", "message_type": "observation",
                 "tool_call_ids": [cid]}]

    history = [{"role": "system", "content": "You are an autonomous programmer.", "agent": "main",
                "message_type": "system_prompt"},
               {"role": "user", "content": "Fix issue 42: the parser drops the last field.", "agent": "main",
                "message_type": "observation"},
               *step("c1", "ls -F", "setup.py\nsrc/\ntests/"), *step("c2", "python reproduce.py", "['a', 'b']\n"),
               {"role": "assistant", "content": "The last field is dropped by a slice.", "agent": "main",
                "message_type": "action", "tool_calls": [{"id": "c3", "type": "function", "function": {
                    "name": "submit", "arguments": "{}"}}]},
               {"role": "tool", "content": "diff --git a/src/p.py b/src/p.py", "agent": "main",
                "message_type": "observation", "tool_call_ids": ["c3"]}]
    return orjson.dumps({"trajectory": [], "history": history, "info": {"exit_status": "submitted"}})


def test_a_swe_agent_step_follows_the_trajectorys_own_keys_without_shared_files():
    source = read_bytes(_trajectory(), "issue42.traj", ReadOptions(keep_raw=True))
    assert source.format == "swe-agent"
    copy = _one_step(source, source.transcript(), "shell")
    history = copy.records[0].data["history"]
    call = next(h for h in history if h.get("tool_calls") and h["tool_calls"][0]["id"] == "call_eval_t0ken1")
    assert history.index(call) == 4  # right after the first result
    assert (call["agent"], call["message_type"], call["tool_calls"][0]["function"]) == (
        "main", "action", {"name": "bash", "arguments": '{"command":"make t0ken1"}'})
    assert history[5] == {"role": "tool", "content": "Exit code 2\ndone t0ken1", "tool_call_ids": ["call_eval_t0ken1"],
                          "agent": "main", "message_type": "observation"}
    write = _one_step(source, source.transcript(), "write")
    (created,) = [h for h in write.records[0].data["history"] if h.get("tool_calls")
                  and h["tool_calls"][0]["id"] == "call_eval_t0ken1"]
    assert created["tool_calls"][0]["function"] == {"name": "write_file", "arguments": orjson.dumps(
        {"path": "docs/n_t0ken1.md", "content": "# t0ken1\n"}).decode()}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_planting_an_invented_trajectory_keeps_it_well_formed(seed):
    source = read_bytes(_trajectory(), "issue42.traj", ReadOptions(keep_raw=True))
    transcript = source.transcript()
    rng = random.Random(f"{seed}:{_digest(source)}:{transcript.id}")
    layout = plan(transcript.messages, rng, per_kind=2, taken="\n".join(seen_texts(transcript.messages)))
    copy = read_bytes(plant_records(source, transcript, layout), "planted.traj", ReadOptions(format="swe-agent"))
    check_well_formed(source, transcript, layout, copy)
    assert copy.records[0].data["info"] == {"exit_status": "submitted"}  # the rest of the document as it was
