"""sessions/usage.py: one entry per API request, made alike across Claude Code and Codex."""

from __future__ import annotations

from datetime import datetime, timezone

from claude_lines import assistant, usage, user
from codex_lines import ln

from tcompact.model import Record
from tcompact.sessions.usage import ANTHROPIC, OPENAI, Request, requests_of


def records(*data):
    return [Record(line=n + 1, data=d) for n, d in enumerate(data)]


def t(second):
    return f"2026-01-05T10:00:{second:02d}.000Z"


def when(second):
    return datetime(2026, 1, 5, 10, 0, second, tzinfo=timezone.utc)


def test_claude_requests_keep_the_last_line_of_each_reply():
    one_hour = {**usage(10, 100, 40, 5), "cache_creation": {"ephemeral_1h_input_tokens": 30}, "speed": "fast"}
    recs = records(
        user("u0", None, "q"),
        assistant("a1", "u0", "msg_1", [], usage(10, 100, 40, 1), t(1), request="r1"),
        assistant("a2", "a1", "msg_1", [], one_hour, t(2), request="r1"),
        assistant("a3", "a2", "msg_2", [], usage(3, 0, 0, 7), t(3), request=None),  # Bedrock: no requestId
        assistant("a4", "a3", "", [], usage(9, 9, 9, 9), t(4)),  # no message id: not a request
        assistant("a5", "a4", "msg_3", [], "none", t(5)),
        None)
    recs[3].data["message"]["model"] = "<synthetic>"
    recs[2].data["message"]["model"] = ""
    assert requests_of("claude-code", recs) == (
        Request(key=("claude", "msg_1", "r1"), model=None, provider=ANTHROPIC, at=when(2), input=10, output=5,
                cache_write=40, cache_read=100, cache_write_1h=30, speed="fast"),
        Request(key=("claude", "msg_2", ""), model="<synthetic>", provider=ANTHROPIC, at=when(3), input=3, output=7))
    assert requests_of("claude-code", recs)[0].prompt == 150


def test_codex_requests_are_the_growth_of_the_running_total():
    def tokens(ts, total=None, last=None):
        info = {}
        for key, figures in (("total_token_usage", total), ("last_token_usage", last)):
            if figures is not None:
                info[key] = dict(zip(("input_tokens", "cached_input_tokens", "output_tokens"), figures))
        return ln("event_msg", {"type": "token_count", "info": info}, t(ts))

    recs = records(
        ln("session_meta", {"id": "x", "model_provider": "openai"}, t(0)),
        ln("turn_context", {"model": "gpt-5-codex"}, t(0)),
        tokens(1, (1000, 200, 50)),
        tokens(2, (1000, 200, 50)),  # repeated: adds nothing
        tokens(3, (2500, 1200, 90)),
        ln("turn_context", {"model": "gpt-5.1-codex"}, t(4)),
        tokens(5, (300, 500, 10)),  # a total that went down starts again (cached above input: capped)
        tokens(6, last=(40, 0, 4)),  # no total: the request's own figures
        ln("event_msg", {"type": "token_count", "info": None}, t(7)),
        {"type": "event_msg", "payload": "x"})
    got = requests_of("codex", recs)
    assert [(r.model, r.provider, r.at, r.input, r.cache_read, r.output) for r in got] == [
        ("gpt-5-codex", OPENAI, when(1), 800, 200, 50),
        ("gpt-5-codex", OPENAI, when(3), 500, 1000, 40),
        ("gpt-5.1-codex", OPENAI, when(5), 0, 300, 10),
        ("gpt-5.1-codex", OPENAI, when(6), 40, 0, 4)]
    assert len({r.key for r in got}) == 4
    assert got[0].key == ("codex", t(1), ("cached_input_tokens", 200), ("input_tokens", 1000), ("output_tokens", 50))


def test_a_codex_provider_other_than_openai_is_named():
    recs = records(ln("session_meta", {"id": "x", "model_provider": "ollama"}, t(0)),
                   ln("event_msg", {"type": "token_count", "info": {"last_token_usage": {"input_tokens": 5}}}, t(1)))
    assert [(r.provider, r.model, r.input) for r in requests_of("codex", recs)] == [("ollama", None, 5)]
    no_provider = records(ln("session_meta", {"id": "x", "model_provider": None}, t(0)), recs[1].data)
    assert requests_of("codex", no_provider)[0].provider == OPENAI


def test_no_usage_recorded_is_none_never_zero():
    assert requests_of("codex", records(ln("session_meta", {"id": "x"}, t(0)))) is None
    assert requests_of("claude-code", records(user("u0", None, "q"))) is None
    assert requests_of("chat", records({"role": "assistant", "usage": {"prompt_tokens": 1}})) is None
    zero = records(ln("event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": 0}}}, t(1)))
    assert requests_of("codex", zero) is None
