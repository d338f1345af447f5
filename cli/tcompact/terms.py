"""What counts as a *term*: a path, identifier or number an agent must get exactly right.

Issue 22 defines the needed-token recall on these: maximal runs of letters, digits and
``_ . / ~ @ + -`` (a URL whole), of 8 or more characters, that are not plain words. The
evaluation (``evaluation/needed.py``) measures which of them a compaction keeps, and the working
set (``working_set/index.py``) lists the ones the hidden tool outputs held — one definition, so
the index keeps exactly what the measure asks for.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["MIN_CHARS", "tokens_of"]

#: The shortest token, in characters.
MIN_CHARS = 8

_URL = r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'`<>()\[\]{}|\\]+"
_WORDISH = r"[A-Za-z0-9_./~@+-]"
#: Runs shorter than the shortest token are never candidates: the regex skips them in C (a maximal run of the
#: class is matched whole either way), so a long output costs one pass, not one Python step per word.
_CANDIDATE = re.compile(f"{_URL}|{_WORDISH}{{{MIN_CHARS},}}")
#: At least four letters or digits (``_`` and the other marks do not count).
_FOUR_ALNUM = re.compile(r"(?:[\W_]*[^\W_]){4}")
#: A plain word: lower case, Capitalised or UPPER CASE letters, or such words joined by hyphens.
_PLAIN = re.compile(r"(?:[A-Z]?[a-z]+|[A-Z]+)(?:-(?:[A-Z]?[a-z]+|[A-Z]+))*")


def tokens_of(text: str) -> set[str]:
    """The tokens of a text: maximal runs of letters, digits and ``_ . / ~ @ + -`` (a URL whole), with
    sentence punctuation trimmed (a trailing ``.``, ``-`` or ``/``, a leading ``-`` of a flag, the
    leading ``.`` of a member access), of :data:`MIN_CHARS` or more with at least four letters or
    digits, and not a plain word (lower case, Capitalised or UPPER CASE letters, or such words joined
    by hyphens: "connection", "Traceback", "read-only"). ``src/app.py``, ``parse_config``,
    ``HttpClient``, ``019b7f04-0b04``, ``12345678`` are tokens."""
    found = (_remembered(raw) if len(raw) <= _REMEMBER_CHARS else _token(raw)
             for raw in set(_CANDIDATE.findall(text)))  # each distinct run once
    return {token for token in found if token}


def _token(raw: str) -> str:
    """The token a run is, or ''."""
    token = _trimmed(raw)
    return token if len(token) >= MIN_CHARS and not _PLAIN.fullmatch(token) and _FOUR_ALNUM.match(token) else ""


#: A run this short is looked at once per process (a session's outputs repeat their paths and names).
_REMEMBER_CHARS = 200
_remembered = lru_cache(maxsize=1 << 16)(_token)


def _trimmed(token: str) -> str:
    if "://" in token:
        return token.rstrip(".,;:!?")
    token = token.rstrip(".-/").lstrip("-")
    if token[:1] == "." and token[1:2].isalpha():  # ".getTime" of a member access, ".gitignore"
        token = token[1:]
    return token


