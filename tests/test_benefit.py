"""The information benefit check: facts of what is replaced, a skeleton refused, density against tokens."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REAL_FILES, real_file
from tcompact.compressors._benefit import DENSITY, MIN_FACTS, _tokens, benefit, facts, word_facts
from tcompact.formats import read_file
from tcompact.model import Message, ToolCall
from tcompact.counting.tokens import TokenCounter

COUNTER = TokenCounter()


def body():
    return [Message(role="user", content="Please fix the exporter in rosterkit/export.py before Friday."),
            Message(role="assistant", content="The bug is in `export_members` and `write_header`.",
                    tool_calls=(ToolCall("a", "Bash", '{"command": "pytest -q tests/test_export.py", '
                                                      '"content": "' + "data_row_1.0 " * 40 + '"}'),)),
            Message(role="tool", content="ok\nE   UnicodeEncodeError: 'charmap' codec\n" + "filler 1.25 " * 400,
                    tool_call_ids=("a",))]


def test_facts_are_tokens_of_words_and_short_arguments_and_user_sentences():
    tokens, sentences = facts(body())
    assert tokens == {"rosterkit/export.py", "export_members", "write_header", "tests/test_export.py",
                      "UnicodeEncodeError"}
    assert sentences == {"Please fix the exporter in rosterkit/export.py before Friday."}
    secret = [Message(role="user", content="use key sk-proj-" + "A1b2C3d4" * 6 + " in deploy/run.sh")]
    assert facts(secret)[0] == {"deploy/run.sh"}  # the secret is redacted first: it is no fact to lose


def test_the_facts_of_the_words_made_beforehand_with_those_of_the_outputs_after_are_the_facts():
    """working-set makes the facts but the outputs' while the summariser answers (the outputs' error lines are
    the summariser's to find): the two parts make the same facts."""
    words = word_facts(body())
    assert words == ({"rosterkit/export.py", "export_members", "write_header", "tests/test_export.py"},
                     {"Please fix the exporter in rosterkit/export.py before Friday."})
    assert facts(body(), words=words) == facts(body())
    assert facts(body(), words=(set(), set())) == ({"UnicodeEncodeError"}, set())  # only the outputs' added


@pytest.mark.parametrize("key", sorted(REAL_FILES))
def test_the_facts_made_in_two_parts_are_those_made_at_once_on_the_shared_sessions(key):
    for transcript in read_file(real_file(key)).transcripts:
        messages = list(transcript.messages)
        whole = facts(messages)
        assert facts(messages, words=word_facts(messages)) == whole and whole[0]


def replacement(text):
    return [Message(role="user", content=text)]


def test_a_summary_dense_enough_in_facts_is_accepted():
    many = body() + [Message(role="assistant", content=f"Checked `mod_{n}.py` and `fn_{n}`.") for n in range(10)]
    good = "Fixed rosterkit/export.py (`export_members`); tests/test_export.py passes; UnicodeEncodeError gone."
    verdict = benefit(many, replacement(good), summary=good, before=5000, after=1000, counter=COUNTER)
    assert verdict.accepted and verdict.reason == "compacted" and verdict.facts_kept >= verdict.tokens_kept * DENSITY
    poor = "We worked on several things and made progress. " * 5
    verdict = benefit(many, replacement(poor), summary=poor, before=5000, after=1000, counter=COUNTER)
    assert not verdict.accepted and verdict.facts_kept == 0.0
    assert verdict.reason.startswith("no benefit: the summary keeps 0% of the facts of what it replaces in ")


def test_skeletons_are_refused_and_few_facts_only_need_fewer_tokens():
    skeleton = "<state_snapshot>\n1. Active Task\n(omitted)\n\n2. Files\n- (+3 omitted for budget)\n</state_snapshot>"
    verdict = benefit(body(), replacement(skeleton), summary=skeleton, before=900, after=300, counter=COUNTER)
    assert (verdict.accepted, verdict.reason) == (False, "no benefit: the summary is only headings and empty "
                                                         "sections; original kept")
    assert len(facts(body())[0]) + len(facts(body())[1]) < MIN_FACTS
    verdict = benefit(body(), replacement("fix it"), summary="fix it", before=900, after=300, counter=COUNTER)
    assert verdict.accepted and verdict.facts_kept is None
    verdict = benefit(body(), replacement("fix it"), summary="fix it", before=900, after=900, counter=COUNTER)
    assert (verdict.accepted, verdict.reason) == (False, "no benefit (900 ≥ 900 tokens); original kept")


