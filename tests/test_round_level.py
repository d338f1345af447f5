"""The four-stage round-level pipeline: targets, prompts, phases, stages, levels (openjiuwen-spec §8.1, §11)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from conftest import FakeSummarizer, call, msg

from tcompact.compressors import chain_settings, get, parse_chain, parse_sets
from tcompact.compressors.base import Context
from tcompact.compressors.round_level.phase import parse_blocks
from tcompact.compressors.round_level.prompting import cap_text, fit_prompt, head_tail
from tcompact.compressors.round_level.targets import (
    ACK,
    aggressive_targets,
    l0_targets,
    level_of,
    memory_message,
    memory_text,
    merge_targets,
    protect_tool_call_boundary,
)
from tcompact.errors import UsageError
from tcompact.formats.chat import parse_message
from tcompact.model import Message
from tcompact.summarizers.base import SummarizerError
from tcompact.counting.tokens import TokenCounter

MARK = "[ROUND_LEVEL_MEMORY_BLOCK]"
PAD = "detail " * 150
#: A summary far longer than what it replaces, and no loop (a loop would be refused as no summary at all).
LONG = " ".join(f"fact {i} holds." for i in range(700))


def U(text):
    return Message(role="user", content=text)


def A(text="", *ids):
    return parse_message(msg("assistant", text, tool_calls=[call(i, "bash", {"n": i}) for i in ids]))


def T(cid, text=PAD):
    return Message(role="tool", content=text, tool_call_ids=(cid,))


def M(level, summary="earlier work"):
    return memory_message(MARK, "completed_react", summary, level)


def rounds(n):
    out = []
    for k in range(n):
        out += [U(f"request {k}"), A("", f"c{k}"), T(f"c{k}"), A(f"answer {k}")]
    return out


def echo(summary="short summary"):
    """A reply giving every requested block a short summary."""
    return lambda req: json.dumps({"blocks": [{"block_id": b.block_id, "summary": f"{summary} {b.block_id}"}
                                              for b in req.blocks]})


def run(messages, fake, *, force=True, window=1_000_000, concurrency=1, **values):
    """Run round-level; upstream's behaviour (the last request compressed too) unless told otherwise."""
    ctx = Context(counter=TokenCounter(), window=window, summarizer=fake, force=force, sleep=lambda s: None,
                  concurrency=concurrency)
    compressor = get("round-level")
    values.setdefault("keep_last_request", False)
    return compressor.compress(messages, compressor.settings_model(**values), ctx)


# ---- settings ----------------------------------------------------------------------------------


def test_settings_defaults_and_validation():
    (s,) = chain_settings(parse_chain("round-level"))
    assert (s.trigger_total_tokens, s.target_total_tokens, s.keep_recent_messages, s.compression_call_max_tokens,
            s.first_pass_target_tokens, s.second_pass_target_tokens, s.third_pass_target_tokens,
            s.truncate_head_ratio, s.truncated_marker, s.compression_marker) == (
        230000, 160000, 0, 250000, 30000, 20000, 10000, 0.2, "...[TRUNCATED]...", MARK)
    with pytest.raises(UsageError, match=r"round-level settings: target_total_tokens \(230000\) "
                                         r"must be below trigger_total_tokens \(230000\)"):
        chain_settings(parse_chain("round-level"), overrides=parse_sets(["target_total_tokens=230000"]))
    with pytest.raises(UsageError, match="truncate_head_ratio must be less than 1, not 1"):
        chain_settings(parse_chain("round-level"), overrides=parse_sets(["truncate_head_ratio=1"]))
    with pytest.raises(UsageError, match=r"target_total_tokens \(160,000\) must be below the trigger \(0.5 × "
                                         r"200,000 = 100,000 tokens\)"):
        run(rounds(1), FakeSummarizer(), window=200_000, trigger_context_ratio=0.5)


def test_trigger_is_inclusive():
    msgs = rounds(2)
    total = TokenCounter().total(msgs)
    at = run(msgs, FakeSummarizer(echo()), force=False, trigger_total_tokens=total + 1, target_total_tokens=10)
    assert (at.applied, at.reason) == (False, f"below the threshold ({total:,} < {total + 1:,} tokens)")
    hit = run(msgs, FakeSummarizer(echo()), force=False, trigger_total_tokens=total, target_total_tokens=total - 1)
    assert hit.applied and hit.reason == "under the target after recursive"
    fake = FakeSummarizer(echo(), echo())
    ratio = run(msgs, fake, force=False, window=total * 2, trigger_context_ratio=0.5, target_total_tokens=total - 1)
    assert ratio.applied and len(fake.calls) == 2  # the window caps the call budget: one block per call


# ---- memory blocks, targets, boundaries ---------------------------------------------------------


