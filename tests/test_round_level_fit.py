"""fit_prompt counts its head/tail candidates from the prompt's head and tail counts
(tokenjoin.EdgeCounts); the cut it returns is the one counting every candidate whole gives."""

from __future__ import annotations

import random

import pytest
from conftest import SAMPLES

from tcompact.compressors.round_level.prompting import MINIMAL_PROMPT, fit_prompt, head_tail
from tcompact.formats import read_file
from tcompact.summarizers.contracts import prompt_text
from tcompact.counting.tokens import TokenCounter, texts_of


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


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
@pytest.mark.parametrize("key", ["codemie", "ccviewer", "codex"])
def test_prompt_parts_count_what_their_texts_count_whole(key, encoding):
    """The costs, contexts and prompts of a stage, counted from the messages' counts, are tiktoken's counts."""
    from conftest import real_file

    from tcompact.compressors.round_level.prompting import PromptParts
    from tcompact.compressors.round_level.targets import l0_targets
    from tcompact.counting.tokens import load_encoding

    def exact(text: str) -> int:
        return len(load_encoding(encoding).encode_ordinary(text))

    messages = tuple(m for t in read_file(real_file(key)).transcripts for m in t.messages)
    counter = TokenCounter(encoding, cache=False)
    counter.messages(messages)  # the session counted first, as compaction counts it
    targets = l0_targets(messages, len(messages) - 3, "[COMPRESSED]")
    parts = PromptParts(messages, targets, keep_recent=2, marker="[COMPRESSED]", counter=counter)
    assert len(targets) >= 3
    assert all(parts.costs[k] == exact(v) + 1 for k, v in parts.blocks.items())
    assert parts.base_cost() == exact(parts.reference) + exact(parts.protected) + \
        counter.count(prompt_text("round_level_contract")) + 120
    for group in (targets[:1], targets[1:3], targets):
        prompt, tokens = parts.counted(group, phase="l0_to_l1", target_tokens=500, keep_recent=2, window_tokens=9999,
                                       call_budget=100_000)
        assert prompt == parts.prompt(group, phase="l0_to_l1", target_tokens=500, keep_recent=2, window_tokens=9999,
                                      call_budget=100_000)
        assert tokens() == exact(prompt)
