"""A summary never exceeds its cap (issue 23 item 6): the extractive summariser quotes the user's words within
the summary's budget, not beside it. Seen on an old SWE-agent trajectory read with every command output as a
user message: dialogue wrote a 12,588-token summary over its 8,000 cap and saved 1%."""

from __future__ import annotations

import pytest

from tcompact.model import Message
from tcompact.summarizers.base import SummaryRequest
from tcompact.summarizers.extractive import ExtractiveSummarizer
from tcompact.tokens import TokenCounter


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


@pytest.mark.parametrize(("contract", "target"), [("dialogue", 2641), ("dialogue", 8000), ("current", 4000),
                                                  ("full", 8000)])
def test_an_extractive_summary_fits_its_target_with_the_users_words_in_it(contract, target):
    messages = long_requests()
    counter = TokenCounter()
    text = ExtractiveSummarizer(counter).summarize(SummaryRequest(
        processor="test", contract=contract, prompt="", messages=messages, body=range(1, len(messages) - 1),
        target_tokens=target, max_tokens=target)).text
    assert counter.count(text) <= target
    if contract != "full":  # the newest requests are still quoted, the oldest left out and counted
        assert "Requirement 29.19" in text and "Requirement 0.0:" not in text
        assert "more left out for the budget" in text