def test_memory_block_text_and_level():
    m = M(1, "did things")
    assert m.text == (f"{MARK}\nprocessor: RoundLevelCompressor\ntype: historical_memory_block\nscope: completed_react\n"
                      "authority: This block is reference memory, not a binding source of truth.\n"
                      "instruction_status: Historical fallback context only. Do not treat as a new user instruction.\n"
                      "conflict_priority: Prefer newer explicit user intent, newer raw context, and fresh tool results "
                      "over this block.\n\nSummary:\ndid things")
    assert m.role == "user" and dict(m.extra) == {"metadata": {"compress_level": 1}} and level_of(m) == 1
    assert level_of(U(memory_text(MARK, "x", "y"))) == 1
    assert level_of(Message(role="user", content="x", extra={"metadata": {"compress_level": "3"}})) == 3


def test_l0_blocks_end_at_answers_and_the_in_flight_turn_is_ongoing():
    msgs = [U("1"), A("", "a"), T("a"), A("f1"), U("2"), A("", "b"), T("b"), A("f2"), U("3"), A("", "c"), T("c")]
    got = [(b.block_id, b.scope, b.start, b.end, b.current_level, b.next_level) for b in l0_targets(msgs, 10, MARK)]
    assert got == [("block_1", "completed_react", 0, 3, 0, 1), ("block_2", "completed_react", 4, 7, 0, 1),
                   ("block_3", "ongoing_react", 8, 10, 0, 1)]
    with_memory = [M(1), A(ACK), U("4"), A("f4")]
    assert [(b.start, b.end) for b in l0_targets(with_memory, 3, MARK)] == [(2, 3)]


def test_tool_call_boundary_protection_java_cases():
    msgs = [U("u"), A("", "call-1"), T("call-1"), A("final")]
    assert protect_tool_call_boundary(msgs, 0, 1) == 0
    assert protect_tool_call_boundary(msgs, 0, 3) == 3
    assert protect_tool_call_boundary(msgs, 2, 1) == 1
    assert protect_tool_call_boundary([U("u"), A("", "x")], 0, 1) == 0  # a dangling call never ends a block
    assert l0_targets(msgs, 1, MARK) == []  # protection would leave a one-message block: none is built
    assert [(b.start, b.end) for b in l0_targets(msgs, 2, MARK)] == [(0, 2)]


def test_moving_a_block_end_back_before_one_call_does_not_strand_an_earlier_call():
    # Found by hypothesis: the end moved back before c3's call once, leaving c2's call in the block
    # and its result (index 5) outside it.
    msgs = [A("", "c0"), T("c0"), A("", "c2"), A("", "c3"), T("c2"), U("request"), T("c3")]
    assert protect_tool_call_boundary(msgs, 0, 4) == 1
    assert protect_tool_call_boundary(msgs, 0, 6) == 6
    assert protect_tool_call_boundary(msgs, 2, 4) == 1  # nothing from 2 on can close: start - 1
    assert [(b.start, b.end) for b in l0_targets(msgs, 4, MARK)] == [(0, 1)]


@pytest.mark.parametrize(("levels", "expected"), [
    ([1, 1, 2], [("merge_1_1", 0, 1, 1, 2, 2)]),
    ([1, 2, 3], [("merge_2_1", 0, 1, 2, 3, 2)]),  # the lone L1 is promoted to 2 and merged with the L2
    ([2, 1, 1, 1], [("merge_1_1", 1, 3, 1, 2, 3)]),
    ([1], []),
])
def test_merge_targets(levels, expected):
    msgs = [M(lv) for lv in levels]
    got = [(b.block_id, b.start, b.end, b.current_level, b.next_level, b.source_block_count)
           for b in merge_targets(msgs, len(msgs) - 1, MARK)]
    assert got == expected


def test_merge_runs_span_raw_rounds_and_system_messages_but_not_kept_or_tied_messages():
    msgs = [M(1), U("raw"), M(1), M(1)]
    got = [(b.start, b.end, b.source_block_count) for b in merge_targets(msgs, 3, MARK)]
    assert got == [(0, 3, 3)]  # the raw round between joins the merge (our deviation)
    assert [(b.start, b.end) for b in merge_targets(msgs, 3, MARK, keep=frozenset({1}))] == [(2, 3)]
    pinned = [M(1), Message(role="system", content="sys"), M(1), M(1)]
    assert [(b.start, b.end) for b in merge_targets(pinned, 3, MARK)] == [(0, 3)]  # the merge keeps "sys"
    # a call in the gap whose result lies after the next block: the gap cannot be bridged
    tied = [M(1), A("", "x"), M(1), T("x"), M(1), M(1)]
    assert [(b.start, b.end) for b in merge_targets(tied, 5, MARK)] == [(4, 5)]
    closed = [M(1), A("", "x"), T("x"), A("done"), M(1)]
    assert [(b.start, b.end, b.source_block_count) for b in merge_targets(closed, 4, MARK)] == [(0, 4, 2)]


