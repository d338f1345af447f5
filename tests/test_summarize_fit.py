"""Fitting a summariser call to the summariser's own window (summarizers/fitting.py and calls.py, round_level/phase.py).

A fake summariser that knows its window (``context_window()``) and refuses requests the way real
servers do (a SummarizerError carrying the server's window and the prompt's size), so every
figure can be computed here from the token counter and checked exactly.
"""

from __future__ import annotations

from conftest import FakeSummarizer, call, msg

from tcompact.compressors import get
from tcompact.summarizers.fitting import FIT_MARGIN, TOKEN_RATIO, output_budget, prompt_room, state_budget
from tcompact.compressors.base import Context
from tcompact.formats.chat import parse_message
from tcompact.model import Message
from tcompact.spans import legal_cut_points
from tcompact.summarizers.base import ModelWindow, SummarizerError
from tcompact.summarizers.contracts import prompt_text
from tcompact.counting.tokens import TokenCounter

SNAPSHOT = "<state_snapshot>\n1. Active Task\nfix it\n</state_snapshot>"
COUNTER = TokenCounter()


class WindowedFake(FakeSummarizer):
    """A FakeSummarizer whose model has a context window."""

    def __init__(self, window: ModelWindow | None, *replies):
        super().__init__(*replies)
        self.window = window

    def context_window(self):
        return self.window


def session(pairs: int = 8) -> list[Message]:
    """A request and ``pairs`` tool calls with their ~600-token results, then an answer."""
    out = [Message(role="user", content="Port the parser and keep every test green")]
    for n in range(pairs):
        out.append(parse_message(msg("assistant", "", tool_calls=[call(f"c{n}", "bash", {"n": n})])))
        out.append(Message(role="tool", content=f"result {n} " + "line of output " * 200, tool_call_ids=(f"c{n}",)))
    return out + [Message(role="assistant", content="still working")]


def run(name, messages, fake, *, window=200_000, **values):
    sleeps = []
    ctx = Context(counter=COUNTER, window=window, summarizer=fake, force=True, sleep=sleeps.append,
                  clock=lambda: 1_700_000_000.0)
    return get(name).compress(messages, get(name).settings_model(**values), ctx), sleeps


def counted(messages, body: range, prompt: str) -> int:
    """A current-round request as counted here: the prefix (the request), the body, the prompt, 4."""
    return sum(COUNTER.message(messages[i]).total for i in range(body.stop)) + COUNTER.count(prompt) + 4


def test_budget_and_room_arithmetic():
    window = ModelWindow(2048, "test")
    assert output_budget(8000, window) == 512 and output_budget(300, window) == 300 and output_budget(300, None) == 300
    assert prompt_room(window, 512) == int((2048 - 512 - FIT_MARGIN) / TOKEN_RATIO) == 1280
    assert state_budget("Fit in {max_tokens} tokens.", 1500) == "Fit in 1,500 tokens."
    assert state_budget("No placeholder.", 64) == "No placeholder.\n\nYour whole answer must fit in 64 tokens: it is " \
                                                 "cut off there."
    # no budget known (a backend that takes none): the placeholder says so, no sentence is added
    assert state_budget("Fit in {max_tokens}.", None) == "Fit in the limit."
    assert state_budget("No placeholder.", None) == "No placeholder."


def test_a_known_window_shrinks_the_span_before_the_first_call_and_caps_the_budget():
    messages = session()
    fake = WindowedFake(ModelWindow(4096, "GET /v1/models"), SNAPSHOT)
    result, _ = run("current-round", messages, fake, summary_max_tokens=8000, summary_ratio=1)  # budget = body
    assert result.applied
    (request,) = fake.calls
    assert request.max_tokens == 1024  # a quarter of the window, not the 8,000 of summary_max_tokens
    assert request.window == ModelWindow(4096, "GET /v1/models")
    assert "must fit in 1,024 tokens" in request.prompt
    room = prompt_room(ModelWindow(4096, "x"), 1024)
    size = counted(messages, request.body, prompt_text("current"))
    assert size <= room < size + 2 * COUNTER.message(messages[2]).total  # the largest legal body that fits
    assert request.body.stop in legal_cut_points(messages) and request.body.start == 1
    assert [c.reason for c in result.calls] == ["ok"]


def test_no_window_known_sends_the_whole_body_and_the_summary_budget():
    messages = session()
    fake = WindowedFake(None, SNAPSHOT)
    run("current-round", messages, fake, summary_max_tokens=700, summary_ratio=1)  # the budget: the 700 cap
    (request,) = fake.calls
    assert (list(request.body), request.max_tokens, request.window) == (list(range(1, 18)), 700, None)


def test_a_refusal_with_the_servers_figures_shrinks_to_its_window_using_its_token_ratio():
    messages = session()
    first = counted(messages, range(1, 18), prompt_text("current"))
    server_tokens = int(first * 1.3)  # the server's tokenizer counts 30 % more than ours
    refusal = SummarizerError("context_overflow", "request exceeds the available context size", status=400,
                              context_window=4096, prompt_tokens=server_tokens)
    fake = WindowedFake(None, refusal, SNAPSHOT)
    result, sleeps = run("current-round", messages, fake, summary_max_tokens=256)
    assert result.applied and sleeps == []
    refused, fitted = fake.calls
    assert refused.window is None and fitted.window == ModelWindow(4096, "overflow error")
    assert fitted.max_tokens == 256
    room = prompt_room(ModelWindow(4096, "x"), 256, server_tokens / first * 1.03)
    assert counted(messages, fitted.body, prompt_text("current")) <= room
    assert fitted.body.stop in legal_cut_points(messages)
    assert [c.reason for c in result.calls] == [
        "context overflow: body shrunk to fit the server's window of 4,096 tokens", "ok"]


