"""Token counting: bundled encodings equal tiktoken's, no network, the documented formula."""

from __future__ import annotations

import base64
import math
import socket
import struct
from importlib import resources

import pytest

from tcompact.model import Message, Reasoning, ToolCall
from tcompact.tokens import (
    MESSAGE_OVERHEAD,
    TOOL_CALL_OVERHEAD,
    TokenCounter,
    encoding_for_model,
    load_encoding,
    message_kind,
)

TEXTS = [
    "hello world",
    "def add(a, b):\n    return a + b\n",
    "日本語のテキストとemoji 🎉 mixed",
    "  leading spaces and\r\nCRLF\r\n",
    "<|endoftext|> is ordinary text here",
    "",
]


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_bundled_encoding_equals_tiktoken_built_from_the_same_file(name, tmp_path, monkeypatch):
    import tiktoken
    import tiktoken.load
    import tiktoken_ext.openai_public as public

    path = str(resources.files("tcompact").joinpath("data", f"{name}.tiktoken"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(public, "load_tiktoken_bpe",
                        lambda url, expected_hash: tiktoken.load.load_tiktoken_bpe(path, expected_hash=expected_hash))
    theirs = tiktoken.Encoding(**getattr(public, name)())
    ours = load_encoding(name)
    assert ours._pat_str == theirs._pat_str
    assert ours._special_tokens == theirs._special_tokens
    assert ours._mergeable_ranks == theirs._mergeable_ranks
    for text in TEXTS:
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_loading_never_touches_the_network(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    load_encoding.cache_clear()
    try:
        assert TokenCounter("cl100k_base").count("hello world") == 2
        assert TokenCounter("o200k_base").count("hello world") == 2
    finally:
        load_encoding.cache_clear()
    assert list(cache.iterdir()) == []  # tiktoken's download cache is never used


def test_damaged_rank_file_is_refused(monkeypatch):
    from tcompact import encodings
    from tcompact.errors import InputError

    spec = encodings.ENCODINGS["cl100k_base"]
    monkeypatch.setitem(encodings.ENCODINGS, "cl100k_base", encodings._EncodingSpec(
        spec.file, "0" * 64, spec.pat_str, spec.special_tokens))
    load_encoding.cache_clear()
    try:
        with pytest.raises(InputError, match="damaged"):
            load_encoding("cl100k_base")
    finally:
        load_encoding.cache_clear()


def test_unknown_encoding_is_a_usage_error():
    from tcompact.errors import UsageError

    with pytest.raises(UsageError, match="unknown encoding 'p50k_base'"):
        load_encoding("p50k_base")


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-4o-mini", ("o200k_base", False)),
        ("gpt-5-codex", ("o200k_base", False)),
        ("openai/gpt-4.1", ("o200k_base", False)),
        ("gpt-4-turbo", ("cl100k_base", False)),
        ("gpt-3.5-turbo-0125", ("cl100k_base", False)),
        ("o3-mini", ("o200k_base", False)),
        ("claude-sonnet-4-5-20250929", ("o200k_base", True)),
        ("deepseek-chat", ("o200k_base", True)),
        (None, ("o200k_base", True)),
    ],
)
def test_encoding_for_model(model, expected):
    assert encoding_for_model(model) == expected


def test_for_model_with_explicit_encoding_is_approximate_unless_it_is_the_models():
    assert TokenCounter.for_model("gpt-4o", encoding="o200k_base").approximate is False
    assert TokenCounter.for_model("gpt-4o", encoding="cl100k_base").approximate is True
    assert TokenCounter.for_model("gpt-4", encoding=None).encoding_name == "cl100k_base"


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
    texts = TEXTS + ["lone \ud800 surrogate", "x" * 5000, "мир " * 300] + [f"text {i}" for i in range(100)]
    fast = TokenCounter()._counts(texts)
    slow = TokenCounter()
    slow._to_buffer = None
    assert fast == slow._counts(texts) == [len(encoding.encode_ordinary(t)) for t in texts]


# -- long texts are counted in pieces cut where tiktoken splits anyway ------------------------------

_ATOMS = ["\n", "\r\n", " ", "  ", "\t", "a", "Zq", "word", "'s", "'LL", "1", "2024", ".", "...", "/", "{}", "é",
          "Ünï", "日本", "🎉", "\u0301", "\n\n", " \n", "\ud800", "<|endoftext|>"]


def _pieces_total(counter, text, size):
    from tcompact.tokens import pieces

    cuts = pieces(text, size)
    assert cuts[0][0] == 0 and cuts[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(cuts, cuts[1:]))
    return sum(counter.count(text[s:e]) for s, e in cuts), len(cuts)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_pieces_add_up_to_the_whole_on_real_texts(name):
    from conftest import REAL_FILES, SAMPLES, SHARED

    from tcompact.formats import read_file
    from tcompact.tokens import texts_of

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
    assert cut > 50  # the texts were really cut


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
    from tcompact.tokens import PIECE, pieces

    assert len(pieces(text)) == len(text) // PIECE