def test_a_merge_over_system_messages_keeps_them_before_its_block_and_out_of_its_prompt():
    sys1, sys2 = Message(role="system", content="first session"), Message(role="developer", content="second")
    msgs = [sys1, M(1, "old " * 300), A(ACK), sys2, M(1, "older " * 300), U("the last request")]
    fake = FakeSummarizer(echo("merged"))
    result = run(msgs, fake, target_total_tokens=300, keep_last_request=True)
    (request,) = fake.calls
    assert request.stage == "recursive_merge_l1_to_l2" and [(b.start, b.end) for b in request.blocks] == [(1, 4)]
    targets = request.prompt.split("[Selected Targets]\n", 1)[1].split("\n\n[Protected Recent Context]", 1)[0]
    assert "[1] role=user | compress_level=l1" in targets and "[3] role=developer" not in targets
    assert [(m.role, m.text.splitlines()[0]) for m in result.messages] == [
        ("system", "first session"), ("developer", "second"), ("user", MARK), ("user", "the last request")]
    assert level_of(result.messages[2]) == 2 and result.messages[2].text.endswith("merged merge_1_1")


def test_a_raw_fallback_over_the_kept_request_keeps_it_after_the_block():
    msgs = [U("request 0"), A("", "c0"), T("c0"), A("answer 0"), U("the last request"), A("", "c1"), T("c1")]
    fake = FakeSummarizer("Both rounds done; the last one ran c1.", *[echo()] * 5)
    result = run(msgs, fake, target_total_tokens=200, keep_last_request=True)
    assert [(b.block_id, b.start, b.end) for b in fake.calls[0].blocks] == [("block_1", 0, 3), ("block_2", 5, 6)]
    assert [(m.role, m.text.splitlines()[0]) for m in result.messages] == [("user", MARK), ("user", "the last request")]
    assert result.messages[0].text.endswith("Both rounds done; the last one ran c1.")


# ---- prompts and phases --------------------------------------------------------------------------


def test_prompt_layout_and_contract():
    fake = FakeSummarizer(*[echo()] * 5)
    run(rounds(2), fake, target_total_tokens=10)
    request = fake.calls[0]
    assert request.contract == "blocks" and request.stage == "l0_to_l1"
    assert [b.block_id for b in request.blocks] == ["block_1", "block_2"]
    lines = request.prompt.splitlines()
    assert lines[:8] == ["[Compression Task]", "- phase: l0_to_l1", "- target_summary_tokens: 30000",
                         "- keep_recent_messages: 0", "- selected_blocks: 2", lines[5],
                         "- compression_call_budget_limit: 250000", "- selected_range: [0, 7]"]
    assert "[Block: block_1]\n- scope: completed_react\n- replace_range: [0, 3]\n- current_level: l0\n" \
           "- next_level: l1\n- source_block_count: 1\n[0] role=user | content=request 0\n" \
           "[1] role=assistant | tool_calls=bash | content=\n[2] role=tool | tool_call_id=c0 | content=detail" \
           in request.prompt
    assert "User Requirements" in request.prompt and "Final Result" in request.prompt
    assert "Do not weaken or over-compress the original request" in request.prompt
    wire = request.wire_messages()
    assert [m["role"] for m in wire] == ["system", "user"] and wire[1]["content"] == request.prompt


def test_parse_blocks():
    assert parse_blocks('```json\n{"blocks": [{"block_id": "b", "summary": " s "}]}\n```') == {"b": "s"}
    assert parse_blocks('{"blocks": [{"block_id": "", "summary": "x"}, {"block_id": "b", "summary": ""},'
                        ' {"block_id": "c", "summary": "one"}, {"block_id": "c", "summary": "two"}]}') == {"c": "two"}
    assert parse_blocks("not json") is None and parse_blocks('{"blocks": 3}') is None


def test_unknown_ids_are_ignored_and_missing_blocks_keep_their_messages():
    fake = FakeSummarizer(json.dumps({"blocks": [{"block_id": "block_2", "summary": "second"},
                                                 {"block_id": "nope", "summary": "ghost"}]}), *[echo()] * 5)
    result = run(rounds(2), fake, target_total_tokens=10, first_pass_target_tokens=100,
                 second_pass_target_tokens=100, third_pass_target_tokens=100)
    first = result.figures["stages"][0]
    assert (first["replaced"], first["reason"]) == (1, "1 block(s) replaced")
    # the block left raw goes to the aggressive stage, and (our deviation) so does the new memory block
    assert fake.calls[1].stage == "aggressive_keep_recent"
    assert [(b.block_id, b.start, b.end) for b in fake.calls[1].blocks] == [("block_1", 0, 3), ("memory_1", 4, 4)]


def test_invalid_json_with_text_becomes_one_replacement():
    fake = FakeSummarizer("The user asked for two things; both were done.", *[echo()] * 5)
    result = run(rounds(2), fake, target_total_tokens=150)
    first = result.figures["stages"][0]
    assert first["replaced"] == 1 and first["reason"].startswith("1 block(s) replaced")
    assert result.messages[0].text.startswith(f"{MARK}\nprocessor: RoundLevelCompressor\ntype: historical_memory_block"
                                              "\nscope: mixed_context")


def test_no_benefit_keeps_the_original_blocks():
    fake = FakeSummarizer(*[echo(LONG)] * 5)
    result = run(rounds(2), fake, target_total_tokens=10, first_pass_target_tokens=10)
    assert result.figures["stages"][0]["reason"] == "no usable replacement"


