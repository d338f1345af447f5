"""Redaction's shortcuts for the long texts of dumps: a long text is looked through for a needle only when a
pattern asks (some needles by one regex, some only where a shorter one is), a text that is not ASCII is
lowered by its ASCII letters only — each the same answer as testing every needle in ``str.lower()``."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_redact import POSITIVE

from tcompact import redact as module
from tcompact.redact import redact

# 4,500 characters without a needle: a text holding it is past the length from which needles are looked
# for one by one.
FILLER = "The quick brown fox jumps over the lazy dog. " * 100
assert len(FILLER) >= module._LAZY_FROM and redact(FILLER) is FILLER

NEEDLE_PIECES = ["private key", "PRIVATE KEY", "sk-", "sk-ant-", "SK-ANT-", "sk", "-ant-", "k_live_", "K_TEST_", "k_",
                 "live_", "akia", "ASIA", "secret", "SECRET", "ghp_", "GHO_", "ghu_", "ghs_", "ghr_", "gh", "p_",
                 "github_pat_", "GitHub_PAT_", "xox", "aiza", "eyJ", "uthorization", "Bearer", "://", "pass", "PWD",
                 "key", "\u212aey", "token", "TOKEN", "İ", "ſecret", " ", "\n", "x", "日", "Ω"]


@settings(max_examples=500, deadline=None, database=None)
@given(st.lists(st.sampled_from(NEEDLE_PIECES), max_size=12), st.booleans())
@example(["k_", "live_"], True)
@example(["sk", "-ant-"], True)
@example(["\u212aey"], True)
def test_each_pattern_runs_exactly_when_the_lower_case_text_holds_one_of_its_needles(parts, long):
    text = ("".join(parts) + FILLER) if long else "".join(parts)
    low = text.lower()
    present = module._present(module._lower(text))
    for (needles, lazy), _, _, _ in module._SUBS:
        expected = any(n in low for n in needles)
        assert (present is not None and present((needles, lazy))) == expected, (needles, text[:60])


LOWER_PIECES = ["A", "b", "Z", "İ", "\u212a", "ſ", "ı", "Ω", "É", "ß", "ẞ", "\ud800", "\udfff", "\U0001F600",
                "\ud83d\ude00", "日本", "TOKEN", "Key", "\x00", "\x7f", "\xff", " "]


@settings(max_examples=500, deadline=None, database=None)
@given(st.lists(st.sampled_from(LOWER_PIECES), max_size=20))
def test_lowering_by_ascii_letters_keeps_the_length_and_every_ascii_character_of_str_lower(parts):
    text = "".join(parts)
    full, ours = text.lower(), module._lower(text)
    assert len(ours) == len(full)
    assert [c if c.isascii() else None for c in ours] == [c if c.isascii() else None for c in full]


@pytest.mark.parametrize(("kind", "text", "expected"), POSITIVE,
                         ids=[f"{k}-{n}" for n, (k, _, _) in enumerate(POSITIVE)])
def test_a_secret_in_a_long_text_is_redacted_as_in_a_short_one(kind, text, expected):
    assert redact(f"{FILLER}\n{text}\n{FILLER}") == f"{FILLER}\n{expected}\n{FILLER}"
    assert redact(f"Ωμέγα 日本 {text}\n{FILLER}") == f"Ωμέγα 日本 {expected}\n{FILLER}"


def test_a_long_text_redacted_twice_over_is_looked_at_again_after_each_replacement():
    text = f"{FILLER}\npassword=hunter22 then ghp_{'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'}\n"
    assert redact(text) == f"{FILLER}\npassword=[REDACTED:generic_secret] then [REDACTED:github_token]\n"
