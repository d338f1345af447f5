"""What every compressor promises whatever the session: it never splits a tool call from its result, never
loses the last real request, keeps every system and developer message in its order, and either leaves the
messages as they were or makes them smaller — on generated sessions, with the offline summariser."""

from __future__ import annotations

from generated_sessions import sessions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcompact.compressors import get, names
from tcompact.compressors.base import Context
from tcompact.model import index_tool_calls
from tcompact.rounds import is_real_user, last_real_user_index
from tcompact.summarizers.extractive import ExtractiveSummarizer
from tcompact.counting.tokens import TokenCounter

COUNTER = TokenCounter()
#: Limits small enough that the non-summarising compressors act on a generated session.
SMALL = {"truncate": {"max_lines": 16, "max_chars": 600}, "offload": {"large_message_tokens": 60,
                                                                     "protected_tools": []},
         "micro": {"keep_recent_per_tool": 1, "min_tokens": 20}, "round-level": {"first_pass_target_tokens": 200}}


def compress(name, messages):
    compressor = get(name)
    ctx = Context(counter=COUNTER, window=200_000, summarizer=ExtractiveSummarizer(COUNTER), force=True,
                  sleep=lambda s: None)
    return compressor.compress(messages, compressor.settings_model(**SMALL.get(name, {})), ctx)


def pinned(messages):
    return [(m.role, m.text) for m in messages if m.role in ("system", "developer")]


@settings(max_examples=50, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sessions(), st.sampled_from(names()))
def test_every_compressor_keeps_pairs_the_last_request_and_system_messages(messages, name):
    result = compress(name, messages)
    after = list(result.messages)
    before_index, after_index = index_tool_calls(messages), index_tool_calls(after)
    assert len(after_index.orphan_results) == len(before_index.orphan_results) == 0
    # an in-flight call may be summarised away with its turn, never one whose result stays
    assert len(after_index.unanswered) <= len(before_index.unanswered)
    request = messages[last_real_user_index(messages)].text
    assert any(request in m.text for m in after), "the last real request is not kept verbatim"
    assert pinned(after) == pinned(messages)
    assert result.tokens_before == COUNTER.total(messages) and result.tokens_after == COUNTER.total(after)
    if result.applied:
        assert result.tokens_after < result.tokens_before and not result.failed
    else:
        assert after == messages


@settings(max_examples=25, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sessions())
def test_full_keeps_every_real_user_message_verbatim_within_its_budget(messages):
    result = compress("full", messages)
    if not result.applied:
        return
    texts = [m.text for m in result.messages]
    users = [m.text for m in messages if is_real_user(m)]
    assert all(u in texts for u in users)  # generated requests are far under 20,000 tokens: all kept, as messages
    harness = [m.text for m in messages if m.role == "user" and not is_real_user(m)]
    assert not any(h in texts for h in harness)  # harness text is never kept as a request