def test_stages_run_until_under_target_and_hard_truncation_ends_it():
    fake = FakeSummarizer(echo(LONG), echo(LONG), echo(LONG))
    msgs = [Message(role="system", content="sys")] + rounds(3)
    result = run(msgs, fake, target_total_tokens=300)
    names = [s["stage"] for s in result.figures["stages"]]
    assert names == ["recursive", "aggressive_keep_recent", "aggressive_full_context", "hard_truncate"]
    assert result.figures["stopped"] == "under the target after hard_truncate"
    assert result.tokens_after <= 300 and result.messages[0].text == "sys"
    assert result.messages[-1].text == "request 2"  # the last request kept verbatim (our deviation)
    assert "scope: truncated_full_context" in result.messages[1].text and "...[TRUNCATED]..." in result.messages[1].text
    assert result.messages[1].extra["metadata"] == {"compress_level": 1}  # its level, as every memory block's


def within_budget(req):
    """A summariser that keeps what fits its budget: each block's own words, as many as ``target_tokens`` hold."""
    counter, out = TokenCounter(), []
    for b in req.blocks:
        words = " ".join(req.messages[i].text.split("Summary:\n")[-1] for i in range(b.start, b.end + 1)).split()
        low, high = 0, len(words)
        while low < high:
            mid = (low + high + 1) // 2
            low, high = (mid, high) if counter.count(" ".join(words[:mid])) <= req.target_tokens else (low, mid - 1)
        out.append({"block_id": b.block_id, "summary": " ".join(words[:low])})
    return json.dumps({"blocks": out})


def test_the_aggressive_stages_ask_each_block_for_what_gets_the_context_under_the_target():
    """Issue 23 item 3: memory blocks far under the stage's 20 000 tokens came back as they were, every one was
    refused as no smaller, and hard truncation did the work."""
    from tcompact.compressors.round_level.budget import stage_budget

    facts = [M(1, " ".join(f"fact{k}x{i}" for i in range(300))) for k in range(12)]
    msgs = [Message(role="system", content="sys"), *facts, U("the request")]
    fake = FakeSummarizer(*[within_budget] * 4)
    result = run(msgs, fake, target_total_tokens=5000, keep_last_request=True)
    assert [(r.stage, len(r.blocks)) for r in fake.calls] == [("recursive_merge_l1_to_l2", 1),
                                                              ("aggressive_keep_recent", 1)]
    assert [s["stage"] for s in result.figures["stages"]] == ["recursive", "aggressive_keep_recent"]
    assert result.figures["stages"][0]["tokens_after"] > 5000 >= result.tokens_after
    assert result.figures["stopped"] == "under the target after aggressive_keep_recent"
    assert [(m.role, (m.extra.get("metadata") or {}).get("compress_level")) for m in result.messages] == \
        [("system", None), ("user", 3), ("user", None)]
    # the budget asked for is the largest that fits the target: one token more would not
    budget, sent = fake.calls[1].target_tokens, fake.calls[1].messages
    assert 64 <= budget < 5000
    kw = dict(goal=5000, counter=TokenCounter(), marker=MARK, keep=frozenset({len(sent) - 1}))
    targets = aggressive_targets(sent, len(sent) - 2, MARK, keep=kw["keep"])
    assert stage_budget(sent, targets, stage_target=20_000, **kw) == budget
    assert stage_budget(sent, targets, stage_target=budget + 1, **kw) == budget
    assert stage_budget(sent, targets, stage_target=10, **kw) == 10  # never over the stage's own
    assert stage_budget(sent, targets, stage_target=20_000, **{**kw, "goal": 10}) == 64  # the floor


def test_hard_truncation_keeps_the_head_of_an_over_budget_last_request_with_a_marker():
    from tcompact.compressors.round_level.truncation import hard_truncate
    from tcompact.compaction.invariants import violations

    counter = TokenCounter()
    request = U("fix it: " + "word " * 3000)
    msgs = [Message(role="system", content="sys"), *rounds(2), request, A("on it")]
    out = hard_truncate(msgs, target=1000, marker=MARK, truncated_marker="...[TRUNCATED]...", head_ratio=0.2,
                        counter=counter)
    assert [m.role for m in out] == ["system", "user", "user"] and out[0].text == "sys"
    allowed = 1000 - counter.message(msgs[0]).total
    cut = out[2].text
    assert cut.startswith("fix it: word word") and cut.endswith(" was cut by tcompact round-level to fit the target ...]")
    assert counter.message(out[2]).total <= allowed // 2 and counter.total(out) <= 1000
    # through the pipeline, the invariants accept the cut request
    from tcompact.compaction import Stage

    fake = FakeSummarizer(*[echo(LONG)] * 3)
    result = run(msgs, fake, target_total_tokens=1000, keep_last_request=True)
    compressor = get("round-level")
    stage = Stage(compressor, compressor.settings_model(target_total_tokens=1000), result, tuple(msgs))
    assert result.messages == out and violations(msgs, result.messages, [stage]) == []
    # a tiny target: the request is left to the cut text (here too short to show any of it)
    tiny = hard_truncate(msgs, target=100, marker=MARK, truncated_marker="...[TRUNCATED]...", head_ratio=0.2,
                         counter=counter)
    assert [m.role for m in tiny] == ["system", "user"] and "...[TRUNCATED]..." in tiny[1].text
    # system messages filling the target: it cannot be met, and the request keeps its first 512 tokens
    crowded = [Message(role="system", content="rule " * 300), *msgs[1:]]
    full = hard_truncate(crowded, target=100, marker=MARK, truncated_marker="...[TRUNCATED]...", head_ratio=0.2,
                         counter=counter)
    assert [m.role for m in full] == ["system", "user", "user"] and full[2].text.startswith("fix it: word")
    assert 400 < counter.message(full[2]).total <= 512 and full[2].text.endswith("to fit the target ...]")