def test_a_refusal_whose_window_no_span_fits_stops_at_once():
    messages = [Message(role="user", content="go"), Message(role="assistant", content="word " * 3000),
                Message(role="assistant", content="word " * 3000)]
    refusal = SummarizerError("context_overflow", "too long", context_window=1024, prompt_tokens=7000)
    fake = WindowedFake(None, refusal)
    result, _ = run("current-round", messages, fake, summary_max_tokens=64)
    assert result.failed and len(fake.calls) == 1
    (record,) = result.calls
    assert record.reason.startswith("no span fits the server's window of 1,024 tokens (the smallest counts ")


def test_a_request_that_cannot_fit_a_known_window_is_not_sent():
    fake = WindowedFake(ModelWindow(500, "--summarizer-window"))
    result, _ = run("current-round", session(), fake, summary_max_tokens=64)
    assert result.failed and fake.calls == [] and result.calls == ()
    assert result.reason.startswith("summariser failed: the request (") and result.reason.endswith(
        "does not fit the summariser's context window of 500 tokens (from --summarizer-window) beside its answer, and "
        "no smaller span does — use a model with a larger context, or lower summary_max_tokens")


# ------------------------------------------------------------------------------------- round-level


def rounds(n: int) -> list[Message]:
    out = []
    for k in range(n):
        out += [Message(role="user", content=f"request {k}"),
                parse_message(msg("assistant", "", tool_calls=[call(f"c{k}", "bash", {})])),
                Message(role="tool", content="output " * 300, tool_call_ids=(f"c{k}",)),
                Message(role="assistant", content=f"answer {k}")]
    return out


def blocks(summary: str):
    import json

    return lambda req: json.dumps({"blocks": [{"block_id": b.block_id, "summary": summary} for b in req.blocks]})


def test_round_level_calls_fit_a_known_window_and_say_their_answer_limit():
    fake = WindowedFake(ModelWindow(2048, "GET /props"), *[blocks("Active Task: done.")] * 3)
    result, _ = run("round-level", rounds(3), fake, target_total_tokens=300, first_pass_target_tokens=100,
                    compression_call_max_tokens=250_000)
    assert result.applied and fake.calls
    for request in fake.calls:
        assert request.window == ModelWindow(2048, "GET /props")
        assert request.max_tokens == min(len(request.blocks) * (100 + 24), 512)
        assert f"- max_output_tokens: {request.max_tokens}\n" in request.prompt
        sent = COUNTER.count(request.system) + COUNTER.count(request.prompt) + 8
        assert sent <= prompt_room(ModelWindow(2048, "x"), 512)
        assert f"- compression_call_budget_limit: {prompt_room(ModelWindow(2048, 'x'), 512)}\n" in request.prompt


def test_round_level_refits_a_call_the_server_refused_with_its_window():
    refusal = SummarizerError("context_overflow", "exceeds the available context size", context_window=1024,
                              prompt_tokens=1400)
    fake = WindowedFake(None, refusal, blocks("Active Task: done."), blocks("Active Task: done."))
    result, _ = run("round-level", rounds(2), fake, target_total_tokens=200, first_pass_target_tokens=50,
                    compression_call_max_tokens=250_000)
    refused, refitted = fake.calls[:2]
    assert refused.max_tokens is None  # no window known: no limit sent
    assert refitted.window == ModelWindow(1024, "overflow error") and refitted.max_tokens == len(refitted.blocks) * 74
    size = COUNTER.count(refused.system) + COUNTER.count(refused.prompt) + 8
    assert COUNTER.count(refitted.system) + COUNTER.count(refitted.prompt) + 8 <= prompt_room(
        ModelWindow(1024, "x"), refitted.max_tokens, 1400 / size * 1.03)
    assert result.calls[0].reason == "context overflow: refitted to the server's window of 1,024 tokens"


def test_round_level_replaces_nothing_with_a_refused_answer_and_goes_on():
    """A call whose every answer is refused (a loop, then the prompt echoed) replaces nothing; the run is no failure."""
    loop = "I'm sorry for the inconvenience. " * 12
    echo = prompt_text("round_level_normal")
    fake = WindowedFake(None, loop, echo, *[blocks("Active Task: done.")] * 4)
    ctx = Context(counter=COUNTER, window=200_000, summarizer=fake, force=True, sleep=lambda s: None,
                  clock=lambda: 1.0, transient_retries=1)
    rl = get("round-level")
    result = rl.compress(rounds(2)[:4], rl.settings_model(target_total_tokens=100, first_pass_target_tokens=50), ctx)
    first, second = result.calls[:2]
    assert (first.error.kind, first.reason) == ("invalid_response", "reply refused: retrying")
    assert first.error.what == "not a usable summary: a loop: the reply repeats 'i'm sorry for the inconvenience.' 12 times"
    assert second.error.what.startswith("not a usable summary: the reply repeats the instruction prompt (")
    assert fake.calls[1].parameters == {"temperature": 0.7, "seed": 1}
    assert not result.failed and result.figures["stages"][0]["replaced"] == 0
