"""Real user requests and rounds (rounds.py): hook feedback, slash commands without arguments, continuation
boilerplate, reminders and local-command output are harness text; rounds partition a transcript at the real
requests; the memory-block markers are declared once and listed as compactions."""

from __future__ import annotations

import pytest
from conftest import calls as A
from conftest import result as T
from conftest import user as U
from hypothesis import given, settings
from hypothesis import strategies as st

from tcompact import markers
from tcompact.compressors.round_level.targets import ACK
from tcompact.model import Compaction, Message
from tcompact.rounds import (
    INJECTED_PREFIXES,
    OPENJIUWEN_INTERNAL_PREFIXES,
    is_internal_text,
    is_real_user,
    last_real_user_index,
    memory_blocks,
    split_rounds,
)
from tcompact.summarizers.extractive.blocks.memory import ACK as BLOCKS_ACK
from tcompact.summarizers.extractive.blocks.memory import MARKER


@pytest.mark.parametrize("text", [
    "Stop hook feedback:\n[${CLAUDE_PLUGIN_ROOT}/scripts/hooks/stop.sh]: # Running Quality Checks...",
    "SubagentStop hook feedback:\nno",
    "<command-name>/clear</command-name>\n            <command-message>clear</command-message>\n"
    "            <command-args></command-args>",
    "Please continue the conversation from where we left it off without asking the user any further questions.",
    "This session is being continued from a previous conversation that ran out of context.",
    "<system-reminder>x</system-reminder>",
    "<local-command-stdout></local-command-stdout>",
    "<bash-stdout>ok</bash-stdout><bash-stderr></bash-stderr>",
    "[Request interrupted by user for tool use]",
    "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>",
    "[ROUND_LEVEL_MEMORY_BLOCK]\nprocessor: RoundLevelCompressor",
])
def test_harness_text_is_not_a_request(text):
    assert is_internal_text(text) and not is_real_user(Message(role="user", content=text))


@pytest.mark.parametrize("text", [
    "<command-message>orchestrator is running…</command-message>\n<command-name>/orchestrator</command-name>\n"
    "<command-args>@CLAUDE.md を最新の状態にアップデートしてください</command-args>",
    "<command-message>bmad:bmm:workflows:create-tech-spec</command-message>\n"
    "<command-name>/bmad:bmm:workflows:create-tech-spec</command-name>",  # a prompt command: its prompt follows
    "Fix the stop hook feedback parser.",
    "please continue",
])
def test_the_users_own_words_are_requests(text):
    assert is_real_user(Message(role="user", content=text))


def test_rounds_start_at_real_requests_only():
    msgs = [Message(role="user", content="<command-name>/clear</command-name><command-args></command-args>"),
            Message(role="user", content="do it"), Message(role="assistant", content="done"),
            Message(role="user", content="Stop hook feedback:\nunstaged changes"), Message(role="assistant", content="ok")]
    assert [(r.number, r.start, r.end) for r in split_rounds(msgs)] == [(0, 0, 1), (1, 1, 5)]


def test_the_markers_live_once():
    assert ACK == BLOCKS_ACK == markers.ROUND_LEVEL_ACK
    assert MARKER == markers.ROUND_LEVEL_MARKER == "[ROUND_LEVEL_MEMORY_BLOCK]"
    assert all(m in INJECTED_PREFIXES for m in markers.LEGACY_MARKERS)
    assert markers.is_checkpoint_text("  <memory_block_dialogue>\n") and not markers.is_checkpoint_text("hello")
    found = memory_blocks([Message(role="user", content="<memory_block_current>\nx"),
                           Message(role="user", content="[DIALOGUE_MEMORY_BLOCK] y"),
                           Message(role="user", content="plain")])
    assert [(b.kind, b.index) for b in found] == [("memory_block_current", 0), ("dialogue_memory_block", 1)]


# ---- real users and rounds -----------------------------------------------------------------------


@pytest.mark.parametrize("prefix", INJECTED_PREFIXES)
def test_every_injected_prefix_makes_harness_text_after_leading_blanks_only(prefix):
    assert is_internal_text(f"{prefix} something") and is_internal_text(f"  \n\t{prefix} something")
    assert not is_real_user(U(f"  \n{prefix} something"))
    assert is_real_user(U(f"Why does the log say {prefix}?"))  # quoted inside the user's own words


def test_the_openjiuwen_prefixes_are_among_the_injected_ones():
    assert set(OPENJIUWEN_INTERNAL_PREFIXES) <= set(INJECTED_PREFIXES)
    assert OPENJIUWEN_INTERNAL_PREFIXES[:2] == ("<system-reminder>", "<memory_block_current>")


def test_real_users_include_channel_wrapped_text_and_part_lists():
    assert is_real_user(U('你收到一条消息： {"type": "user input", "content": "hi"}'))
    assert is_real_user(Message(role="user", content=({"type": "text", "text": "look at this"},)))
    assert not is_real_user(Message(role="user", content=({"type": "text", "text": "<system-reminder>x"},)))
    assert not is_real_user(U("typed", internal=True))
    assert not is_real_user(Message(role="assistant", content="task"))
    assert len(INJECTED_PREFIXES) == len(set(INJECTED_PREFIXES))


