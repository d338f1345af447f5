"""What a tool result or a file's content says: exit code, test summary, offloaded output, gist, symbols.

Results are read as text, whatever tool produced them, so the patterns that recognise a failure,
a test summary line or the description of a file are collected here (its error lines and key error
are read in :mod:`.errors`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

import orjson

from ....markers import OFFLOAD_PATTERN
from ..text import cut, lowered, words_in

_EXIT_PATTERNS = (  # looked for in the first 300 characters only (never inside the output itself)
    re.compile(r"^Exit code (-?\d+)", re.MULTILINE),  # Claude Code Bash error results
    re.compile(r"Process exited with code (-?\d+)"),  # Codex exec_command / shell
    re.compile(r"(?i)^(?:exit(?:ed)?|returned)(?: with)? (?:status|code)[: =]+(-?\d+)", re.MULTILINE),
)
HEADER_LINE = re.compile(
    r"^(?:Exit code -?\d+|Chunk ID: \S+|Wall time: .*|Process exited with code -?\d+|Original token count: \d+|"
    r"Output:|Total output lines: \d+|\$ .*|\(Open file: .*\)|\(Current directory: .*\)|bash-\$)\s*$")
_TEST_SUMMARY = re.compile(
    r"(?i)(?:\b\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected)\b(?:[,;] \d+ \w+)*"
    r"(?: in [\d.]+\s?m?s)?|test result: \w+\.[^\n]{0,120}|^Tests?:\s+\d+ \w+[^\n]{0,120})")
_SUMMARY_WORDS = (" passed", " failed", " error", " skipped", " xfailed", " xpassed", " deselected", "test result: ",
                  "test:", "tests:")  # every summary line has one of these
_ZERO_COUNTS = re.compile(r";\s*0 [a-z]+(?: [a-z]+)?(?=;|$)")
_OFFLOAD = (
    OFFLOAD_PATTERN,
    re.compile(r"the full output is in (.+?) \.\.\.\]"),
    re.compile(r"The full result is in (.+?); run the call again"),
)
_SAVED_TO = re.compile(r"(?i)(?:full output|output) (?:saved|written) to:?\s+(\S+)")  # slow: only tried …
_SAVED_TO_WORDS = ("output saved", "output written")  # … when the text has these words
_FAIL_COUNT = re.compile(r"(?i)\b([1-9]\d*) (?:failed|errors?)\b|test result: FAILED")
_GO_FAIL = re.compile(r"(?m)^(?:--- FAIL: \S|FAIL(?:\t\S+\t[\d.]+s)?$)")  # go test's failed test or package
_REFUSED = re.compile(r"(?i)\b(?:error|exception|failed|failure|rejected|denied|not allowed|not permitted|"
                      r"forbidden|blocked|timed out|unauthori[sz]ed)\b")
_SYMBOL = re.compile(
    r"^[+\s]*(?:export\s+|pub(?:\(\w+\))?\s+|async\s+|static\s+|public\s+|private\s+|protected\s+)*"
    r"(?:def|class|function|fn|func|interface|struct|enum|trait|impl|type|module)\s+([A-Za-z_][\w]*)", re.MULTILINE)
_LINE_NUMBER = re.compile(r"^\s*\d+(?:→|\t|:|\s{2})")
_COMMENT_MARK = re.compile(r"^(?:/\*\*?|\*/?|//+|#+|<!--|\"\"\"|\'\'\'|--|;+|%+)\s*")
_LICENSE = re.compile(r"(?i)copyright|licen[cs]e|spdx|apache\.org|all rights reserved|applicable law|warrant")


def exit_code_of(text: str) -> int | None:
    """The exit code a tool result reports in its header or JSON envelope, if any."""
    start = text[:300]
    for pattern in _EXIT_PATTERNS:
        found = pattern.search(start)
        if found:
            return int(found.group(1))
    if start.lstrip().startswith("{") and len(text) < 200_000 and "exit_code" in text:
        return _envelope_exit_code(text)
    return None


def _envelope_exit_code(text: str) -> int | None:
    """``metadata.exit_code`` of a JSON-wrapped result, if it parses and has one."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    meta = value.get("metadata") if isinstance(value, dict) else None
    code = meta.get("exit_code") if isinstance(meta, dict) else None
    return code if isinstance(code, int) else None


