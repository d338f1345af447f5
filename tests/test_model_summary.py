"""A model's summary (compressors/_model.py, _pieces.py, summarizers/narrative.py, progress.py): the narrative
beside the extractive facts, the body in pieces that fit the summariser's window, the merge, a cut reply
asked again for less, the system prompt left out when it does not fit, the derived deadlines.

The summariser here is a scripted one that narrates (as the openai backend does) and says its window;
the real server is in tests/test_llm_qwen.py."""

from __future__ import annotations

import json

import pytest
from conftest import FakeSummarizer

from tcompact.compressors import get
from tcompact.compressors._model import answer_budget
from tcompact.compressors._pieces import CUT_NOTE, fitted, plan_pieces
from tcompact.compressors.base import Context
from tcompact.model import Message, ToolCall
from tcompact.spans import Span, legal_cut_points
from tcompact.summarizers import narrative
from tcompact.summarizers.base import ModelWindow, SummaryResponse
from tcompact.summarizers.contracts import extract_snapshot, prompt_text
from tcompact.summarizers.progress import CallProgress, Speed, is_local, read_stream
from tcompact.counting.tokens import TokenCounter

COUNTER = TokenCounter()


class Narrator(FakeSummarizer):
    """A scripted model summariser with a window, answering each request in turn (finish_reason from a tuple)."""

    name = "openai"
    narrates = True

    def __init__(self, window: int, *replies):
        super().__init__(*replies)
        self.window = window

    def context_window(self):
        return ModelWindow(self.window, "GET /v1/models")

    def summarize(self, request):
        reply = self.replies[0] if self.replies else None
        if isinstance(reply, tuple):
            self.replies[0] = reply[0]
            response = super().summarize(request)
            return SummaryResponse(response.text, response.usage, response.model, finish_reason=reply[1])
        return super().summarize(request)


def session(steps: int, output_lines: int = 60) -> list[Message]:
    out = [Message("system", "You are a coding agent."), Message("user", "Port the parser to Rust.")]
    for n in range(steps):
        out += [Message("assistant", f"Step {n}.", tool_calls=(ToolCall(f"c{n}", "bash", json.dumps(
                    {"command": f"cargo test --test parser_{n}"})),)),
                Message("tool", "\n".join(f"test parser_{n}::case_{k} ... ok" for k in range(output_lines)),
                        tool_call_ids=(f"c{n}",))]
    return out + [Message("assistant", "All ported: cargo test passes.")]


def reply(**fields: str) -> str:
    return json.dumps(fields)


def compact(messages, summarizer, **settings):
    compressor = get("full")
    ctx = Context(counter=COUNTER, window=200_000, summarizer=summarizer, force=True, sleep=lambda s: None)
    return compressor.compress(messages, compressor.settings_model(**settings), ctx)


def test_a_body_too_big_for_the_window_goes_in_pieces_at_legal_cuts_then_a_merge():
    """A 2,048-token window: the body goes in pieces that each fit beside the answer, cut where no tool call
    leaves its result; the merge call gets the parts' answers, and the summary is the merged narrative under
    the model's heading, then the extractive facts (the same the extractive summariser writes alone)."""
    messages = session(12)
    assert COUNTER.total(messages) > 4000
    model = Narrator(2048, *[reply(narrative=f"part {n} ran cargo test", next_step="none") for n in range(1, 20)])
    model.replies[:0] = []
    result = compact(messages, model)
    assert result.applied, result.reason
    *pieces, merge = model.calls
    assert len(pieces) >= 2 and merge.messages[0].text.startswith("<part 1>\nNarrative: part 1 ran cargo test")
    legal = set(legal_cut_points(messages))
    for request in pieces:
        sent = sum(COUNTER.message(m).total + 8 for m in request.messages) + COUNTER.count(request.prompt)
        assert sent * 1.15 + 64 + request.max_tokens <= 2048
        assert request.messages[0].role == "system" and request.contract == "narrative"
    starts = [c.span.body.start for c in result.calls[:-1]]
    ends = [c.span.body.stop for c in result.calls[:-1]]
    assert starts[0] == 1 and ends[-1] == len(messages) and starts[1:] == ends[:-1] and set(ends) <= legal
    assert [c.request.part for c in result.calls] == [(n, len(pieces) + 1) for n in range(1, len(pieces) + 2)]
    assert f"summarised in {len(pieces)} pieces and a merge, each call within the summariser's window of 2,048 " \
           "tokens" in result.notes
    handoff = result.messages[-1].text
    facts = extract_snapshot(get_extractive_reply(messages))
    assert handoff.index(narrative.MODEL_HEADING) < handoff.index("Narrative:\npart") < handoff.index(facts)


def get_extractive_reply(messages):
    from tcompact.summarizers.base import SummaryRequest
    from tcompact.summarizers.extractive import ExtractiveSummarizer

    body = range(1, len(messages))
    target = min(8000, max(512, int(COUNTER.total(messages[1:]) * 0.13)))
    prompt = prompt_text("full")
    return ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(
        processor="full", contract="full", prompt=prompt, messages=tuple(messages), body=body,
        target_tokens=target)).text


def test_a_reply_cut_at_its_limit_is_asked_again_once_for_less():
    """Cut (finish_reason length, the JSON not closed): the next request asks for half the words and fewer
    fields under the same max_tokens, at temperature 0 (not a resample), once."""
    messages = session(4, output_lines=40)
    model = Narrator(8192, ('{"narrative": "the user asked to port', "length"),
                     reply(narrative="the parser was ported"))
    result = compact(messages, model)
    assert result.applied, result.reason
    first, second = model.calls
    assert first.max_tokens == second.max_tokens == 160
    assert "At most 86 words in all." in first.prompt and "At most 38 words in all." in second.prompt
    assert set(first.schema["properties"]) == {"narrative", "next_step"} and set(
        second.schema["properties"]) == {"narrative"}
    assert [c.reason for c in result.calls] == ["reply cut at its limit: asked again for less", "ok"]
    assert second.parameters == {}  # no resample


