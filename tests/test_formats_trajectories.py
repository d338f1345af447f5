"""formats/trajectories.py: SWE-agent .traj and tau-bench results — shapes, models, usage, episode ids."""

from __future__ import annotations

import orjson
import pytest
from conftest import SESSION, call

from tcompact.errors import InputError
from tcompact.formats import read_bytes, serialize
from tcompact.formats.trajectories import is_swe_agent, is_tau_bench

USER = {"role": "user", "content": "Fix the issue"}
REPLY = {"role": "assistant", "content": "done", "usage": {"prompt_tokens": 5, "completion_tokens": 1}}
CHAT_USAGE = {"source": "chat", "requests": 1, "input_tokens": 5, "output_tokens": 1, "last_context_tokens": 5,
              "last_line": None}
HINT = "fix the file, or pass --format if it is another format"


def read(doc):
    return read_bytes(orjson.dumps(doc), "t.json")


@pytest.mark.parametrize(("value", "swe", "tau"), [
    ({"history": []}, True, False),
    ({"history": "x"}, False, False),
    ({"traj": []}, False, True),
    ([{"traj": []}, {"traj": [], "reward": 1}], False, True),
    ([{"traj": []}, {"messages": []}], False, False),
    ([], False, False),
    ("history", False, False),
])
def test_shapes(value, swe, tau):
    assert (is_swe_agent(value), is_tau_bench(value)) == (swe, tau)


@pytest.mark.parametrize(("extra", "model", "usage"), [
    ({"replay_config": orjson.dumps({"agent": {"model": {"name": "gpt-4o"}}}).decode(),
      "info": {"model_stats": {"tokens_sent": 1200, "tokens_received": 80, "api_calls": 3}}},
     "gpt-4o", {"source": "swe-agent", "requests": 3, "input_tokens": 1200, "output_tokens": 80,
                "last_context_tokens": None}),
    ({"replay_config": {"agent": {"model": {"name": "claude-3-7"}}},  # newer files: an object, not a string
      "info": {"model_stats": "{'tokens_sent': 7, 'tokens_received': 2, 'api_calls': 1}"}},
     "claude-3-7", {"source": "swe-agent", "requests": 1, "input_tokens": 7, "output_tokens": 2,
                    "last_context_tokens": None}),
    # all-zero, unreadable or non-integer stats: the replies' own usage, else none
    ({"info": {"model_stats": {"tokens_sent": 0, "tokens_received": 0}}}, None, CHAT_USAGE),
    ({"info": {"model_stats": "{'tokens_sent': "}, "replay_config": "{not json"}, None, CHAT_USAGE),
    ({"info": {"model_stats": {"tokens_sent": "5", "tokens_received": 1}}, "replay_config": {"agent": {"model": "m"}}},
     None, CHAT_USAGE),
    ({"info": "no stats"}, None, CHAT_USAGE),
])
def test_swe_agent_model_and_usage(extra, model, usage):
    (t,) = read({"history": [USER, REPLY], "trajectory": [], **extra}).transcripts
    assert (t.id, t.kind, [m.text for m in t.messages], t.model, t.provider_usage) == (
        "main", "main", ["Fix the issue", "done"], model, usage)


def test_swe_agent_results_answer_calls_through_a_list_of_ids():
    history = [USER, {"role": "assistant", "content": "", "tool_calls": [call("a", "ls", {}), call("b", "cat", {})]},
               {"role": "tool", "content": "two answers", "tool_call_ids": ["a", "b"]}]
    (t,) = read({"history": history}).transcripts
    assert t.messages[2].tool_call_ids == ("a", "b")


def test_tau_bench_episode_ids_rewards_and_usage():
    episodes = [{"task_id": 3, "trial": 0, "reward": 0.5, "traj": [USER, REPLY]},
                {"traj": [USER]},  # no task id: its position
                {"task_id": "t9", "trial": 2, "reward": "1", "traj": SESSION}]
    sf = read(episodes)
    assert [(t.id, t.kind, len(t.messages), t.notes, t.provider_usage) for t in sf.transcripts] == [
        ("task-3-trial-0", "episode", 2, ("reward 0.5",), CHAT_USAGE), ("task-1", "episode", 1, (), None),
        ("task-t9-trial-2", "episode", 7, (), None)]
    (single,) = read({"task_id": 4, "reward": 1, "traj": [USER]}).transcripts  # one episode object
    assert (single.id, single.notes) == ("task-4", ("reward 1",))


