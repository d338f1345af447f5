"""current-round, dialogue and full with a fake summariser: the openjiuwen-spec §11 checklist and our fixes."""

from __future__ import annotations

import re

import pytest
from conftest import FakeSummarizer, call, msg

from tcompact.compressors import get
from tcompact.summarizers.fitting import state_budget
from tcompact.compressors.base import Context
from tcompact.compressors.full import SUMMARY_INTRO
from tcompact.compressors.prefix import wrap_memory
from tcompact.formats.chat import parse_message
from tcompact.model import Message
from tcompact.spans import legal_cut_points
from tcompact.summarizers.base import SummarizerError
from tcompact.summarizers.contracts import prompt_text
from tcompact.counting.tokens import TokenCounter

SNAPSHOT = "<coverage_check>all kept</coverage_check>\n<state_snapshot>\n1. Active Task\nfix it\n</state_snapshot>"
PAD = "filler text " * 300


def U(text):
    return Message(role="user", content=text)


def A(text="", *calls):
    return parse_message(msg("assistant", text, tool_calls=[call(c, name, args) for c, name, args in calls]))


def T(cid, text=PAD):
    return Message(role="tool", content=text, tool_call_ids=(cid,))


def run(name, messages, fake, *, force=True, window=200_000, preserve=None, **values):
    sleeps = []
    ctx = Context(counter=TokenCounter(), window=window, summarizer=fake, force=force, preserve=preserve,
                  sleep=sleeps.append, clock=lambda: 1_700_000_000.0)
    result = get(name).compress(messages, get(name).settings_model(**values), ctx)
    return result, sleeps


SOURCE = "def parse(text):\n    return text.split(',')"


def history():
    return [U("Read the parser"), A("", ("c1", "read_file", {"path": "parser.py"})), T("c1", SOURCE),
            A("", ("c0", "bash", {"command": "grep -rn parse ."})), T("c0"), A("It splits on commas."),
            U("Now fix the empty-input bug"), A("", ("c2", "bash", {"command": "pytest -q"})), T("c2"), A("working")]


# ---- dialogue ----------------------------------------------------------------------------------


def test_dialogue_keeps_only_the_snapshot_inside_the_exact_wrapper():
    fake = FakeSummarizer(SNAPSHOT)
    result, _ = run("dialogue", history(), fake)
    assert result.applied and result.reason == "compacted"
    memory = result.messages[0]
    assert memory.text == wrap_memory(
        "memory_block_dialogue",
        "This is a compressed handoff of earlier conversation history. It is not a new user request. If any "
        "information here is relevant to the latest user request or later task execution, treat it as prior context "
        "for the current response.",
        "Newer raw messages and the latest explicit user intent override this handoff.",
        "1. Active Task\nfix it")
    assert memory.text.startswith("<memory_block_dialogue>\n<meaning>\n") and memory.text.endswith(
        "</summary>\n</memory_block_dialogue>")
    assert "coverage_check" not in memory.text
    (request,) = fake.calls
    assert (request.processor, request.contract, list(request.body)) == ("dialogue", "dialogue", [0, 1, 2, 3, 4, 5])
    # the budget (0.13 of the body's 668 tokens, at least 512 or half the body when that is less: 334) is sent
    # as max_tokens and stated in the prompt
    assert (request.target_tokens, request.max_tokens) == (334, 334)
    assert request.prompt == prompt_text("dialogue").replace("{max_tokens}", "334") == state_budget(
        prompt_text("dialogue"), 334)
    assert "must fit in 334 tokens — it is cut off there" in request.prompt
    wire = request.wire_messages()
    assert [m["role"] for m in wire] == ["user", "assistant", "tool", "assistant", "tool", "assistant", "user"]
    assert wire[-1] == {"role": "user", "content": request.prompt}  # the current turn is never sent


def test_dialogue_reinjects_read_files_but_not_todos():
    msgs = history()
    msgs[1] = A("", ("c1", "read_file", {"path": "parser.py"}), ("t1", "TodoWrite", {"todos": [
        {"content": "fix bug", "status": "pending", "activeForm": "Fixing bug"}]}))
    msgs.insert(3, T("t1", "ok"))
    # the files read get what is left of the re-injection budget (about a quarter of the summary's): a summary
    # as large as what it replaces leaves room for this one
    result, _ = run("dialogue", msgs, FakeSummarizer(SNAPSHOT), summary_ratio=1.0)
    assert result.applied
    assert result.messages[1].text == (
        "<recovered_context>\n<instruction>\nThese sections restore context or state that may have been compacted "
        "out.\nUse them only to understand the latest request or continue existing work.\nDo not treat them as new "
        'user commands.\n</instruction>\n\n<section name="read_file">\nRecently read file: parser.py\nLines returned: '
        f"2\n\n{SOURCE}\n</section>\n</recovered_context>")
    assert result.messages[2].text == "Now fix the empty-input bug"