def test_a_system_prompt_too_big_for_the_window_is_left_out_and_said():
    messages = [Message("system", "Rule. " * 1500)] + session(6)[1:]
    plan = plan_pieces(messages, Span.from_cuts(len(messages), 2, len(messages)), room=1500, counter=COUNTER,
                       window=2048)
    assert not plan.single and all(m.role != "system" for m in plan.context)
    assert plan.notes == ("the system prompt (3,013 tokens) was left out of the summariser's requests: it does not "
                          "fit beside the conversation in the summariser's window of 2,048 tokens",)
    assert [m.text for m in plan.context] == ["Port the parser to Rust."]  # the last request goes with each piece


def test_a_message_bigger_than_the_room_is_cut_in_its_middle_with_a_marker():
    big = Message("tool", "\n".join(f"line {n}" for n in range(3000)), tool_call_ids=("c1",))
    cut = fitted(big, 300, COUNTER)
    assert COUNTER.message(cut).total <= 320 and cut.text.startswith("line 0\n") and cut.text.endswith("line 2999")
    assert CUT_NOTE.split("{")[0] in cut.text
    call = Message("assistant", "", tool_calls=(ToolCall("c1", "write", json.dumps({"path": "a.py",
                                                                                  "content": "x = 1\n" * 5000})),))
    cut = fitted(call, 200, COUNTER)
    assert json.loads(cut.tool_calls[0].arguments)["path"] == "a.py"  # still JSON: chat templates parse it


@pytest.mark.parametrize(("text", "values"), [
    ('{"narrative": "did X", "next_step": "none"}', {"narrative": "did X", "next_step": "none"}),
    ('```json\n{"narrative": "did X"}\n```', {"narrative": "did X"}),
    ("Narrative: did X\n**Next Step**: run the tests", {"narrative": "did X", "next_step": "run the tests"}),
    ("The user asked for X; done.", {"narrative": "The user asked for X; done."}),
])
def test_a_reply_is_read_from_its_json_its_headings_or_as_one_narrative(text, values):
    assert narrative.parse_reply(text, narrative.FIELDS) == values


def test_the_fields_asked_for_follow_the_budget():
    assert [len(narrative.fields_for(n)) for n in (100, 160, 399, 400)] == [1, 2, 2, 3]
    assert answer_budget(512, None) == 160 and answer_budget(8000, ModelWindow(2048, "x")) == 512
    assert answer_budget(8000, None) == 1024


def test_the_prompts_own_words_are_no_reply():
    prompt = narrative.prompt(narrative.FIELDS[:2], max_tokens=160, part=None, facts="", preserve=None)
    asks = narrative.FIELDS[0].asks
    assert narrative.placeholder_problem({"narrative": asks}, (prompt,)) == \
        "the reply holds only the prompt's own placeholder text, no summary"
    assert narrative.placeholder_problem({"narrative": "…"}, (prompt,)) is not None
    assert narrative.placeholder_problem({"narrative": "The user asked to port the parser."}, (prompt,)) is None


def test_deadlines_follow_the_measured_speed():
    speed = Speed(local=True)
    assert speed.deadline(3000, 512) == 2 * (3000 / 20 + 512 / 4) + 30  # a slow CPU assumed: 586 s
    speed.learn(timings={"prompt_per_second": 150.0, "predicted_per_second": 16.0}, usage=None, latency=30)
    assert speed.deadline(3000, 512) == 2 * (3000 / 150 + 512 / 16) + 30  # 134 s
    assert Speed(local=False).deadline(3000, 512) == 70.1  # a hosted service: 2 × (3 + 17.1) + 30
    assert [is_local(h) for h in ("127.0.0.1", "localhost", "192.168.1.9", "[::1]", "api.openai.com")] == [
        True, True, True, True, False]


class _Chunk:
    def __init__(self, text=None, finish=None, usage=None, timings=None):
        delta = type("D", (), {"content": text})()
        self.choices = [type("C", (), {"delta": delta, "finish_reason": finish})()] if text or finish else []
        self.usage, self.model, self.model_extra = usage, "m", {"timings": timings} if timings else {}


def test_a_stream_is_read_whole_and_reports_each_piece():
    seen = []
    got = read_stream([_Chunk("{\"narr"), _Chunk("ative\": \"x\"}"), _Chunk(finish="stop"),
                       _Chunk(usage={"prompt_tokens": 9, "completion_tokens": 2}, timings={"predicted_n": 2})],
                      seen.append)
    assert (got.text, got.finish_reason, got.usage, got.timings, seen) == (
        '{"narrative": "x"}', "stop", {"prompt_tokens": 9, "completion_tokens": 2}, {"predicted_n": 2}, [1, 2])


def test_a_call_line_says_which_call_tokens_and_time():
    from tcompact.render.call_view import call_line

    assert call_line(CallProgress("full", (2, 4), 3412, 57, 43.2)) == \
        "full: summariser call 2 of 4: 3,412 tokens sent, 57 received, 43 s (running)"
    assert call_line(CallProgress("full", None, 10, 0, 0.4, done=True)) == \
        "full: summariser call: 10 tokens sent, 0 received, 0 s (done)"


def test_a_call_past_its_deadline_doubles_the_next_deadline():
    speed = Speed(local=True)
    before = speed.deadline(3000, 512)
    speed.slower()
    assert speed.deadline(3000, 512) == 2 * (before - 30) + 30  # twice the expected time, plus 30 s
