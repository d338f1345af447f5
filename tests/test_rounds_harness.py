"""What is a real user request: hook feedback, slash commands without arguments, continuation boilerplate,
reminders and local-command output are harness text; the memory-block markers are declared once."""

from __future__ import annotations

import pytest

from tcompact import markers
from tcompact.compressors.round_level.targets import ACK
from tcompact.model import Message
from tcompact.rounds import INJECTED_PREFIXES, is_internal_text, is_real_user, memory_blocks, split_rounds
from tcompact.summarizers.extractive.blocks.memory import ACK as BLOCKS_ACK
from tcompact.summarizers.extractive.blocks.memory import MARKER


@pytest.mark.parametrize("text", [
    "Stop hook feedback:\n[${CLAUDE_PLUGIN_ROOT}/scripts/hooks/stop.sh]: # Running Quality Checks...",
    "SubagentStop hook feedback:\nno",
    "<command-name>/clear</command-name>\n            <command-message>clear</command-message>\n"
    "            <command-args></command-args>",
    "<command-message>bmad:bmm:workflows:create-tech-spec</command-message>\n"
    "<command-name>/bmad:bmm:workflows:create-tech-spec</command-name>",
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