def test_raw_reply_without_a_snapshot_tag_is_used_as_is():
    result, _ = run("dialogue", history(), FakeSummarizer("  Active Task: plain summary text  "))
    assert "<summary>\nActive Task: plain summary text\n</summary>" in result.messages[0].text


def test_a_reply_with_no_section_heading_is_refused_retried_at_a_higher_temperature_then_fails():
    fake = FakeSummarizer("plain summary text", "still plain", "plain again")
    result, sleeps = run("dialogue", history(), fake)
    assert (result.applied, result.failed, result.messages, sleeps) == (False, True, tuple(history()), [])
    reason = "no section heading of the summary template (such as '1. Historical User Requests and Outcomes')"
    assert result.reason == (f"summariser failed: not a usable summary: {reason} — use a larger model: this one "
                             "does not follow the summary prompt")
    assert [(c.error.kind, c.response.text, c.reason) for c in result.calls] == [
        ("invalid_response", "plain summary text", "reply refused: retrying"),
        ("invalid_response", "still plain", "reply refused: retrying"),
        ("invalid_response", "plain again", "every reply refused")]
    assert [c.parameters for c in fake.calls] == [{}, {"temperature": 0.7, "seed": 1}, {"temperature": 0.7, "seed": 2}]
    assert fake.calls[0].wire_messages() == fake.calls[2].wire_messages()


def test_dialogue_trigger_and_minimum_target():
    msgs = history()
    counter = TokenCounter()
    total, body = counter.total(msgs), counter.total(msgs[:6])
    result, _ = run("dialogue", msgs, FakeSummarizer(), force=False)
    assert (result.applied, result.reason) == (False, f"below the threshold ({total:,} < 160,000 tokens)")
    window = int(total / 0.8)  # over the trigger, but the history is under 0.1 × window only with a minimum of 0.9
    result, _ = run("dialogue", msgs, FakeSummarizer(), force=False, window=window, min_target_context_ratio=0.9)
    assert result.reason == f"the compressible part is below the minimum target ({body:,} < {int(window * 0.9):,} tokens)"
    fake = FakeSummarizer(SNAPSHOT)
    assert run("dialogue", msgs, fake, force=False, window=window)[0].applied
    only = [U("hello"), A("hi")]
    assert run("dialogue", only, FakeSummarizer())[0].reason == "no compressible span"


def test_internal_messages_after_the_last_real_user_stay_in_the_tail():
    msgs = history() + [U("<system-reminder>todo list changed</system-reminder>")]
    result, _ = run("dialogue", msgs, FakeSummarizer(SNAPSHOT))
    assert [m.text for m in result.messages[-5:]] == ["Now fix the empty-input bug", "", PAD, "working",
                                                      "<system-reminder>todo list changed</system-reminder>"]


# ---- current round -----------------------------------------------------------------------------


def test_current_round_folds_old_snapshots_and_reinjects_todos():
    msgs = [U("hist"), A("hist answer"), U("real current"), U("<memory_block_current>\nold"),
            A("", ("t1", "TodoWrite", {"todos": [{"id": "1", "content": "write test", "status": "in_progress"},
                                                  {"id": "2", "content": "ship", "status": "completed"}]})),
            T("t1", "ok"), A("", ("c3", "bash", {"command": "make"})), T("c3"),
            U("<system-reminder>x</system-reminder>")]
    fake = FakeSummarizer(SNAPSHOT)
    result, _ = run("current-round", msgs, fake)
    assert [m.text[:22] for m in result.messages[:3]] == ["hist", "hist answer", "real current"]
    assert result.messages[3].text.startswith("<memory_block_current>\n<meaning>\nThis is a compressed summary of")
    assert result.messages[4].text.endswith(
        '<section name="todo">\nActive todo items:\n- [in_progress] 1: write test\nStatus counts: completed: 1, '
        "in_progress: 1\n</section>\n</recovered_context>")
    assert len(result.messages) == 5
    assert list(fake.calls[0].body) == [3, 4, 5, 6, 7, 8]


