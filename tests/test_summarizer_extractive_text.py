"""The extractive summariser's text helpers (summarizers/extractive/text.py): cutting with and without a
marker, the head/tail window of big outputs, case folding that never misses a match, the user's text of a
slash command, markdown noise removed while names stay, prose lines, informative sentences and what a
terse reply answers."""

from __future__ import annotations

import pytest

from tcompact.model import Message
from tcompact.summarizers.extractive.text import (
    CONSTRAINT_CUES,
    USER_SPLIT,
    clean,
    cut,
    cut_marked,
    informative,
    lowered,
    no_emoji,
    one_line,
    prose_lines,
    quote,
    reply_context,
    resume_field,
    sentences,
    user_text,
    window,
    word_count,
    words_in,
)


@pytest.mark.parametrize(("text", "limit", "out"), [
    ("abcdef   ghij", 8, "abcdef…"), ("abc", 3, "abc"), ("abcdef", 1, "a…"), ("", 5, ""),
])
def test_cut_ends_with_an_ellipsis_and_never_with_blanks(text, limit, out):
    assert cut(text, limit) == out


def test_cut_marked_says_how_much_was_cut():
    assert cut_marked("a" * 1200, 1000) == "a" * 1000 + " […200 more chars cut]"
    assert cut_marked("word " * 3, 6) == "word w […9 more chars cut]"
    assert cut_marked("short", 5) == "short"


def test_window_is_the_head_and_tail_of_a_long_output():
    text = "h" * 7000 + "t" * 7000
    assert window(text) == "h" * 6000 + "\n" + "t" * 6000
    assert window("x" * 12000) == "x" * 12000


def test_lowered_refuses_letters_that_fold_to_others():
    assert lowered("An ERROR") == "an error"
    assert lowered("İstanbul") is None and lowered("ſ") is None  # İ ı ſ match i and s case-insensitively
    assert words_in("An ERROR here", ("error", "fatal")) == ("error",)
    assert words_in("ſtop", ("s", "x")) == ("s", "x")  # unsure: every word may be there


@pytest.mark.parametrize(("text", "field"), [
    ("line one;\nline two; three", "line one, l…"), ("   ", "(none)"), ("x" * 30, "x" * 11 + "…"),
])
def test_a_resume_field_is_one_line_without_semicolons(text, field):
    assert resume_field(text, 12) == field


@pytest.mark.parametrize(("text", "typed"), [
    ("<command-name>/review</command-name>\n<command-args>  PR 12 </command-args>", "/review PR 12"),
    ("<command-message>x</command-message>\n<command-name>/clear</command-name>", "/clear"),
    ("  plain request  ", "plain request"),
    ("<command-name>/x</command-name>" + "y" * 2000, "<command-name>/x</command-name>" + "y" * 2000),  # too long
])
def test_the_users_text_of_a_slash_command(text, typed):
    assert user_text(Message(role="user", content=text)) == typed


def test_clean_drops_markdown_noise_and_emoji_but_never_name_characters():
    assert clean("# Title 🚀\n---\n**Done** with `x**y**` ✅") == "Title Done with `x**y**`"
    assert clean("__init__.py and **__main__** and a_b__c") == "__init__.py and __main__ and a_b__c"
    assert no_emoji("ok ✅ done") == "ok  done" and no_emoji("plain") == "plain"
    assert one_line("a\n  b\t c") == "a b c" and quote("x") == "“x”"


def test_prose_lines_skip_code_tables_headings_directions_and_tags():
    text = ("Intro line.\n```py\ncode()\n```\n| a | b |\n# Head\n*nods*\n- **Bold** item\n> quoted\n<tag>\n\n"
            "2. numbered\n~~~\nfenced too\n~~~\nlast")
    assert list(prose_lines(text)) == ["Intro line.", "Bold item", "numbered", "last"]


def test_word_count_counts_cjk_characters_as_half_words():
    assert (word_count("日本語のテキストです"), word_count("one two three"), word_count("")) == (5, 3, 0)


@pytest.mark.parametrize(("sentence", "kept"), [
    ("The parser fails because of the BOM.", True),
    ("It uses `orjson` for the output files.", True),
    ("Let me check the file now please.", False),  # a lead-in
    ("What should we do next here?", False),  # a question
    ("Here are the options I found:", False),  # an introduction
    ("This is really great news for everyone!", False),  # excitement without anything technical
    ("Version 2 is really out now!", True),  # … unless it names something
    ("ok", False), ("The weather is nice and sunny today.", False),  # nothing said
    ("word " * 81, False),  # too long to be one statement
])
def test_informative_sentences(sentence, kept):
    assert informative(sentence.strip()) is kept


def test_sentences_of_prose_leave_out_menus_and_chatter():
    text = "Let me look.\nThe cache fails because the key expires. [d] Done\nWhat next?\n[a] Apply\nThe writer uses utf-8."
    assert list(sentences(text)) == ["The cache fails because the key expires.", "The writer uses utf-8."]


@pytest.mark.parametrize(("reply", "previous", "context"), [
    ("a", "Which one?\n- **[a] Apply** - write it\n- [b] Back", "it picks the option “[a] Apply - write it”"),
    ("2.", "Options:\n1. Keep it\n2) Drop it", "it picks the option “2) Drop it”"),
    ("yes", "I can port the CLI next. Should I continue? Tell me.", "it answers “Should I continue?”"),
    ("sure", "I wrote the file.", "which ended “I wrote the file.”"),
])
def test_what_a_terse_reply_answers(reply, previous, context):
    assert reply_context(reply, previous) == context


@pytest.mark.parametrize(("text", "parts"), [
    ("Use tabs. Never push to main! Done? yes", ["Use tabs.", "Never push to main!", "Done?", "yes"]),
    ("See e.g. the docs. Then i.e. this.", ["See e.g. the docs.", "Then i.e. this."]),
    ("first line\nsecond line", ["first line", "second line"]),
])
def test_user_text_splits_at_stops_and_line_ends(text, parts):
    assert USER_SPLIT.split(text) == parts


@pytest.mark.parametrize(("sentence", "cue"), [
    ("You must not add dependencies.", True), ("Please keep the header.", True), ("Never push to main.", True),
    ("I prefer tabs.", True), ("At most 3 retries.", True), ("The build is green.", False),
])
def test_constraint_cues(sentence, cue):
    assert bool(CONSTRAINT_CUES.search(sentence)) is cue
