"""Token counting (tokens.py): the documented per-message formula, counts equal to tiktoken's on any text, each
distinct text tokenised once, long texts counted in pieces that add up to the whole. (The encodings themselves:
test_encodings.py.)"""

from __future__ import annotations

import base64
import math
import struct

import pytest
from conftest import EDGE_TEXTS
from hypothesis import given, settings
from hypothesis import strategies as st

from tcompact.counting.encodings import load_encoding
from tcompact.model import Message, Reasoning, ToolCall
from tcompact.counting.cache import TokenCache
from tcompact.counting.tokens import (
    KINDS,
    MESSAGE_OVERHEAD,
    TOOL_CALL_OVERHEAD,
    MessageTokens,
    TokenCounter,
    message_kind,
    texts_of,
)
from tcompact.counting.pieces import pieces



@pytest.mark.parametrize(("model", "encoding", "expected"), [
    ("gpt-4o", "o200k_base", ("o200k_base", False)),
    ("gpt-4o", "cl100k_base", ("cl100k_base", True)),
    ("gpt-4", None, ("cl100k_base", False)),
    ("claude-opus-4", None, ("o200k_base", True)),
    ("claude-opus-4", "o200k_base", ("o200k_base", True)),  # the model's own encoding is unknown: still approximate
    (None, "cl100k_base", ("cl100k_base", True)),
])
def test_for_model_with_explicit_encoding_is_approximate_unless_it_is_the_models(model, encoding, expected):
    counter = TokenCounter.for_model(model, encoding=encoding)
    assert (counter.encoding_name, counter.approximate) == expected


def test_plain_message_is_content_plus_overhead(ntok):
    counter = TokenCounter()
    got = counter.message(Message(role="user", content="Fix the failing test in parser.py"))
    assert got.total == MESSAGE_OVERHEAD + ntok("Fix the failing test in parser.py")
    assert dict(got.by_kind) == {"user": got.total}
    assert got.estimated == 0


def test_assistant_with_calls_reasoning_and_name(ntok):
    counter = TokenCounter()
    m = Message(
        role="assistant",
        content="Running the tests.",
        name="coder",
        reasoning=(Reasoning(text="The parser drops the last token."),),
        tool_calls=(ToolCall("c1", "bash", '{"cmd": "pytest -q"}'), ToolCall("c2", "read_file", '{"path": "a.py"}')),
    )
    got = counter.message(m)
    args = (ntok("bash") + ntok('{"cmd": "pytest -q"}') + ntok("read_file") + ntok('{"path": "a.py"}')
            + 2 * TOOL_CALL_OVERHEAD)
    assert dict(got.by_kind) == {
        "assistant": MESSAGE_OVERHEAD + ntok("coder") + ntok("Running the tests."),
        "reasoning": ntok("The parser drops the last token."),
        "tool_arguments": args,
    }
    assert got.total == sum(got.by_kind.values())


def _png(width: int, height: int) -> str:
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", width, height) + b"\x08\x06\x00\x00\x00"
    return base64.b64encode(header + b"\x00" * 32).decode()


def test_images_and_encrypted_reasoning_are_estimated(ntok):
    counter = TokenCounter()
    m = Message(
        role="tool",
        content=(
            {"type": "text", "text": "screenshot attached"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{_png(1024, 1024)}"}},
            {"type": "image_url", "image_url": {"url": "https://example.invalid/a.png", "detail": "low"}},
            {"type": "image_url", "image_url": {"url": "https://example.invalid/b.png"}},
        ),
        tool_call_ids=("c1",),
        reasoning=(Reasoning(encrypted_chars=1600, kind="summary"),),
    )
    got = counter.message(m)
    assert dict(got.by_kind) == {
        "images": 765 + 85 + 1445,
        "tool_results": MESSAGE_OVERHEAD + ntok("screenshot attached"),
        "reasoning": math.ceil(1600 * 3 / 16),
    }
    assert got.estimated == 765 + 85 + 1445 + 300


def test_unknown_part_shapes_are_counted_by_their_json(ntok):
    part = {"type": "input_audio", "input_audio": {"format": "wav", "data": "AAAA"}}
    got = TokenCounter().message(Message(role="user", content=(part,)))
    assert got.total == MESSAGE_OVERHEAD + ntok('{"type":"input_audio","input_audio":{"format":"wav","data":"AAAA"}}')


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        (Message(role="system", content="x"), "system"),
        (Message(role="developer", content="x"), "system"),
        (Message(role="user", content="do it"), "user"),
        (Message(role="user", content="<system-reminder>x</system-reminder>"), "injected"),
        (Message(role="user", content="do it", internal=True), "injected"),
        (Message(role="tool", content="ok", tool_call_ids=("c",)), "tool_results"),
        (Message(role="function", content="ok", name="f"), "tool_results"),
        (Message(role="assistant", content="x"), "assistant"),
        (Message(role="critic", content="x"), "assistant"),  # any other role speaks as the model
    ],
)
def test_message_kind(message, kind):
    assert message_kind(message) == kind


