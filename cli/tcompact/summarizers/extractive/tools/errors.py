"""What is an error line: every error statement of a tool output, the key error of a failed result, and the
one line that says how a command ended — the one place that decides (both summaries, the mask and the
benefit check read error lines through it).

Agents lose most often the error that appeared in the middle of a long output (LESSONS.md): the
head-and-tail window the rest of the scan reads misses it. So every line of a command's output is
tested here — cheaply: a text without any error word is passed over whole — against patterns that
mark a line as an error *statement* (an exception, an ``ERROR:``/``fatal:``/``error[E…]`` prefix,
a shell's ``command not found``, make's ``*** … Error 2``, a log line at ERROR level), not a line
that merely mentions errors ("0 errors", source code that raises one, a markdown heading such as
"Error Handling" in a document that was read). Lines are returned exactly
as they stand (leading and trailing blanks stripped), so a summary can quote them byte for byte.
The key error of a failed result (:func:`key_error`) is the line that states it most surely: an
exception, then an error prefix, then an error phrase — or the tool's own ``<tool_use_error>``.
"""

from __future__ import annotations

import hashlib
import re
import threading
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate

import orjson

from ....forked import Forked, enabled
from ..text import cut, lowered, one_line
from .outputs import HEADER_LINE, first_lines

__all__ = ["drop_error_lines_ahead", "error_lines", "error_lines_ahead", "outcome_line", "key_error", "remember",
           "remembered"]

_WORDS = ("error", "fatal", "fail", "panic", "exception", "traceback", "not found", "denied", "err!", "cannot",
          "no such file", "not permitted", "*** ")
_STATEMENT = re.compile(
    r"""^(?:E\s+)?(?:
        (?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Failure|Interrupt|Exit):\s*\S   # ValueError: …
      | (?:error|ERROR|Error|fatal|FATAL|Fatal|panic|PANIC|CRITICAL|FAILED|FAIL|Failed)(?:\[[\w-]+\])?(?:[:!]|\s+\S)
      | npm\ ERR!
      | \S+:\ \*\*\*\ .*\bError\ \d+                                               # make: *** [x] Error 2
      | (?:ba|z|fi|c|k)?sh(?::\ line\ \d+)?:\ .*(?:command\ not\ found|No\ such\ file|Permission\ denied)
      | \S+:\ (?:cannot|can't|could\ not|unable\ to)\ \S                           # cp: cannot stat …
      | Traceback\ \(most\ recent\ call\ last\)
    )""", re.VERBOSE)
_LOG_LEVEL = re.compile(r"(?:^|[\s\[|])(?:ERROR|FATAL|CRITICAL)(?:[\]:|]|\s+-)")
_NOT_AN_ERROR = re.compile(r"(?i)\b(?:0|no|zero) (?:errors?|failures?|failed)\b|\b(?:errors?|failures?|failed)[:=]\s*0\b|"
                           r"error_count\W+0\b")
_MAX_LINE = 400  # longer lines are data (a minified file, a JSON blob), not error statements
_CODE = re.compile(r"[,;{(\[]$|=>|\s\?\s|^(?:return|const|let|var|if|elif|else|case|def|function)\b|\|\|")
_LINE_NUMBER = re.compile(r"^\d+(?:→|\t|:(?=\s))\s?")  # "12→", "12\t", "12: " of a file shown with numbers
#: A markdown heading written without ``#``: "Error Handling", "Error Recovery and Retries" (no colon, no sentence).
_TITLE = re.compile(r"^[A-Z][a-z]+(?: (?:[A-Z][\w'-]*|and|or|of|the|for|to|in|on|with|vs|a|an|&|—|-)){1,7}$")
_SETEXT = re.compile(r"^(?:={3,}|-{3,})$")
_EXCEPTION_LINE = re.compile(r"^(?:E\s+)?(?:[A-Za-z_][\w.]*)?(?:Error|Exception|Failure|Interrupt)\b(?::|$)")
_ERROR_LINE = re.compile(
    r"(?i)^(?:E\s+)?(?:error\b|fatal\b|failed\b|failure\b|panic\b|FAIL\b)|"
    r"\b(?:no such file or directory|command not found|permission denied|not permitted|does not exist|"
    r"not found|cannot|can't|could not|couldn't|failed to|is not defined|invalid|refused|rejected|timed out|"
    r"traceback \(most recent call last\))")