def test_stage_one_is_enough_when_it_gets_under_target():
    result = run(rounds(3), FakeSummarizer(echo()), target_total_tokens=800)
    assert [s["stage"] for s in result.figures["stages"]] == ["recursive"]
    assert result.figures["stopped"] == "under the target after recursive"
    assert [level_of(m) for m in result.messages] == [1, 1, 1]


def test_recursive_merges_continue_the_levels_on_a_second_run():
    first = run(rounds(4), FakeSummarizer(echo()), target_total_tokens=800)
    assert [level_of(m) for m in first.messages] == [1, 1, 1, 1]
    fake = FakeSummarizer(echo("merged"))
    second = run(first.messages, fake, target_total_tokens=100)
    assert [r.stage for r in fake.calls] == ["recursive_merge_l1_to_l2"]
    assert [level_of(m) for m in second.messages] == [2]
    assert second.messages[0].text.endswith("Summary:\nmerged merge_1_1")
    fake = FakeSummarizer(echo("new"), echo("joined"), echo("top"))
    third = run(second.messages + tuple(rounds(2)), fake, target_total_tokens=100)
    assert [r.stage for r in fake.calls] == ["l0_to_l1", "recursive_merge_l1_to_l2", "recursive_merge_l2_to_l3"]
    assert [level_of(m) for m in third.messages] == [3]


def test_stage_two_keeps_the_recent_messages():
    fake = FakeSummarizer(echo(LONG), echo())
    msgs = rounds(3)
    result = run(msgs, fake, target_total_tokens=400, keep_recent_messages=4)
    assert [r.stage for r in fake.calls] == ["l0_to_l1", "aggressive_keep_recent"]
    assert result.figures["stopped"] == "under the target after aggressive_keep_recent"
    assert result.messages[-4:] == tuple(msgs[-4:])


def test_calls_are_packed_by_the_call_budget_and_run_concurrently():
    msgs = rounds(12)
    fake = FakeSummarizer(*[echo()] * 12)
    result = run(msgs, fake, target_total_tokens=3000, compression_call_max_tokens=2500, concurrency=4)
    l0 = [r for r in fake.calls if r.stage == "l0_to_l1"]
    assert 1 < len(l0) < 12  # fewer calls than blocks, more than one
    assert sum(len(r.blocks) for r in l0) == 12
    assert result.figures["stages"][0]["replaced"] >= 12


def test_an_impossible_call_budget_skips_the_stage():
    result = run(rounds(2), FakeSummarizer(), target_total_tokens=100, compression_call_max_tokens=50)
    assert result.figures["stages"][0]["reason"] == "the call budget of 50 tokens is impossible"
    assert [s["stage"] for s in result.figures["stages"]][-1] == "hard_truncate"


def test_a_summariser_failure_leaves_everything_unchanged():
    msgs = rounds(2)
    result = run(msgs, FakeSummarizer(SummarizerError("authentication", "bad key")), target_total_tokens=10)
    assert (result.applied, result.failed, result.messages) == (False, True, tuple(msgs))
    assert result.reason == "recursive: summariser failed: bad key"


def test_fit_prompt_cuts_the_middle():
    counter = TokenCounter()
    prompt = "[Compression Task]\n" + "word " * 3000 + "\n[Output Contract]\nJSON"
    fitted = fit_prompt("sys", prompt, budget=400, counter=counter, head_ratio=0.2, marker="...[TRUNCATED]...")
    assert counter.count("sys") + counter.count(fitted) + 8 <= 400
    assert fitted.startswith("[Compression Task]") and fitted.endswith("JSON") and "\n...[TRUNCATED]...\n" in fitted
    assert fit_prompt("sys", prompt, budget=5, counter=counter, head_ratio=0.2, marker="m") is None
    assert head_tail("abcdefghij", 5, head_ratio=0.2, marker="|") == "a\n|\nghij"
    assert head_tail("abc", 0, head_ratio=0.2, marker="|") == "|"


def test_cap_text_keeps_head_and_tail_under_the_cap():
    counter = TokenCounter()
    text = "".join(f"line {i}\n" for i in range(2000))
    assert cap_text(text, 10_000, counter=counter, head_ratio=0.2, marker="|") == text
    capped = cap_text(text, 300, counter=counter, head_ratio=0.2, marker="|")
    assert 270 <= counter.count(capped) <= 300
    assert capped.startswith("line 0\n") and capped.endswith("line 1999\n") and "\n|\n" in capped
    tiny = cap_text(text, 1, counter=counter, head_ratio=0.2, marker="|")
    assert counter.count(tiny) == 1 and tiny.startswith("|")


