"""Context windows (windows.py): the model table with its longest-prefix rule, the order a window is chosen
in and the name of where it came from, and the thresholds of spec §1.3."""

from __future__ import annotations

import pytest

from tcompact.counting.windows import (
    DEFAULT_WINDOW,
    MIN_TARGET_RATIO,
    TRIGGER_RATIO,
    Window,
    ratio_threshold,
    resolve_window,
    window_for_model,
)


@pytest.mark.parametrize(("model", "window"), [
    ("gpt-5", 400_000),
    ("gpt-5-codex", 400_000),
    ("gpt-4.1-mini", 1_047_576),
    ("gpt-4o-mini-2024-07-18", 128_000),  # gpt-4o, not gpt-4: the longest prefix wins
    ("gpt-4-turbo-preview", 128_000),
    ("gpt-4-32k-0613", 32_768),
    ("gpt-4-0613", 8_192),
    ("gpt-3.5-turbo-0125", 16_385),
    ("chatgpt-4o-latest", 128_000),
    ("gpt-oss-120b", 131_072),
    ("o1-mini", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("codex-mini-latest", 400_000),
    ("claude-sonnet-4-5-20250929", 200_000),
    ("gemini-1.5-pro-002", 2_097_152),
    ("gemini-2.5-flash", 1_048_576),
    ("deepseek-reasoner", 128_000),
    ("qwen3-coder-30b", 131_072),
    ("kimi-k2-instruct", 262_144),
    ("glm-4.5-air", 131_072),
    ("grok-4-fast", 256_000),
    ("llama-3.1-8b-instruct", 131_072),
    # names as users and files write them: a provider path, capitals, blanks, Claude's 1M-context suffix
    ("openai/gpt-5", 400_000),
    ("openrouter/anthropic/claude-opus-4", 200_000),
    ("  GPT-4o  ", 128_000),
    ("claude-sonnet-4-5[1m]", 1_000_000),
    ("Claude-Sonnet-4[1M]", 1_000_000),
])
def test_window_of_a_known_model(model, window):
    assert window_for_model(model) == window


@pytest.mark.parametrize("model", [None, "", "   ", "mistral-large", "o", "my-gpt-5", "gpt", "anthropic/"])
def test_an_unknown_model_has_no_window(model):
    assert window_for_model(model) is None


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({}, Window(200_000, "default")),
    ({"context_window": 32_000, "model": "gpt-5", "file_model": "gpt-4o", "recorded": 9}, Window(32_000, "--context-window")),
    ({"model": "gpt-5", "file_model": "gpt-4o", "recorded": 9}, Window(400_000, "model gpt-5")),
    ({"model": "mistral-large", "file_model": "gpt-4o", "recorded": 9},
     Window(128_000, "model gpt-4o (from the file)")),
    ({"model": "mistral-large", "file_model": "local-model", "recorded": 258_400},
     Window(258_400, "recorded in the file")),
    ({"model": "mistral-large", "file_model": "local-model"}, Window(200_000, "default")),
    # a zero window is no choice (it falls through, as an absent one does)
    ({"context_window": 0, "recorded": 0}, Window(200_000, "default")),
])
def test_resolve_window_in_its_documented_order(kwargs, expected):
    assert resolve_window(**kwargs) == expected


def test_resolve_window_takes_keywords_only():
    with pytest.raises(TypeError):
        resolve_window(1000)  # type: ignore[misc]


@pytest.mark.parametrize(("window", "ratio", "threshold"), [
    (200_000, TRIGGER_RATIO, 160_000),
    (200_000, MIN_TARGET_RATIO, 20_000),
    (1_047_576, 0.8, 838_060),  # 838 060.8, truncated as upstream's int()
    (128_000, 0.1, 12_800),
    (10, 0.05, 1),  # never below one token
    (0, 0.8, 1),
])
def test_ratio_threshold(window, ratio, threshold):
    assert ratio_threshold(window, ratio) == threshold


def test_the_documented_defaults():
    assert (DEFAULT_WINDOW, TRIGGER_RATIO, MIN_TARGET_RATIO) == (200_000, 0.8, 0.1)
