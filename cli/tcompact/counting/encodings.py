"""The tokenizer encodings shipped inside the package, and which one a model uses.

The o200k_base and cl100k_base rank files live in ``tcompact/data`` with their sha256; they are
checked and loaded here and handed to ``tiktoken.Encoding`` directly, so tiktoken's own loader
(which would download them, or cache them under TIKTOKEN_CACHE_DIR) is never used.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError, UsageError

if TYPE_CHECKING:
    import tiktoken

__all__ = ["ENCODINGS", "encoding_for_model", "load_encoding", "fingerprint"]

_ENDOFTEXT = "<|endoftext|>"
# The split patterns and special tokens are tiktoken's (tiktoken_ext/openai_public.py, MIT);
# tests/test_tokens.py checks that they still equal what the installed tiktoken would use.
_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)


@dataclass(frozen=True)
class _EncodingSpec:
    file: str
    sha256: str
    pat_str: str
    special_tokens: Mapping[str, int]


ENCODINGS: dict[str, _EncodingSpec] = {
    "o200k_base": _EncodingSpec(
        "o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _O200K_PAT,
        {_ENDOFTEXT: 199999, "<|endofprompt|>": 200018},
    ),
    "cl100k_base": _EncodingSpec(
        "cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _CL100K_PAT,
        {
            _ENDOFTEXT: 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
}

# OpenAI model-name prefixes → encoding (longest prefix wins); anything else is counted with
# o200k_base and labelled approximate.
_OPENAI_MODELS: tuple[tuple[str, str], ...] = (
    ("gpt-3.5-turbo", "cl100k_base"),
    ("gpt-35-turbo", "cl100k_base"),
    ("gpt-4-", "cl100k_base"),
    ("gpt-4", "cl100k_base"),
    ("text-embedding-3", "cl100k_base"),
    ("text-embedding-ada-002", "cl100k_base"),
    ("gpt-4o", "o200k_base"),
    ("gpt-4.1", "o200k_base"),
    ("gpt-4.5", "o200k_base"),
    ("gpt-5", "o200k_base"),
    ("chatgpt-4o", "o200k_base"),
    ("codex-", "o200k_base"),
    ("o1", "o200k_base"),
    ("o3", "o200k_base"),
    ("o4", "o200k_base"),
    ("gpt-oss", "o200k_base"),
)


def encoding_for_model(model: str | None) -> tuple[str, bool]:
    """The encoding for a model name and whether counts with it are only approximate."""
    if model:
        name = model.strip().lower().rsplit("/", 1)[-1]
        best = ""
        for prefix, enc in _OPENAI_MODELS:
            if name.startswith(prefix) and len(prefix) > len(best):
                best, found = prefix, enc
        if best:
            return found, False
    return "o200k_base", True


@cache
def load_encoding(name: str) -> tiktoken.Encoding:
    """Build a tiktoken encoding from the bundled rank file, checking its sha256 first.

    The decoded rank table is kept in the token cache folder (:func:`tcompact.counting.cache.read_blob`),
    which saves most of the decoding on every later load; it is named after the rank file's
    expected sha256, so a table built from any other file is never used.
    """
    spec = _spec(name)
    ranks = _cached_ranks(name, spec)
    if ranks is None:
        ranks = _decode_ranks(_rank_file(spec))
        from . import cache as tokencache

        tokencache.write_blob(_ranks_blob(name, spec), marshal.dumps(ranks))
    import tiktoken

    return tiktoken.Encoding(
        name=name, pat_str=spec.pat_str, mergeable_ranks=ranks, special_tokens=dict(spec.special_tokens)
    )


def _spec(name: str) -> _EncodingSpec:
    spec = ENCODINGS.get(name)
    if spec is None:
        raise UsageError(f"unknown encoding {name!r}", hint=f"use one of: {', '.join(ENCODINGS)}")
    return spec


def _rank_file(spec: _EncodingSpec) -> bytes:
    from importlib import resources  # (only when no decoded table is kept: 6 ms of every start-up otherwise)

    data = resources.files("tcompact").joinpath("data", spec.file).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != spec.sha256:
        raise InputError(
            f"tokenizer file {spec.file} is damaged (sha256 {digest[:12]}…, expected {spec.sha256[:12]}…)",
            hint="reinstall tcompact",
        )
    return data


def _decode_ranks(data: bytes) -> dict[bytes, int]:
    from binascii import a2b_base64

    return {a2b_base64(tok): int(rank) for tok, rank in (ln.split() for ln in data.splitlines() if ln)}


def _ranks_blob(name: str, spec: _EncodingSpec) -> str:
    return f"ranks-{name}-{spec.sha256[:16]}-{sys.implementation.cache_tag}.marshal"


def _cached_ranks(name: str, spec: _EncodingSpec) -> dict[bytes, int] | None:
    from . import cache as tokencache

    blob = tokencache.read_blob(_ranks_blob(name, spec))
    if blob is None:
        return None
    try:
        ranks = marshal.loads(blob)
    except (ValueError, EOFError, TypeError):
        return None
    return ranks if isinstance(ranks, dict) and ranks else None


@cache
def fingerprint(name: str) -> bytes:
    """What a count with this encoding depends on: the ranks, the split pattern, the special tokens and
    the tiktoken release (its regex engine's Unicode tables). Cached counts are keyed by it."""
    spec = _spec(name)
    parts = ("tcompact-count-v1", name, spec.sha256, spec.pat_str, repr(sorted(spec.special_tokens.items())),
             _tiktoken_release())
    return hashlib.sha256("\0".join(parts).encode()).digest()


def _tiktoken_release() -> str:
    """The installed tiktoken's version, read from its dist-info folder without importing it (importing
    it takes longer than a cached run needs); else its compiled core's name, size and mtime."""
    import importlib.util

    found = importlib.util.find_spec("tiktoken")
    if found is None or not found.origin:
        return "missing"
    package = Path(found.origin).parent
    try:
        infos = [e.name for e in os.scandir(package.parent)
                 if e.name.startswith("tiktoken-") and e.name.endswith(".dist-info")]
        if len(infos) == 1:
            return infos[0][len("tiktoken-"):-len(".dist-info")]
        for core in sorted(package.glob("_tiktoken*")):
            st = core.stat()
            return f"{core.name}:{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        pass
    return "unknown"
