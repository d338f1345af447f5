"""Which replies are usable summaries (summarizers/validity.py): each rule with its exact reason and its thresholds.

The refused replies are the shapes SmolLM2-135M gave against the real llama.cpp server
(tests/test_llm_server.py); the accepted ones are what a model that follows the prompt writes,
and the extractive backend's own snapshots of the real sessions.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from conftest import SAMPLES, real_file

from tcompact.formats import read_file
from tcompact.summarizers.base import SummaryRequest
from tcompact.summarizers.contracts import SECTIONS, prompt_text
from tcompact.summarizers.extractive import ExtractiveSummarizer
from tcompact.summarizers.validity import ECHO_SHARE, LOOP_SHARE, cut_problem, snapshot_problem, text_problem
from tcompact.counting.tokens import TokenCounter

PROMPT = prompt_text("current")


def problem(raw: str, *, finish: str | None = "stop", contract: str = "current", prompt: str = PROMPT):
    return snapshot_problem(raw, contract=contract, prompt=prompt, finish_reason=finish, max_tokens=64)


@pytest.mark.parametrize(("raw", "reason"), [
    ("", "the reply is empty"),
    ("<state_snapshot>   </state_snapshot>", "the reply is empty"),
    # what SmolLM2 said to prompts/current.md: the prompt back, its sentences running on
    ("The work done since the user's latest request is about to be removed from the context. Write a checkpoint "
     "from which another model can resume at once, without repeating investigations, re-reading files or "
     "rediscovering what was learned.", "the reply repeats the instruction prompt (100% of it is the prompt's own "
     "text)"),
    ("I'm sorry for the inconvenience. " * 8, "a loop: the reply repeats 'i'm sorry for the inconvenience.' 8 times"),
    ("Active Task: the parser.\n" + "x(None, but max" * 12, "a loop: the reply ends repeating 'x(None, but max' 12 times"),
    ("1. Active Task\n" + "".join(f"step {i % 3} done; " for i in range(400)),
     "a loop: the reply ends repeating 'step 1 done; step 2 done; step 0 done;' 102 times"),
    ("1. Active Task\n" + "".join(f"line {i}: the same long explanation of the same thing once more\n" for i in range(60)),
     "a loop: the reply repeats itself (it compresses to 6% of its size)"),
    ("I'm ready to help. What's your task?", "no section heading of the summary template (such as '1. Active Task')"),
])
def test_refused_replies_and_why(raw, reason):
    assert problem(raw) == reason


def test_a_reply_cut_at_the_limit_is_refused_unless_its_snapshot_closed_before_the_cut():
    cut = "<state_snapshot>\n1. Active Task\nPort the parser; the tests in tests/test_"
    assert problem(cut, finish="length") == ("the reply was cut at the limit of 64 tokens (finish_reason length): the "
                                             "summary is incomplete")
    assert problem(cut, finish="stop") is None
    closed = "<state_snapshot>\n1. Active Task\nPort the parser.\n</state_snapshot>\nAnd then I would"
    assert problem(closed, finish="length") is None


@pytest.mark.parametrize("heading", ["1. Active Task", "## Files and Code Sections", "**Resume**: last request",
                                     "- Critical Context:", "3) Pending Tasks", "> Key Technical Concepts"])
def test_section_headings_of_any_template_count(heading):
    assert problem(f"<state_snapshot>\n{heading}\nthe parser port, tests green\n</state_snapshot>") is None


def test_a_title_inside_a_sentence_is_no_heading():
    assert problem("We will resume the active task later.") == (
        "no section heading of the summary template (such as '1. Active Task')")


def test_a_custom_prompt_that_names_no_section_is_not_held_to_them():
    assert problem("The user asked the agent to port the parser.", prompt="In one sentence, what was asked?") is None


def test_blocks_and_unknown_contracts_are_held_to_the_text_rules_only():
    assert problem('{"blocks": []}', contract="blocks", prompt="Return JSON.") is None
    assert text_problem("Summary: " + "again and again. " * 20, instructions=("",)) == (
        "a loop: the reply repeats 'again and again.' 19 times")


def test_ordinary_summaries_are_no_loops():
    varied = "\n".join(f"- {name}: read, edited and tested ({n} tests pass)" for n, name in
                       enumerate(["parser.py", "lexer.py", "cli.py", "README.md", "tests/test_cli.py"]))
    assert problem(f"<state_snapshot>\n1. Active Task\nPort the parser.\n13. Artifact Trail\n{varied}\n"
                   "</state_snapshot>") is None


SESSIONS = ["chat_tool_session.jsonl", "claude_code_session.jsonl", "codex_rollout.jsonl",
            "ccviewer", "drmaciver", "sweagent"]


@pytest.mark.parametrize("session", SESSIONS)
@pytest.mark.parametrize("contract", [c for c in SECTIONS])
def test_the_extractive_snapshots_of_sample_and_real_sessions_pass(session, contract):
    """The backend that follows the templates by construction passes every rule (it is not checked at run time:
    a transcript's own repetitions are no model's fault)."""
    path = SAMPLES / session if session.endswith(".jsonl") else real_file(session)
    messages = read_file(path).transcript().messages
    counter = TokenCounter()
    request = SummaryRequest(processor="x", contract=contract, prompt=prompt_text(contract), messages=messages,
                             body=range(1, len(messages)), target_tokens=2000)
    reply = ExtractiveSummarizer(counter).summarize(request).text
    assert problem(reply, contract=contract, prompt=prompt_text(contract)) is None


# ---- thresholds ---------------------------------------------------------------------------------------

_PROMPT_WORDS = " ".join(f"word{i}" for i in range(40))


def _echo(prompt_words: int, own_words: int) -> str:
    return " ".join([*(f"word{i}" for i in range(prompt_words)), *(f"own{i}" for i in range(own_words))])


@pytest.mark.parametrize(("reply", "reason"), [
    # 15 prompt words and 8 of its own: 8 of 16 eight-word sequences are the prompt's, exactly half
    (_echo(15, 8), "the reply repeats the instruction prompt (50% of it is the prompt's own text)"),
    (_echo(15, 8).upper(), "the reply repeats the instruction prompt (50% of it is the prompt's own text)"),
    (_echo(14, 8), None),  # 7 of 15
    (_echo(15, 0), "the reply repeats the instruction prompt (100% of it is the prompt's own text)"),
    (_echo(14, 0), None),  # under 8 sequences: too short to judge
])
def test_an_echo_is_half_the_replys_word_sequences(reply, reason):
    assert ECHO_SHARE == 0.5
    assert text_problem(reply, instructions=(_PROMPT_WORDS,)) == reason


def test_an_echo_of_any_of_the_instructions_counts():
    assert text_problem(_echo(15, 0), instructions=("other words", _PROMPT_WORDS)) is not None
    assert text_problem(_echo(15, 0), instructions=()) is None


SENTENCE = "The parser fails on empty input."  # 32 characters: a unit of 16 or more
OTHER = " Other words follow, all different: " + " ".join(f"item{i}" for i in range(40))


@pytest.mark.parametrize(("text", "reason"), [
    (" ".join([SENTENCE] * 4), "a loop: the reply repeats 'the parser fails on empty input.' 4 times"),
    ("\n".join([SENTENCE] * 4), "a loop: the reply repeats 'the parser fails on empty input.' 4 times"),
    (" ".join([SENTENCE] * 3), None),  # three times is no loop
    (" ".join([SENTENCE] * 4) + OTHER, None),  # under 40 % of the text
    (" ".join(["Short one."] * 9) + OTHER, None),  # a unit under 16 characters is no unit
    (" ".join(["A sentence long enough to be shown only in part when it loops."] * 5),
     "a loop: the reply repeats 'a sentence long enough to be shown only in part when it loo…' 5 times"),
])
def test_a_loop_of_sentences_or_lines(text, reason):
    assert LOOP_SHARE == 0.4
    assert text_problem(text, instructions=()) == reason


@pytest.mark.parametrize(("text", "reason"), [
    ("1. Active Task\n" + "ab" * 60, "a loop: the reply ends repeating 'ab' 60 times"),
    ("1. Active Task\n" + "ab" * 45, None),  # 90 characters: under 100
    ("1. Active Task\n" + "12" * 60, None),  # no letter in the piece: a number, not a loop
    (" ".join(f"Step {i} changed file_{i}.py and ran its tests." for i in range(12)) + " " + "ab" * 60,
     None),  # under 30 % of the text
])
def test_a_reply_ending_in_one_piece_over_and_over(text, reason):
    assert text_problem(text, instructions=()) == reason


def test_a_long_reply_that_compresses_too_well_is_a_loop():
    # short units in no fixed order ("ok." four times in five): no unit repeats, no piece ends it over and over
    rng = random.Random(3)
    words = "".join("ok. " if rng.random() < 0.8 else "no. " for _ in range(199)) + "no. "
    assert len(words) == 800
    assert text_problem(words, instructions=()) == "a loop: the reply repeats itself (it compresses to 10% of its size)"
    assert text_problem(words[4:], instructions=()) is None  # under 800 characters: not judged by its size


@pytest.mark.parametrize(("limit", "reason"), [
    (4096, "the reply was cut at the limit of 4,096 tokens (finish_reason length): the summary is incomplete"),
    (None, "the reply was cut at the server's output limit (finish_reason length): the summary is incomplete"),
    (0, "the reply was cut at the server's output limit (finish_reason length): the summary is incomplete"),
])
def test_cut_problem_names_the_limit(limit, reason):
    assert cut_problem(limit) == reason


@pytest.mark.parametrize(("raw", "reason"), [
    ("<summary>1. Active Task\nport it</summary> and then", None),  # a closed <summary> is complete too
    ("<analysis>long thoughts</analysis><summary>1. Active Task\nport", cut_problem(64)),
    ("<state_snapshot></state_snapshot><analysis></analysis>", "the reply is empty"),
])
def test_a_reply_stopped_at_its_limit(raw, reason):
    assert problem(raw, finish="length") == reason


@pytest.mark.parametrize(("line", "heading"), [
    ("**Active Task**: port it", True),
    ("  - 1) active task", True),  # any case, any list marker
    ("### 6. Pending Tasks and Next Useful Step", True),
    ("Resumes of earlier work", False),  # a longer word is no title
    ("Active Tasks", False),
    ("The Active Task is the port.", False),
])
def test_what_counts_as_a_section_heading(line, heading):
    assert (problem(f"<state_snapshot>\n{line}\nmore\n</state_snapshot>") is None) is heading


_VOCAB = [f"{stem}{end}" for stem in ("parse", "file", "test", "lexer", "token", "fix", "run", "edit", "read", "cli")
          for end in ("", "s", "ed", "er", "ing", "_v2", ".py", "()")]


@settings(max_examples=100, deadline=None, database=None)
@given(st.lists(st.lists(st.sampled_from(_VOCAB), min_size=3, max_size=14), min_size=1, max_size=60, unique_by=tuple))
def test_distinct_sentences_are_never_taken_for_a_loop(sentences):
    """No false alarm on prose, however long and however small its vocabulary: a refused reply is retried."""
    text = " ".join(" ".join(words).capitalize() + "." for words in sentences)
    assert text_problem(text, instructions=()) is None


def test_the_prompts_placeholder_said_back_is_refused_as_such():
    """An echo of prompts/full.md's own ``<summary><state_snapshot>…</state_snapshot></summary>``: refused as the
    placeholder it is (it was "no section heading"), and never extracted as a summary."""
    prompt = prompt_text("full")
    assert snapshot_problem("<summary><state_snapshot>…</state_snapshot></summary>", contract="full", prompt=prompt,
                            finish_reason="stop", max_tokens=64) == \
        "the reply holds only the prompt's own placeholder text, no summary"
    from tcompact.summarizers.contracts import extract_snapshot

    raw = "<state_snapshot>…</state_snapshot>\n<state_snapshot>1. Active Task\nport the parser</state_snapshot>"
    assert extract_snapshot(raw, prompt) == "1. Active Task\nport the parser"


def test_an_analysis_without_its_summary_is_no_summary():
    """A model that writes the analysis and skips the summary tags: the analysis is not kept as the summary."""
    from tcompact.summarizers.contracts import extract_snapshot

    raw = "<analysis>The user asked to port the parser; I will list the files first.</analysis>"
    assert problem(raw, contract="full", prompt=prompt_text("full")) == \
        "the reply holds only its analysis, no summary block"
    assert extract_snapshot(raw) == ""