def test_split_rounds_with_preamble():
    msgs = [Message(role="system", content="sys"), U("<environment_context>x"), U("first"), A("c1"), T("c1"),
            A(text="done"), U("<system-reminder>r"), U("second"), A(text="ok")]
    got = [(r.number, r.start, r.end, r.request) for r in split_rounds(msgs)]
    assert got == [(0, 0, 2, None), (1, 2, 7, 2), (2, 7, 9, 7)]


def test_split_rounds_without_any_request_is_one_preamble():
    assert [(r.number, r.start, r.end, r.request) for r in split_rounds([A(text="x")])] == [(0, 0, 1, None)]
    assert split_rounds([]) == []


@pytest.mark.parametrize(("text", "internal"), [
    ("<command-name>/compact</command-name><command-args>   \n </command-args>", True),  # blank arguments
    ("  <command-message>review</command-message><command-name>/review</command-name>", False),  # a prompt command
    ("<command-name>/model</command-name>\n<command-message>model</command-message>", True),  # no arguments tag
    ("<command-name>/review</command-name><command-args>the parser\nchanges</command-args>", False),
    ("Run <command-name>/clear</command-name> for me", False),  # a slash command named inside a request
    ("", False),
    ("   ", False),
])
def test_local_slash_commands_are_harness_text_unless_they_carry_arguments(text, internal):
    assert is_internal_text(text) is internal


@pytest.mark.parametrize(("message", "real"), [
    (Message(role="user", content=({"type": "text", "text": "the parser is slow"},
                                   {"type": "text", "text": "<system-reminder>x</system-reminder>"})), True),
    # the image part is no text: what follows it opens the message's text
    (Message(role="user", content=({"type": "image_url", "image_url": {"url": "https://x.invalid/a.png"}},
                                   {"type": "text", "text": "<system-reminder>x</system-reminder>"})), False),
    (Message(role="user", content=({"type": "image_url", "image_url": {"url": "https://x.invalid/a.png"}},)), True),
    (Message(role="user", content=None), True),
    (Message(role="system", content="do it"), False),
    (Message(role="developer", content="do it"), False),
    (Message(role="tool", content="do it", tool_call_ids=("c",)), False),
])
def test_which_messages_are_real_users(message, real):
    assert is_real_user(message) is real


@pytest.mark.parametrize(("messages", "index"), [
    ([], None),
    ([Message(role="system", content="s"), A(text="a")], None),
    ([U("one"), A(text="a"), U("two"), A(text="b")], 2),
    ([U("one"), U("<system-reminder>r</system-reminder>"), U("typed", internal=True), A(text="b")], 0),
    ([U("<environment_context>x</environment_context>")], None),
])
def test_last_real_user_index(messages, index):
    assert last_real_user_index(messages) == index


_MESSAGES = st.sampled_from([U("fix it"), U("<system-reminder>r</system-reminder>"), U("typed", internal=True),
                             A(text="done"), A("c1"), T("c1"), Message(role="system", content="sys")])


@settings(max_examples=200, deadline=None, database=None)
@given(st.lists(_MESSAGES, max_size=20))
def test_rounds_partition_the_messages_and_open_at_each_real_request(messages):
    rounds = split_rounds(messages)
    starts = [i for i, m in enumerate(messages) if is_real_user(m)]
    assert [i for r in rounds for i in range(r.start, r.end)] == list(range(len(messages)))
    assert [r.request for r in rounds if r.request is not None] == starts
    preamble = bool(messages) and (not starts or starts[0] > 0)
    assert [r.number for r in rounds] == list(range(0 if preamble else 1, len(starts) + 1))
    assert all(not is_real_user(messages[i]) for r in rounds for i in range(r.start + (r.request is not None), r.end))


@pytest.mark.parametrize(("prefix", "kind"), markers.MEMORY_BLOCKS)
def test_every_memory_block_is_listed_with_its_kind_and_line(prefix, kind):
    found = memory_blocks([A(text="before"), Message(role="user", content=f"  \n{prefix}\nthe summary", meta={"line": 7}),
                           Message(role="system", content=f"{prefix} again")])
    assert found == (Compaction(kind=kind, index=1, line=7), Compaction(kind=kind, index=2, line=None))


@pytest.mark.parametrize(("prefix", "kind"), [b for b in markers.MEMORY_BLOCKS if b[1] != "full_compact_boundary"])
def test_a_memory_block_a_user_message_holds_is_never_a_request(prefix, kind):
    # (openJiuwen writes its [FULL_COMPACT_BOUNDARY] as a system message, spec §8.5)
    assert not is_real_user(U(f"{prefix}\nthe summary"))


def test_memory_blocks_only_in_user_and_system_messages_and_only_at_their_start():
    messages = [A(text="<memory_block_current>\nx"), Message(role="tool", content="[DIALOGUE_MEMORY_BLOCK]",
                                                            tool_call_ids=("c",)),
                U(" " * 3 + "x" * 37 + "[DIALOGUE_MEMORY_BLOCK]"), U("see [DIALOGUE_MEMORY_BLOCK] below")]
    assert memory_blocks(messages) == ()
    assert memory_blocks([]) == ()
