"""What the compressors' and the summarisers' registries share: entries found by their name, a name
given twice being a programming error caught at import."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

__all__ = ["by_name"]

T = TypeVar("T")


def by_name(entries: Iterable[T], what: str) -> dict[str, T]:
    """The entries by their ``name``; two entries of one name raise at import (``what``: the plural)."""
    index: dict[str, T] = {}
    for entry in entries:
        name = entry.name  # type: ignore[attr-defined]
        if name in index:
            raise RuntimeError(f"two {what} are named {name!r}")
        index[name] = entry
    return index
