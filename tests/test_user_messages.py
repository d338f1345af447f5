"""The user's words within a budget: newest first, the one that overflows cut head and tail at blanks
around a marker naming what was cut, the older ones left out."""

from __future__ import annotations

import re

from tcompact.counting.tokens import TokenCounter
from tcompact.user_messages import CUT_MARK, DEFAULT_BUDGET, cut_middle, select

COUNTER = TokenCounter()


def cost(text):
    return COUNTER.count(text) + 4


def test_newest_first_while_they_fit():
    texts = ["one " * 50, "two " * 50, "three " * 50]
    assert select(texts, 10_000, cost=cost, counter=COUNTER, by="t") == texts
    tight = select(texts, cost(texts[2]) + cost(texts[1]) + 10, cost=cost, counter=COUNTER, by="t")
    assert tight == [None, texts[1], texts[2]]  # 10 tokens left: too few to cut the oldest to


def test_the_one_that_overflows_keeps_head_and_tail():
    long = "Start here. " + " ".join(f"word{n}" for n in range(3000)) + " The end."
    chosen = select(["older message", long, "newest"], 500, cost=cost, counter=COUNTER, by="full")
    assert chosen[0] is None and chosen[2] == "newest"
    head, marker, tail = re.fullmatch(r"(.+)\n(\[… [\d,]+ tokens in the middle of this message: that part was cut "
                                      r"by tcompact full to fit the user-message budget …\])\n(.+)", chosen[1],
                                      re.DOTALL).groups()
    assert head.startswith("Start here. word0 word1") and tail.endswith("word2999 The end.")
    assert re.fullmatch(r"Start here\. (word\d+ )*word\d+", head) and re.fullmatch(r"word\d+( word\d+)* The end\.",
                                                                                   tail)
    assert CUT_MARK in marker and COUNTER.count(chosen[1]) <= 500 - 4 and COUNTER.count(head) > COUNTER.count(tail)
    cut = int(re.search(r"\[… ([\d,]+) tokens", marker).group(1).replace(",", ""))
    assert cut == COUNTER.count(long) - COUNTER.count(head) - COUNTER.count(tail)


def test_a_text_within_the_budget_is_left_whole_and_spaceless_text_is_cut_by_characters():
    assert cut_middle("short", 100, COUNTER, by="t") == "short"
    blob = "x" * 20_000
    out = cut_middle(blob, 200, COUNTER, by="t")
    assert out.startswith("x" * 100) and out.endswith("x" * 100) and COUNTER.count(out) <= 200
    assert DEFAULT_BUDGET == 20_000
