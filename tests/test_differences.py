"""``first_difference``: the first differing field of two JSON values and both values, short."""

from __future__ import annotations

from tcompact.replaying.differences import first_difference


def test_equal_values_have_no_difference():
    assert first_difference({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "x"}]}, "doc") is None


def test_the_first_differing_field_is_named_with_both_values():
    assert first_difference({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 3]}, "doc") == ("doc.b[1]", "2", "3")
    assert first_difference({"a": 1}, {"a": 1, "c": True}, "doc") == ("doc.c", "(none)", "true")
    assert first_difference([1, 2], [1], "messages") == ("messages[1]", "2", "(none; 1 in all)")
    assert first_difference({"a": "x"}, {"a": 5}, "doc") == ("doc.a", '"x"', "5")


def test_a_long_text_is_shown_around_its_first_differing_character():
    want = "prefix " * 10 + "current_context_window_tokens: 114934\n" + "suffix " * 20
    have = want.replace("114934", "115009")
    field, expected, got = first_difference({"content": want}, {"content": have}, "request")
    assert field == "request.content"
    assert expected == '"…ontext_window_tokens: 114934\\nsuffix suffix suffix suffix suffix …"'  # from 24 before
    assert got == '"…ontext_window_tokens: 115009\\nsuffix suffix suffix suffix suffix …"'
    assert first_difference({"v": list(range(40))}, {"v": "x"}, "d") == (
        "d.v", "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,2…", '"x"')
