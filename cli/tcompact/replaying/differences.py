"""Where two JSON values first differ, said shortly: the field path and both values.

``replay --verify`` names what a rebuilt dump does not reproduce with it: the first differing
field (``request.messages_sent[1].content``) and both values, a long text shown around its first
differing character, so that a MISMATCH line fits on a terminal and still shows the difference.
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["first_difference"]

_MISSING = object()


def first_difference(want: Any, have: Any, path: str) -> tuple[str, str, str] | None:
    """``(field, expected, got)`` at the first place two JSON values differ, each value short (a
    text shown around its first differing character); None when they are equal."""
    if isinstance(want, dict) and isinstance(have, dict):
        for key in [*want, *(k for k in have if k not in want)]:
            a, b = want.get(key, _MISSING), have.get(key, _MISSING)
            if a is _MISSING or b is _MISSING:
                return f"{path}.{key}", _brief(a), _brief(b)
            if found := first_difference(a, b, f"{path}.{key}"):
                return found
        return None
    if isinstance(want, list) and isinstance(have, list):
        for i, (a, b) in enumerate(zip(want, have, strict=False)):
            if found := first_difference(a, b, f"{path}[{i}]"):
                return found
        if len(want) != len(have):
            i = min(len(want), len(have))
            return f"{path}[{i}]", _brief(want[i] if i < len(want) else _MISSING, len(want)), \
                _brief(have[i] if i < len(have) else _MISSING, len(have))
        return None
    if want == have:
        return None
    if isinstance(want, str) and isinstance(have, str):
        at = next((i for i, (a, b) in enumerate(zip(want, have, strict=False)) if a != b), min(len(want), len(have)))
        return path, _around(want, at), _around(have, at)
    return path, _brief(want), _brief(have)


def _around(text: str, at: int, before: int = 24, width: int = 64) -> str:
    start = max(0, at - before)
    piece = ("…" if start else "") + text[start:start + width] + ("…" if start + width < len(text) else "")
    return orjson.dumps(piece).decode()


def _brief(value: Any, count: int | None = None) -> str:
    if value is _MISSING:
        return "(none)" if count is None else f"(none; {count} in all)"
    text = orjson.dumps(value).decode()
    return text if len(text) <= 80 else text[:79] + "…"
