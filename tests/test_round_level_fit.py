"""fit_prompt counts its head/tail candidates from the prompt's head and tail counts
(tokenjoin.EdgeCounts); the cut it returns is the one counting every candidate whole gives."""

from __future__ import annotations

import random

import pytest
from conftest import SAMPLES

from tcompact.compressors.round_level.prompting import MINIMAL_PROMPT, fit_prompt, head_tail
from tcompact.formats import read_file
from tcompact.tokens import TokenCounter, texts_of


def _reference(system, prompt, *, budget, counter, head_ratio, marker):
    """fit_prompt as it was: every candidate tokenised whole."""
    fixed = counter.count(system) + 8
    total = counter.count(prompt)
    if fixed + total <= budget:
        return prompt
    low, high, best = 0, min(len(prompt), int(len(prompt) * max(budget - fixed, 0) / max(total, 1) * 1.25) + 1), None
    while low <= high:
        mid = (low + high) // 2
        candidate = head_tail(prompt, mid, head_ratio=head_ratio, marker=marker)
        if fixed + counter.count(candidate) <= budget:
            best, low = candidate, mid + 1
        else:
            high = mid - 1
    if best is not None and best != marker:
        return best
    return MINIMAL_PROMPT if fixed + counter.count(MINIMAL_PROMPT) <= budget else None


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_the_cut_is_the_one_whole_counts_give(encoding):
    texts = [t for f in sorted(SAMPLES.glob("*.jsonl")) for tr in read_file(f).transcripts for t in texts_of(tr.messages)]
    rng = random.Random(7)
    counter = TokenCounter(encoding, cache=False)
    cut = 0
    for _ in range(60):
        prompt = "\n".join(rng.choice(texts) for _ in range(rng.randint(1, 60)))
        total = counter.count(prompt)
        budget = rng.randint(0, total + 40)
        ratio = rng.choice([0.0, 0.2, 0.5, 1.0])
        got = fit_prompt("sys", prompt, budget=budget, counter=counter, head_ratio=ratio, marker="...[CUT]...")
        assert got == _reference("sys", prompt, budget=budget, counter=counter, head_ratio=ratio, marker="...[CUT]...")
        cut += got not in (prompt, None, MINIMAL_PROMPT)
    assert cut > 20  # most prompts were cut, not kept or refused
