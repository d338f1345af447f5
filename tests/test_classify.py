"""Classifying summariser errors (summarizers/classify.py; openjiuwen-spec §2.9): the kind, status and Retry-After
of any exception and its causes, read from text, status attributes and headers, and the window and prompt size
a context-overflow refusal states (llama.cpp's body fields, the wording of OpenAI, vLLM and llama.cpp)."""

from __future__ import annotations

import email.utils
from types import SimpleNamespace

import pytest

from tcompact.summarizers.classify import classify, exception_chain, overflow_figures


class _Err(Exception):
    def __init__(self, text: str = "", **attrs) -> None:
        super().__init__(text)
        self.__dict__.update(attrs)


@pytest.mark.parametrize(("exc", "expected"), [
    (Exception("request id req_500abc failed: bad gateway"), ("server_unstable", None, None)),
    (Exception("request req_12500 failed"), ("unknown", None, None)),
    (Exception("request req-500 failed (trace 500abc, id 1500)"), ("unknown", None, None)),
    (Exception("upstream answered 503"), ("server_unstable", None, None)),
    (Exception("HTTP 413"), ("context_overflow", None, None)),
    (Exception("prompt is too long: 210000 tokens > 200000 maximum"), ("context_overflow", None, None)),
    (Exception("rate limit exceeded"), ("rate_limit", None, None)),
    (Exception("insufficient_quota"), ("authentication", None, None)),
    (Exception("Unauthorized"), ("authentication", None, None)),
    (Exception("504 Gateway Timeout"), ("server_unstable", None, None)),
    (Exception("Read timed out"), ("timeout", None, None)),
    (TimeoutError(), ("timeout", None, None)),
    (ConnectionResetError(104, "Connection reset by peer"), ("server_unstable", None, None)),
    (Exception("Bad Request: messages must not be empty"), ("api_request_error", None, None)),
    (Exception("something odd"), ("unknown", None, None)),
    (_Err("failed", status_code=413), ("context_overflow", 413, None)),
    (_Err("failed", status="503"), ("server_unstable", 503, None)),
    (_Err("max_tokens must be at most 500", status_code=400), ("api_request_error", 400, None)),
    (_Err("max_tokens must be at most 429", status_code=400), ("api_request_error", 400, None)),
    (_Err("failed", code="context_length_exceeded"), ("context_overflow", None, None)),
    (_Err("failed", body={"type": "overloaded_error"}), ("server_unstable", None, None)),
    (_Err("failed", status=SimpleNamespace(name="RESOURCE", errmsg="Too Many Requests")), ("rate_limit", None, None)),
    (_Err("failed", response=SimpleNamespace(status_code=429, headers={"retry-after-ms": "1500"})),
     ("rate_limit", 429, 1.5)),
    (_Err("failed", response=SimpleNamespace(status_code=503, headers={"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})),
     ("server_unstable", 503, 0.0)),
    (_Err("failed", response=SimpleNamespace(status_code=429, headers={"Retry-After": "later"})),
     ("rate_limit", 429, None)),
])
def test_classify(exc, expected):
    assert classify(exc) == expected


def test_classify_follows_cause_and_context_chains():
    try:
        try:
            raise ValueError("429 Too Many Requests")
        except ValueError as inner:
            raise RuntimeError("compaction failed") from inner
    except RuntimeError as exc:
        assert classify(exc) == ("rate_limit", None, None)
    try:
        try:
            raise _Err("upstream", status_code=401)
        except _Err:
            raise RuntimeError("while summarising") from None
    except RuntimeError as exc:
        assert classify(exc) == ("authentication", 401, None)


def test_classify_survives_cycles_and_a_cause_attribute():
    a, b = RuntimeError("outer"), RuntimeError("service unavailable")
    a.__cause__, b.__cause__ = b, a
    assert classify(a) == ("server_unstable", None, None)
    assert classify(_Err("wrapper", cause=_Err("inner", status_code=504))) == ("server_unstable", 504, None)


def _headers(headers, status=429):
    return _Err("failed", response=SimpleNamespace(status_code=status, headers=headers))


@pytest.mark.parametrize(("headers", "seconds"), [
    ({"retry-after-ms": "1500", "Retry-After": "9"}, 1.5),  # the milliseconds win
    ({"retry-after-ms": "soon", "retry-after": "3"}, 3.0),  # a bad one is passed over
    ({"RETRY-AFTER": "2.5"}, 2.5),  # any case, also in a plain dict
    ({"retry-after": "-5"}, 0.0),  # never negative
    ({"retry-after": "inf"}, None),
    ({"retry-after": "nan"}, None),
    ({"retry-after": email.utils.formatdate(0, usegmt=True)}, 0.0),  # a date in the past: now
    ({"retry-after": ""}, None),
    ({}, None),
])
def test_retry_after(headers, seconds):
    assert classify(_headers(headers))[2] == seconds


def test_retry_after_comes_from_the_first_response_on_the_chain_with_headers():
    inner = _headers({"retry-after": "4"})
    outer = _Err("wrapped", response=SimpleNamespace(status_code=429), cause=inner)  # a response without headers
    assert classify(outer) == ("rate_limit", 429, 4.0)
    outer = _Err("wrapped", response=SimpleNamespace(headers={"retry-after": "1"}), cause=inner)
    assert classify(outer) == ("rate_limit", 429, 1.0)


@pytest.mark.parametrize(("exc", "status"), [
    (_Err("x", status_code=True), None),  # a bool is no status
    (_Err("x", status_code=None, status=502), 502),
    (_Err("x", status="0429"), 429),
    (_Err("x", status="5xx"), None),
    (_Err("x", response=SimpleNamespace(status_code=503)), 503),
])
def test_the_status_from_any_of_its_attributes(exc, status):
    assert classify(exc)[1] == status


@pytest.mark.parametrize(("exc", "kind"), [
    # the rules in order: an overflow said with a 400 is an overflow; a quota said with a 429 is no rate limit
    (_Err("This model's maximum context length is 8192 tokens", status_code=400), "context_overflow"),
    (_Err("You exceeded your current quota, please check your plan", status_code=429), "authentication"),
    (_Err("gateway timeout", status_code=504), "server_unstable"),  # not a timeout of ours: retried as unstable
    (_Err("upstream connect error", status_code=502), "server_unstable"),
    (_Err("Not Found", status_code=404), "api_request_error"),
    (_Err("teapot", status_code=418), "unknown"),
    (_Err("x", param="messages[3].content exceeds the context window"), "context_overflow"),
])
def test_rules_apply_in_their_order(exc, kind):
    assert classify(exc)[0] == kind


def test_long_attribute_texts_are_clipped_but_still_read():
    body = {"error": {"message": "x " * 5000 + "rate limit"}}
    assert classify(_Err("failed", body=body))[0] == "unknown"  # past the first 2,000 characters
    assert classify(_Err("failed", body={"error": {"message": "rate limit " + "x " * 5000}}))[0] == "rate_limit"


def test_the_chain_is_each_exception_once_cause_then_cause_attribute_then_context():
    a, b, c, d = _Err("a"), _Err("b"), _Err("c"), _Err("d")
    a.__cause__, a.cause, a.__context__ = b, c, d
    b.__context__ = a  # a cycle
    assert list(exception_chain(a)) == [a, b, c, d]
    assert [str(e) for e in exception_chain(ValueError("alone"))] == ["alone"]


def test_the_chain_stops_at_32_exceptions():
    first = current = _Err("0")
    for n in range(1, 100):
        current.__cause__ = current = _Err(str(n))
    assert [str(e) for e in exception_chain(first)] == [str(n) for n in range(32)]


@pytest.mark.parametrize(("exc", "figures"), [
    # OpenAI
    (_Err("This model's maximum context length is 128,000 tokens. However, your messages resulted in 130,512 "
          "tokens. Please reduce the length of the messages."), (128_000, 130_512)),
    # vLLM
    (_Err("This model's maximum context length is 2048 tokens. However, you requested 2100 tokens (1900 in the "
          "messages, 200 in the completion)."), (2048, 1900)),
    # llama.cpp's message, and its body fields, which win over the words
    (_Err("request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it"),
     (4096, 5000)),
    (_Err("the request exceeds the available context size (4096 tokens)",
          body={"n_ctx": 8192, "n_prompt_tokens": 9000}), (8192, 9000)),
    (_Err("your request has 12000 input tokens, more than the context window of 8192 tokens"), (8192, 12000)),
    (_Err("context size is 32768 tokens"), (32_768, None)),
    # figures that are no figures are left out
    (_Err("overflow", body={"n_ctx": True, "n_prompt_tokens": -3}), (None, None)),
    (_Err("overflow", body={"n_ctx": "4096", "n_prompt_tokens": 0}), (None, None)),
    (_Err("maximum context length is 0 tokens"), (None, None)),
    (_Err("context length exceeded"), (None, None)),
])
def test_overflow_figures(exc, figures):
    assert overflow_figures(exc) == figures


def test_overflow_figures_are_found_anywhere_on_the_chain():
    inner = _Err("refused", body={"n_ctx": 4096})
    outer = _Err("your messages resulted in 5000 tokens", cause=inner)
    assert overflow_figures(outer) == (4096, 5000)


@pytest.mark.parametrize("seconds", ["403.3", "403", "401.5", "500"])
def test_a_deadline_in_seconds_is_no_http_status(seconds):
    """A derived deadline is a number of seconds such as 403.3: "no answer within 403.3 s" was classified as an
    authentication failure (HTTP 403 matched in the text) and never retried."""
    assert classify(TimeoutError(f"no answer within {seconds} s"))[0] == "timeout"
