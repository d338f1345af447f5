"""The blocks summariser's backgrounds, resumed across requests over the same messages, are what one
pass from the first message gives (tcompact.summarizers.extractive.blocks.background)."""

from __future__ import annotations

import random

import pytest
from conftest import REAL_FILES, SAMPLES, real_file

from tcompact.formats import read_file
from tcompact.summarizers.extractive.blocks.background import backgrounds


def _messages(path) -> tuple:
    return tuple(m for t in read_file(path).transcripts for m in t.messages)


def _check(messages: tuple, seed: int) -> int:
    """Requests of ascending starts in random order, each against a pass from the start (a list, never kept)."""
    rng = random.Random(seed)
    n = len(messages)
    checked = 0
    for _ in range(40):
        starts = sorted(rng.sample(range(n + 3), min(n + 3, rng.randint(1, 12))))
        assert backgrounds(messages, starts) == backgrounds(list(messages), starts)
        checked += len(starts)
    return checked


@pytest.mark.parametrize("key", sorted(REAL_FILES))
def test_resumed_backgrounds_of_real_sessions_are_those_of_one_pass(key):
    messages = _messages(real_file(key))
    assert _check(messages, seed=sorted(REAL_FILES).index(key)) > 200


def test_resumed_backgrounds_are_those_of_one_pass_and_other_messages_start_afresh():
    sessions = [_messages(p) for p in sorted(SAMPLES.glob("*.jsonl"))]
    for seed, messages in enumerate(sessions * 2):  # each session again after the others: kept states dropped
        _check(messages, seed)
    first = sessions[0]
    found = backgrounds(first, [len(first)])[len(first)]
    assert found.request is not None and found.request.role == "user"
