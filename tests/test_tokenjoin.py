"""A text made of parts counts what tiktoken counts for it whole, with both encodings, however the parts fall."""

from __future__ import annotations

import random
from bisect import bisect_left

import pytest
from conftest import REAL_FILES, SAMPLES, real_file
from hypothesis import given, settings
from hypothesis import strategies as st

from tcompact.counting.join import EdgeCounts, first_split, joined_count, joined_counts, last_split, splits_between
from tcompact.counting.tokens import TokenCounter, load_encoding

# Characters around the split points and the ones that defeat them: line breaks, a slash after one,
# punctuation runs, contractions, digits, other whitespace, letters of other scripts, marks.
_PIECES = ["\n", "\n\n", "\r\n", " ", "  ", "\t", "\u00a0", "\u3000", "/", ".", ",", "'", "'s", "'ll", "=", "[",
           "]", "|", "-", "#", "{", "}", "\"", "a", "A", "The", "word", "1", "123", "4567", "é", "日本", "\u0301",
           "role=user", "content=", "[12] role=tool | content=", "…", "🙂", "\x0b", "\x1c", "**", "// x"]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=30).map("".join)
ENCODINGS = ("o200k_base", "cl100k_base")


def _exact(encoding: str, text: str) -> int:
    return len(load_encoding(encoding).encode_ordinary(text))


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=400, deadline=None, database=None)
@given(left=_TEXT, right=_TEXT)
def test_a_split_point_cuts_the_tokens_in_two(encoding, left, right):
    if left and right and splits_between(left[-1], right[0]):
        assert _exact(encoding, left + right) == _exact(encoding, left) + _exact(encoding, right)


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=300, deadline=None, database=None)
@given(parts=st.lists(_TEXT, max_size=8), known=st.lists(st.booleans(), min_size=8, max_size=8))
def test_the_count_of_joined_parts_is_the_count_of_their_join(encoding, parts, known):
    counter = TokenCounter(encoding, cache=False)
    counter.prime([p for p, k in zip(parts, known) if k])  # some parts counted before, as message texts are
    assert joined_count(counter, parts) == _exact(encoding, "".join(parts))


def test_the_first_and_last_split_points():
    text = "x=1\n[a]b.c\n/d. e"
    assert first_split(text) == 4 and last_split(text) == 14  # after "\n" before "[", after "." before " "
    assert first_split("one line, no point") == 9 and last_split("abc") is None and first_split("a\n/b") is None
    long = "word " * 2000 + "end. tail"
    assert last_split(long) == len(long) - 5 and last_split("a. " + "x" * 9000) == 2


def test_a_long_text_is_counted_from_its_count_and_its_edges(monkeypatch):
    counter = TokenCounter("o200k_base", cache=False)
    body = "".join(f"line {i}: some words, and more.\n" for i in range(3000))
    counter.prime([body])
    tokenised = []
    plain = counter._counts
    monkeypatch.setattr(counter, "_counts", lambda texts: tokenised.extend(texts) or plain(texts))
    head, tail = "[7] role=tool | content=", "\n[8] role=user | content=next"
    assert joined_count(counter, [head, body, tail]) == _exact("o200k_base", head + body + tail)
    assert sum(map(len, tokenised)) < 150  # the stretches around the joins, not the 100,000 characters


# Joins cut from real texts: each sample is a stretch of a session's texts (several messages' texts
# joined as the round-level prompts join them), cut at positions of one kind, some parts counted before.
_KINDS = {
    "whitespace run": lambda a, b: a.isspace() and b.isspace(),
    "after a line break": lambda a, b: a == "\n",
    "at a line break in whitespace": lambda a, b: a.isspace() and b.isspace() and "\n" in a + b,
    "inside a number": lambda a, b: a.isdigit() and b.isdigit(),
    "inside a word": lambda a, b: a.isalpha() and b.isalpha(),
    "at a non-ASCII character": lambda a, b: not (a.isascii() and b.isascii()),
    "at punctuation": lambda a, b: not (a.isalnum() or a.isspace()) or not (b.isalnum() or b.isspace()),
    "anywhere": lambda a, b: True,
}


def _texts(path) -> list[str]:
    from tcompact.formats import read_file
    from tcompact.counting.tokens import texts_of

    return [t for tr in read_file(path).transcripts for t in texts_of(tr.messages) if t]


def _samples(texts: list[str], rng, *, per_kind: int, width: int = 1500):
    """``(kind, parts, primed)``: a stretch of the texts cut at up to five positions of one kind."""
    corpus = "\n[7] role=user | content=".join(texts)
    for kind, test in _KINDS.items():
        points = [i for i in range(1, len(corpus)) if test(corpus[i - 1], corpus[i])]
        for _ in range(per_kind if points else 0):
            centre = rng.choice(points)
            start = max(0, centre - rng.randrange(width))
            stretch = corpus[start:start + width]
            inside = [p - start for p in points[bisect_left(points, start + 1):bisect_left(points, start + width)]]
            cuts = sorted(set(rng.sample(inside, min(len(inside), rng.randint(1, 5)))))
            parts = [stretch[a:b] for a, b in zip([0, *cuts], [*cuts, len(stretch)])]
            yield kind, parts, [p for p in parts if rng.random() < 0.5]