def test_each_distinct_text_is_tokenised_once_in_one_parallel_pass(ntok):
    counter = TokenCounter(cache=False)  # without the persistent cache, which could answer instead
    counter.encoding  # noqa: B018  (loads the tokenizer, so that its encoder can be spied on)
    seen: list[str] = []
    encode = counter._to_buffer

    def spy(text, allowed):
        seen.append(text)
        return encode(text, allowed)

    counter._to_buffer = spy
    msgs = [Message(role="user", content="same text"), Message(role="assistant", content="same text"),
            Message(role="tool", content="other", tool_call_ids=("c",))]
    totals = [c.total for c in counter.messages(msgs)]
    assert totals == [4 + ntok("same text"), 4 + ntok("same text"), 4 + ntok("other")]
    assert sorted(seen) == ["other", "same text"]
    counter.messages(msgs)
    assert len(seen) == 2  # everything cached the second time
    assert counter.total(msgs) == sum(totals)


def test_fast_counts_equal_the_public_batch_encoder(encoding):
    texts = EDGE_TEXTS + ["lone \ud800 surrogate", "x" * 5000, "мир " * 300] + [f"text {i}" for i in range(100)]
    fast = TokenCounter()._counts(texts)
    slow = TokenCounter()
    slow._to_buffer = None
    assert fast == slow._counts(texts) == [len(encoding.encode_ordinary(t)) for t in texts]


# -- long texts are counted in pieces cut where tiktoken splits anyway ------------------------------

_ATOMS = ["\n", "\r\n", " ", "  ", "\t", "a", "Zq", "word", "'s", "'LL", "1", "2024", ".", "...", "/", "{}", "é",
          "Ünï", "日本", "🎉", "\u0301", "\n\n", " \n", "\ud800", "<|endoftext|>"]


def _pieces_total(counter, text, size):

    cuts = pieces(text, size)
    assert cuts[0][0] == 0 and cuts[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(cuts, cuts[1:]))
    return sum(counter.count(text[s:e]) for s, e in cuts), len(cuts)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_pieces_add_up_to_the_whole_on_real_texts(name):
    from conftest import REAL_FILES, SAMPLES, SHARED

    from tcompact.formats import read_file
    from tcompact.counting.tokens import texts_of

    paths = [*SAMPLES.glob("*.jsonl"), *(SHARED / f for f in REAL_FILES.values() if (SHARED / f).exists())]
    counter = TokenCounter(name, cache=False)
    cut = 0
    for path in paths:
        for t in read_file(path).transcripts:
            for text in set(texts_of(t.messages)):
                if len(text) > 64:
                    total, n = _pieces_total(counter, text, 24)
                    assert total == counter.count(text), (path.name, text[:80])
                    cut += n > 1
    assert cut > 20  # the texts were really cut (26 in the samples alone: a clone without ../shared passes too)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_pieces_add_up_to_the_whole_on_any_text(name):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    counter = TokenCounter(name, cache=False)

    @settings(max_examples=300, deadline=None, database=None)
    @given(st.lists(st.sampled_from(_ATOMS), min_size=1, max_size=120), st.integers(1, 8))
    def check(atoms, size):
        text = "".join(atoms)
        assert _pieces_total(counter, text, size)[0] == counter.count(text)

    check()


def test_a_long_text_is_counted_in_parallel_pieces_with_the_same_count(encoding):
    text = "".join(f"line {i}: {'x' * (i % 50)} done\n" for i in range(40_000))  # ~1.7 MB
    counter = TokenCounter(cache=False)
    assert counter.count(text) == len(encoding.encode_ordinary(text))
    from tcompact.counting.pieces import PIECE

    assert len(pieces(text)) == len(text) // PIECE


# ---- the formula, edge by edge ------------------------------------------------------------------------


@pytest.mark.parametrize(("message", "by_kind", "estimated"), [
    (Message(role="user"), {"user": 4}, 0),
    (Message(role="user", content=""), {"user": 4}, 0),
    (Message(role="user", content=()), {"user": 4}, 0),
    (Message(role="assistant", tool_calls=(ToolCall("c1", "bash", ""),)), {"assistant": 4, "tool_arguments": 4}, 0),
    # empty reasoning adds no kind; encrypted reasoning alone is all estimate
    (Message(role="assistant", content="ok", reasoning=(Reasoning(),)), {"assistant": 5}, 0),
    (Message(role="assistant", reasoning=(Reasoning(encrypted_chars=17),)), {"assistant": 4, "reasoning": 4}, 4),
    (Message(role="assistant", reasoning=(Reasoning(encrypted_chars=16),)), {"assistant": 4, "reasoning": 3}, 3),
    # an image-only message still pays its framing; the image is an estimate under "images"
    (Message(role="user", content=({"type": "image_url", "image_url": {"url": "https://x.invalid/a"}},)),
     {"images": 1445, "user": 4}, 1445),
    (Message(role="user", content="<system-reminder>x</system-reminder>"), {"injected": 14}, 0),
])
def test_message_tokens_edges(counter, message, by_kind, estimated):
    got = counter.message(message)
    assert got == MessageTokens(total=sum(by_kind.values()), by_kind=by_kind, estimated=estimated)
    assert set(got.by_kind) <= set(KINDS)


