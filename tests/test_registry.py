"""registry.py: the entries of the compressors' and summarisers' registries, by name."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tcompact import compressors, summarizers
from tcompact.registry import by_name


@dataclass(frozen=True)
class _Entry:
    name: str
    value: int


def test_entries_are_found_by_their_name_in_order():
    a, b = _Entry("a", 1), _Entry("b", 2)
    index = by_name((a, b), "things")
    assert list(index) == ["a", "b"]
    assert index["b"] is b


def test_a_name_given_twice_is_an_error_at_import():
    with pytest.raises(RuntimeError) as info:
        by_name((_Entry("a", 1), _Entry("a", 2)), "things")
    assert str(info.value) == "two things are named 'a'"


def test_both_registries_find_every_entry_by_name():
    assert [compressors.get(n).name for n in compressors.names()] == compressors.names()
    assert [summarizers.get(n).name for n in summarizers.names()] == ["extractive", "openai", "replay"]