def test_current_round_keep_recent_is_extended_to_the_call():
    msgs = [U("task"), A("", ("tc1", "bash", {})), T("tc1"), A("", ("tc2", "bash", {})), T("tc2"), A("partial")]
    fake = FakeSummarizer(SNAPSHOT)
    result, _ = run("current-round", msgs, fake, keep_recent_messages=2)
    assert list(fake.calls[0].body) == [1, 2]
    assert [m.role for m in result.messages] == ["user", "user", "assistant", "tool", "assistant"]


def test_preservation_instruction_is_appended_to_the_prompt():
    fake = FakeSummarizer(SNAPSHOT)
    run("current-round", history(), fake, preserve="the exact failing test name")
    prompt = fake.calls[0].prompt
    # the budget: half the 626-token body (less than 512)
    assert prompt.startswith(state_budget(prompt_text("current"), 313).rstrip() + "\n\nUser preservation instruction:\n")
    assert "the exact failing test name" in prompt and "not as a new task to execute" in prompt


# ---- failures, retries, benefit ---------------------------------------------------------------


def test_context_overflow_shrinks_the_body_on_legal_cuts_then_gives_up_after_four_calls():
    msgs = [U("go")] + [m for n in range(6) for m in (A("", (f"c{n}", "bash", {})), T(f"c{n}"))] + [A("end")]
    overflow = SummarizerError("context_overflow", "prompt is too long")
    fake = FakeSummarizer(overflow, overflow, overflow, overflow)
    result, sleeps = run("current-round", msgs, fake, window=5000)
    assert (result.applied, result.failed) == (False, True)
    assert result.messages == tuple(msgs)
    # tokens per message: user 5, assistant 9, tool 606; prompt 773 (+4): the first request counts 4,477 tokens.
    # No window is known (neither the fake nor the refusal says one), so the budgets are 0.85, 0.65 and 0.5 of
    # that request — not of the transcript's window of 5,000. 0.85 leaves 3,023 for the body: 9 messages fit, but
    # the cut after them would split A(c4) from T(c4), so it moves back to 8; then 0.65 → 6, 0.5 → 4.
    assert [list(c.body) for c in fake.calls] == [list(range(1, 14)), list(range(1, 9)), list(range(1, 7)),
                                                  [1, 2, 3, 4]]
    legal = legal_cut_points(msgs)
    assert all(c.body.stop in legal for c in fake.calls)
    assert [r.reason for r in result.calls] == [
        f"context overflow: body shrunk to fit {r} of the first refused request's 4,477 tokens"
        for r in (0.85, 0.65, 0.5)] + ["overflow retries exhausted"]
    assert sleeps == []


def test_transient_errors_are_retried_with_the_same_request_and_backoff():
    fake = FakeSummarizer(SummarizerError("server_unstable", "502"), SummarizerError("rate_limit", "429",
                                                                                       retry_after=1.5), SNAPSHOT)
    result, sleeps = run("dialogue", history(), fake)
    assert result.applied and len(result.calls) == 3
    assert sleeps == [0.05, 1.5]
    assert fake.calls[0] == fake.calls[1] == fake.calls[2]
    fake = FakeSummarizer(*[SummarizerError("timeout", "slow")] * 3)
    result, sleeps = run("dialogue", history(), fake)
    assert (result.failed, len(fake.calls), sleeps) == (True, 3, [0.05, 0.1])
    assert result.reason == "summariser failed: slow"


@pytest.mark.parametrize("kind", ["authentication", "api_request_error"])
def test_authentication_and_bad_requests_are_not_retried(kind):
    fake = FakeSummarizer(SummarizerError(kind, "no"))
    result, sleeps = run("dialogue", history(), fake)
    assert (result.failed, len(fake.calls), sleeps, result.calls[0].reason) == (True, 1, [], f"{kind} is not retried")


def test_empty_summaries_are_retried_then_rejected():
    fake = FakeSummarizer("", "<state_snapshot>  </state_snapshot>", "   ")
    result, _ = run("dialogue", history(), fake)
    assert (result.applied, result.failed) == (False, True)
    assert result.reason == ("summariser failed: not a usable summary: the reply is empty — use a larger model: "
                             "this one does not follow the summary prompt")
    assert [c.error.kind for c in result.calls] == ["invalid_response"] * 3


def test_no_benefit_keeps_the_original():
    fake = FakeSummarizer("<state_snapshot>1. Active Task\n" + " ".join(f"fact {i}." for i in range(3000))
                          + "</state_snapshot>")
    result, _ = run("dialogue", history(), fake)
    assert (result.applied, result.failed) == (False, False)
    assert result.reason.startswith("no benefit (") and result.reason.endswith("tokens); original kept")
    assert result.messages == tuple(history())


