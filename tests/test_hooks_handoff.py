"""The handoff built from a real session: within its budget in bytes, the user's words verbatim, a resume point.

The real sessions of ../shared/transcripts (Claude Code with thinking, with Japanese and sub-agents,
a port with one long request, a Codex rollout) are read as the session-start hook reads them, and
the handoff is built at the default budget (9,000 bytes: the clients cut hook context past 10,000),
at a larger one and at the floor (2,000), where the snapshot no longer fits and is cut with its
resume point kept.
"""

from __future__ import annotations

import re

import pytest
from conftest import real_file

from tcompact.hooks.agents import agent
from tcompact.hooks.handoff import MIN_BUDGET, TAG, handoff_text, read_messages
from tcompact.model import Message
from tcompact.rounds import is_real_user

SESSIONS = ("drmaciver", "codemie", "ccviewer", "codex")


@pytest.mark.parametrize("budget", (agent("claude").budget, 20_000, MIN_BUDGET))
@pytest.mark.parametrize("key", SESSIONS)
def test_the_handoff_keeps_to_its_budget_in_bytes(key, budget):
    messages = read_messages(real_file(key))
    text = handoff_text(messages, budget=budget, snapshot="/state/s.jsonl")
    assert len(text.encode()) <= budget
    assert text.startswith(f"<{TAG}>\nThe conversation was compacted.") and text.endswith(f"</{TAG}>")
    assert "The transcript as it stood is kept at /state/s.jsonl" in text
    assert "\nlast request: " in text and "; answered: " in text  # the resume point survives any cut
    assert text == handoff_text(messages, budget=budget, snapshot="/state/s.jsonl")  # deterministic


@pytest.mark.parametrize("key", SESSIONS)
def test_the_handoff_quotes_the_users_request_verbatim(key):
    messages = read_messages(real_file(key))
    first = next(m.text for m in messages if is_real_user(m)).strip()
    text = handoff_text(messages, budget=agent("claude").budget)
    assert _as_typed(first)[:200] in text


def _as_typed(text: str) -> str:
    """A slash command as the user typed it (``/name args``), any other message as it is."""
    tag = re.search(r"<command-name>(.*?)</command-name>", text)
    if tag is None:
        return text
    args = re.search(r"<command-args>(.*?)</command-args>", text, re.S)
    return f"{tag.group(1)} {args.group(1) if args else ''}".strip()


def test_a_budget_the_snapshot_cannot_fit_cuts_it_and_says_so():
    text = handoff_text(read_messages(real_file("codemie")), budget=MIN_BUDGET)
    assert "[… the rest of this handoff was cut to fit its budget; the resume point: …]\nlast request: " in text


def test_an_earlier_handoff_in_the_session_is_not_read_again(tmp_path):
    messages = read_messages(real_file("codex"))
    earlier = Message(role="developer", content=f"<{TAG}>\nCANARY-7731 from the first compaction\n</{TAG}>")
    path = tmp_path / "x.jsonl"
    import orjson

    path.write_bytes(b"".join(orjson.dumps({"role": m.role, "content": m.text}) + b"\n"
                              for m in (*messages[:5], earlier, *messages[5:]) if m.text))
    again = read_messages(path)
    assert not any("CANARY-7731" in m.text for m in again)
    assert "CANARY-7731" not in handoff_text(again)