def _check_joins(texts: list[str], encoding: str, *, per_kind: int, seed: int) -> dict[str, int]:
    """Every sampled join counts what its whole text counts; the joins checked, by kind."""
    rng = random.Random(seed)
    counter = TokenCounter(encoding, cache=False)
    checked: dict[str, int] = {}
    for kind, parts, primed in _samples(texts, rng, per_kind=per_kind):
        counter.prime(primed)  # parts whose count the counter holds, as it holds the messages' texts
        whole = "".join(parts)
        given = [(p, _exact(encoding, p)) if rng.random() < 0.2 else p for p in parts]
        assert joined_count(counter, given) == _exact(encoding, whole) == counter.count(whole), (kind, parts)
        checked[kind] = checked.get(kind, 0) + len(parts) - 1
    return checked


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("key", sorted(REAL_FILES))
def test_joins_cut_from_real_sessions_count_what_the_whole_counts(key, encoding):
    checked = _check_joins(_texts(real_file(key)), encoding, per_kind=60, seed=sorted(REAL_FILES).index(key))
    assert sum(checked.values()) > 1000
    assert {k for k, n in checked.items() if n >= 50} >= set(_KINDS) - {"at a non-ASCII character",
                                                                      "at a line break in whitespace"}


# The same on files a clone has, plus a text of the characters the sessions may lack: emoji (with
# joiners and modifiers), CJK, marks, CRLF, long whitespace and digit runs, contractions.
_MIX = ("Résumé: naïve café 👩‍💻🏽 done ✅\r\n\r\n  日本語のテキスト、句読点。中文文本！\t\t12345678901234\n"
        "trailing  \n  \n\t\n \r\n\n   x It's we'll THEY'RE you'D\n\n\n    indented code() { x = 1_000_000; }\n/usr/bin\n// c\n"
        "e\u0301\u0301 \u00a0\u3000 ... --- === **bold** [link](http://x.y/z?q=1&r=2)\n")


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_joins_cut_from_fixture_texts_count_what_the_whole_counts(encoding):
    texts = [t for f in sorted(SAMPLES.glob("*.jsonl")) for t in _texts(f)] + [_MIX * 20]
    checked = _check_joins(texts, encoding, per_kind=150, seed=16)
    assert sum(checked.values()) > 2000 and set(checked) == set(_KINDS)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_heads_and_tails_count_from_their_chunks_what_they_count_whole(encoding):
    texts = [t for f in sorted(SAMPLES.glob("*.jsonl")) for t in _texts(f)] + [_MIX * 20]
    text = "\n".join(texts)[-24_000:]  # the last sample session and the mixed text
    edges = EdgeCounts(TokenCounter(encoding, cache=False), text, chunk=256)
    assert len(edges._bounds) > 40  # cut into many chunks
    rng = random.Random(4)
    for at in [0, 1, len(text) - 1, len(text), *edges._bounds, *(b + d for b in edges._bounds[1:-1] for d in (-1, 1)),
               *rng.sample(range(len(text)), 60)]:
        assert edges.head(at) == _exact(encoding, text[:at]) and edges.tail(at) == _exact(encoding, text[at:]), at


def test_many_joins_are_counted_exactly_in_one_batch(monkeypatch):
    counter = TokenCounter("o200k_base", cache=False)
    many = [["[1] role=user | content=", "Fix the test.\nIt fails, twice."], ["(none)"], [],
            [("Summary:\n- kept", _exact("o200k_base", "Summary:\n- kept")), "\n", "- (+3 omitted for budget)"], ["a\n", "/b", " c"]]
    batches = []
    plain = counter._counts
    monkeypatch.setattr(counter, "_counts", lambda texts: batches.append(list(texts)) or plain(texts))
    assert joined_counts(counter, many) == [_exact("o200k_base", "".join(p if isinstance(p, str) else p[0]
                                                                         for p in parts)) for parts in many]
    assert len(batches) == 1  # every stretch of every join in one call


def test_a_learned_count_is_kept_in_memory_and_only_when_asked_in_the_persistent_cache(tmp_path):
    from tcompact.counting.cache import TokenCache

    store = TokenCache(tmp_path)
    memory, both = "kept in memory only", "kept in both"
    counter = TokenCounter("o200k_base", cache=store)
    counter.learn([(memory, _exact("o200k_base", memory))])
    counter.learn([(both, _exact("o200k_base", both))], persistent=True)
    assert [counter.count(memory), counter.count(both)] == [_exact("o200k_base", t) for t in (memory, both)]
    assert counter.tokenized == 0
    fresh = TokenCounter("o200k_base", cache=store)
    assert fresh.count(both) == _exact("o200k_base", both) and fresh.tokenized == 0  # in the persistent cache
    assert fresh.count(memory) == _exact("o200k_base", memory) and fresh.tokenized == 1  # tokenised: not there


def test_a_head_and_a_tail_count_the_chunks_they_cover_and_no_other():
    text = "".join(f"line {i}: some words, and more.\n" for i in range(2000))
    counter = TokenCounter("o200k_base", cache=False)
    edges = EdgeCounts(counter, text, chunk=256)
    chunks = len(edges._bounds) - 1
    assert chunks > 200 and counter.tokenized == 0  # nothing counted up front
    assert edges.head(1000) == _exact("o200k_base", text[:1000])
    assert edges.tail(len(text) - 1500) == _exact("o200k_base", text[-1500:])
    assert counter.tokenized <= 12  # a few chunks and the stretches past their bounds, not the text's