def test_a_path_made_absolute_still_counts():
    many = [Message(role="assistant", content="", tool_calls=(ToolCall(f"c{n}", "Read",
                                                                       f'{{"file_path": "src/m{n}.py"}}'),))
            for n in range(12)]
    text = "\n".join(f"/repo/src/m{n}.py — read" for n in range(12))
    verdict = benefit(many, replacement(text), summary=text, before=9000, after=500, counter=COUNTER)
    assert verdict.accepted and verdict.facts_kept == 1.0


def test_facts_of_tool_calls_and_outputs():
    output = Message(role="tool", content="collected 12 items\nValueError: bad shard\nfine", tool_call_ids=("a",))
    assert facts([output]) == ({"ValueError"}, set())  # only the error statements of an output carry facts
    nested = ToolCall("a", "x", '{"a": {"b": ["src/x.py", 3]}, "c": "' + "q/" * 200 + '"}')
    assert facts([Message(role="assistant", tool_calls=(nested,))]) == ({"src/x.py"}, set())  # long values are contents
    raw = ToolCall("p", "apply_patch", "*** Begin Patch src/y.py", type="custom")
    assert facts([Message(role="assistant", tool_calls=(raw,))]) == ({"src/y.py"}, set())
    said = Message(role="user", content="Run it. Please keep config/app.toml as it is.\nok")
    assert facts([said]) == ({"config/app.toml"}, {"Please keep config/app.toml as it is."})


@pytest.mark.parametrize("summary", [
    "1. Active Task\n(none)\n\n2. Files\n- (none)",
    "## Active Task\n(omitted)\n- n/a",
    "<state_snapshot>\nCurrent Work:\n- (+4 more left out for the budget)\n</state_snapshot>",
    "<state_snapshot>\nCurrent Work:\n- (4 left out for the budget)\n</state_snapshot>",
    "Resume:\n\n\n",
])
def test_a_skeleton_is_refused_whatever_its_size(summary):
    verdict = benefit(body(), replacement(summary), summary=summary, before=5000, after=10, counter=COUNTER)
    assert (verdict.accepted, verdict.facts_kept, verdict.tokens_kept) == (False, 0.0, 1.0)


def test_one_line_of_content_is_no_skeleton():
    summary = "1. Active Task\n(none)\n- fixed rosterkit/export.py"
    assert benefit(body(), replacement(summary), summary=summary, before=5000, after=10, counter=COUNTER).accepted


def test_eight_facts_are_enough_for_the_density_to_count():
    def calls(n):
        return [Message(role="assistant", tool_calls=(ToolCall(f"c{k}", "Read", f'{{"file_path": "src/m{k}.py"}}'),))
                for k in range(n)]

    vague = "Read several modules of the package."
    seven = benefit(calls(7), replacement(vague), summary=vague, before=900, after=100, counter=COUNTER)
    assert (seven.accepted, seven.facts_kept) == (True, None)
    eight = benefit(calls(8), replacement(vague), summary=vague, before=900, after=100, counter=COUNTER)
    assert (eight.accepted, eight.facts_kept) == (False, 0.0)
    assert eight.reason == (f"no benefit: the summary keeps 0% of the facts of what it replaces in "
                            f"{eight.tokens_kept:.0%} of its tokens; original kept")


def test_the_token_test_comes_before_the_skeleton_test():
    verdict = benefit(body(), replacement("(none)"), summary="(none)", before=100, after=120, counter=COUNTER)
    assert (verdict.accepted, verdict.reason, verdict.facts_kept) == (False, "no benefit (120 ≥ 100 tokens); original "
                                                                            "kept", None)


#: The facts' one regex as it was before issue 26 read the distinct words instead of the texts.
_PLAIN_FACT = re.compile(r"`[^`\n]{2,80}`|[\w@~-]*[/_.][\w./@~-]*\w|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*|"
                         r"\b\d[\d.,:]*\d\b")
_FACT_PIECES = ["a", "Zq", "xY", "_", ".", "/", "@", "~", "-", ",", ":", "1", "23", " ", "\n", "\t", "`", "``",
                "\u00a0", "\x1c", "é", "日", "src/app.py", "parse_config", "HttpClient", "`two words`", "v1.2,3"]


@settings(max_examples=800, deadline=None, database=None)
@given(st.lists(st.lists(st.sampled_from(_FACT_PIECES), max_size=30).map("".join), min_size=1, max_size=3))
def test_the_facts_of_distinct_words_are_those_of_the_whole_texts(texts):
    """Code spans are found in each text, the other facts in its distinct words: the same as one regex over
    each whole text (a blank, a backtick and a text's edge are alike to ``\\b``, and no other fact holds one)."""
    assert _tokens(*texts) == {t.strip("`") for text in texts for t in _PLAIN_FACT.findall(text)}
