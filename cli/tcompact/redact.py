"""Secret redaction for compression dumps and summaries.

:data:`PATTERNS` lists what counts as a secret, most specific first: provider keys with a fixed
shape (OpenAI, Anthropic, AWS, GitHub, Slack, Google, Stripe), JWTs, ``Authorization``/``Bearer``
credentials, PEM private-key blocks, the user:password part of URLs, and generic assignments such
as ``password=…`` or ``api_key: "…"``. :func:`redact` replaces each match with
``[REDACTED:<kind>]``; when a pattern has a ``secret`` group only that group is replaced, so key
names, URL schemes and hosts stay readable. :func:`redact_value` does the same inside parsed JSON
and also blanks string values under keys that name a secret (``api_key``, ``authorization``, …).

The patterns are anchored on prefixes, lengths and word boundaries so that ordinary code, git
commit hashes, uuids and base64 payloads (inline images) are left alone: none of them matches a
bare run of hex or base64 characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

__all__ = ["PATTERNS", "SECRET_KEY", "redact", "redact_value"]

# Characters that may continue a token: a key must not be glued to one of them on its left or
# right, which keeps a longer identifier or a base64 blob from matching in its middle. Prefixes
# made only of base64 letters (AKIA, AIza, eyJ) are also refused next to "+" and "/"; prefixes with
# "_" or "-" cannot occur inside standard base64, so "https://ghp_…@github.com" still matches. Each
# pattern starts with a literal (the character before it is checked by a lookbehind placed after
# the literal), so the regex engine can jump between candidates: a 40 MB dump stays fast.
_NOT_BEFORE = r"(?![A-Za-z0-9_\-])"
_NOT_BEFORE_B64 = r"(?![A-Za-z0-9_\-+/])"


def _glued(prefix: str, base64: bool = False) -> str:
    """A lookbehind failing when the literal ``prefix`` just matched follows a token character (not the letter of
    an escape such as the ``\\n`` of JSON text a tool printed)."""
    chars = r"A-Za-z0-9_\-+/" if base64 else r"A-Za-z0-9_\-"
    return rf"(?<!(?<!\\)[{chars}]{prefix})"


# How the name of a secret ends in a generic assignment (``client_secret``, ``DB_PASSWORD``,
# ``auth_token`` qualify; ``max_tokens=4096`` and ``token_count: 3`` do not). The leading
# lookahead lets the engine skip positions that cannot start one.
_SECRET_SUFFIX = (
    r"(?=[PpSsAaTt])(?i:pass(?:word|wd|phrase)|pwd|private[_\-]?key|secret(?:[_\-]?key)?|api[_\-]?key|apikey"
    r"|access[_\-]?key(?:[_\-]?id)?|token)"
)

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # PEM private key: the whole block from BEGIN to END (or to the end of its base64 body when cut off).
    ("private_key", re.compile(
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]{0,20000}?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]*)")),
    # Anthropic API / admin keys: sk-ant-api03-…, sk-ant-admin01-….
    ("anthropic_key", re.compile(r"sk-ant-" + _glued("sk-ant-") + r"[A-Za-z0-9_\-]{20,}" + _NOT_BEFORE)),
    # OpenAI keys: sk-…, sk-proj-…, sk-svcacct-…, sk-admin-… (20+ characters, at least one digit).
    ("openai_key", re.compile(
        r"sk-" + _glued("sk-") + r"(?:proj-|svcacct-|admin-)?(?=[A-Za-z_\-]*[0-9])[A-Za-z0-9_\-]{20,}" + _NOT_BEFORE)),
    # Stripe secret and restricted keys: sk_live_…, rk_live_… (and their _test_ twins).
    ("stripe_key", re.compile(
        r"[sr]k_(?:live|test)_" + _glued(r"[sr]k_(?:live|test)_") + r"[A-Za-z0-9]{10,}" + _NOT_BEFORE)),
    # AWS access key ids: AKIA… (long-term) and ASIA… (temporary), 20 characters in all.
    ("aws_access_key_id", re.compile(r"A[KS]IA" + _glued("A[KS]IA", True) + r"[A-Z0-9]{16}" + _NOT_BEFORE_B64)),
    # AWS secret access key after its name: aws_secret_access_key = …; the value only.
    ("aws_secret_access_key", re.compile(
        r"(?i)aws_?secret_?access_?key[\"']?\s*(?:=>|[:=])\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])")),
    # GitHub tokens: classic (ghp_ gho_ ghu_ ghs_ ghr_) and fine-grained (github_pat_).
    ("github_token", re.compile(
        r"g" + _glued("g") + r"(?:h[pousr]_[A-Za-z0-9]{36,255}|ithub_pat_[A-Za-z0-9_]{22,255})" + _NOT_BEFORE)),
    # Slack tokens: xoxa-, xoxb-, xoxp-, xoxr-, xoxs-.
    ("slack_token", re.compile(r"xox[abprs]-" + _glued("xox[abprs]-") + r"[A-Za-z0-9\-]{10,}" + _NOT_BEFORE)),
    # Google API keys: AIza followed by 35 characters.
    ("google_api_key", re.compile(r"AIza" + _glued("AIza", True) + r"[0-9A-Za-z_\-]{35}" + _NOT_BEFORE_B64)),
    # JSON Web Tokens: base64url header.payload.signature, header and payload starting with eyJ.
    ("jwt", re.compile(
        r"eyJ" + _glued("eyJ", True) + r"[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]+"
        + _NOT_BEFORE_B64)),
    # Authorization header with a scheme (Bearer, Basic, Token, Digest): the credential only.
    ("authorization", re.compile(
        r"[Aa](?i:uthorization)[\"']?\s*[:=]\s*[\"']?(?i:bearer|basic|token|digest|apikey)\s+"
        r"(?!\[REDACTED)(?P<secret>[A-Za-z0-9._~+/\-]{6,}=*)")),
    # A bare "Bearer <token>" (16+ characters with a digit, so prose like "Bearer tokens" stays).
    ("bearer_token", re.compile(
        r"[Bb]earer(?<!(?<!\\)[A-Za-z0-9_][Bb]earer)\s+"
        r"(?P<secret>(?=[A-Za-z._~+/\-]*[0-9])[A-Za-z0-9._~+/\-]{16,}=*)")),
    # Credentials in a URL: scheme://user:password@host keeps the scheme and the host. (The literal
    # first and the scheme's last character checked behind it: the engine then jumps between "://".)
    ("url_credentials", re.compile(
        r"://(?<=[A-Za-z0-9]://)(?P<secret>[^\s:/?#@\"'<>\[\]]{0,256}:[^\s/?#@\"'<>]{1,256})@(?=[\w\[])")),
    # Generic quoted assignment: password = "…", "api_key": "…", secret: '…' (the value only; no
    # whitespace in it, not a ${VAR}/<placeholder> reference, not already redacted).
    ("generic_secret", re.compile(
        r"(?P<name>" + _SECRET_SUFFIX + r")[\"']?\s*(?:=>|:=|[:=])\s*"
        r"(?P<q>[\"'])(?!\[REDACTED|\$|<|\{|%\()(?P<secret>[^\s\"'\\]{4,200})(?P=q)")),
    # Generic bare assignment: PASSWORD=hunter22, --api-key=abc123def, token: x9y8z7 (the value
    # only; it must mix letters and digits so code such as ``token = get_token()`` stays).
    ("generic_secret", re.compile(
        r"(?P<name>" + _SECRET_SUFFIX + r")\s*(?:=>|:=|[:=])[ \t]*"
        r"(?![\"'\[$<{%])(?P<secret>(?=[^\s\"',;]*[A-Za-z])(?=[^\s\"',;]*[0-9])[A-Za-z0-9_\-+/=.!@#%^&*~]{6,200})"
        r"(?![A-Za-z0-9_\-+/=.!@#%^&*~(\[{])")),
)

#: A dict key naming a secret (``api_key``, ``Authorization``, ``DB_PASSWORD``, ``x-api-key``): its
#: string value is redacted whole by :func:`redact_value`.
SECRET_KEY = re.compile(
    r"(?i)^(?:[a-z0-9]+[_\-.])*(?:authorization|cookie|set[_\-]cookie|pass(?:word|wd|phrase)|pwd|secret(?:[_\-]?key)?"
    r"|api[_\-]?key|apikey|access[_\-]?key(?:[_\-]?id)?|private[_\-]?key|token|credentials?)$")


def _replace(kind: str) -> Any:
    """A substitution that replaces the ``secret`` group when the pattern has one, else the match."""
    label = f"[REDACTED:{kind}]"

    def sub(m: re.Match[str]) -> str:
        if "secret" not in m.re.groupindex:
            return label
        whole, start, end = m.group(0), m.start("secret") - m.start(), m.end("secret") - m.start()
        if m.group("secret").lower() == (m.groupdict().get("name") or "").lower():
            return whole
        return whole[:start] + label + whole[end:]

    return sub


# Lower-case substrings without which a pattern cannot match: a pattern only runs on a text that
# holds one of them. Scanning for a few literals is far cheaper than running 15 regexes over every
# string of a 40 MB dump (the generic patterns start at almost any letter).
_NEEDLES: tuple[tuple[str, ...], ...] = (
    ("private key",),
    ("sk-ant-",),
    ("sk-",),
    ("k_live_", "k_test_"),
    ("akia", "asia"),
    ("secret",),
    ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ("xox",),
    ("aiza",),
    ("eyj",),
    ("uthorization",),
    ("bearer",),
    ("://",),
    ("pass", "pwd", "secret", "key", "token"),
    ("pass", "pwd", "secret", "key", "token"),
)
# Each needle looked for is a pass over the text, and a text without secrets is looked through for
# every needle. A long text (from _LAZY_FROM characters: a short one is cheaper to test for all at once)
# is looked for a needle only when a pattern asks, in the order of _LAZY (the generic patterns stop at
# the first found: "token" is common); a needle that holds another only where that one is (_INSIDE);
# the classic GitHub and the Stripe prefixes by one regex each (a regex starting with a two-letter
# literal searches about as fast as ``in``: one pass, not five or two).
_LAZY_FROM = 4096
_LAZY: dict[str, tuple[str | re.Pattern[str], ...]] = {
    "k_live_": (re.compile(r"k_(?:live|test)_"),),
    "ghp_": (re.compile(r"gh[pousr]_"), "github_pat_"),
    "pass": ("token", "key", "pass", "secret", "pwd"),
}
_INSIDE = {"sk-ant-": "sk-", "private key": "key"}
assert len(_NEEDLES) == len(PATTERNS)
# Where a match can start, for the patterns tried only there instead of at every character: where the
# lower-case text holds one of these words (moved by the offset: a Stripe key starts one letter before
# "k_live_"). A generic assignment starts with one of the names _SECRET_SUFFIX accepts. Patterns that take
# ſ for s or ı for i (case-insensitive ones) are tried there only in texts that hold neither.
_GENERIC_STARTS = ("pass", "pwd", "private", "secret", "api", "access", "token")
_STARTS = {"generic_secret": (_GENERIC_STARTS, 0, False), "aws_secret_access_key": (("aws",), 0, True),
           "stripe_key": (("k_live_", "k_test_"), -1, False), "authorization": (("authorization",), 0, True),
           "bearer_token": (("bearer",), 0, False)}
_SUBS = tuple(((frozenset(needles), _LAZY.get(needles[0], needles)), pattern, _replace(kind), _STARTS.get(kind))
              for needles, (kind, pattern) in zip(_NEEDLES, PATTERNS, strict=True))
_ODD_CASES = ("\u017f", "\u0131")  # ſ and ı, which case-insensitive patterns take for s and i
_ALL_NEEDLES = tuple(sorted({n for needles in _NEEDLES for n in needles}, key=len, reverse=True))


def redact(text: str) -> str:
    """The text with every secret replaced by ``[REDACTED:<kind>]``."""
    low = _lower(text)
    present = _present(low)
    if present is None:
        return text
    starts: dict[tuple[str, ...], list[int]] = {}
    for needles, pattern, sub, where in _SUBS:
        if not present(needles):
            continue
        if where is not None and len(low) == len(text) and (not where[2] or _plain(text)):
            words, offset, _ = where
            if words not in starts:
                starts[words] = _starts(low, words)
            new = _sub_at(pattern, sub, text, [i + offset for i in starts[words] if i + offset >= 0])
        else:
            new = pattern.sub(sub, text)
        if new is not text and new != text:  # a replacement: look again (its label may hold a needle)
            text, low, starts = new, _lower(new), {}
            present = _present(low)
            if present is None:  # nothing left for the remaining patterns
                return text
    return text


def _lower(text: str) -> str:
    """``text`` with its ASCII letters in lower case, the same length and ASCII characters as ``text.lower()``
    (all that is looked for in it is ASCII). Other letters are left as they are: lowering them is most of the
    time of ``lower()`` on a text that is not ASCII, and only İ and the Kelvin sign K lower to ASCII letters
    (a text holding one is lowered whole)."""
    if text.isascii() or "\u0130" in text or "\u212a" in text:
        return text.lower()
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


def _plain(text: str) -> bool:
    """Whether ``text`` holds none of the characters a case-insensitive pattern takes for an ASCII letter
    that ``lower()`` keeps as it is (then a match starts where the lower-case text holds its first letters)."""
    return text.isascii() or not any(c in text for c in _ODD_CASES)


def _present(low: str) -> Callable[[tuple[frozenset[str], tuple[str | re.Pattern[str], ...]]], bool] | None:
    """A test of whether ``low`` holds one of a pattern's needles (each distinct needle looked for once);
    None for a short text that holds none."""
    if len(low) < _LAZY_FROM:
        found = frozenset(n for n in _ALL_NEEDLES if n in low)
        return (lambda needles: not found.isdisjoint(needles[0])) if found else None
    return _Present(low).any


class _Present(dict):
    """Which needles occur in one long lower-case text (needle → bool), each looked for once, when first asked."""

    def __init__(self, low: str) -> None:
        super().__init__()
        self.low = low

    def any(self, needles: tuple[frozenset[str], tuple[str | re.Pattern[str], ...]]) -> bool:
        """Whether ``low`` holds one of ``needles`` (looked for in their lazy order, up to the first found)."""
        for needle in needles[1]:
            if self[needle]:
                return True
        return False

    def __missing__(self, needle: str | re.Pattern[str]) -> bool:
        if isinstance(needle, re.Pattern):
            found = needle.search(self.low) is not None
        else:
            inside = _INSIDE.get(needle)
            found = (inside is None or self[inside]) and needle in self.low
        self[needle] = found
        return found


def _starts(low: str, firsts: tuple[str, ...] = _GENERIC_STARTS) -> list[int]:
    """Sorted positions where a match may begin: where ``low`` holds one of ``firsts``."""
    found: set[int] = set()
    for needle in firsts:
        i = low.find(needle)
        while i != -1:
            found.add(i)
            i = low.find(needle, i + 1)
    return sorted(found)


def _sub_at(pattern: re.Pattern[str], sub: Any, text: str, starts: list[int]) -> str:
    """``pattern.sub`` restricted to matches that begin at one of ``starts``."""
    out, last = [], 0
    for pos in starts:
        if pos < last:
            continue
        m = pattern.match(text, pos)
        if m is not None and m.end() > m.start():
            out.append(text[last:pos])
            out.append(sub(m))
            last = m.end()
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def redact_value(value: Any, cache: dict[str, str] | None = None, *, leaf: Callable[[str], str] | None = None) -> Any:
    """A copy of a JSON-like value with strings redacted and values under secret-named keys blanked.

    ``cache`` (text → redacted text) may be shared between calls that see the same strings, as the
    dumps of one compaction do. ``leaf``: the redaction of one string, when it is known another way
    (made ahead by a copy of the process, :mod:`tcompact.dump.ahead`); :func:`redact` by default.
    """
    return _redacted(value, {} if cache is None else cache, leaf or redact)


def _redacted(value: Any, cache: dict[str, str], leaf: Callable[[str], str]) -> Any:
    # (a dump holds hundreds of thousands of values: the common types are told first, and cheaply)
    kind = type(value)
    if kind is str or (kind is not dict and kind is not list and isinstance(value, str)):
        done = cache.get(value)
        if done is None:
            done = cache[value] = leaf(value)
        return done
    if kind is dict or (kind is not list and isinstance(value, Mapping)):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(item, str) and item and isinstance(key, str) and _secret_key(key):
                out[key] = item if item.startswith("[REDACTED") else "[REDACTED:secret_field]"
            else:
                out[key] = _redacted(item, cache, leaf)
        return out
    if isinstance(value, list):
        return [_redacted(item, cache, leaf) for item in value]
    if isinstance(value, tuple):
        return tuple(_redacted(item, cache, leaf) for item in value)
    return value


@lru_cache(maxsize=4096)
def _secret_key(key: str) -> bool:
    """Whether a dict key names a secret (:data:`SECRET_KEY`)."""
    return bool(SECRET_KEY.match(key))