@pytest.mark.parametrize(("doc", "error"), [
    ([{"traj": [USER]}, {"traj": "x"}], f'[1]: "traj" must be a list of messages — {HINT}'),
    ([{"traj": [USER, 3]}], f"[0].traj[1]: expected a message object — {HINT}"),
    ({"history": [USER, {"role": "user", "content": 5}]},
     f'history[1]: "content" must be a string, a list of parts or null, not int — {HINT}'),
    ({"history": [{"role": ""}]}, f'history[0]: "role" must be a non-empty string — {HINT}'),
])
def test_a_bad_item_is_named_by_its_place_in_the_document(doc, error):
    with pytest.raises(InputError) as exc:
        read(doc)
    assert str(exc.value) == f"t.json: {error}"


def test_a_trajectory_is_written_as_chat_lines():
    sf = read({"history": [USER, REPLY]})
    rendered = serialize(sf.transcripts[0], "chat", source=sf)
    assert rendered.data == orjson.dumps(USER) + b"\n" + orjson.dumps(REPLY) + b"\n"
    assert (rendered.losses, rendered.notes) == ((), ())


def _shape(t):
    return [(m.role, m.text[:30], tuple((c.id, c.name, c.arguments) for c in m.tool_calls), m.tool_call_ids)
            for m in t.messages]


def test_an_old_swe_agent_trajectory_reads_as_tool_calls_and_results():
    # SWE-agent before function calling: the assistant's thought and fenced command with `thought` / `action`, the
    # command's output as a user message, no message_type (tests/swe_trajectories.py says the whole shape)
    from swe_trajectories import TASK, old_trajectory

    (t,) = read(old_trajectory(steps=2)).transcripts
    out = "0:0: def field_0(self, value, "
    assert _shape(t) == [
        ("system", "SETTING: You are an autonomous", (), ()),
        ("user", TASK[:30], (), ()),
        ("assistant", "Let me find the file that seri", (("swe-step-2", "find_file",
                                                         '{"command":"find_file fields.py src"}'),), ()),
        ("tool", out, (), ("swe-step-2",)),
        ("assistant", "Open it near the TimeDelta fie", (("swe-step-4", "open",
                                                         '{"command":"open src/marshmallow/fields.py 1474"}'),), ()),
        ("tool", out.replace("0:0", "1:0"), (), ("swe-step-4",)),
        ("assistant", "Done: the rounding is fixed.", (("swe-step-6", "submit", '{"command":"submit"}'),), ()),
        ("tool", "diff --git a/src/marshmallow/f", (), ("swe-step-6",)),
    ]
    # the command is the call's, no more the text's: the thought alone is the assistant's text
    assert t.messages[2].text == "Let me find the file that serializes TimeDelta."
    from tcompact.model import index_tool_calls
    from tcompact.rounds import is_real_user

    tools = index_tool_calls(t.messages)
    assert (len(tools.links), tools.orphan_results, tools.unanswered) == (3, (), ())
    assert [i for i, m in enumerate(t.messages) if is_real_user(m)] == [1]


def test_a_trajectory_without_a_history_reads_its_steps():
    from swe_trajectories import old_trajectory

    doc = old_trajectory(steps=1)
    del doc["history"]
    (t,) = read(doc).transcripts
    assert [(m.role, len(m.tool_calls), m.tool_call_ids) for m in t.messages] == [
        ("assistant", 1, ()), ("tool", 0, ("swe-step-0",)), ("assistant", 1, ()), ("tool", 0, ("swe-step-2",))]
    assert t.provider_usage["input_tokens"] == 52000


def test_a_function_calling_trajectory_is_read_as_it_was():
    # an assistant message with tool_calls keeps them, whatever its action key says; an observation that answers
    # a real tool call stays a tool message
    history = [USER, {"role": "assistant", "content": "look", "action": "ls", "tool_calls": [call("a", "bash", {})],
                      "message_type": "action"},
               {"role": "tool", "content": "x.py", "tool_call_ids": ["a"], "message_type": "observation"},
               {"role": "user", "content": "go on", "message_type": "user"}]
    (t,) = read({"history": history}).transcripts
    assert _shape(t) == [("user", "Fix the issue", (), ()), ("assistant", "look", (("a", "bash", "{}"),), ()),
                         ("tool", "x.py", (), ("a",)), ("user", "go on", (), ())]