def _sections(prompt):
    ref = prompt.split("[Reference Context]\n", 1)[1].split("\n\n[Selected Targets]", 1)[0]
    protected = prompt.split("[Protected Recent Context]\n", 1)[1].split("\n\n[Output Contract]", 1)[0]
    return ref, protected


@pytest.mark.parametrize("cap", [300, None])
def test_every_call_repeats_at_most_context_max_tokens_of_reference_and_protected_context(cap):
    big = "".join(f"rule {i}: be careful\n" for i in range(1500))
    msgs = [Message(role="system", content=big)] + rounds(3) + [U("the last request"), A("", "z"), T("z", big)]
    fake = FakeSummarizer(*[echo()] * 10)
    run(msgs, fake, target_total_tokens=10, keep_last_request=True, context_max_tokens=cap)
    counter = TokenCounter()
    first = fake.calls[0]
    ref, protected = _sections(first.prompt)
    assert [b.block_id for b in first.blocks] == ["block_1", "block_2", "block_3", "block_4"]
    if cap is None:  # upstream: the whole system prompt in every call
        assert ref == f"[0] role=system | content={big}\n[13] role=user | content=the last request"
        assert protected == "(none)"
    else:
        assert 270 <= counter.count(ref) <= 300 and ref.startswith("[0] role=system | content=rule 0: be careful")
        assert "\n...[TRUNCATED]...\n" in ref and ref.endswith("rule 1499: be careful\n\n[13] role=user | content=the "
                                                               "last request")
        assert protected == "(none)"


def test_aggressive_targets_take_raw_rounds_and_memory_blocks_in_order():
    msgs = [M(1, "old work"), A(ACK), U("new request"), A("", "a"), T("a"), A("answer"), M(2, "older"), U("last")]
    got = [(b.block_id, b.scope, b.start, b.end, b.current_level, b.next_level)
           for b in aggressive_targets(msgs, 7, MARK, keep=frozenset({7}))]
    assert got == [("memory_1", "existing_round_level_block", 0, 1, 1, 2), ("block_1", "completed_react", 2, 5, 0, 1),
                   ("memory_2", "existing_round_level_block", 6, 6, 2, 3)]


def test_the_last_request_and_system_messages_stay_out_of_every_block():
    msgs = [Message(role="system", content="sys")] + rounds(3)
    fake = FakeSummarizer(echo())
    result = run(msgs, fake, target_total_tokens=800, keep_last_request=True)
    assert [(b.start, b.end) for b in fake.calls[0].blocks] == [(1, 4), (5, 8), (10, 12)]
    assert [m.text[:26] for m in result.messages] == ["sys", MARK, MARK, "request 2", MARK]


def test_ratio_trigger_89_vs_90_of_100():
    # openjiuwen-spec §8.1.2 test: window 100, ratio 0.9 → threshold 90; 89 tokens do not trigger, 90 do
    counter = TokenCounter()
    below, at = [U("word " * 84)], [U("word " * 85)]
    assert (counter.total(below), counter.total(at)) == (89, 90)
    fake = FakeSummarizer(*[echo()] * 3)
    assert run(below, fake, force=False, window=100, trigger_context_ratio=0.9, target_total_tokens=50).reason == \
        "below the threshold (89 < 90 tokens)"
    result = run(at, fake, force=False, window=100, trigger_context_ratio=0.9, target_total_tokens=50)
    # it triggers; a 100-token window leaves no room for a summariser call, so only truncation acts
    assert [(s["stage"], s["reason"]) for s in result.figures["stages"]] == [
        ("recursive", "the call budget of 100 tokens is impossible"),
        ("aggressive_keep_recent", "the call budget of 100 tokens is impossible"),
        ("aggressive_full_context", "the call budget of 100 tokens is impossible"),
        ("hard_truncate", "the serialised context cut to the target")]
    assert result.reason == "under the target after hard_truncate" and result.tokens_after <= 50


# ---- generated transcripts -----------------------------------------------------------------------


@st.composite
def _sessions(draw):
    """Rounds of varied size, with system messages and memory blocks of any level mixed in."""
    msgs: list[Message] = []
    pending: list[str] = []
    for step in range(draw(st.integers(min_value=1, max_value=30))):
        kind = draw(st.sampled_from(["user", "call", "result", "result", "answer", "system", "memory", "ack"]))
        if kind == "user":
            msgs.append(U(f"request {step} " * draw(st.sampled_from([1, 30]))))
        elif kind == "call":
            ids = [f"c{step}_{k}" for k in range(draw(st.integers(min_value=1, max_value=2)))]
            msgs.append(A("", *ids))
            pending.extend(ids)
        elif kind == "result" and pending:
            msgs.append(T(pending.pop(draw(st.integers(min_value=0, max_value=len(pending) - 1))),
                          f"output {step} " * draw(st.sampled_from([1, 60, 400]))))
        elif kind == "answer":
            msgs.append(A(f"answer {step} " * draw(st.sampled_from([1, 50]))))
        elif kind == "system":
            msgs.append(Message(role="system", content=f"system note {step}"))
        elif kind == "memory":
            msgs.append(M(draw(st.integers(min_value=1, max_value=3)), f"summary {step} " * 40))
        elif kind == "ack" and msgs:
            msgs.append(A(ACK))
    return msgs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_sessions(), st.integers(min_value=20, max_value=4000), st.sampled_from([300, 2_000, 250_000]),
       st.integers(min_value=0, max_value=3), st.booleans(), st.sampled_from([50, 2_000, None]))
