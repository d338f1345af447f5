"""The shared vocabulary of tool names (tool_names.py) and of memory-block markers (markers.py): every name
has one kind, names are matched in any case, and every checkpoint marker is recognised where it starts."""

from __future__ import annotations

import itertools

import pytest

from tcompact import markers, tool_names
from tcompact.tool_names import is_plan_tool, kind_of

SETS = {"shell": tool_names.SHELL, "read": tool_names.READ, "edit": tool_names.EDIT, "write": tool_names.WRITE,
        "search": tool_names.SEARCH, "patch": tool_names.PATCH, "todo": tool_names.TODO,
        "plan_mode": tool_names.PLAN_MODE, "skill": tool_names.SKILL, "agent": tool_names.AGENT,
        "finish": tool_names.FINISH, "editor": tool_names.EDITOR}


def test_no_name_is_in_two_sets():
    assert [(a, b, x & y) for (a, x), (b, y) in itertools.combinations(SETS.items(), 2) if x & y] == []


@pytest.mark.parametrize(("kind", "name"), [(k, n) for k, names in SETS.items() for n in sorted(names)])
def test_every_listed_name_has_its_kind_in_any_case(kind, name):
    assert kind_of(name) == kind_of(name.upper()) == kind_of(name.title()) == kind
    assert name == name.lower()  # the sets hold lower case: kind_of lowers the name it is given


@pytest.mark.parametrize(("name", "kind"), [
    ("Bash", "shell"), ("exec_command", "shell"), ("Read", "read"), ("MultiEdit", "edit"), ("Write", "write"),
    ("apply_patch", "patch"), ("TodoWrite", "todo"), ("ExitPlanMode", "plan_mode"), ("Skill", "skill"),
    ("Task", "agent"), ("submit", "finish"), ("str_replace_editor", "editor"),
    ("my_todo_tracker", "todo"), ("TODOS", "todo"), ("make_plan", "todo"),  # any "todo", or ending in "_plan"
    ("planner", "other"), ("WebFetch", "other"), ("", "other"),
])
def test_names_outside_the_sets_are_told_by_their_shape(name, kind):
    assert kind_of(name) == kind
    assert is_plan_tool(name) is (kind == "todo")


def test_marker_texts_are_the_spec_s():
    assert markers.OPENJIUWEN_TAGS == ("memory_block_current", "memory_block_dialogue", "memory_block_round",
                                       "memory_block_session")
    assert markers.MEMORY_TAGS[-1] == "memory_block"
    assert markers.ROUND_LEVEL_MARKER == "[ROUND_LEVEL_MEMORY_BLOCK]"
    assert markers.ROUND_LEVEL_ACK == "Understood. I have recorded this compressed context."
    assert markers.LEGACY_MARKERS == ("[CURRENT_ROUND_MEMORY_BLOCK]", "[DIALOGUE_MEMORY_BLOCK]",
                                      "[ROUND_LEVEL_MEMORY_BLOCK]", "[FULL_COMPACT_STATE]")
    assert (markers.RECOVERED_CONTEXT, markers.STATE_REINJECTION) == ("<recovered_context>", "[STATE_REINJECTION]")
    assert markers.CONTINUATION == "This session is being continued from a previous conversation"
    assert [kind for _, kind in markers.MEMORY_BLOCKS] == [
        "memory_block_current", "memory_block_dialogue", "memory_block_round", "memory_block_session",
        "memory_block", "current_round_memory_block", "dialogue_memory_block", "round_level_memory_block",
        "full_compact_boundary", "continuation_summary"]
    assert all(prefix.startswith(("<", "[")) for prefix, _ in markers.MEMORY_BLOCKS[:-1])
    assert markers.MEMORY_BLOCKS[-1][0] == markers.CONTINUATION


@pytest.mark.parametrize("prefix", markers.CHECKPOINT_PREFIXES)
def test_every_checkpoint_prefix_is_recognised_after_blanks(prefix):
    assert markers.is_checkpoint_text(prefix + "\nbody")
    assert markers.is_checkpoint_text("\n  \t" + prefix)
    assert not markers.is_checkpoint_text("note: " + prefix)  # only where the text starts


@pytest.mark.parametrize("text", ["<memory_block_dialogue>", "<memory_block>", "<memory_block_session>\n",
                                  "<recovered_context>\n<instruction>"])
def test_every_memory_tag_counts_as_a_checkpoint(text):
    assert markers.is_checkpoint_text(text)


def test_plain_text_and_lookalikes_are_no_checkpoint():
    assert not markers.is_checkpoint_text("")
    assert not markers.is_checkpoint_text("hello")
    assert not markers.is_checkpoint_text("[ROUND_LEVEL] memory")
    assert not markers.is_checkpoint_text("this session is being continued from a previous conversation")  # case
    assert markers.is_checkpoint_text(" " * 300 + "<memory_block>")  # however many blanks come first
