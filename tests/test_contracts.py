"""The state-snapshot templates (summarizers/contracts.py): each prompt asks for exactly its contract's sections, in
order, and a reply's summary is found inside its tags as spec §2.6 says."""

from __future__ import annotations

import re

import pytest

from tcompact.summarizers.contracts import EXTRA_SECTIONS, SECTIONS, extract_snapshot, prompt_text


@pytest.mark.parametrize("contract", sorted(SECTIONS))
def test_the_prompt_numbers_exactly_the_contracts_sections_in_order(contract):
    lines = re.findall(r"^\d+\. .*$", prompt_text(contract), re.MULTILINE)
    assert len(lines) == len(SECTIONS[contract])
    for n, (line, title) in enumerate(zip(lines, SECTIONS[contract]), start=1):
        assert re.fullmatch(rf"{n}\. {re.escape(title)}(?: — .+|\.)?", line), line


@pytest.mark.parametrize("contract", sorted(SECTIONS))
def test_every_contract_ends_with_the_sections_users_miss_most(contract):
    titles = SECTIONS[contract]
    assert titles[-len(EXTRA_SECTIONS):] == EXTRA_SECTIONS == ("Failed Attempts — Do Not Retry", "Artifact Trail",
                                                                "Resume")
    assert len(set(titles)) == len(titles)


def test_a_prompt_is_read_once_and_stripped():
    text = prompt_text("full")
    assert text is prompt_text("full") and text == text.strip() and text.count("\n") > 10


@pytest.mark.parametrize(("raw", "summary"), [
    ("<state_snapshot>\n1. Active Task\nport it\n</state_snapshot>", "1. Active Task\nport it"),
    ("Sure.\n<STATE_SNAPSHOT>kept</State_Snapshot>\ntrailing words", "kept"),  # tags in any case
    ("<state_snapshot>first</state_snapshot><state_snapshot>second</state_snapshot>", "first"),
    # an empty snapshot falls back to a <summary>, whose <analysis> is dropped first
    ("<state_snapshot>  </state_snapshot><summary>the summary</summary>", "the summary"),
    ("<analysis>thinking <summary>not this</summary></analysis>\n<summary>this</summary>", "this"),
    ("<summary>\n  spaced  \n</summary>", "spaced"),
    # no closed tag: the whole reply, stripped
    ("  plain reply \n", "plain reply"),
    ("<state_snapshot>cut off before the end", "<state_snapshot>cut off before the end"),
    ("<summary></summary>", "<summary></summary>"),
    ("", ""),
])
def test_extract_snapshot(raw, summary):
    assert extract_snapshot(raw) == summary