def test_generated_sessions_keep_every_invariant_through_every_stage(messages, target, call_budget, keep_recent,
                                                                    keep_last, context_cap):
    from tcompact.compaction import Stage
    from tcompact.compaction.invariants import violations
    from tcompact.summarizers.extractive import ExtractiveSummarizer

    counter = TokenCounter()
    ctx = Context(counter=counter, window=1_000_000, summarizer=ExtractiveSummarizer(counter), force=True)
    compressor = get("round-level")
    settings_ = compressor.settings_model(target_total_tokens=target, compression_call_max_tokens=call_budget,
                                          keep_recent_messages=keep_recent, keep_last_request=keep_last,
                                          context_max_tokens=context_cap, first_pass_target_tokens=200,
                                          second_pass_target_tokens=100, third_pass_target_tokens=50)
    result = compressor.compress(messages, settings_, ctx)
    assert not result.failed
    found = violations(messages, result.messages, [Stage(compressor, settings_, result, tuple(messages))])
    truncated = any(s["stage"] == "hard_truncate" for s in result.figures.get("stages", ()))
    if not keep_last or truncated:  # upstream compresses the request; truncation keeps it only when it fits
        found = [v for v in found if v != "the last real user request is not kept verbatim"]
    assert found == []
    if result.applied:
        assert counter.total(result.messages) < counter.total(messages)
        assert [m.text for m in result.messages if m.role == "system"] == [
            m.text for m in messages if m.role == "system"]


# ---- targets, prompting and truncation on their own -------------------------------------------------


@pytest.mark.parametrize(("metadata", "level"), [
    ({"compress_level": 5}, 5), ({"compress_level": " 4 "}, 4), ({"compress_level": "three"}, 1),
    ({"compress_level": True}, 1), ({"compress_level": 0}, 1), ({"compress_level": -2}, 1), ({}, 1), ("l3", 1),
])
def test_the_level_of_a_memory_block_is_its_metadata_or_one(metadata, level):
    assert level_of(Message(role="user", content=MARK, extra={"metadata": metadata})) == level


def test_a_memory_block_is_a_user_message_starting_with_the_marker():
    from tcompact.compressors.round_level.targets import is_memory

    assert is_memory(M(1), MARK) and is_memory(U(f"{MARK} old"), MARK)
    assert not is_memory(Message(role="assistant", content=MARK), MARK)
    assert not is_memory(U(f"see {MARK}"), MARK) and not is_memory(M(1), "[OTHER_MARKER]")
    assert M(2).meta["memory_block"] == "round_level"


def test_tool_ties_pair_reused_ids_with_the_nearest_call():
    from tcompact.compressors.round_level.targets import tool_ties

    msgs = [A("", "x"), T("x"), A("", "x"), T("x"), U("u"), A("", "p", "q"), T("q"), T("p")]
    assert tool_ties(msgs) == [(0, 1), (0, 1), (2, 3), (2, 3), (4, 4), (5, 7), (5, 6), (5, 7)]


def test_messages_are_serialised_with_their_role_calls_ids_and_level():
    from tcompact.compressors.round_level.prompting import serialize

    two = parse_message(msg("assistant", "thinking", tool_calls=[call("a", "bash", {"command": "rm -rf /"}),
                                                                  call("b", "Read", {"path": "x"})]))
    assert serialize(3, two, marker=MARK) == "[3] role=assistant | tool_calls=bash,Read | content=thinking"
    assert serialize(4, T("a", "out\nmore"), marker=MARK) == "[4] role=tool | tool_call_id=a | content=out\nmore"
    assert serialize(0, M(2, "s"), marker=MARK).startswith(f"[0] role=user | compress_level=l2 | content={MARK}\n")
    assert serialize(1, Message(role="system", content="sys"), marker=MARK) == "[1] role=system | content=sys"


@pytest.mark.parametrize(("keep", "ratio", "cut"), [
    (1, 0.2, "j"),  # spec §8.1.6: a head of no character leaves the tail alone, without the marker
    (10, 0.5, "abcde\n|\nfghij"), (4, 0.5, "ab\n|\nij"), (5, 0.99, "abcd\n|\nj"), (-3, 0.2, "|"),
])
def test_head_tail(keep, ratio, cut):
    assert head_tail("abcdefghij", keep, head_ratio=ratio, marker="|") == cut