_PARTS = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=40)),
    st.builds(lambda d: {"type": "image_url", "image_url": {"url": "https://x.invalid/i.png", "detail": d}},
              st.sampled_from(["low", "auto"])),
    st.builds(lambda v: {"type": "input_audio", "data": v}, st.text(max_size=10)),
)
_MESSAGE = st.builds(
    Message,
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    content=st.one_of(st.none(), st.text(max_size=60), st.lists(_PARTS, max_size=4).map(tuple)),
    name=st.one_of(st.none(), st.text(max_size=8)),
    reasoning=st.lists(st.builds(Reasoning, text=st.text(max_size=30), encrypted_chars=st.integers(0, 5000)),
                       max_size=2).map(tuple),
    tool_calls=st.lists(st.builds(ToolCall, id=st.just("c"), name=st.text(min_size=1, max_size=10),
                                  arguments=st.text(max_size=40)), max_size=3).map(tuple),
)


@settings(max_examples=150, deadline=None, database=None)
@given(st.lists(_MESSAGE, max_size=5))
def test_a_message_costs_its_framing_its_texts_its_calls_and_its_estimates(messages):
    """The README's formula, with texts_of naming every text it tokenises, on any message."""
    counter = TokenCounter(cache=False)
    counted = counter.messages(messages)
    for m, got in zip(messages, counted):
        images = sum(1445 if p["image_url"]["detail"] == "auto" else 85 for p in m.images)
        encrypted = sum(math.ceil(r.encrypted_chars * 3 / 16) for r in m.reasoning)
        texts = sum(counter.count(t) for t in texts_of([m]))
        assert got.total == MESSAGE_OVERHEAD + texts + TOOL_CALL_OVERHEAD * len(m.tool_calls) + images + encrypted
        assert got.total == sum(got.by_kind.values()) and got.estimated == images + encrypted
    assert counter.total(messages) == sum(c.total for c in counted)


@settings(max_examples=200, deadline=None, database=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_any_text_counts_as_tiktoken_counts_it(text):
    assert TokenCounter(cache=False).count(text) == len(load_encoding("o200k_base").encode_ordinary(text))


def test_lone_surrogates_count_as_tiktoken_counts_their_replacement(encoding):
    # tiktoken itself encodes a str it cannot turn into UTF-8 after replacing the lone surrogates
    for text in ("\ud800", "a\udfffb", "\ud83d\ude00 paired halves"):
        assert TokenCounter(cache=False).count(text) == len(encoding.encode_ordinary(text))


def test_a_counter_with_a_cache_of_its_own_needs_no_tokenizer_the_second_time(tmp_path):
    store = TokenCache(tmp_path)
    first = TokenCounter("cl100k_base", cache=store)
    assert first.count("the parser indexes an empty list") == 6 and first.tokenized == 1
    second = TokenCounter("cl100k_base", cache=store)
    assert second.count("the parser indexes an empty list") == 6
    assert (second.tokenized, second._encoding) == (0, None)  # answered from the table, the tokenizer never loaded
    assert store.added == 1 and store.found == 1


def test_without_the_persistent_cache_counts_are_still_kept_in_memory():
    counter = TokenCounter(cache=False)
    counter.prime(["alpha beta", "alpha beta", "gamma", ""])
    assert counter.tokenized == 2  # distinct texts only; the empty text costs nothing to count
    assert (counter.count("gamma"), counter.count("")) == (1, 0) and counter.tokenized == 2


@pytest.mark.parametrize(("text", "size", "expected"), [
    ("", 4, [(0, 0)]),
    ("a\nb\nc\nd\n", 4, [(0, 8)]),  # at most twice the size: whole
    ("x\nabcdefgh\nijklmnop\nqrstu", 4, [(0, 11), (11, 20), (20, 25)]),
    ("12\n34\n56\n78\n90\n12\n34", 4, [(0, 20)]),  # no line starting with a letter: no cut
    ("aaaa\n\n\n\nbbbb\n1111\ncccc", 4, [(0, 8), (8, 22)]),
])
def test_pieces_cut_only_after_a_newline_before_a_letter(text, size, expected):
    got = pieces(text, size)
    assert got == expected
    assert all(text[s - 1] == "\n" and text[s].isascii() and text[s].isalpha() for s, _ in got[1:])


def test_a_large_batch_is_keyed_and_counted_in_parallel_in_order(tmp_path, ntok):
    """Over 1 MB of texts: their cache keys are computed in slices on the thread pool, and every count must land
    on its own text (a slice out of order would give one text another's count)."""
    texts = [f"text {i}: " + "word " * (i % 97) + "\n" * (i % 3) + "é" * (i % 5) for i in range(6000)]
    assert sum(map(len, texts)) > 1 << 20
    store = TokenCache(tmp_path)
    first = TokenCounter(cache=store)
    first.prime(texts)
    assert first.tokenized == len(texts) and store.added == len(texts)
    second = TokenCounter(cache=store)
    second.prime(texts)
    assert second.tokenized == 0 and second._encoding is None
    assert [second.count(t) for t in texts] == [ntok(t) for t in texts]