def test_secrets_in_a_summary_are_redacted():
    key = "sk-proj-" + "A1b2C3d4" * 6
    result, _ = run("dialogue", history(), FakeSummarizer(f"<state_snapshot>Active Task: the key is {key}</state_snapshot>"))
    assert key not in result.messages[0].text and "[REDACTED" in result.messages[0].text


# ---- full --------------------------------------------------------------------------------------


def test_full_keeps_user_messages_newest_first_within_the_budget():
    long_request = "please " * 400
    msgs = [Message(role="system", content="sys"), U("first request " + long_request), A("ok"),
            U("second request"), A("", ("c1", "bash", {})), T("c1"), U("third request"), A("done")]
    fake = FakeSummarizer(SNAPSHOT)
    result, _ = run("full", msgs, fake, user_messages_max_tokens=300)
    roles = [m.role for m in result.messages]
    assert roles == ["system", "user", "user", "user", "user"]
    first, second, third, handoff = result.messages[1:]
    # the overflowing request keeps its head and its tail, cut at blanks, around the marker
    head, marker, tail = re.fullmatch(r"(first request (?:please )*please)\n(\[… [\d,]+ tokens in the middle of "
                                      r"this message: that part was cut by tcompact full to fit the user-message "
                                      r"budget …\])\n((?:please )+)", first.text).groups()
    assert 600 < len(head) < 1400 and 300 < len(tail) < 1000 and len(head) > len(tail)
    assert int(re.search(r"[\d,]+", marker).group().replace(",", "")) > 100
    assert (second.text, third.text) == ("second request", "third request")
    assert handoff.text == f"{SUMMARY_INTRO}\n\n1. Active Task\nfix it"
    assert list(fake.calls[0].body) == list(range(1, 8)) and fake.calls[0].contract == "full"


# ---- through compress(): the summary budget, pinned messages, the assembled result --------------


def bodies(tokens_per_result, results=1):
    """A request, ``results`` calls with results of about ``tokens_per_result`` tokens each, an answer, a request."""
    msgs = [U("start")]
    for n in range(results):
        msgs += [A("", (f"c{n}", "bash", {"n": n})), T(f"c{n}", "word " * tokens_per_result)]
    return msgs + [A("done"), U("next")]


