"""compressors/trigger.py and summarizers/calls.py + fitting.py on their own: the trigger's reasons with their
figures, what a refusal teaches, the Retry-After delay, a refused reply resampled, and shrinking a span only at
legal cuts."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest
from conftest import FakeSummarizer, call, msg
from generated_sessions import sessions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcompact.compressors import get
from tcompact.compressors.trigger import Outcome, decide, trigger_figures, trigger_reason
from tcompact.summarizers.calls import RESAMPLE_TEMPERATURE, refusal_hint, summarize
from tcompact.summarizers.fitting import OVERFLOW_BUDGETS, learned, shrink_span
from tcompact.compressors.base import Context
from tcompact.formats.chat import parse_message
from tcompact.model import Message
from tcompact.spans import Span, legal_cut_points
from tcompact.summarizers.base import ModelWindow, SummarizerError, SummaryRequest
from tcompact.counting.tokens import TokenCounter

COUNTER = TokenCounter()
SNAPSHOT = "<state_snapshot>\n1. Active Task\nfix the parser\n</state_snapshot>"


@pytest.mark.parametrize(("total", "body", "force", "empty", "reason"), [
    (7999, 5000, False, False, "below the threshold (7,999 < 8,000 tokens)"),
    (8000, 5000, False, False, None),  # the threshold is inclusive
    (9000, 999, False, False, "the compressible part is below the minimum target (999 < 1,000 tokens)"),
    (9000, 1000, False, False, None),
    (10, 0, True, False, None),  # --force skips both checks …
    (10, 0, True, True, "no compressible span"),  # … but a span must hold something
    (9000, 5000, False, True, "no compressible span"),
])
def test_trigger_reason_says_why_with_its_figures(total, body, force, empty, reason):
    got = trigger_reason(total, body, window=10_000, trigger_ratio=0.8, min_target_ratio=0.1, force=force, empty=empty)
    assert got == reason
    figures = trigger_figures(total, body, window=10_000, trigger_ratio=0.8, min_target_ratio=0.1, force=force)
    assert got is None or got.startswith(decide(figures, empty=empty).value)  # the outcome's words begin it


@pytest.mark.parametrize(("total", "body", "force", "empty", "outcome"), [
    (7999, 5000, False, False, Outcome.BELOW_THRESHOLD),
    (9000, 999, False, False, Outcome.BELOW_MINIMUM),
    (8000, 1000, False, False, Outcome.ACTS),
    (10, 0, True, False, Outcome.ACTS),
    (9000, 5000, True, True, Outcome.NO_SPAN),
])
def test_the_trigger_decides_a_named_outcome(total, body, force, empty, outcome):
    figures = trigger_figures(total, body, window=10_000, trigger_ratio=0.8, min_target_ratio=0.1, force=force)
    assert decide(figures, empty=empty) is outcome


def test_a_refusal_with_figures_teaches_the_window_and_the_token_ratio():
    window = ModelWindow(8192, "GET /v1/models")
    told = SummarizerError("context_overflow", "too long", context_window=4096, prompt_tokens=6000)
    assert learned(told, 5000, window, 1.15) == (ModelWindow(4096, "overflow error"), 6000 / 5000 * 1.03)
    silent = SummarizerError("context_overflow", "too long")
    assert learned(silent, 5000, window, 1.15) == (window, 1.15)
    assert learned(silent, 5000, None, 1.15) == (None, 1.15)
    size_only = SummarizerError("context_overflow", "too long", prompt_tokens=3000)
    assert learned(size_only, 0, None, 1.15) == (None, 1.15)  # nothing counted: no ratio to learn


@pytest.mark.parametrize(("problem", "hint"), [
    ("the reply was cut at max_tokens (512)", "raise summary_max_tokens (--set dialogue.summary_max_tokens=N) or use "
                                              "a model that writes shorter"),
    ("the reply is empty", "use a larger model: this one does not follow the summary prompt"),
])
def test_the_hint_of_a_refused_reply(problem, hint):
    assert refusal_hint(problem, "dialogue") == hint


def history():
    return [Message(role="user", content="Read the parser"),
            parse_message(msg("assistant", "", tool_calls=[call("c1", "bash", {"command": "cat parser.py"})])),
            Message(role="tool", content="def parse(text):\n" + "    pass\n" * 200, tool_call_ids=("c1",)),
            Message(role="assistant", content="It splits on commas."),
            Message(role="user", content="Now fix the empty-input bug"), Message(role="assistant", content="on it")]


def run(fake, **values):
    sleeps = []
    ctx = Context(counter=COUNTER, window=200_000, summarizer=fake, force=True, sleep=sleeps.append)
    result = get("dialogue").compress(history(), get("dialogue").settings_model(**values), ctx)
    return result, sleeps


@pytest.mark.parametrize(("retry_after", "slept"), [(2.5, 2.5), (600.0, 60.0), (0.0, 0.0), (-1.0, 0.05), (None, 0.05)])
def test_retry_after_is_honoured_up_to_a_minute(retry_after, slept):
    result, sleeps = run(FakeSummarizer(SummarizerError("rate_limit", "429", retry_after=retry_after), SNAPSHOT))
    assert result.applied and sleeps == [slept]
    assert [c.reason for c in result.calls] == ["transient rate_limit: retrying", "ok"]


def test_an_empty_response_is_retried_like_a_transient_error():
    result, sleeps = run(FakeSummarizer(SummarizerError("empty_response", "no text"), SNAPSHOT))
    assert result.applied and sleeps == [0.05]


def test_a_refused_reply_is_resampled_at_once_with_a_seed_per_attempt():
    fake = FakeSummarizer("no sections at all, just chatter", "still no sections here either", SNAPSHOT)
    result, sleeps = run(fake)
    assert result.applied and sleeps == []  # a refused reply is asked again without waiting
    assert [c.parameters.get("temperature") for c in fake.calls] == [None, RESAMPLE_TEMPERATURE, RESAMPLE_TEMPERATURE]
    assert [c.parameters.get("seed") for c in fake.calls] == [None, 1, 2]
    assert [c.reason for c in result.calls] == ["reply refused: retrying", "reply refused: retrying", "ok"]
    assert [c.attempt for c in result.calls] == [1, 2, 3]


def test_three_overflow_budgets_then_give_up():
    assert OVERFLOW_BUDGETS == (0.85, 0.65, 0.5)


# ---- shrink_span ---------------------------------------------------------------------------------


def test_shrink_span_keeps_the_largest_legal_prefix_that_fits():
    msgs = [Message(role="user", content="go")]
    for n in range(4):
        msgs += [parse_message(msg("assistant", "", tool_calls=[call(f"c{n}", "bash", {})])),
                 Message(role="tool", content="word " * 100, tool_call_ids=(f"c{n}",))]
    span = Span.from_cuts(len(msgs), 1, len(msgs))
    pair = sum(COUNTER.message(m).total for m in msgs[1:3])
    smaller = shrink_span(msgs, span, budget=2 * pair + 50 + 7, fixed=50, counter=COUNTER)
    assert (smaller.body, smaller.tail) == (range(1, 5), range(5, 9))  # two pairs fit, never a call without result
    # room for less than one message: the body would keep the first call without its result, so no span
    assert shrink_span(msgs, span, budget=50 + 3, fixed=50, counter=COUNTER) is None
    talk = [msgs[0], Message(role="assistant", content="word " * 100), *msgs[1:]]
    one = shrink_span(talk, Span.from_cuts(len(talk), 1, len(talk)), budget=53, fixed=50, counter=COUNTER)
    assert one.body == range(1, 2)  # at least one message stays in the body when that cut is legal
    assert shrink_span(msgs, span, budget=50, fixed=50, counter=COUNTER) is None  # no room at all
    assert shrink_span(msgs, Span.from_cuts(len(msgs), 1, 2), budget=10_000, fixed=0, counter=COUNTER) is None


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), st.integers(min_value=1, max_value=4000))
def test_a_shrunk_span_is_smaller_and_never_splits_a_tool_pair(messages, budget):
    span = Span.from_cuts(len(messages), 1, len(messages))
    smaller = shrink_span(messages, span, budget=budget, fixed=0, counter=COUNTER)
    if smaller is None:
        return
    assert smaller.body.start == 1 and smaller.body.stop < span.body.stop
    assert smaller.tail.start == smaller.body.stop and smaller.tail.stop == len(messages)
    assert smaller.body.stop in legal_cut_points(messages)


# ---- summarize(): the call policy on its own --------------------------------------------------------


class Windowed(FakeSummarizer):
    """A fake whose backend says its window (``None``: it knows none)."""

    def __init__(self, window, *replies):
        super().__init__(*replies)
        self.window = window

    def context_window(self):
        return self.window


def talk(pairs: int) -> list[Message]:
    """A user question, then ``pairs`` tool calls with a 100-word result each, then a reply."""
    out = [Message(role="user", content="go")]
    for n in range(pairs):
        out += [parse_message(msg("assistant", "", tool_calls=[call(f"c{n}", "bash", {})])),
                Message(role="tool", content="word " * 100, tool_call_ids=(f"c{n}",))]
    return out + [Message(role="assistant", content="done")]


def policy(fake, messages, *, shrink=True, less=None, refit=None):
    """``summarize`` over the whole body of ``messages`` (the last message the tail), its sleeps."""
    sleeps = []
    ctx = SimpleNamespace(counter=COUNTER, summarizer=fake, transient_retries=2, sleep=sleeps.append,
                          clock=lambda: 0.0)

    def build(span):
        return SummaryRequest(processor="dialogue", contract="state_snapshot", prompt="Summarise.",
                              messages=tuple(messages), body=span.body, target_tokens=100)

    span = Span.from_cuts(len(messages), 1, len(messages) - 1)
    got = summarize(messages, span, build, ctx, fixed_tokens=lambda s: 50, shrink=shrink, less=less, refit=refit)
    return got, sleeps


def test_a_request_that_fits_the_known_window_is_sent_whole():
    messages = talk(2)
    got, _ = policy(Windowed(ModelWindow(8192, "test"), SNAPSHOT), messages)
    assert (got.error, got.span.body, [c.reason for c in got.calls]) == (None, range(1, 5), ["ok"])
    assert got.calls[0].request.max_tokens == 100  # the summary budget: below a quarter of the window


def test_an_overflow_without_figures_shrinks_to_a_share_of_the_known_window():
    messages = talk(6)  # each call with its result counts 9 + 105 tokens; the fixed part of a request, 50
    fake = Windowed(ModelWindow(900, "test"), SummarizerError("context_overflow", "too long"), SNAPSHOT)
    got, _ = policy(fake, messages)
    assert [c.reason for c in got.calls] == ["context overflow: body shrunk to fit 0.85 of the summariser's window",
                                             "ok"]
    # room (900 - 100 answer - 64 margin) / 1.15 = 640: five pairs fit up front; after the refusal 640 × 0.85, four
    assert [c.span.body for c in got.calls] == [range(1, 11), range(1, 9)]


def test_an_overflow_over_a_body_of_one_message_has_no_smaller_span():
    messages = [talk(0)[0], Message(role="assistant", content="word " * 200), talk(0)[-1]]
    refusal = SummarizerError("context_overflow", "too long")
    got, _ = policy(FakeSummarizer(refusal), messages)
    assert (got.error, got.response, [c.reason for c in got.calls]) == (refusal, None, ["no smaller span"])


def test_a_reply_cut_at_its_limit_is_asked_once_for_less():
    messages = talk(2)
    cut = SummarizerError("invalid_response", "not a usable summary: the reply was cut at max_tokens (100)")
    fake = FakeSummarizer(cut, cut, SNAPSHOT)
    shorter = []

    def less(request):
        shorter.append(request.target_tokens)
        return replace(request, prompt="Summarise in fewer words.")

    got, sleeps = policy(fake, messages, less=less)
    assert [c.reason for c in got.calls] == ["reply cut at its limit: asked again for less",
                                             "reply refused: retrying", "ok"]
    assert shorter == [100] and sleeps == []
    assert [r.prompt.split("\n")[0] for r in fake.calls] == ["Summarise.", "Summarise in fewer words.",
                                                             "Summarise in fewer words."]
    assert [r.parameters.get("seed") for r in fake.calls] == [None, None, 2]  # only the plain refusal resamples


def test_a_fitted_request_is_refitted_only_when_the_server_says_its_window():
    messages = talk(2)
    refitted = []

    def refit(request, window, ratio):
        refitted.append((window, ratio))
        return replace(request, prompt="Summarise (refitted).")

    told = SummarizerError("context_overflow", "too long", context_window=1000)
    got, _ = policy(FakeSummarizer(told, SNAPSHOT), messages, shrink=False, refit=refit)
    assert [c.reason for c in got.calls] == ["context overflow: refitted to the server's window of 1,000 tokens", "ok"]
    assert refitted == [(ModelWindow(1000, "overflow error"), 1.15)]
    silent = SummarizerError("context_overflow", "too long")
    got, _ = policy(FakeSummarizer(silent), messages, shrink=False, refit=refit)
    assert [c.reason for c in got.calls] == ["context overflow on a request fitted to its budget"]
    assert got.error is silent and len(refitted) == 1


@pytest.mark.parametrize(("errors", "reasons"), [
    ([SummarizerError("authentication", "401")], ["authentication is not retried"]),
    ([SummarizerError("timeout", "slow")] * 3, ["transient timeout: retrying"] * 2 + ["transient retries exhausted"]),
])
def test_what_is_not_retried_says_why(errors, reasons):
    got, sleeps = policy(FakeSummarizer(*errors), talk(2))
    assert [c.reason for c in got.calls] == reasons and got.error is errors[-1]
    assert sleeps == [0.05, 0.1][: len(errors) - 1]