def test_prompt_parts_share_the_context_and_bound_every_prompt():
    from tcompact.compressors.round_level.prompting import PromptParts

    counter = TokenCounter()
    msgs = [Message(role="system", content="sys")] + rounds(3) + [U("the last request")]
    targets = l0_targets(msgs, len(msgs) - 2, MARK)
    parts = PromptParts(msgs, targets[:2], keep_recent=1, marker=MARK, counter=counter)
    assert parts.reference.splitlines() == ["[0] role=system | content=sys", "[9] role=user | content=request 2",
                                            "[10] role=assistant | tool_calls=bash | content=",
                                            "[11] role=tool | tool_call_id=c2 | content=" + PAD,
                                            "[12] role=assistant | content=answer 2"]
    assert parts.protected == "[13] role=user | content=the last request"
    prompt = parts.prompt(targets[:2], phase="l0_to_l1", target_tokens=500, keep_recent=1, window_tokens=999,
                          call_budget=4000, max_output_tokens=1048)
    assert "- max_output_tokens: 1048\n- keep_recent_messages: 1\n- selected_blocks: 2\n" in prompt
    assert counter.count(prompt) <= parts.upper_bound(targets[:2])
    assert parts.upper_bound(targets[:1]) == parts.base_cost() + parts.costs["block_1"]
    empty = PromptParts([U("only")], [type(targets[0])("b", "ongoing_react", 0, 0)], keep_recent=0, marker=MARK,
                        counter=counter)
    assert (empty.reference, empty.protected) == ("(none)", "(none)")


def test_fit_prompt_trusts_a_known_upper_bound_and_counts_otherwise():
    counter = TokenCounter()
    short = "[Compression Task]\nsmall"
    assert fit_prompt("sys", short, budget=10_000, counter=counter, head_ratio=0.2, marker="m", at_most=10) is short
    # a bound over the budget is no verdict: the prompt is counted, and it fits as it is
    assert fit_prompt("sys", short, budget=40, counter=counter, head_ratio=0.2, marker="m", at_most=10_000) is short
    fixed = counter.count("sys") + 8  # two messages' framing
    assert fit_prompt("sys", short, budget=fixed, counter=counter, head_ratio=0.2, marker="m") is None
    # a count given as a function is made only when the bound is no verdict, and then decides
    asked = []

    def tokens() -> int:
        asked.append(1)
        return counter.count(short)

    assert fit_prompt("sys", short, budget=10_000, counter=counter, head_ratio=0.2, marker="m", at_most=10,
                      tokens=tokens) is short and asked == []
    assert fit_prompt("sys", short, budget=40, counter=counter, head_ratio=0.2, marker="m", at_most=10_000,
                      tokens=tokens) is short and asked == [1]


def test_hard_truncation_without_a_request_or_text():
    from tcompact.compressors.round_level.truncation import hard_truncate

    counter = TokenCounter()
    work = [A("", "a"), T("a", "output " * 800), A("answer " * 100)]
    (block,) = hard_truncate(work, target=300, marker=MARK, truncated_marker="...[TRUNCATED]...", head_ratio=0.2,
                             counter=counter)
    assert block.text.startswith(f"{MARK}\nprocessor: RoundLevelCompressor\n") and counter.message(block).total <= 300
    assert "scope: truncated_full_context" in block.text and "\n...[TRUNCATED]...\n" in block.text
    assert block.text.split("Summary:\n", 1)[1].startswith("[0] role=assistant | tool_calls=bash | content=\n[1] ")
    (nothing,) = hard_truncate([A("")], target=300, marker=MARK, truncated_marker="...[TRUNCATED]...",
                               head_ratio=0.2, counter=counter)
    assert nothing.text.startswith(f"{MARK}\n")  # an empty context: a block with nothing cut out of it
    kept = hard_truncate([Message(role="system", content="sys"), U("short request"), *work], target=400, marker=MARK,
                         truncated_marker="|", head_ratio=0.2, counter=counter)
    assert [(m.role, m.text[:13]) for m in kept] == [("system", "sys"), ("user", MARK[:13]), ("user", "short request")]
    # the level after the deepest memory block it cuts, in every shape of the block
    for target in (400, 120, 10):
        (cut,) = hard_truncate([M(2, "older " * 300), M(1, "newer " * 300), *work], target=target, marker=MARK,
                               truncated_marker="...[TRUNCATED]...", head_ratio=0.2, counter=counter)
        assert cut.text.startswith(MARK) and cut.extra["metadata"] == {"compress_level": 3}, target


def test_acts_at_the_total_or_the_ratio_of_the_window():
    compressor = get("round-level")
    plain = compressor.settings_model(trigger_total_tokens=1000, target_total_tokens=500)
    assert compressor.acts(1000, 0, window=10, settings=plain, empty=True)
    assert not compressor.acts(999, 10_000, window=10, settings=plain, empty=False)
    ratio = compressor.settings_model(trigger_context_ratio=0.5, target_total_tokens=100)
    assert compressor.acts(500, 0, window=1000, settings=ratio, empty=False)
    assert not compressor.acts(499, 0, window=1000, settings=ratio, empty=False)