_TOOL_ERROR = re.compile(r"<tool_use_error>(.*?)(?:</tool_use_error>|$)", re.DOTALL)
_OUTCOME_SKIP = re.compile(r"^(?:bash-\$|\$|>+|\(END\)|\[\d+\]\s*\+?\s*(?:Done|Exit))\s*$")


#: The words without one of which no line is an error statement (every branch of _STATEMENT and _LOG_LEVEL needs
#: one, in some case): they are looked for in the lower-case text, and only the lines holding one are tested.
_HINTS = ("error", "exception", "fail", "interrupt", "exit", "fatal", "panic", "critical", "err!", "not found",
          "no such file", "denied", "cannot", "can't", "could not", "unable to", "traceback")


def _hinted(text: str, lower: str) -> tuple[list[int], list[str]]:
    """The indices of the lines of ``text`` (``lower``: in lower case) that hold an error word in any case, and
    its lines with their line breaks (none when no line holds one: a long output is not split then); issue 26:
    most lines of a long output hold none, and are passed over without a regex call each."""
    if len(lower) != len(text):  # a letter that lowers to two: positions differ, test line by line
        lines = text.splitlines(True)
        return [n for n, raw in enumerate(lines) if any(word in raw.lower() for word in _HINTS)], lines
    hits = []
    for word in _HINTS:
        at = lower.find(word)
        while at != -1:
            hits.append(at)
            at = lower.find(word, at + 1)
    if not hits:
        return [], []
    lines = text.splitlines(True)
    ends = list(accumulate(map(len, lines)))  # where each line, its line break included, ends
    return sorted({bisect_right(ends, at) for at in hits}), lines


def _candidates(text: str, lower: str) -> Iterator[str]:
    """The lines that could be error statements: not blank, not too long, not a markdown heading (a
    title-case phrase, or a line a setext ``===``/``---`` rule underlines), holding an error word (a line's
    break is whitespace: stripped with it)."""
    hinted, lines = _hinted(text, lower)
    for n in hinted:
        line = lines[n].strip()
        if not line or len(line) > _MAX_LINE:
            continue
        below = _LINE_NUMBER.sub("", lines[n + 1].strip()) if n + 1 < len(lines) else ""
        if _SETEXT.match(below) or _TITLE.match(_LINE_NUMBER.sub("", line)):
            continue
        yield line


def _is_error(line: str) -> bool:
    """An error statement: a prefix or log level that says so, and not a line of code or a zero count."""
    bare = _LINE_NUMBER.sub("", line)
    return (bool(_STATEMENT.match(bare)) or bool(_LOG_LEVEL.search(bare))) and not _NOT_AN_ERROR.search(bare) \
        and not _CODE.search(bare.rstrip())


def error_lines(text: str, limit: int = 4) -> list[str]:
    """The distinct error statements of an output, in order; past ``limit``, the first and last ones.

    The answer for a long output is remembered, by a digest of the text (not the text): a summariser's
    scan and the benefit check after it read the same outputs (issue 26)."""
    if len(text) < _REMEMBER_FROM:
        return _error_lines(text, limit)
    key = _key(text, limit)
    found = _REMEMBERED.get(key)
    if found is None and _AHEAD:
        found = _from_ahead(key)
    if found is None:
        found = tuple(_error_lines(text, limit))
        remember({key: found})
    return list(found)


_REMEMBER_FROM = 512  # characters: a shorter output is looked at again
_REMEMBER = 1 << 16  # answers remembered at most (the oldest go first)
_REMEMBERED: dict[tuple[bytes, int], tuple[str, ...]] = {}
_REMEMBERING = threading.Lock()
_AHEAD: list[tuple[frozenset[tuple[bytes, int]], Forked[dict[tuple[bytes, int], tuple[str, ...]]]]] = []
_AHEAD_FROM = 1 << 20  # characters of outputs below which no copy of the process is worth making


def _key(text: str, limit: int) -> tuple[bytes, int]:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass"), usedforsecurity=False).digest(), limit


