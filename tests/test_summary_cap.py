"""A summary never exceeds its cap (issue 23 item 6): the user's words an extractive summary quotes have a budget
of their own, but inside the compressor's ``summary_max_tokens``, not beside it. Seen on an old SWE-agent
trajectory read with every command output as a user message: dialogue wrote a 12,588-token summary over its
8,000 cap and saved 1%."""

from __future__ import annotations

import orjson
import pytest

from tcompact.compaction import CompactOptions, compact_file
from tcompact.compressors import parse_set
from tcompact.formats.chat import message_to_dict
from tcompact.model import Message
from tcompact.summarizers.base import SummaryRequest
from tcompact.summarizers.extractive import ExtractiveSummarizer
from tcompact.counting.tokens import TokenCounter


def long_requests(rounds: int = 30) -> tuple[Message, ...]:
    """A system prompt and ``rounds`` requests of twenty requirement lines each (about 700 tokens), each answered
    in one line, then a last short request: some 21,000 tokens of the user's own words."""
    out = [Message(role="system", content="You are a coding agent.")]
    for r in range(rounds):
        out.append(Message(role="user", content="\n".join(
            f"Requirement {r}.{k}: the exporter must keep column {k} of table t{r} in ISO format and never drop "
            f"rows with unicode names such as Łukasz." for k in range(20))))
        out.append(Message(role="assistant", content=f"Done with request {r}: exporter updated."))
    out.append(Message(role="user", content="Now run the whole test suite."))
    return tuple(out)


@pytest.mark.parametrize(("contract", "target", "cap"), [
    ("dialogue", 8000, 8000),  # a large body: the budget is the cap (the case seen)
    ("dialogue", 2641, 8000),  # a smaller budget: the user's words may take what the cap leaves beside it
    ("current", 4000, 4000),
    ("dialogue", 2641, None),  # no cap given: the budget is
])
def test_an_extractive_summary_with_the_users_words_stays_within_its_cap(contract, target, cap):
    messages = long_requests()
    counter = TokenCounter()
    text = ExtractiveSummarizer(counter).summarize(SummaryRequest(
        processor="test", contract=contract, prompt="", messages=messages, body=range(1, len(messages) - 1),
        target_tokens=target, max_tokens=target, cap_tokens=cap)).text
    assert counter.count(text) <= (cap or target)
    # the newest requests are still quoted whole, the oldest left out and counted
    assert "Requirement 29.19" in text and "Requirement 0.0:" not in text
    assert "more left out for the budget" in text


def test_dialogue_through_its_compressor_keeps_the_summary_within_summary_max_tokens(tmp_path):
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"".join(orjson.dumps(message_to_dict(m)) + b"\n" for m in long_requests()))
    run = compact_file(path, CompactOptions(chain="dialogue", now=True,
                                            overrides=(parse_set("dialogue.summary_max_tokens=3000"),)))
    assert run.status == "compacted"
    (_, dump), = run.dumps()
    assert dump["request"]["target_tokens"] == 2641
    assert TokenCounter().count(dump["response"]["extracted_summary"]) <= 3000
    assert run.report["after"]["tokens"] < run.report["before"]["tokens"] // 4