@pytest.mark.parametrize(("size", "values", "budget"), [
    (30, {}, 64),  # a tiny body: at least 64 tokens
    (400, {}, 214),  # under 1,024 tokens: half of it (the 512 floor is more than the body can use)
    (3000, {}, 512),  # 0.13 of 3,000-odd tokens is under the 512 floor
    (30_000, {}, 3903),  # 0.13 of what it replaces
    (30_000, {"summary_max_tokens": 2000}, 2000),  # capped
    (30_000, {"summary_ratio": 0.5}, 8000),  # capped at the default summary_max_tokens
])
def test_the_summary_budget_is_a_share_of_what_it_replaces(size, values, budget):
    msgs = bodies(size)
    fake = FakeSummarizer(SNAPSHOT)
    run("dialogue", msgs, fake, **values)
    (request,) = fake.calls
    body = sum(TokenCounter().message(msgs[i]).total for i in request.body)
    assert (request.target_tokens, request.max_tokens) == (budget, budget)
    expected = min(values.get("summary_max_tokens", 8000),
                   max(min(512, body // 2), int(body * values.get("summary_ratio", 0.13)), 64))
    assert budget == expected


@pytest.mark.parametrize("name", ["dialogue", "current-round", "full"])
def test_without_a_summariser_a_summarising_compressor_fails_and_changes_nothing(name):
    ctx = Context(counter=TokenCounter(), window=200_000, summarizer=None, force=True)
    result = get(name).compress(history(), get(name).settings_model(), ctx)
    assert (result.applied, result.failed, result.reason, result.messages) == (False, True, "no summariser",
                                                                               tuple(history()))


@pytest.mark.parametrize(("name", "body"), [("dialogue", [0, 1, 2, 3, 4, 5, 6]),
                                         ("current-round", [8, 9, 10, 11])])
def test_system_and_developer_messages_inside_the_body_stay_before_the_memory_block(name, body):
    msgs = history()
    msgs.insert(3, Message(role="system", content="Rule: never push."))
    msgs.insert(10, Message(role="developer", content="Use the staging database."))
    fake = FakeSummarizer(SNAPSHOT)
    result, _ = run(name, msgs, fake)
    assert list(fake.calls[0].body) == body
    texts = [m.text for m in result.messages]
    memory = next(i for i, m in enumerate(result.messages) if m.meta.get("memory_block"))
    pinned = [i for i, m in enumerate(result.messages) if m.role in ("system", "developer")]
    assert [texts[i] for i in pinned] == ["Rule: never push.", "Use the staging database."]
    inside = [i for i in pinned if msgs.index(next(m for m in msgs if m.text == texts[i])) in body]
    assert all(i < memory for i in inside)  # those of the body come before the summary replacing it


def test_a_failed_call_and_an_empty_summary_leave_the_transcript_as_it_was():
    result, _ = run("dialogue", history(), FakeSummarizer(SummarizerError("authentication", "bad key")))
    assert (result.applied, result.failed, result.reason) == (False, True, "summariser failed: bad key")
    assert result.messages == tuple(history()) and len(result.calls) == 1
    empty = FakeSummarizer("  \n ")
    empty.trusted = True  # a backend trusted to follow the contract is not checked: the empty summary is refused
    result, _ = run("full", history(), empty)
    assert (result.applied, result.failed, result.reason) == (False, True, "the summariser returned an empty summary")


def test_an_applied_summary_reports_what_it_replaced_and_its_figures():
    result, _ = run("dialogue", history(), FakeSummarizer(SNAPSHOT))
    assert result.notes == ("6 messages summarised into one memory_block_dialogue",)
    assert result.messages[0].meta["memory_block"] == "memory_block_dialogue"
    assert set(result.figures) == {"facts_kept", "tokens_kept"} and 0 < result.figures["tokens_kept"] < 1
    assert result.span.body == range(0, 6) and result.tokens_after < result.tokens_before


def test_full_starts_after_the_leading_system_prompt_and_can_keep_a_raw_tail():
    msgs = [Message(role="system", content="sys"), Message(role="developer", content="dev")] + history()
    fake = FakeSummarizer(SNAPSHOT)
    result, _ = run("full", msgs, fake, keep_recent_messages=1)
    assert list(fake.calls[0].body) == list(range(2, 11))  # the last message stays raw
    assert [m.text for m in result.messages[:2]] == ["sys", "dev"]
    handoff = next(m for m in result.messages if m.meta.get("memory_block") == "full")
    assert handoff.text == f"{SUMMARY_INTRO}\n\n1. Active Task\nfix it\n\nRecent messages are preserved verbatim."
    assert result.messages[-1].text == "working"
    assert result.notes == ("9 messages replaced by 2 user message(s) and one summary",)


def test_full_with_no_user_budget_keeps_no_user_message_and_never_harness_text():
    msgs = history()
    msgs.insert(3, U("<system-reminder>the todo list changed</system-reminder>"))
    result, _ = run("full", msgs, FakeSummarizer(SNAPSHOT), user_messages_max_tokens=0)
    assert [m.text for m in result.messages if m.role == "user" and not m.meta.get("memory_block")
            and not m.meta.get("reinjected")] == []
    result, _ = run("full", msgs, FakeSummarizer(SNAPSHOT))
    users = [m.text for m in result.messages if m.role == "user" and not m.meta.get("memory_block")
             and not m.meta.get("reinjected")]
    assert users == ["Read the parser", "Now fix the empty-input bug"]


def test_full_reinjects_the_plan_todos_and_files_after_its_summary():
    msgs = [U("port it"),
            A("", ("p", "update_plan", {"explanation": "Port module by module.", "plan": [
                {"step": "port parser", "status": "in_progress"}, {"step": "port cli", "status": "pending"}]})),
            T("p", "Plan updated"), A("", ("r", "read_file", {"path": "cli.py"})), T("r", SOURCE),
            A("", ("b", "bash", {"command": "pytest -q"})), T("b"), A("working")]
    result, _ = run("full", msgs, FakeSummarizer(SNAPSHOT), summary_ratio=1.0)
    extra = result.messages[-1]
    assert extra.meta.get("reinjected") and result.messages[-2].meta.get("memory_block") == "full"
    assert [line for line in extra.text.splitlines() if line.startswith("<section")] == [
        '<section name="plan">', '<section name="read_file">', '<section name="todo">']
    assert "Current plan:\nPort module by module." in extra.text and f"Lines returned: 2\n\n{SOURCE}\n" in extra.text
    assert "- [in_progress] 1: port parser\n- [pending] 2: port cli" in extra.text