def error_lines_ahead(texts: Sequence[str], limit: int = 4) -> None:
    """Have a copy of the process (:mod:`tcompact.forked`) find the error lines of ``texts`` meanwhile (a
    summariser's scan reaches them later): :func:`error_lines` takes its answers from there."""
    todo = {}
    for text in texts:
        if len(text) >= _REMEMBER_FROM:
            key = _key(text, limit)
            if key not in _REMEMBERED:
                todo.setdefault(key, text)
    if sum(map(len, todo.values())) < _AHEAD_FROM or not enabled():
        return
    copy = Forked(lambda: {key: tuple(_error_lines(text, limit)) for key, text in todo.items()})
    with _REMEMBERING:
        _AHEAD.append((frozenset(todo), copy))


def remembered() -> dict[tuple[bytes, int], tuple[str, ...]]:
    """The answers :func:`error_lines` remembers, as they are now (a copy)."""
    with _REMEMBERING:
        return dict(_REMEMBERED)


def remember(found: dict[tuple[bytes, int], tuple[str, ...]]) -> None:
    """Answers found elsewhere (by a copy of the process) remembered as this process's own."""
    with _REMEMBERING:
        _REMEMBERED.update(found)
        while len(_REMEMBERED) > _REMEMBER:
            _REMEMBERED.pop(next(iter(_REMEMBERED)), None)


def drop_error_lines_ahead() -> None:
    """The copies whose answers were not asked for stopped, and forgotten."""
    with _REMEMBERING:
        batches = list(_AHEAD)
        _AHEAD.clear()
    for _, copy in batches:
        copy.close()


def _from_ahead(key: tuple[bytes, int]) -> tuple[str, ...] | None:
    """The answer for ``key`` from the copy finding it, waited for (its other answers remembered too)."""
    with _REMEMBERING:
        batch = next((b for b in _AHEAD if key in b[0]), None)
        if batch is None:
            return None
        _AHEAD.remove(batch)
    found = batch[1].result() or {}
    remember(found)
    return found.get(key)


def _error_lines(text: str, limit: int) -> list[str]:
    lower = lowered(text)  # None: letters a case-insensitive pattern takes for others; then every word may be there
    if lower is not None and not any(word in lower for word in _WORDS):
        return []
    found: dict[str, None] = {}
    for line in _candidates(text, text.lower() if lower is None else lower):
        if line not in found and _is_error(line) and not line.startswith("Traceback"):
            found[line] = None
    lines = list(found)
    if len(lines) <= limit:
        return lines
    head = limit // 2
    return lines[:head] + lines[len(lines) - (limit - head):]


def outcome_line(text: str, limit: int = 240) -> str:
    """The line that tells how a command ended: its last informative line (headers, prompts, rules and
    blank lines skipped), as it stands; '' when it has none of at most ``limit`` characters."""
    tail = text[-20000:]
    for raw in reversed(tail.splitlines()):
        line = raw.strip()
        if not line or not line.strip("=-_─━.·*#") or HEADER_LINE.match(line) or _OUTCOME_SKIP.match(line):
            continue
        if line.startswith(("(Open file:", "(Current directory:")):
            continue
        return line if len(line) <= limit else ""
    return ""


# -- the key error of a failed result ------------------------------------------------------------


def _json_text(line: str) -> str:
    """The text inside a JSON-wrapped tool output line (``[{"type":"text","text":"…"}]``), else the line."""
    if line[:1] in "[{" and '"text"' in line[:200]:
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            return line
        parts = value if isinstance(value, list) else [value]
        texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
        if texts:
            return " ".join(texts)
    return line


def _error_score(line: str) -> int:
    """How surely a line states the error: 4 an exception, 3 an error prefix, 2 or 1 an error phrase, 0 none."""
    if _EXCEPTION_LINE.match(line) and ":" in line:
        return 4
    if line.startswith(("FAILED ", "ERROR ", "error[", "error:", "Error:", "fatal:", "panic")):
        return 3
    if _ERROR_LINE.search(line):
        return 2 if not line.lower().startswith("traceback") else 1
    return 0


def key_error(text: str) -> str:
    """The line of a failed result that says what went wrong."""
    inner = _TOOL_ERROR.search(text[:4000])
    if inner:
        return cut(one_line(inner.group(1)), 220)
    best, best_score = "", 0
    for line in text.splitlines():
        line = _json_text(line.strip())
        if not line or len(line) > 600:
            continue
        score = _error_score(line)
        if score and (score > best_score or (score == best_score == 4)):  # the last exception line is the real one
            best, best_score = line, score
    if best:
        best = re.sub(r"^E\s+", "", best)
        return cut(best, 220)
    return cut(" ⏎ ".join(first_lines(text)), 220)
