"""mask: tool outputs older than the newest N turns become a placeholder that says what was cut and where the
whole output is; calls, reasoning and newer outputs stay as they were."""

from __future__ import annotations

import pytest
from conftest import call, msg

from tcompact.compressors import chain_settings, get, parse_chain, parse_sets
from tcompact.compressors.base import Context
from tcompact.compressors.mask import MASK_MARKER
from tcompact.errors import UsageError
from tcompact.formats.chat import parse_message
from tcompact.model import Message, Reasoning
from tcompact.counting.tokens import TokenCounter

BIG = "\n".join(f"line {n} of the output" for n in range(120))


def ctx(**kw):
    return Context(counter=TokenCounter(), window=200_000, locator=lambda m: f"session.jsonl:{m.meta['line']}", **kw)


def run(messages, **values):
    return get("mask").compress(messages, get("mask").settings_model(**values), ctx())


def session(outputs):
    """A request, then per (tool, output) one assistant turn with a call and its result (line numbers 10, 20…)."""
    msgs = [Message(role="user", content="do it")]
    for n, (tool, text) in enumerate(outputs):
        step = parse_message(msg("assistant", f"step {n}", tool_calls=[call(f"c{n}", tool, {"n": n})]))
        msgs.append(Message(role="assistant", content=step.content, tool_calls=step.tool_calls,
                            reasoning=(Reasoning(text=f"think {n}"),)))
        msgs.append(Message(role="tool", content=text, tool_call_ids=(f"c{n}",), meta={"line": 10 * (n + 1)}))
    msgs.append(Message(role="assistant", content="done"))
    return msgs


def test_outputs_older_than_the_newest_turns_become_a_placeholder():
    msgs = session([("Bash", BIG), ("Read", BIG + "\nValueError: bad header"), ("Bash", BIG), ("Read", BIG)])
    result = run(msgs, keep_recent_turns=2)
    assert (result.applied, result.reason, result.figures) == (True, "masked", {"masked": 2})
    texts = [m.text for m in result.messages if m.role == "tool"]
    assert texts[0] == (f"{MASK_MARKER}: Bash({{\"n\":0}}) — 120 lines / 2,649 bytes cut\nThe whole output is in "
                        "session.jsonl:10; run the call again if you need it now.]")
    assert texts[1] == (f"{MASK_MARKER}: Read({{\"n\":1}}) — 121 lines / 2,672 bytes cut; it reported:\n"
                        "  ValueError: bad header\nThe whole output is in session.jsonl:20; run the call again if "
                        "you need it now.]")
    assert texts[2:] == [BIG, BIG]  # the newest two turns keep their outputs
    # calls, reasoning and the assistant's words are untouched; so is every message that is not an old output
    assert [m for m in result.messages if m.role != "tool"] == [m for m in msgs if m.role != "tool"]
    assert result.tokens_after < result.tokens_before


def test_masking_twice_changes_nothing_and_small_outputs_stay():
    msgs = session([("Bash", BIG), ("Bash", "ok"), ("Bash", BIG)])
    once = run(msgs, keep_recent_turns=1)
    assert once.figures == {"masked": 1}  # "ok" is below min_tokens
    again = run(once.messages, keep_recent_turns=1)
    assert (again.applied, again.reason) == (False, "no old tool output to mask")
    assert run(msgs, keep_recent_turns=1, min_tokens=0).figures == {"masked": 1}  # a placeholder would be longer
    assert run(msgs, keep_recent_turns=3).applied is False


def test_only_the_tools_named_are_masked_and_zero_turns_masks_every_output():
    msgs = session([("Bash", BIG), ("Read", BIG), ("Bash", BIG)])
    result = run(msgs, keep_recent_turns=0, tools=["Read"])
    assert [m.text.startswith(MASK_MARKER) for m in result.messages if m.role == "tool"] == [False, True, False]
    assert run(msgs, keep_recent_turns=0).figures == {"masked": 3}


def test_its_settings_are_validated_and_listed():
    with pytest.raises(UsageError, match=r"^mask setting keep_recent_turns must be 0 or more, not -1 — settings of mask: "):
        chain_settings(parse_chain("mask"), overrides=parse_sets(["keep_recent_turns=-1"]))
    settings = get("mask").settings_model()
    assert (settings.keep_recent_turns, settings.min_tokens, settings.tools) == (10, 100, [])
