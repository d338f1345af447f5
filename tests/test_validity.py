"""Which replies are usable summaries (summarizers/validity.py): each rule with its exact reason.

The refused replies are the shapes SmolLM2-135M gave against the real llama.cpp server
(tests/test_llm_server.py); the accepted ones are what a model that follows the prompt writes,
and the extractive backend's own snapshots of the real sessions.
"""

from __future__ import annotations

import pytest
from conftest import real_file

from tcompact.formats import read_file
from tcompact.summarizers.base import SummaryRequest
from tcompact.summarizers.contracts import SECTIONS, prompt_text
from tcompact.summarizers.extractive import ExtractiveSummarizer
from tcompact.summarizers.validity import snapshot_problem, text_problem
from tcompact.tokens import TokenCounter

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


@pytest.mark.parametrize("key", ["ccviewer", "drmaciver", "sweagent"])
@pytest.mark.parametrize("contract", [c for c in SECTIONS])
def test_the_extractive_snapshots_of_real_sessions_pass(key, contract):
    """The backend that follows the templates by construction passes every rule (it is not checked at run time:
    a transcript's own repetitions are no model's fault)."""
    messages = read_file(real_file(key)).transcript().messages
    counter = TokenCounter()
    request = SummaryRequest(processor="x", contract=contract, prompt=prompt_text(contract), messages=messages,
                             body=range(1, len(messages)), target_tokens=2000)
    reply = ExtractiveSummarizer(counter).summarize(request).text
    assert problem(reply, contract=contract, prompt=prompt_text(contract)) is None
