"""The state-snapshot writer's parts: every kind of item in exactly one section of each contract, the
fitting (priorities, newest first, passing over what does not fit, markers only when something was left
out, shorter forms), the budget held on real sessions at many sizes, and the round-level blocks gaining
error lines, decisions and outcome lines without changing their JSON contract."""

from __future__ import annotations

import re

import orjson
import pytest
from conftest import real_file

from tcompact.formats import read_file
from tcompact.summarizers.base import Block, SummaryRequest
from tcompact.summarizers.contracts import SECTIONS
from tcompact.summarizers.extractive.snapshot.fit import Item, fit, render
from tcompact.summarizers.extractive.snapshot.layout import _LAYOUTS, place
from tcompact.tokens import TokenCounter

from test_summarizer_extractive import assistant, call, result, run, user

COUNTER = TokenCounter()
KINDS = ("user", "active", "constraint", "failure", "error", "fix", "file_changed", "file_read", "file_searched",
         "command", "decision", "correction", "finding", "note", "answer", "code", "done", "state", "pending", "next",
         "resume_point", "test", "round", "cwd", "offload", "preserved", "concept", "resume")


@pytest.mark.parametrize("contract", list(SECTIONS))
def test_every_kind_goes_to_exactly_one_section_of_its_contract(contract):
    items = [Item(kind, f"{kind} text", 1, round=r) for kind in KINDS for r in (1, 2)]
    placed = place(contract, SECTIONS[contract], items)
    assert [title for title, _ in placed] == list(SECTIONS[contract])
    where = {}
    for title, entries in placed:
        for item in entries:
            where.setdefault((item.kind, item.round >= 2), set()).add(title)
    assert all(len(titles) == 1 for titles in where.values())
    assert sum(len(entries) for _, entries in placed) == len(items)  # none lost
    layout = _LAYOUTS[contract]
    assert set(KINDS) - {"failure", "command", "resume"} <= set(layout)  # every kind has its own place


def items():
    return [Item("note", f"fact {n}", 2, order=n) for n in range(10)] + [Item("note", "x " * 400, 1, order=5),
                                                                          Item("note", "must", 0, order=20)]


def test_fit_passes_over_what_does_not_fit_and_lists_in_session_order():
    text = fit([("Facts", items())], 120, counter=COUNTER)
    # the 400-token item (priority 1) does not fit: passed over, and every smaller one still gets its place
    assert text.splitlines()[2:-1] == [*(f"- fact {n}" for n in range(10)), "- must",
                                       "- (+1 more left out for the budget)"]
    assert COUNTER.count(text) <= 120


def test_fit_takes_the_most_important_then_the_newest():
    text = fit([("Facts", items())], 60, counter=COUNTER)
    assert text.splitlines()[2:-1] == [*(f"- fact {n}" for n in range(4, 10)), "- must",
                                       "- (+5 more left out for the budget)"]
    assert COUNTER.count(text) <= 60


def test_markers_only_when_something_was_left_out_and_none_only_when_empty():
    sections_ = [("A", [Item("note", "one", 1)]), ("B", [])]
    assert render(sections_) == "<state_snapshot>\n1. A\n- (+1 more left out for the budget)\n\n2. B\n(none)\n" \
                                "</state_snapshot>"
    text = fit(sections_, 1000, counter=COUNTER)
    assert text == "<state_snapshot>\n1. A\n- one\n\n2. B\n(none)\n</state_snapshot>"


def test_own_budget_items_are_always_kept_and_not_charged():
    own = Item("user", "- [round 1] “" + "word " * 300 + "”", 0, block=True, own=True)
    text = fit([("Users", [own]), ("Facts", [Item("note", "a fact", 1)])], 40, counter=COUNTER)
    assert "word word" in text and "- a fact" in text


def test_shorter_forms_are_tried_when_an_item_does_not_fit():
    item = Item("resume", "long " * 200, 0, block=True, shorter=("medium " * 50, "short"))
    text = fit([("Resume", [item])], 30, counter=COUNTER)
    assert text == "<state_snapshot>\n1. Resume\nshort\n</state_snapshot>"


@pytest.mark.parametrize("key", ["codemie", "codex", "drmaciver", "sweagent"])
def test_real_sessions_hold_every_budget(summarizer, key):
    messages = read_file(str(real_file(key))).transcript().messages
    for contract in SECTIONS:
        for target in (512, 1500, 5000):
            text = run(summarizer, messages, contract=contract, body=range(len(messages)), target=target)
            rest = re.sub(r'(?ms)^- \[round \d+\] “.*?”\n(?:  → .*?\n)?|^<user_message round="\d+">\n.*?'
                          r"</user_message>\n(?:  → .*?\n)?", "", text)
            assert COUNTER.count(rest) <= target, (contract, target)
            assert "(omitted)" not in text


def _session(source: str):
    """A sample's messages (``*.jsonl``: runs in any clone), or a real session's (skipped without ../shared)."""
    from conftest import SAMPLES

    return read_file(str(SAMPLES / source if source.endswith(".jsonl") else real_file(source))).transcript().messages


@pytest.mark.parametrize("source", ["chat_tool_session.jsonl", "drmaciver"])
def test_a_larger_budget_only_adds(summarizer, source):
    messages = _session(source)
    small = set(run(summarizer, messages, contract="full", body=range(len(messages)), target=800).splitlines())
    large = set(run(summarizer, messages, contract="full", body=range(len(messages)), target=4000).splitlines())
    kept = {line for line in small if line.startswith("- ") and "left out" not in line}
    assert kept <= large and len(large) > len(small)


# -- the round-level blocks --------------------------------------------------------------------------


def blocks_answer(summarizer, messages, scope="completed_react"):
    request = SummaryRequest(processor="round-level", contract="blocks", prompt="", messages=tuple(messages),
                             body=range(len(messages)), target_tokens=2000,
                             blocks=(Block("b1", scope, 0, len(messages) - 1),))
    return orjson.loads(summarizer.summarize(request).text)["blocks"][0]["summary"]


def test_blocks_keep_error_lines_decisions_and_outcome_lines(summarizer):
    messages = (
        user("rebuild the index"),
        assistant("I decided to rebuild shard 7 first, because it is the smallest.",
                  call("a", "Bash", {"command": "python reindex.py --shard 7"})),
        result("a", "starting\nERROR: could not connect to db-7.internal:5432\nretrying\nreindexed 42 documents"),
        assistant("Done: shard 7 is rebuilt."),
    )
    got = blocks_answer(summarizer, messages)
    assert "- `python reindex.py --shard 7` went on, but its output reported: ERROR: could not connect to " \
           "db-7.internal:5432" in got
    assert "- I decided to rebuild shard 7 first, because it is the smallest." in got
    assert "- `python reindex.py --shard 7` → ok: reindexed 42 documents" in got
    assert got.startswith("User Requirements:\n- “rebuild the index”\n\nFinal Result:\n- Done: shard 7 is rebuilt.")