def first_lines(text: str, limit: int = 3) -> list[str]:
    """The first informative lines of a tool result (headers such as 'Exit code 1' skipped)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or not line.strip("=-_─━.·") or HEADER_LINE.match(line):  # empty, a rule or a header
            continue
        out.append(line)
        if len(out) >= limit:
            break
    return out


def summary_line_of(text: str) -> str:
    """The last test-summary line of a result ("2 failed, 15 passed in 0.63s"), or ''."""
    found = ""
    words = words_in(text, _SUMMARY_WORDS)
    if words:
        found = _last_summary_line(text.splitlines()[-400:], words).strip().strip("=").strip()
    found = _ZERO_COUNTS.sub("", found)  # cargo: drop the "; 0 ignored" parts
    return cut(found, 160)


def _last_summary_line(lines: Sequence[str], words: tuple[str, ...]) -> str:
    """The last line with a test summary, or '' (``words``: the summary words the lines may hold)."""
    for k in _summary_candidates(lines, words):
        if _TEST_SUMMARY.search(lines[k]):
            return lines[k]
    return ""


def _summary_candidates(lines: Sequence[str], words: tuple[str, ...]) -> Iterator[int]:
    """Indexes of the lines that have one of the summary words, the last first."""
    lower = lowered("\n".join(lines))
    if lower is None:
        yield from range(len(lines) - 1, -1, -1)
        return
    last = {word: lower.rfind(word) for word in words}  # the last place of each word, -1: none left
    line, counted_to = lower.count("\n"), len(lower)  # the index of the line at counted_to
    while (pos := max(last.values())) >= 0:
        line -= lower.count("\n", pos, counted_to)
        counted_to = pos
        yield line
        end = lower.rfind("\n", 0, pos)  # go on before the line found
        for word, at in last.items():
            if at >= end:
                last[word] = lower.rfind(word, 0, end) if end > 0 else -1


_CODE_STARTS = ("import ", "from ", "use ", "package ", "require")


def _skipped_head_line(line: str) -> bool:
    """Whether a line of a file's head says nothing about the file (empty, header, shebang, import)."""
    return not line or bool(HEADER_LINE.match(line)) or line.startswith((
        "[File:", "#!", "import ", "from ", "use ", "package ", "require", "'use strict'"))


def gist_of(text: str) -> str:
    """A descriptive line of a file's content: a doc comment or heading, else the first code line.

    License headers, imports, shebangs and line-number prefixes are skipped."""
    in_license, code = False, 0
    for raw in text[:6000].splitlines()[:80]:
        line = _LINE_NUMBER.sub("", raw, count=1).strip()
        if _skipped_head_line(line):
            in_license = in_license and not line.startswith(_CODE_STARTS)  # an import ends a license header
            continue
        comment = line.startswith(("#", "//", "/*", "*", '"""', "'''", "<!--", "--", ";;", "%"))
        bare = _COMMENT_MARK.sub("", line).strip(" */-\"'>!")
        if _LICENSE.search(bare):
            in_license = True
            continue
        if in_license and comment:
            continue
        in_license = False
        if not comment:
            code += 1
            if code > 3:  # past the file's head: later comments describe a detail, not the file
                break
        if not bare or len(bare.split()) < 3:
            continue
        if comment or bare.lower().startswith(("description:", "name:", "title:")):
            return cut(bare, 150)
    return ""


def symbols_of(text: str) -> list[str]:
    """Names a piece of code defines (functions, classes, types), tests last, at most eight."""
    found = list(dict.fromkeys(m.group(1) for m in _SYMBOL.finditer(text[:20000])))
    found.sort(key=lambda name: name.lower().startswith("test"))
    return found[:8]


def command_failed(window: str, summary: str) -> bool:
    """Whether a command's output reads as failed although it reports no exit code."""
    return bool(_FAIL_COUNT.search(summary)) or "Traceback (most recent call last)" in window \
        or ("FAIL" in window and _GO_FAIL.search(window) is not None) \
        or bool(re.search(r"(?im)^(?:bash: |zsh: |sh: )?.*(?:command not found|No such file or directory)",
                          window[:600]))


def tool_failed(head: str, *, refusable: bool) -> bool:
    """Whether a tool result opens with an error, or (``refusable``) with a refusal."""
    start = "\n".join(first_lines(head[:1500], 2))
    refused = refusable and _REFUSED.search(start[:300]) is not None
    return refused or re.match(r"(?i)\W*(?:error|failed|failure|exception|fatal)\b", start) is not None


def offloaded(window: str) -> Iterable[str]:
    """Where a result says offloaded or cleared output can be found again."""
    patterns = _OFFLOAD + (_SAVED_TO,) if words_in(window, _SAVED_TO_WORDS) else _OFFLOAD
    for pattern in patterns:
        for match in pattern.finditer(window):
            yield match.group(match.lastindex or 1)
