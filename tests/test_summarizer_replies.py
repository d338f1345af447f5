"""summarizers/replies.py on its own: an answer read whole from the openai client's own types (text, content
parts, the failures it is), and what a server's ``/v1/models`` or ``/props`` body says of its window."""

from __future__ import annotations

import pytest
from openai.types.chat import ChatCompletion
from openai.types.completion_usage import CompletionUsage

from tcompact.summarizers.base import SummarizerError
from tcompact.summarizers.replies import (
    empty_text,
    models_window,
    props_window,
    schema_refused,
    usage_dict,
    whole_reply,
)


def completion(message: dict, **extra) -> ChatCompletion:
    return ChatCompletion.model_validate({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                                          "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                                          **extra})


def read(value):
    return whole_reply(value, host="h:1", redact=lambda text: text.replace("SECRET", "[key]"))


def test_an_answer_read_whole_keeps_its_finish_model_and_the_servers_timings():
    got = read(completion({"role": "assistant", "content": "<state_snapshot>done"}, timings={"predicted_n": 5}))
    assert (got.text, got.finish_reason, got.model, got.timings) == ("<state_snapshot>done", "stop", "m",
                                                                    {"predicted_n": 5})


def test_a_refusal_without_text_is_an_empty_response_quoting_it():
    with pytest.raises(SummarizerError) as info:
        read(completion({"role": "assistant", "content": None, "refusal": "I can't   help\nwith that."}))
    assert (info.value.kind, info.value.what) == ("empty_response",
                                                  "h:1 answered with a refusal (I can't help with that.), no text")


def test_a_body_that_is_no_completion_is_named_redacted_and_clipped():
    with pytest.raises(SummarizerError) as info:
        read("<html>SECRET " + "x" * 200)
    assert info.value.kind == "server_unstable"
    assert info.value.what == "h:1 answered with a body that is not a chat completion: <html>[key] " + "x" * 107 + "…"  # 120 characters


@pytest.mark.parametrize(("reason", "hint"), [
    ("length", "raise summary_max_tokens (--set full.summary_max_tokens=N): the model spent its budget (on "
               "reasoning?) before answering"),
    ("stop", "try another model"),
])
def test_no_text_names_why_the_model_stopped(reason, hint):
    err = empty_text("h:1", reason, "full")
    assert (err.kind, err.what, err.hint) == ("empty_response", f"h:1 answered with no text (finish_reason {reason})",
                                              hint)


@pytest.mark.parametrize(("message", "refused"), [
    ("'response_format' of type 'json_schema' is not supported", True),
    ("grammar-based sampling is disabled", True),
    ("temperature must be at most 2", False),
])
def test_a_refused_schema_is_a_bad_request_that_names_it(message, refused):
    assert schema_refused(SummarizerError("api_request_error", message)) is refused
    assert schema_refused(SummarizerError("server_unstable", message)) is False


@pytest.mark.parametrize(("body", "window"), [
    ({"data": [{"id": "other", "aliases": ["mine"], "meta": {"n_ctx": 2048}, "max_model_len": 4096}]}, 2048),
    ({"data": [{"id": "mine", "max_model_len": 4096, "context_length": 8192}]}, 4096),
    ({"data": [{"id": "only", "context_window": 16384}]}, 16384),  # the only entry, whatever its name
    ({"data": [{"id": "a", "context_length": 1}, {"id": "b", "context_length": 2}]}, None),  # none of them ours
    ({"data": [{"id": "mine"}]}, None),
    ({"data": "not a list"}, None),
    (["not", "a", "mapping"], None),
])
def test_the_window_a_models_list_states(body, window):
    assert models_window(body, "mine") == window


def test_the_window_of_llama_cpps_props_and_usage_as_plain_values():
    assert props_window({"default_generation_settings": {"n_ctx": 4096}}) == 4096
    assert props_window({"default_generation_settings": "none"}) is None and props_window([]) is None
    usage = CompletionUsage(prompt_tokens=11, completion_tokens=7, total_tokens=18)
    assert usage_dict(usage) == {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    assert usage_dict({"prompt_tokens": 3}) == {"prompt_tokens": 3}
    assert usage_dict(None) is None
