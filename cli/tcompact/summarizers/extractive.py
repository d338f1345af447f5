"""The offline summariser: a state snapshot built from the transcript itself, no model involved.

``ExtractiveSummarizer`` fills the numbered sections of a contract (:data:`contracts.SECTIONS`)
from what the messages already say: the user's requests and constraints in their own words, the
todo/plan state, what the assistant concluded, which files were read, edited or created, which
commands ran and how they ended, which attempts failed and were never fixed, and a one-line resume
point. Only ``messages[body]`` is summarised; the preserved prefix before it is read for context
(the active request, the round numbers, the plan). Internal messages in the body that hold an
earlier checkpoint (``<memory_block_…>``, a Claude compact summary) have their lines carried over.

The output is deterministic (same request, same text) and fitted to ``target_tokens``: every item
is tokenised once, and the least important items are dropped first (see ``_TIERS``), then long
items are shortened; section headings always stay. Large tool results are only looked at through
a head and a tail window, so the cost is linear in the size of the body.
"""

from __future__ import annotations

import posixpath
import re
import shlex
import time
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..model import Message, ToolCall
from ..redact import redact
from ..rounds import INJECTED_PREFIXES, is_real_user
from ..tokens import TokenCounter
from .base import SummarizerError, SummaryRequest, SummaryResponse
from .contracts import SECTIONS

__all__ = ["ExtractiveSummarizer"]

#: Drop order when over budget (higher tiers go first). Resume line, active task and the user's
#: requests (tier 0) are only ever shortened, or as a last resort the oldest requests dropped.
_TIERS = {
    "resume": 0.0, "active": 0.0, "requests": 0.0,  # the resume line, active task, user requests
    "constraints": 1.0, "carried_requests": 1.5,
    "failed": 2.0, "carried_failed": 2.5,
    "pending": 3.0, "next": 3.0, "resume_point": 3.0, "carried_pending": 3.5,
    "current": 4.0, "verification": 4.2, "work_current": 4.5, "latest_decisions": 4.6, "critical": 4.8,
    "files": 5.0, "commands": 5.2, "tree": 5.4, "file_notes": 5.6, "carried_files": 5.8,
    "decisions": 6.0, "fixes": 6.2, "facts": 6.4, "carried_facts": 6.6,
    "history": 7.0, "concepts": 7.2, "carried_history": 7.4,  # older history goes first
}

_HEAD = 6000  # characters of a tool result looked at from the start …
_TAIL = 6000  # … and from the end
_REQUEST_CHARS = 1500  # a user request longer than this is cut with a marker
_ITEM_CHARS = 400  # other items are cut to this many characters
_MAX_SENTENCES = 400  # assistant sentences kept (the newest)
_MAX_FILES = 300
_MAX_COMMANDS = 300

_SHELL_TOOLS = frozenset({
    "bash", "shell", "exec_command", "run_command", "execute_command", "terminal", "run_terminal_cmd",
    "local_shell", "shell_command", "run_shell_command", "execute_bash", "cmd", "powershell", "run",
})
_READ_TOOLS = frozenset({"read", "read_file", "readfile", "view", "view_file", "open", "open_file", "cat",
                         "get_file", "notebookread", "read_notebook", "fetch_file"})
_EDIT_TOOLS = frozenset({"edit", "multiedit", "str_replace", "edit_file", "notebookedit", "insert", "replace",
                         "apply_diff", "replace_in_file", "search_replace", "edit_notebook", "patch_file"})
_WRITE_TOOLS = frozenset({"write", "write_file", "writefile", "create", "create_file", "new_file", "save_file"})
_SEARCH_TOOLS = frozenset({"grep", "glob", "find_file", "search_file", "search_dir", "search", "rg", "ls", "list_dir",
                           "list_files", "find", "codebase_search", "file_search", "grep_search"})
_PATH_KEYS = ("file_path", "path", "notebook_path", "filename", "file", "target_file", "filepath")
_PRIMARY_KEYS = _PATH_KEYS + ("command", "cmd", "url", "query", "pattern", "title", "description", "skill",
                              "subagent_type", "prompt")
_VOLATILE_KEYS = frozenset({"timeout", "timeout_ms", "yield_time_ms", "max_output_tokens", "sandbox_permissions",
                            "justification", "description", "workdir", "run_in_background",
                            "with_escalated_permissions"})

_READERS = frozenset({"cat", "head", "tail", "less", "more", "bat", "nl", "sed", "view", "jq", "wc", "xxd", "od",
                      "file", "stat", "diff", "cmp", "awk", "type"})
_SEARCHERS = frozenset({"grep", "rg", "ag", "ack", "egrep", "fgrep", "find", "fd", "ls", "tree", "locate", "git"})
_FLAG_VALUES = {
    "head": {"-n", "-c"}, "tail": {"-n", "-c"}, "sed": {"-e", "-f"}, "awk": {"-f", "-v", "-F"},
    "grep": {"-e", "-f", "-A", "-B", "-C", "-m", "--include", "--exclude"},
    "rg": {"-e", "-f", "-A", "-B", "-C", "-m", "-g", "-t", "-T", "-M", "--glob", "--type", "--max-count"},
    "jq": {"--arg", "--argjson", "-f"}, "nl": {"-b", "-w", "-s"},
}
_WRAPPERS = frozenset({"sudo", "time", "nice", "command", "exec", "env", "nohup", "xargs", "stdbuf"})
_TEST_RUNNERS = {
    "pytest": "pytest", "py.test": "pytest", "tox": "tox", "nox": "nox", "jest": "jest", "vitest": "vitest",
    "mocha": "mocha", "phpunit": "phpunit", "rspec": "rspec", "ctest": "ctest", "unittest": "unittest",
}
_TEST_SUBCOMMANDS = {  # program -> subcommands that run tests
    "cargo": {"test", "nextest", "llvm-cov"}, "go": {"test"}, "npm": {"test", "t"}, "yarn": {"test"},
    "pnpm": {"test"}, "bun": {"test"}, "make": {"test", "check", "tests"}, "just": {"test", "check"},
    "mvn": {"test", "verify"}, "gradle": {"test", "check"}, "./gradlew": {"test", "check"}, "dotnet": {"test"},
    "deno": {"test"}, "mix": {"test"}, "swift": {"test"},
}
_RUNNER_PREFIXES = frozenset({"uv", "poetry", "pipenv", "hatch", "pdm", "rye", "npx", "bunx", "pnpx"})

_FLUFF = re.compile(r"(?i)^(?:(?:now,?\s+)?let(?:'s| me| us)\b|i'll now\b|ok(?:ay)?[,.!]?$|sure[,.!]?$)")
_CONSTRAINT_CUES = re.compile(
    r"(?i)\b(?:must|should(?:n't)?|don'?t|do not|never|always|only|prefer|avoid|make sure|without|please|"
    r"need(?:s)? to|has to|have to|not acceptable|no longer|instead of|at most|at least|max(?:imum)?|keep)\b")
_NEXT_CUES = re.compile(
    r"(?i)\b(?:next step|next,|next i|next we|i'll|i will|let me|let's|now i|then i|remaining|still need|"
    r"would you like|do you want|want me to|shall i|should i|once you|if you (?:share|send|paste|want|confirm))\b")
_INFORMATIVE = re.compile(
    r"[`/_=()0-9]|(?-i:[a-z][A-Z])|\b(?:because|since|so that|found|root cause|caus|fix|confirm|verif|works?\b|fail|"
    r"error|bug|issue|problem|instead|must|should|need|requir|missing|wrong|correct|decid|chose|choice|use[sd]?\b|"
    r"return|exist|not\b|no\b|never|only|none|cannot|can't|doesn't|isn't|won't|unless|without|supports?|"
    r"handles?|contains?|defaults?|expects?|means|shows?)", re.IGNORECASE)
_USER_SPLIT = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)(?<!\bvs\.)(?<=[.!?])\s+|\n+")
_TECHNICAL = re.compile(r"[`/_=()0-9]|(?-i:[a-z][A-Z])")
_SENTENCE_SPLIT = re.compile(
    r"(?<=[。！？])|(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)(?<!\bvs\.)(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[*_])")
_BACKTICK = re.compile(r"`([^`\n]{2,60})`")
_MD_NOISE = re.compile(r"\*\*|__|^#+\s*|^\s*(?:[-*+]|\d+[.)])\s+|^>\s*")
_MD_CLEAN = re.compile(r"(?m)\*\*|__|^\s*#+\s*|^\s*(?:---+|===+|\*\*\*+)\s*$")
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_EMOJI = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\uFE0F]+")

_EXIT_PATTERNS = (  # looked for in the first 300 characters only (never inside the output itself)
    re.compile(r"^Exit code (-?\d+)", re.MULTILINE),  # Claude Code Bash error results
    re.compile(r"Process exited with code (-?\d+)"),  # Codex exec_command / shell
    re.compile(r"(?i)^(?:exit(?:ed)?|returned)(?: with)? (?:status|code)[: =]+(-?\d+)", re.MULTILINE),
)
_HEADER_LINE = re.compile(
    r"^(?:Exit code -?\d+|Chunk ID: \S+|Wall time: .*|Process exited with code -?\d+|Original token count: \d+|"
    r"Output:|Total output lines: \d+|\$ .*|\(Open file: .*\)|\(Current directory: .*\)|bash-\$)\s*$")
_TEST_SUMMARY = re.compile(
    r"(?i)(?:\b\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected)\b(?:[,;] \d+ \w+)*"
    r"(?: in [\d.]+\s?m?s)?|test result: \w+\.[^\n]{0,120}|^Tests?:\s+\d+ \w+[^\n]{0,120})")
_FAIL_COUNT = re.compile(r"(?i)\b([1-9]\d*) (?:failed|errors?)\b|test result: FAILED")
_EXCEPTION_LINE = re.compile(r"^(?:E\s+)?(?:[A-Za-z_][\w.]*)?(?:Error|Exception|Failure|Interrupt)\b(?::|$)")
_ERROR_LINE = re.compile(
    r"(?i)^(?:E\s+)?(?:error\b|fatal\b|failed\b|failure\b|panic\b|FAIL\b)|"
    r"\b(?:no such file or directory|command not found|permission denied|not permitted|does not exist|"
    r"not found|cannot|can't|could not|couldn't|failed to|is not defined|invalid|refused|rejected|timed out|"
    r"traceback \(most recent call last\))")
_REFUSED = re.compile(r"(?i)\b(?:error|exception|failed|failure|rejected|denied|not allowed|not permitted|"
                      r"forbidden|blocked|timed out|unauthori[sz]ed)\b")
_REPORT_TOOLS = frozenset({"task", "agent", "spawn_agent", "subagent", "dispatch_agent"})  # answers are reports
_TOOL_ERROR = re.compile(r"<tool_use_error>(.*?)(?:</tool_use_error>|$)", re.DOTALL)
_OFFLOAD = (
    re.compile(r"\[\[OFFLOAD: handle=([^,\]]+), type=\w+, path=([^\]]+)\]\]"),
    re.compile(r"the full output is in (.+?) \.\.\.\]"),
    re.compile(r"The full result is in (.+?); run the call again"),
    re.compile(r"(?i)(?:full output|output) (?:saved|written) to:?\s+(\S+)"),
)
_CWD = (re.compile(r"<cwd>([^<]+)</cwd>"), re.compile(r"\(Current directory: ([^)]+)\)"))
_OPEN_FILE = re.compile(r"\(Open file: ([^)]+)\)")
_PATCH_HEADER = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.MULTILINE)
_SYMBOL = re.compile(
    r"^[+\s]*(?:export\s+|pub(?:\(\w+\))?\s+|async\s+|static\s+|public\s+|private\s+|protected\s+)*"
    r"(?:def|class|function|fn|func|interface|struct|enum|trait|impl|type|module)\s+([A-Za-z_][\w]*)", re.MULTILINE)
_LINE_NUMBERS = re.compile(r"(?m)^\s*\d+(?:→|\t|:|\s{2})")
_LINE_NUMBER = re.compile(r"^\s*\d+(?:→|\t|:|\s{2})")
_COMMAND_TAG = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.DOTALL)
_COMMAND_ARGS = re.compile(r"<command-args>\s*(.*?)\s*</command-args>", re.DOTALL)
_CHECKPOINT_PREFIXES = (
    "<memory_block", "[CURRENT_ROUND_MEMORY_BLOCK]", "[DIALOGUE_MEMORY_BLOCK]", "[ROUND_LEVEL_MEMORY_BLOCK]",
    "[FULL_COMPACT_STATE]", "[STATE_REINJECTION]", "<recovered_context>",
    "This session is being continued from a previous conversation",
)
_CHECKPOINT_HEADING = re.compile(r"^\s*(?:#+\s*)?(\d{1,2})\.\s+(.{3,90}?)\s*:?\s*$")
_CARRY_MAP = (  # heading keywords -> category of a carried line, first match wins
    ("resume", None), ("do not retry", "failed"), ("failed attempt", "failed"), ("artifact trail", "files"),
    ("user message", "requests"), ("user request", "requests"), ("primary request", "requests"),
    ("active task", "requests"), ("requirement", "constraints"), ("constraint", "constraints"),
    ("preference", "constraints"), ("pending", "pending"), ("next", "pending"), ("open work", "pending"),
    ("file", "files"), ("error", "facts"), ("evidence", "facts"), ("fact", "facts"), ("decision", "facts"),
    ("finding", "facts"), ("problem", "facts"),
)
#: Lines of an earlier checkpoint that are not carried: empty markers, the old resume line, budget
#: markers and notes this summariser derives again from the new state.
_STALE_LINE = re.compile(
    r"(?i)\(?(?:none\b|n/a\b|no (?:pending|open|further)|wait for|\+\d+ omitted for budget)|`?last request:|status:|"
    r"it replies to the assistant|\d+ failed attempt\(s\) were never fixed|latest test run|not verified:|"
    r"no test run recorded|"
    r"edited after the last test run|the latest request (?:has no|is not|was answered)|latest request\b")
_LICENSE = re.compile(r"(?i)copyright|licen[cs]e|spdx|apache\.org|all rights reserved|applicable law|warrant")


@dataclass(slots=True)
class _Item:
    """One line of a section: its text, drop tier and rank (higher rank goes first within a tier)."""

    text: str
    tier: float
    rank: int = 0
    raw: bool = False
    variants: tuple[str, ...] = ()  # shorter forms of the same item, tried in order when over budget
    line: str = ""
    cost: int = 0
    keep: bool = True


@dataclass(slots=True)
class _Action:
    """A tool call of the body with what came of it."""

    index: int
    round: int
    name: str
    kind: str
    label: str
    command: str | None = None
    paths: list[tuple[str, str]] = field(default_factory=list)
    keys: tuple[tuple[str, str], ...] = ()
    test: tuple[tuple[str, frozenset[str]], ...] | None = None
    quiet: bool = False  # a command that only reads/searches files (listed under files, not commands)
    answered: bool = False
    failed: bool = False
    exit_code: int | None = None
    error: str = ""
    summary: str = ""
    first_line: str = ""
    gist: str = ""
    symbols: tuple[str, ...] = ()
    resolved_by: str | None = None
    partial: bool = False  # a read of part of a file (offset, line range)
    path_symbols: dict[str, tuple[str, ...]] = field(default_factory=dict)  # per file, for multi-file patches
    cwd: str = ""  # working directory when the call was made, if known


@dataclass(slots=True)
class _File:
    """What happened to one file across the body."""

    path: str
    ops: Counter = field(default_factory=Counter)
    failed: Counter = field(default_factory=Counter)
    first: int = 0
    last: int = 0
    gist: str = ""
    symbols: list[str] = field(default_factory=list)
    rounds: set[int] = field(default_factory=set)


class ExtractiveSummarizer:
    """Offline, deterministic summariser that follows a contract's sections within a token budget."""

    name = "extractive"

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        """Summarise ``request.messages[request.body]`` into a ``<state_snapshot>`` block."""
        started = time.perf_counter()
        titles = SECTIONS.get(request.contract)
        if titles is None:
            raise SummarizerError("api_request_error", f"unknown summary contract {request.contract!r}",
                                  hint=f"choose one of: {', '.join(SECTIONS)}")
        facts = _Extraction(request.messages, request.body)
        sections = _sections(request.contract, titles, facts, request.target_tokens)
        text = _fit(sections, request.target_tokens, self.counter)
        return SummaryResponse(text=text, usage=None, model="extractive", latency_s=time.perf_counter() - started)


# ---------------------------------------------------------------------------------------------
# small text helpers


def _one_line(text: str) -> str:
    """Whitespace (newlines included) collapsed to single spaces."""
    return " ".join(text.split())


def _cut(text: str, limit: int) -> str:
    """The text cut to ``limit`` characters with an ellipsis."""
    return text if len(text) <= limit else text[: max(limit - 1, 1)].rstrip() + "…"


def _cut_marked(text: str, limit: int) -> str:
    """The text cut to ``limit`` characters with a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit].rstrip()} […{len(text) - limit:,} more chars cut]"


def _window(text: str) -> str:
    """Head and tail of a long text (what is scanned of big tool results)."""
    if len(text) <= _HEAD + _TAIL:
        return text
    return text[:_HEAD] + "\n" + text[-_TAIL:]


def _field(text: str, limit: int) -> str:
    """A Resume field: one line, no semicolons, cut."""
    return _cut(_one_line(text[: limit * 4 + 100]).replace(";", ","), limit) or "(none)"


def _quote(text: str) -> str:
    """A text in typographic quotes (marks the user's or a file's own words)."""
    return f"“{text}”"


def _user_text(message: Message) -> str:
    """A real user message as the user typed it (a slash command shown as ``/name args``)."""
    text = message.text.strip()
    name = _COMMAND_TAG.search(text)
    if name and len(text) < 2000:
        args = _COMMAND_ARGS.search(text)
        return f"{name.group(1)} {args.group(1)}".strip() if args else name.group(1)
    return text


def _clean(text: str) -> str:
    """Markdown emphasis, rules, heading marks and emoji removed; whitespace collapsed."""
    text = _EMOJI.sub("", text)
    text = _MD_CLEAN.sub(" ", text)
    return _one_line(text)


def _lines(text: str) -> Iterable[str]:
    """Prose lines of assistant text: code blocks, tables, headings, rules and stage directions skipped."""
    fenced = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not line or line.startswith(("|", "#", "---", "===", "<", ">")):
            continue
        if re.fullmatch(r"\*[^*].*[^*]\*|_[^_].*[^_]_", line):  # *nods approvingly*
            continue
        line = _EMOJI.sub("", line)
        line = _MD_NOISE.sub("", _MD_NOISE.sub("", line)).strip()
        if line:
            yield line


def _word_count(text: str) -> int:
    """Words of a text; CJK characters count as half a word each (those scripts use no spaces)."""
    return max(len(text.split()), len(_CJK.findall(text)) // 2)


def _sentences(text: str) -> Iterable[str]:
    """Informative sentences of assistant prose (lead-ins, questions, menus and chatter skipped)."""
    for line in _lines(text):
        if line.startswith("["):  # menu options: [d] Done …
            continue
        for sentence in _SENTENCE_SPLIT.split(line):
            sentence = sentence.strip(" -*")
            words = _word_count(sentence)
            if (words < 4 or words > 80 or sentence.endswith((":", "?")) or _FLUFF.match(sentence)
                    or not _INFORMATIVE.search(sentence)
                    or (sentence.endswith("!") and not _TECHNICAL.search(sentence))):
                continue
            yield sentence


def _args(call: ToolCall) -> tuple[dict[str, Any], str]:
    """A call's arguments as a dict (empty when not JSON) and its raw text."""
    raw = call.arguments or ""
    if raw[:1] in ("{", " ", "\n"):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {}, raw
        if isinstance(value, dict):
            return value, raw
    return {}, raw


def _shell_command(name: str, args: Mapping[str, Any], raw: str, call_type: str) -> str | None:
    """The shell command a call runs, if it is a shell call."""
    value = args.get("command", args.get("cmd"))
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        if len(value) >= 3 and value[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and value[1].startswith("-"):
            return value[-1]
        return shlex.join(value)
    shell = name in _SHELL_TOOLS or call_type == "local_shell"
    if isinstance(value, str) and (shell or ("command" in args and not any(k in args for k in _PATH_KEYS))):
        return value
    if not args and name in _SHELL_TOOLS and raw.strip():
        return raw.strip()
    return None


def _normalise_command(command: str) -> str:
    """A command with whitespace collapsed and stderr redirections / trailing head|tail pipes dropped."""
    text = _one_line(command)
    text = re.sub(r"\s*\d?>\s*&\s*\d|\s*2>\s*/dev/null", "", text)
    text = re.sub(r"(?:\s*\|\s*(?:head|tail)(?:\s+-n)?(?:\s+-?\d+)?)+$", "", text)
    text = re.sub(r"^cd\s+\S+\s*&&\s*", "", text)
    return text.strip()


def _command_label(command: str) -> str:
    """A command as shown: one line, a leading ``cd dir &&`` dropped, cut."""
    text = _one_line(command)
    text = re.sub(r"^cd\s+\S+\s*&&\s*", "", text)
    return _cut(text, 160)


_OPERATORS = frozenset({"|", "||", "&&", ";", "&", ";;", "(", ")", "|&"})
_REDIRECTS = frozenset({">", ">>", "<", ">|", "&>", "&>>", ">&", "<&", "<<<"})
_NEUTRAL = frozenset({"sort", "uniq", "cut", "tr", "column", "tac", "rev", "fold", "fmt", "paste", "comm", "expand",
                      "echo", "printf", "pwd", "which", "true", "false", "date", "whoami", "printenv", "basename",
                      "dirname", "realpath", "readlink", "sleep", "clear", "test", "[", "[["})


def _words(text: str) -> list[str]:
    """Shell words and operators of a command line (quotes respected; plain split when they do not parse)."""
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:
        return text.split()


def _segments(command: str) -> list[list[str]]:
    """The simple commands of a shell line as word lists (split at | && || ; & and newlines; heredoc
    bodies dropped; ``bash -c "…"`` opened up)."""
    text = command[:4000]
    if "<<" in text and "<<<" not in text:
        text = text.splitlines()[0] if text.splitlines() else text
    lines = text.splitlines() or [text]
    words: list[str] = []
    for line in lines[:60]:
        part = _words(line)
        if part and words:
            words.append(";")
        words += part
    out: list[list[str]] = []
    current: list[str] = []
    for word in words:
        if word in _OPERATORS:
            if current:
                out.append(current)
            current = []
        else:
            current.append(word)
    if current:
        out.append(current)
    expanded: list[list[str]] = []
    for seg in out:
        program, rest = _program(seg)
        if program in ("bash", "sh", "zsh") and len(rest) >= 2 and rest[0].startswith("-") and "c" in rest[0]:
            expanded += _segments(rest[1])
        else:
            expanded.append(seg)
    return expanded


def _pathish(token: str) -> bool:
    """Whether a shell word looks like a file path (not a flag, URL, glob, number or sed script)."""
    if not token or token[0] in "-$(" or len(token) > 300 or "://" in token or token in (".", "..", "/", "~"):
        return False
    if any(c in token for c in "*?[]{}<>|;`\"'=\n\\,()"):
        return False
    if re.fullmatch(r"[\d,.:;+$pPdqgsi/!-]+", token):
        return False
    if token.startswith(".") and "/" not in token and token.count(".") > 1:  # jq paths: .payload.type
        return False
    return "/" in token or bool(re.search(r"\.[A-Za-z][A-Za-z0-9]{0,9}$", token)) or token in (
        "Makefile", "Justfile", "Dockerfile", "LICENSE", "README")


def _program(tokens: Sequence[str]) -> tuple[str, list[str]]:
    """The program of one simple command (wrappers, their flags and VAR=value skipped) and its arguments."""
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        if re.fullmatch(r"[A-Za-z_]\w*=\S*", tok):
            i += 1
        elif tok in _WRAPPERS or tok == "timeout":
            i += 1
            while i < n and tokens[i].startswith("-"):
                i += 2 if tokens[i] in ("-I", "-n", "-P", "-L", "-s", "-k", "-u") else 1
            if tok == "timeout" and i < n and re.fullmatch(r"[\d.]+[smhd]?", tokens[i]):
                i += 1
        else:
            break
    if i >= n:
        return "", []
    program = tokens[i] if tokens[i].startswith("./") else tokens[i].rsplit("/", 1)[-1]
    return program, list(tokens[i + 1:])


def _test_run(segments: Sequence[Sequence[str]]) -> tuple[tuple[str, frozenset[str]], ...] | None:
    """(runner, targets) of every test run in a shell line; no targets means the whole suite."""
    runs = []
    for segment in segments:
        program, rest = _program(segment)
        while program in _RUNNER_PREFIXES and rest:
            if rest[0] in ("run", "exec") and len(rest) > 1:
                rest = rest[1:]
            program, rest = rest[0].rsplit("/", 1)[-1], rest[1:]
        if program.startswith("python") and len(rest) >= 2 and rest[0] == "-m":
            program, rest = rest[1], rest[2:]
        runner = _TEST_RUNNERS.get(program)
        if runner is None and program in _TEST_SUBCOMMANDS:
            words = [r for r in rest if not r.startswith("-")]
            if words and (words[0] in _TEST_SUBCOMMANDS[program] or (
                    program in ("npm", "yarn", "pnpm") and len(words) > 1 and words[0] == "run"
                    and words[1].startswith("test"))):
                runner = f"{program} {words[0]}"
                rest = rest[rest.index(words[0]) + 1:]
        if runner:
            targets = frozenset(r for r in rest if not r.startswith("-") and ("/" in r or "." in r or "::" in r))
            runs.append((runner, targets))
    return tuple(runs) or None


def _file_ops(segments: Sequence[Sequence[str]]) -> tuple[list[tuple[str, str]], bool]:
    """Files a shell line reads, searches, writes or deletes; and whether it only reads/searches."""
    ops: list[tuple[str, str]] = []
    quiet = True
    for segment in segments:
        tokens: list[str] = []
        i = 0
        while i < len(segment):  # redirections: '> f' writes f, '< f' reads f, '2>&1' is dropped
            tok = segment[i]
            if tok in _REDIRECTS:
                target = segment[i + 1] if i + 1 < len(segment) else ""
                if tokens and tokens[-1].isdigit():
                    tokens.pop()
                if target and _pathish(target) and not target.startswith("/dev/") and "&" not in tok:
                    if tok == "<":
                        ops.append((target, "read"))
                    else:
                        ops.append((target, "written"))
                        quiet = False
                i += 2
                continue
            tokens.append(tok)
            i += 1
        program, rest = _program(tokens)
        if not program or program == "cd" or program in _NEUTRAL:
            continue
        values = _FLAG_VALUES.get(program, set())
        words, skip, script_given = [], False, False
        for tok in rest:
            if skip:
                skip = False
                continue
            if tok.startswith("-") and tok != "-":
                skip = tok in values
                script_given = script_given or tok in ("-e", "-f")
                continue
            words.append(tok)
        if program == "sed":
            in_place = any(t.startswith("-i") or t == "--in-place" for t in rest)
            files = words if script_given else words[1:]
            ops += [(w, "edited" if in_place else "read") for w in files if _pathish(w)]
            quiet = quiet and not in_place
        elif program in _READERS:
            files = words[1:] if program in ("awk", "jq") and not script_given else words
            ops += [(w, "read") for w in files if _pathish(w)]
        elif program in ("grep", "rg", "ag", "ack", "egrep", "fgrep"):
            ops += [(w, "searched") for w in (words if script_given else words[1:]) if _pathish(w)]
        elif program in _SEARCHERS:
            if program == "git" and words and words[0] not in ("status", "log", "diff", "show", "grep", "ls-files",
                                                               "branch", "blame", "rev-parse", "remote"):
                quiet = False
        elif program in ("rm", "unlink"):
            ops += [(w, "deleted") for w in words if _pathish(w)]
            quiet = False
        elif program == "touch":
            ops += [(w, "created") for w in words if _pathish(w)]
            quiet = False
        elif program == "tee":
            ops += [(w, "written") for w in words if _pathish(w)]
            quiet = False
        elif program in ("cp", "mv", "install"):
            paths = [w for w in words if _pathish(w)]
            if len(paths) >= 2:
                ops.append((paths[-1], "written"))
                if program == "mv":
                    ops += [(p, "moved") for p in paths[:-1]]
            quiet = False
        else:
            quiet = False
    return ops, quiet


def _exit_code(text: str) -> int | None:
    """The exit code a tool result reports in its header or JSON envelope, if any."""
    start = text[:300]
    for pattern in _EXIT_PATTERNS:
        found = pattern.search(start)
        if found:
            return int(found.group(1))
    if start.lstrip().startswith("{") and len(text) < 200_000 and "exit_code" in text:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            return None
        meta = value.get("metadata") if isinstance(value, dict) else None
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        if isinstance(code, int):
            return code
    return None


def _first_lines(text: str, limit: int = 3) -> list[str]:
    """The first informative lines of a tool result (headers such as 'Exit code 1' skipped)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or _HEADER_LINE.match(line) or set(line) <= set("=-_─━.·"):
            continue
        out.append(line)
        if len(out) >= limit:
            break
    return out


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


def _key_error(text: str) -> str:
    """The line of a failed result that says what went wrong."""
    inner = _TOOL_ERROR.search(text[:4000])
    if inner:
        return _cut(_one_line(inner.group(1)), 220)
    best, best_score = "", 0
    for line in text.splitlines():
        line = _json_text(line.strip())
        if not line or len(line) > 600:
            continue
        if _EXCEPTION_LINE.match(line) and ":" in line:
            score = 4
        elif line.startswith(("FAILED ", "ERROR ", "error[", "error:", "Error:", "fatal:", "panic")):
            score = 3
        elif _ERROR_LINE.search(line):
            score = 2 if not line.lower().startswith("traceback") else 1
        else:
            continue
        if score > best_score or (score == best_score == 4):  # the last exception line is the real one
            best, best_score = line, score
    if best:
        best = re.sub(r"^E\s+", "", best)
        return _cut(best, 220)
    return _cut(" ⏎ ".join(_first_lines(text)), 220)


def _test_summary(text: str) -> str:
    """The last test-summary line of a result ("2 failed, 15 passed in 0.63s"), or ''."""
    found = ""
    for line in text.splitlines()[-400:]:
        match = _TEST_SUMMARY.search(line)
        if match:
            found = line.strip().strip("=").strip()
    found = re.sub(r";\s*0 [a-z]+(?: [a-z]+)?(?=;|$)", "", found)  # cargo: drop the "; 0 ignored" parts
    return _cut(found, 160)


_DATA_FILES = re.compile(r"(?i)\.(?:jsonl?|csv|tsv|log|lock|vtt|srt|svg|xml|min\.js|map|bin|txt|out|ndjson)$")


def _gist(text: str) -> str:
    """A descriptive line of a file's content: a doc comment or heading, else the first code line.

    License headers, imports, shebangs and line-number prefixes are skipped."""
    in_license, code = False, 0
    for raw in text[:6000].splitlines()[:80]:
        line = _LINE_NUMBER.sub("", raw, count=1).strip()
        if not line or _HEADER_LINE.match(line) or line.startswith(("[File:", "#!", "import ", "from ", "use ",
                                                                     "package ", "require", "'use strict'")):
            continue
        comment = line.startswith(("#", "//", "/*", "*", '"""', "'''", "<!--", "--", ";;", "%"))
        bare = re.sub(r"^(?:/\*\*?|\*/?|//+|#+|<!--|\"\"\"|\'\'\'|--|;+|%+)\s*", "", line).strip(" */-\"'>!")
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
            return _cut(bare, 150)
    return ""


def _patch_symbols(patch: str) -> dict[str, tuple[str, ...]]:
    """Symbols defined on the added lines of each file of an apply_patch input."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in patch.splitlines():
        match = _PATCH_HEADER.match(line)
        if match:
            current = out.setdefault(match.group(2) or match.group(3), [])
        elif current is not None and line.startswith("+"):
            current.append(line[1:])
    return {path: tuple(_symbols("\n".join(lines))) for path, lines in out.items()}


def _symbols(text: str) -> list[str]:
    """Names a piece of code defines (functions, classes, types), tests last, at most eight."""
    found = list(dict.fromkeys(m.group(1) for m in _SYMBOL.finditer(text[:20000])))
    found.sort(key=lambda name: name.lower().startswith("test"))
    return found[:8]


# ---------------------------------------------------------------------------------------------
# extraction


class _Extraction:
    """One pass over the messages: everything the sections are built from."""

    def __init__(self, messages: Sequence[Message], body: range) -> None:
        self.messages = messages
        start, stop = max(body.start, 0), min(body.stop, len(messages))
        self.start, self.stop = start, max(stop, start)
        self.requests: list[tuple[int, int, str]] = []  # (index, round, text) in the body
        self.actions: list[_Action] = []
        self.files: dict[str, _File] = {}
        self.sentences: deque[tuple[int, int, str]] = deque(maxlen=_MAX_SENTENCES)  # (index, round, text)
        self.terms: Counter[str] = Counter()
        self.carried: dict[str, list[str]] = {}
        self.critical: dict[str, None] = {}
        self.todos: list[tuple[str, str]] | None = None
        self.todo_explanation = ""
        self.round_text: dict[int, tuple[str, bool]] = {}  # round -> (last assistant text, had tool calls)
        self.last_assistant: Message | None = None
        self.last_request: tuple[int, str] | None = None  # (index, text) of the last real user message
        self.previous_text = ""  # the last assistant text before that request
        self.substantive: list[tuple[int, str]] = []  # the first and the latest request of 40+ characters
        self.cwd = ""
        self._assistant_text = ""
        self._open_file: str | None = None
        self._calls: dict[str, _Action] = {}
        self._round = 0
        self._scan_context()
        self._scan_body()
        self._resolve()

    # -- context ----------------------------------------------------------------------------

    def _scan_context(self) -> None:
        """Round count, active request and working directory from the preserved prefix."""
        for i in range(self.start):
            m = self.messages[i]
            if m.role == "user" and is_real_user(m):
                self._round += 1
                self._note_request(i, m)
            elif m.role == "assistant" and m.text.strip():
                self._assistant_text = m.text
            elif m.role == "user":
                self._cwd(m.text[:2000])

    def _note_request(self, index: int, message: Message) -> None:
        """Track the latest real request, the assistant message before it and the substantive ones."""
        text = _user_text(message)
        if len(text) >= 40:
            if not self.substantive or len(self.substantive) == 1:
                self.substantive.append((index, text))
            else:
                self.substantive[-1] = (index, text)
        self.last_request = (index, text)
        self.previous_text = self._assistant_text
        self._assistant_text = ""

    def _cwd(self, text: str) -> None:
        """Remember a working directory a message states (Codex ``<cwd>``, SWE-agent's prompt line)."""
        for pattern in _CWD:
            match = pattern.search(text)
            if match:
                self.cwd = match.group(1).strip()

    # -- body -------------------------------------------------------------------------------

    def _scan_body(self) -> None:
        """Requests, assistant prose, tool calls and their results of the body, in order."""
        for i in range(self.start, self.stop):
            m = self.messages[i]
            role = m.role
            if role == "user":
                if is_real_user(m):
                    self._round += 1
                    self._note_request(i, m)
                    self.requests.append((i, self._round, _user_text(m)))
                else:
                    self._internal(m)
            elif role == "assistant":
                self._assistant(i, m)
            elif role in ("tool", "function"):
                self._result(i, m)
            elif role in ("system", "developer") and m.internal is False and i > 0:
                self._internal(m)
        if self.todos is None:  # the plan may sit in the preserved prefix
            for i in range(self.start - 1, -1, -1):
                m = self.messages[i]
                if m.role == "assistant" and m.tool_calls and self._todo_calls(m.tool_calls):
                    break

    def _internal(self, m: Message) -> None:
        """An injected message: carry an earlier checkpoint's lines, note a working directory."""
        text = m.text
        head = text.lstrip()[:200]
        self._cwd(text[:4000])
        if head.startswith(_CHECKPOINT_PREFIXES) or (m.internal and "<state_snapshot>" in text[:20000]):
            for category, line in _carry(text):
                self.carried.setdefault(category, []).append(line)

    def _assistant(self, i: int, m: Message) -> None:
        """Sentences, backticked terms, the plan and the tool calls of an assistant message."""
        text = m.text.strip()
        self.last_assistant = m
        if text:
            self._assistant_text = text
            self.round_text[self._round] = (text, bool(m.tool_calls))
            for sentence in _sentences(_window(text) if len(text) > 20000 else text):
                self.sentences.append((i, self._round, sentence))
            for term in _BACKTICK.findall(text[:20000]):
                self.terms[term.strip()] += 1
        elif m.tool_calls:
            prior = self.round_text.get(self._round)
            if prior is not None:
                self.round_text[self._round] = (prior[0], True)
        if m.tool_calls:
            self._todo_calls(m.tool_calls)
            for call in m.tool_calls:
                action = self._action(i, call)
                if action is not None:
                    action.cwd = self.cwd
                    self.actions.append(action)
                    self._calls[call.id] = action

    def _todo_calls(self, calls: Sequence[ToolCall]) -> bool:
        """Take the plan from TodoWrite / update_plan calls (the latest wins); True if there was one."""
        found = False
        for call in calls:
            lname = call.name.lower()
            if "todo" not in lname and "plan" not in lname:
                continue
            args, _ = _args(call)
            items = args.get("todos", args.get("plan", args.get("items")))
            if not isinstance(items, list):
                continue
            todos = []
            for item in items:
                if isinstance(item, Mapping):
                    content = item.get("content", item.get("step", item.get("title", item.get("text", ""))))
                    status = str(item.get("status", "pending"))
                    if isinstance(content, str) and content.strip():
                        todos.append((_one_line(content), status))
            self.todos = todos
            explanation = args.get("explanation")
            self.todo_explanation = _one_line(explanation) if isinstance(explanation, str) else ""
            found = True
        return found

    def _action(self, i: int, call: ToolCall) -> _Action | None:
        """Classify a tool call: shell command, patch, read, edit/write, search, test tool or other."""
        name = call.name
        lname = name.lower()
        if "todo" in lname or lname == "update_plan":
            return None
        args, raw = _args(call)
        rnd = self._round
        command = _shell_command(lname, args, raw, call.type)
        if command is not None:
            if isinstance(args.get("workdir"), str) and args["workdir"].strip():
                self.cwd = args["workdir"].strip()
            segments = _segments(command)
            ops, quiet = _file_ops(segments)
            test = _test_run(segments)
            normal = _normalise_command(command)
            partial = bool(re.search(r"\bsed\s+-n\s+['\"]?(?!1,)\d|\btail\b", command))
            return _Action(i, rnd, name, "command", f"`{_command_label(command)}`", command=command, paths=ops,
                           keys=(("cmd", normal),), test=test, quiet=quiet and test is None, partial=partial)
        patch = None
        for key in ("patch", "input", "diff"):
            if isinstance(args.get(key), str) and "*** " in args[key]:
                patch = args[key]
        if patch is None and not args and "*** Begin Patch" in raw[:200]:
            patch = raw
        if patch is not None:
            ops = []
            for match in _PATCH_HEADER.finditer(patch):
                if match.group(3):
                    ops.append((match.group(3), "created"))
                else:
                    verb = {"Update": "edited", "Add": "created", "Delete": "deleted"}[match.group(1)]
                    ops.append((match.group(2), verb))
            label = f"{name} " + ", ".join(p for p, _ in ops[:4]) if ops else name
            action = _Action(i, rnd, name, "edit", label, paths=ops,
                             keys=tuple(("file", p) for p, _ in ops) or (("tool", name + " " + raw[:200]),))
            action.path_symbols = _patch_symbols(patch)
            return action
        path = next((args[k] for k in _PATH_KEYS if isinstance(args.get(k), str) and args[k].strip()), None)
        sub = str(args.get("command", "")).lower() if lname in ("str_replace_editor", "str_replace_based_edit_tool") \
            else ""
        if path is None and lname in ("edit", "insert") and self._open_file and ("search" in args or "text" in args
                                                                                 or "replace" in args):
            path = self._open_file  # SWE-agent edits the open file
        if lname in _READ_TOOLS or sub == "view":
            kind, op = "read", "read"
        elif lname in _EDIT_TOOLS or sub in ("str_replace", "insert", "undo_edit"):
            kind, op = "edit", "edited"
        elif lname in _WRITE_TOOLS or sub == "create":
            kind, op = "edit", "created"
        elif lname in _SEARCH_TOOLS:
            kind, op = "search", "searched"
        elif "test" in lname:
            kind, op = "command", ""
        else:
            kind, op = "other", ""
        if kind == "command":  # run_tests-like tools
            argv = args.get("args", args.get("paths", args.get("tests", [])))
            words = [str(a) for a in argv] if isinstance(argv, list) else ([str(argv)] if argv else [])
            text = " ".join([name] + words)
            targets = frozenset(w for w in words if not w.startswith("-"))
            return _Action(i, rnd, name, "command", f"`{_cut(text, 160)}`", command=text,
                           keys=(("tool", _one_line(text.lower())),), test=((name.lower(), targets),))
        primary = next((args[k] for k in _PRIMARY_KEYS if isinstance(args.get(k), str) and args[k].strip()), None)
        if op in ("read", "edited", "created") and path:
            if lname in ("open", "create"):
                self._open_file = path
            keys: tuple[tuple[str, str], ...] = ((lname, path),)
            if op != "read":
                keys += (("file", path),)
            label = f"{name} {path}"
            start = args.get("offset", args.get("line_number", args.get("start_line", args.get("view_range"))))
            partial = start not in (None, 0, 1, "0", "1") and not (isinstance(start, list) and start[:1] == [1])
            action = _Action(i, rnd, name, kind, label, paths=[(path, op)], keys=keys, partial=partial)
            if op != "read":
                content = "\n".join(str(args.get(k, "")) for k in ("new_string", "content", "text", "new_str",
                                                                   "replace", "new_source", "file_text"))
                edits = args.get("edits")
                if isinstance(edits, list):
                    content += "\n".join(str(e.get("new_string", "")) for e in edits if isinstance(e, Mapping))
                action.symbols = tuple(_symbols(content))
                if op == "created":
                    action.gist = _gist(content)
            return action
        if kind == "search":
            pattern = args.get("pattern", args.get("query", args.get("file_name", args.get("regex", ""))))
            where = args.get("path", args.get("dir", args.get("directory", "")))
            label = f"{name} {_cut(_one_line(str(pattern)), 80)}" + (f" in {where}" if where else "")
            return _Action(i, rnd, name, "search", label, keys=((lname, f"{pattern}|{where}"),), quiet=True)
        if primary is None:
            stable = {k: v for k, v in args.items() if k not in _VOLATILE_KEYS}
            primary = orjson.dumps(stable, option=orjson.OPT_SORT_KEYS).decode()[:300] if stable else raw[:300]
            label = name if not stable else f"{name} {_cut(_one_line(primary), 100)}"
        else:
            label = f"{name}: {_cut(_one_line(primary), 100)}"
        return _Action(i, rnd, name, kind, label, keys=((lname, _one_line(primary)),))

    def _result(self, i: int, m: Message) -> None:
        """Outcome of the call a tool result answers: failed or not, exit code, key error, test summary."""
        action = None
        for cid in m.tool_call_ids:
            action = self._calls.get(cid) or action
        text = m.text
        window = _window(text)
        if len(window) > 200:
            for pattern in _OFFLOAD:
                for match in pattern.finditer(window):
                    where = match.group(match.lastindex or 1)
                    self.critical[f"offloaded content: {_cut(where.strip(), 200)}"] = None
        match = _OPEN_FILE.search(window[-400:])
        if match:
            self._open_file = match.group(1).strip()
        self._cwd(window[-400:])
        if action is None or action.answered:
            return
        action.answered = True
        head = window[:4000]
        exit_code = _exit_code(text)
        failed = m.is_error or (exit_code is not None and exit_code != 0) or "<tool_use_error>" in head
        summary = _test_summary(window) if action.kind == "command" else ""
        if not failed and exit_code is None:
            if action.kind == "command" and not action.quiet:
                failed = bool(_FAIL_COUNT.search(summary)) or "Traceback (most recent call last)" in window \
                    or bool(re.search(r"(?im)^(?:bash: |zsh: |sh: )?.*(?:command not found|No such file or directory)",
                                      window[:600]))
            else:
                start = "\n".join(_first_lines(head[:1500], 2))
                refused = (action.kind == "other" and action.name.lower() not in _REPORT_TOOLS
                           and _REFUSED.search(start[:300]) is not None)
                failed = refused or re.match(r"(?i)\W*(?:error|failed|failure|exception|fatal)\b", start) is not None
        action.failed = failed
        action.exit_code = exit_code
        action.summary = summary
        lines = _first_lines(head)
        action.first_line = _cut(" ⏎ ".join(lines), 200)
        if failed:
            action.error = _key_error(window)
        if not failed and not action.gist and action.partial is False:
            reads = [p for p, op in action.paths if op == "read"]
            if len(reads) == 1 and not _DATA_FILES.search(reads[0]):
                action.gist = _gist(head)
                action.symbols = tuple(_symbols(_LINE_NUMBERS.sub("", head)))
        if action.paths and any(op == "created" for _, op in action.paths) and action.kind == "edit" \
                and "updated" in head[:300] and "created" not in head[:300]:
            action.paths = [(p, "written" if op == "created" else op) for p, op in action.paths]

    # -- after the pass ---------------------------------------------------------------------

    def _path(self, path: str, cwd: str) -> str:
        """A path as written, made absolute against the working directory when that is known."""
        path = path.strip()
        path = path.removeprefix("./")
        if cwd and not path.startswith(("/", "~")) and cwd.startswith(("/", "~")):
            path = posixpath.normpath(posixpath.join(cwd, path))
        return path

    def _resolve(self) -> None:
        """Mark failures fixed by a later successful rerun; gather files."""
        pending: dict[tuple[str, str], list[_Action]] = {}
        tests: list[_Action] = []
        for action in self.actions:
            if action.cwd:
                action.paths = [(self._path(p, action.cwd), op) for p, op in action.paths]
                action.path_symbols = {self._path(p, action.cwd): v for p, v in action.path_symbols.items()}
            for path, op in action.paths:
                info = self.files.get(path)
                if info is None:
                    if len(self.files) >= _MAX_FILES * 4:
                        continue
                    info = self.files[path] = _File(path=path, first=action.index)
                if action.failed:
                    info.failed[op] += 1
                else:
                    info.ops[op] += 1
                info.last = action.index
                info.rounds.add(action.round)
                if action.gist and not info.gist:
                    info.gist = action.gist
                for symbol in action.path_symbols.get(path, action.symbols):
                    if symbol not in info.symbols and len(info.symbols) < 8:
                        info.symbols.append(symbol)
            if not action.answered:
                continue
            if action.failed:
                for key in action.keys:
                    pending.setdefault(key, []).append(action)
                if action.test is not None:
                    tests.append(action)
                continue
            for key in action.keys:
                for failure in pending.pop(key, ()):
                    failure.resolved_by = failure.resolved_by or action.label
            if action.test is not None:
                for failure in tests:
                    if failure.resolved_by is None and failure.test and _covers(action.test, failure.test):
                        failure.resolved_by = action.label

    # -- derived views ----------------------------------------------------------------------

    def last_action(self) -> _Action | None:
        """The newest tool call of the body, if any."""
        return self.actions[-1] if self.actions else None

    def answered(self) -> bool:
        """Whether the last real user message is followed by a final assistant text without tool calls."""
        if self.last_request is None:
            return False
        last = None
        for i in range(self.stop - 1, self.last_request[0], -1):
            if self.messages[i].role == "assistant":
                last = self.messages[i]
                break
        return last is not None and bool(last.text.strip()) and not last.tool_calls


def _reply_context(reply: str, previous: str) -> str:
    """What a terse reply ('d', '2', 'yes') answers: the option it picks, else the question asked."""
    token = reply.strip().strip(".").lower()
    if 0 < len(token) <= 12:
        option = re.compile(r"(?i)(?:^|[\s*(\[])\[?\(?" + re.escape(token) + r"(?:\]|\)|\.|:|\s+[-–—])")
        for line in previous.splitlines():
            clean = line.strip().lstrip("-*• ").strip()
            if option.match(" " + clean.replace("**", "")):
                return "it picks the option " + _quote(_cut(_clean(clean), 200))
    questions = [s for s in _SENTENCE_SPLIT.split(_clean(previous[-3000:])) if s.rstrip().endswith("?")]
    if questions:
        return "it answers " + _quote(_cut(questions[-1], 200))
    return "which ended " + _quote(_cut(_clean(previous[-600:]), 240))


def _covers(runs: Sequence[tuple[str, frozenset[str]]], failed: Sequence[tuple[str, frozenset[str]]]) -> bool:
    """Whether passing test runs cover every failing one (same runner; whole suite or a superset of targets)."""
    return all(any(runner == f_runner and (not targets or f_targets <= targets) for runner, targets in runs)
               for f_runner, f_targets in failed)


def _carry(text: str) -> list[tuple[str, str]]:
    """The still-useful lines of an earlier checkpoint, each with the category it belongs to.

    Numbered headings decide the category (``_CARRY_MAP``); the old resume line, "(none)" lines,
    budget markers and lines this summariser derives afresh (verification notes) are dropped, and
    so are an old active-task section's lines when the block also lists the user's requests.
    """
    body = text
    match = re.search(r"<state_snapshot>(.*?)(?:</state_snapshot>|$)", text, re.DOTALL | re.IGNORECASE)
    if match:
        body = match.group(1)
    found: list[tuple[str, str, str]] = []  # (category, heading, line)
    category: str | None = "history"
    title = ""
    headings = 0
    for raw in body.splitlines()[:3000]:
        line = raw.strip()
        heading = _CHECKPOINT_HEADING.match(line)
        if heading and len(heading.group(2).split()) <= 12 and not heading.group(2).endswith("."):
            title = heading.group(2).lower()
            category = "history"
            for word, target in _CARRY_MAP:
                if word in title:
                    category = target
                    break
            headings += 1
            continue
        bullet = re.match(r"^(?:[-*•]|\d+[.)])\s+", line)
        if bullet:
            line = line[bullet.end():]
        if (category is None or not line or _STALE_LINE.match(line)
                or line.startswith(("<", "Summary:", "Analysis:", *INJECTED_PREFIXES))
                or ("relevant files" in title and not bullet)):  # a directory tree: its structure cannot be carried
            continue
        found.append((category, title, _cut(line, 300)))
        if len(found) >= 600:
            break
    if not headings:
        return [("history", line) for _, _, line in found[:60]]
    listed = any(("user message" in t or "user request" in t) for _, t, _ in found)
    out: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for category, title, line in found:
        if listed and ("active task" in title or "primary request" in title):
            continue
        if (category, line) not in seen:
            seen.add((category, line))
            out.append((category, line))
    return out


# ---------------------------------------------------------------------------------------------
# section content


class _Content:
    """The texts of every kind of item, computed once from an extraction."""

    def __init__(self, x: _Extraction, budget: int) -> None:
        self.x = x
        self.current_round = x._round
        self.body_rounds = ({r for _, r, _ in x.requests} | {a.round for a in x.actions}
                            | {r for _, r, _ in x.sentences} | set(x.round_text) | {self.current_round})
        n_requests = max(len(x.requests), 1)
        self.request_chars = max(160, min(_REQUEST_CHARS, int(budget * 4 * 0.4 / n_requests)))
        self.answered = x.answered()
        self._failures()
        self._commands()

    # user's words

    def request_text(self, text: str, limit: int | None = None) -> str:
        """A request quoted verbatim (long ones cut with a marker; continuation lines indented)."""
        return _quote(_cut_marked(text, limit or self.request_chars).replace("\n", "\n  "))

    def outcome(self, rnd: int) -> str:
        """What came of a round: answered or in progress, with the first line of its last text."""
        last = self.x.round_text.get(rnd)
        if last is None:
            return "no answer in this part"
        text, tools = last
        first = next((ln for ln in _lines(text) if _word_count(ln) >= 3), _clean(text))
        state = "answered" if not tools else "in progress"
        return f"{state}: {_cut(_one_line(first), 200)}"

    def requests(self, with_outcome: bool, rounds: set[int] | None = None) -> list[tuple[str, int]]:
        """The body's real user messages in order (oldest ranked for dropping first)."""
        out = []
        items = [r for r in self.x.requests if rounds is None or r[1] in rounds]
        for n, (_, rnd, text) in enumerate(items):
            line = self.request_text(text)
            if with_outcome:
                line += f" → {self.outcome(rnd)}"
            out.append((line, len(items) - 1 - n))
        return out

    def active(self, earlier_requests: bool = True) -> list[tuple[str, int]]:
        """The latest request verbatim, what a terse reply refers to, and the substantive requests."""
        x = self.x
        if x.last_request is None:
            return []
        index, text = x.last_request
        where = "" if index >= x.start else " (the message itself is kept above this summary)"
        out = [(f"Latest request{where}: {self.request_text(text, _REQUEST_CHARS)}", 0)]
        if len(text) < 40 and x.previous_text:
            out.append((f"It replies to the assistant's previous message: {_reply_context(text, x.previous_text)}", 1))
        substantive = [(i, t) for i, t in x.substantive if i != index]
        if substantive and len(text) < 80:
            out.append((f"Original task: {self.request_text(substantive[0][1], 600)}", 2))
            if len(substantive) > 1:
                out.append((f"Latest substantive request: {self.request_text(substantive[-1][1], 600)}", 3))
        out.append((f"Status: {'answered' if self.answered else 'not answered yet, work in progress'}.", 4))
        quoted = {i for i, _ in substantive[:1]} | ({substantive[-1][0]} if len(substantive) > 1 else set())
        earlier = [(i, t) for i, _, t in x.requests if i != index and (i not in quoted or len(text) >= 80)]
        if not earlier_requests:
            earlier = []
        for n, (_, req) in enumerate(reversed(earlier)):  # the user's other words in this part, newest first
            out.append((f"Earlier request in this part: {self.request_text(req)}", 5 + n))
        return out

    def constraints(self) -> list[tuple[str, int]]:
        """User sentences with a constraint cue (must, don't, only, …), quoted, deduplicated."""
        x = self.x
        sources = [(rnd, text) for _, rnd, text in x.requests]
        if x.last_request is not None and x.last_request[0] < x.start:
            sources.append((self.current_round, x.last_request[1]))
        seen: dict[str, None] = {}
        found: list[str] = []
        for _, text in sources:
            for part in _USER_SPLIT.split(text[:20000]):
                part = part.strip(" -*•")
                if 3 <= _word_count(part) <= 80 and _CONSTRAINT_CUES.search(part):
                    key = part.lower()
                    if key not in seen:
                        seen[key] = None
                        found.append(_quote(_cut(_one_line(part), 300)))
        return [(line, len(found) - 1 - n) for n, line in enumerate(found)]

    # plan

    def todos(self, statuses: tuple[str, ...] | None = None) -> list[tuple[str, int]]:
        """The latest plan's items with their status (optionally only some statuses)."""
        todos = self.x.todos or []
        out = [(f"[{status}] {content}", n) for n, (content, status) in enumerate(todos)
               if statuses is None or status in statuses]
        if statuses is None and self.x.todo_explanation:
            out.insert(0, (f"plan note: {_cut(self.x.todo_explanation, 200)}", 0))
        return out

    def in_progress(self) -> str | None:
        """The plan item in progress, if any."""
        for content, status in self.x.todos or []:
            if status in ("in_progress", "in-progress", "active"):
                return content
        return None

    def next_step(self) -> str:
        """The first pending todo, else the next step the last assistant message states, else '(none)'."""
        for content, status in self.x.todos or []:
            if status in ("pending", "todo", "not_started"):
                return content
        x = self.x
        last = x.last_assistant
        if last is None or x.last_request is None or not last.text.strip():
            return "(none)"
        text = last.text[-6000:]
        raw_lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        for n, line in enumerate(raw_lines):  # a "Next steps" list: its first item
            if re.match(r"(?i)^\W*next steps?\b.{0,40}$", _clean(line)):
                for item in raw_lines[n + 1:n + 6]:
                    if re.match(r"^(?:[-*+•]|\d+[.)])\s+", item) and not _clean(item).endswith(":"):
                        return _cut(_clean(_MD_NOISE.sub("", item)), 200)
        lines = list(_lines(text))
        found = ""
        for line in lines:
            for sentence in _SENTENCE_SPLIT.split(line):
                if _NEXT_CUES.search(sentence) and len(sentence.split()) >= 3:
                    found = sentence
        found = re.sub(r"(?i)^\W*next(?: steps?)?\s*[:,\-–]\s*", "", _clean(found))
        return _cut(found, 200) if found else "(none)"

    def describe(self, action: _Action) -> str:
        """An action with its outcome: ok (test summary or exit code) or failed (exit code and error)."""
        if not action.answered:
            return f"{action.label} (no result yet)"
        if action.failed:
            code = f"exit {action.exit_code}: " if action.exit_code not in (None, 0) else ""
            return f"{action.label} → failed ({code}{action.error})"
        detail = action.summary or ("exit 0" if action.exit_code == 0 else "")
        return f"{action.label} → ok" + (f" ({detail})" if detail else "")

    def active_item(self) -> str:
        """The Resume line's 'active': the todo in progress, else the last tool action."""
        current = self.in_progress()
        if current:
            return f"in_progress todo: {current}"
        last = self.x.last_action()
        return f"last action: {self.describe(last)}" if last else "(none)"

    def resume_line(self, limit: int = 200) -> str:
        """The one-line resume point, each field cut to about ``limit`` characters."""
        x = self.x
        request = _field(x.last_request[1], limit) if x.last_request else "(none)"
        return (f"last request: {request}; answered: {'yes' if self.answered else 'no'}; "
                f"active: {_field(self.active_item(), limit + 20)}; next: {_field(self.next_step(), limit)}")

    # actions

    def _failures(self) -> None:
        """Unfixed failures grouped by command (newest first) and the fixed ones with their fix."""
        grouped: dict[tuple[str, str], list[_Action]] = {}
        self.fixes: list[tuple[str, int]] = []
        for action in self.x.actions:
            if not action.failed:
                continue
            if action.resolved_by is not None:
                fixed = _cut(action.resolved_by, 120)
                self.fixes.append((f"{action.label} failed ({action.error}); fixed by a later successful {fixed}", 0))
                continue
            grouped.setdefault(action.keys[0] if action.keys else ("", action.label), []).append(action)
        failed = sorted(grouped.values(), key=lambda group: group[-1].index, reverse=True)
        self.failed = []
        for rank, group in enumerate(failed):
            last = group[-1]
            times = f" ×{len(group)}" if len(group) > 1 else ""
            code = f"exit {last.exit_code}: " if last.exit_code not in (None, 0) else ""
            tool = f" ({last.name}{times})" if last.command else times
            self.failed.append((f"{last.label}{tool} → {code}{last.error}", rank))
        self.fixes = [(text, len(self.fixes) - 1 - n) for n, (text, _) in enumerate(self.fixes)]

    def _commands(self) -> None:
        """Distinct commands with their last outcome: failures, then test runs, then the rest."""
        seen: dict[str, list[_Action]] = {}
        for action in self.x.actions:
            if action.kind != "command" or (action.quiet and not action.failed and action.paths):
                continue
            seen.setdefault(action.keys[0][1] if action.keys else action.label, []).append(action)
        ordered = sorted(seen.values(), key=lambda group: group[-1].index, reverse=True)[:_MAX_COMMANDS]
        lines = []
        for group in ordered:
            last = group[-1]
            times = f" ×{len(group)}" if len(group) > 1 else ""
            if not last.answered:
                outcome = "no result yet"
            elif last.failed:
                outcome = "failed" + (f" (exit {last.exit_code})" if last.exit_code not in (None, 0) else "")
            else:
                outcome = "ok" + (f" (exit {last.exit_code})" if last.exit_code is not None else "")
            if last.summary:
                outcome += f", {last.summary}"
            importance = 0 if last.failed else (1 if last.test else (3 if last.quiet else 2))
            lines.append((importance, last.index, f"{last.label}{times} → {outcome}"))
        lines.sort(key=lambda t: (t[0], -t[1]))
        self.commands = [(text, rank) for rank, (_, _, text) in enumerate(lines)]

    def file_status(self, info: _File) -> str:
        """A file's operations: created, edited ×3, read, a failed op that never succeeded, …"""
        parts = []
        for op in ("created", "written", "edited", "deleted", "moved", "read", "searched"):
            n = info.ops.get(op, 0)
            if n:
                parts.append(op + (f" ×{n}" if n > 1 else ""))
        for op, n in sorted(info.failed.items()):
            if not info.ops.get(op):
                parts.append(f"{op} failed" + (f" ×{n}" if n > 1 else ""))
        return ", ".join(parts) or "touched"

    def ranked_files(self, rounds: set[int] | None = None, searched: bool = True) -> list[_File]:
        """Files by importance: changed ones first, then read, then only searched; newest first."""
        def weight(info: _File) -> int:
            """0 for changed files, 1 for read ones, 2 for ones only searched."""
            ops = info.ops
            if ops.get("created") or ops.get("written") or ops.get("edited") or ops.get("deleted"):
                return 0
            if ops.get("read"):
                return 1
            return 2 if not info.failed else 1

        files = [f for f in self.x.files.values()
                 if (rounds is None or f.rounds & rounds) and (searched or set(f.ops) - {"searched"} or f.failed)]
        files.sort(key=lambda f: (weight(f), -f.last))
        return files[:_MAX_FILES]

    def files(self, rounds: set[int] | None = None, exclude: set[str] | frozenset[str] = frozenset()
              ) -> list[tuple[str, int]]:
        """One Artifact Trail line per file: its path and what was done to it."""
        files = [f for f in self.ranked_files(rounds) if f.path not in exclude]
        return [(f"{f.path} — {self.file_status(f)}", rank) for rank, f in enumerate(files)]

    def file_notes(self, rounds: set[int] | None = None) -> list[tuple[str, int]]:
        """What a file is about: its doc line and the symbols it defines or got."""
        out = []
        for f in self.ranked_files(rounds, searched=False):
            if not f.gist and not f.symbols:
                continue
            text = f"{f.path} ({self.file_status(f)})"
            if f.gist:
                text += f": {_quote(f.gist)}"
            if f.symbols:
                text += "; symbols: " + ", ".join(f"`{s}`" for s in f.symbols)
            out.append((text, len(out)))
        return out

    def tree(self, rounds: set[int] | None = None) -> list[tuple[str, int]]:
        """The touched files as an indented tree under their common folders."""
        files = self.ranked_files(rounds, searched=False)
        if not files:
            return []
        groups: dict[str, dict[str, Any]] = {}
        for f in sorted(files, key=lambda f: f.path):
            path = f.path
            root = "/" if path.startswith("/") else ("~/" if path.startswith("~/") else "./")
            parts = [p for p in path[len(root) if root != "./" or path.startswith("./") else 0:].split("/") if p]
            node = groups.setdefault(root, {})
            for part in parts[:-1]:
                node = node.setdefault(part + "/", {})
            node[parts[-1] if parts else path] = self.file_status(f)
        lines: list[str] = []
        for root in sorted(groups):
            node, prefix = groups[root], root
            while len(node) == 1 and isinstance(next(iter(node.values())), dict):  # common prefix
                key = next(iter(node))
                prefix, node = prefix + key, node[key]
            lines.append(prefix if prefix != "./" else "(relative paths)")
            _render(node, 1, lines)
        return [(line, n) for n, line in enumerate(lines)]

    def last_actions(self, limit: int = 6) -> list[tuple[str, int]]:
        """The most recent distinct actions with their outcome (repeats counted), newest first."""
        out: list[list[Any]] = []
        for action in reversed(self.x.actions[-limit * 8:]):
            text = self.describe(action)
            if out and out[-1][0] == text:
                out[-1][1] += 1
            elif len(out) < limit:
                out.append([text, 1])
            else:
                break
        return [(text + (f" (×{n} in a row)" if n > 1 else ""), rank) for rank, (text, n) in enumerate(out)]

    def current(self) -> list[tuple[str, int]]:
        """The state right before the checkpoint: todo in progress, recent actions, last test, last text."""
        out = []
        current = self.in_progress()
        if current:
            out.append((f"in progress (todo): {current}", 0))
        out += [("recent: " + text, rank + 1) for text, rank in self.last_actions()]
        tests = [a for a in self.x.actions if a.test and a.answered]
        if tests:
            out.append((f"latest test run: {self.describe(tests[-1])}", 1))
        last = self.x.last_assistant
        if last is not None and last.text.strip():
            out.append((f"last assistant message: {_quote(_cut(_clean(last.text), 300))}", 2))
        return out

    def resume_point(self) -> list[tuple[str, int]]:
        """The last concrete action with its result, and whether the latest request was answered."""
        out = []
        last = self.x.last_action()
        if last is not None:
            text = f"last action: {self.describe(last)}"
            if last.answered and not last.failed and last.first_line and not last.summary and last.command \
                    and not last.quiet:
                text += f"; output began: {_quote(_cut(last.first_line, 160))}"
            out.append((text, 0))
        if self.answered and self.x.last_assistant is not None:
            out.append((f"the latest request was answered: {_quote(_cut(_clean(self.x.last_assistant.text), 240))}",
                        1))
        elif self.x.last_request is not None:
            out.append(("the latest request is not answered yet; continue from the last action", 1))
        return out

    def pending(self) -> list[tuple[str, int]]:
        """The next step and the unfinished plan items."""
        out = [(text, rank) for text, rank in self.todos(("pending", "in_progress", "in-progress", "todo",
                                                          "not_started", "active"))]
        step = self.next_step()
        if step != "(none)":
            out.insert(0, (f"next step: {step}", 0))
        return out

    def verification(self) -> list[tuple[str, int]]:
        """Open failures, the latest test run, edits no test run has covered, an unanswered request."""
        x = self.x
        out = []
        unresolved = len(self.failed)
        if unresolved:
            out.append((f"{unresolved} failed attempt(s) were never fixed (see Failed Attempts)", 0))
        tests = [a for a in x.actions if a.test and a.answered]
        edits = [a for a in x.actions if a.kind == "edit" or any(op in ("edited", "created", "written")
                                                                  for _, op in a.paths)]
        if tests:
            last = tests[-1]
            state = "latest test run" if not last.failed else "not verified: the latest test run failed"
            out.append((f"{state}: {self.describe(last)}", 1))
            later = sorted({p for a in edits if a.index > last.index for p, op in a.paths if op != "read"})
            if later:
                out.append(("edited after the last test run (unverified): " + ", ".join(later[:12]), 0))
        elif edits:
            changed = sorted({p for a in edits for p, op in a.paths if op != "read"})
            if changed:
                out.append(("no test run recorded after editing: " + ", ".join(changed[:12]), 1))
        if not self.answered and x.last_request is not None:
            out.append(("the latest request has no final answer yet", 2))
        return out

    def decision_items(self, rounds: set[int] | None = None, latest: int = 5) -> list[tuple[str, list]]:
        """Decisions as item groups: the newest few kept longer than the rest."""
        found = self.decisions(rounds)
        return [("latest_decisions", found[:latest]), ("decisions", found[latest:])]

    def decisions(self, rounds: set[int] | None = None) -> list[tuple[str, int]]:
        """Informative assistant sentences, the newest first, deduplicated."""
        seen: dict[str, None] = {}
        out: list[tuple[str, int]] = []
        for _, rnd, sentence in reversed(self.x.sentences):
            if rounds is not None and rnd not in rounds:
                continue
            key = sentence.lower()
            if key in seen:
                continue
            seen[key] = None
            out.append((_cut(sentence, 300), len(out)))
        return out

    def facts(self, rounds: set[int] | None = None) -> list[tuple[str, int]]:
        """Test results of the body, the newest first."""
        out = []
        for action in reversed(self.x.actions):
            if rounds is not None and action.round not in rounds:
                continue
            if action.summary:
                state = "failed" if action.failed else "ok"
                out.append((f"{action.label} → {state}: {action.summary}", len(out)))
        return out

    def work(self, rounds: Iterable[int]) -> list[tuple[str, int]]:
        """One line per round: what was created, edited, read and run, and how the round ended."""
        by_round: dict[int, list[_Action]] = {}
        for action in self.x.actions:
            by_round.setdefault(action.round, []).append(action)
        requests = {rnd: text for _, rnd, text in self.x.requests}
        if self.x.last_request is not None:
            requests.setdefault(self.current_round, self.x.last_request[1])
        out = []
        wanted = sorted(set(rounds))
        for rnd in wanted:
            actions = by_round.get(rnd, [])
            if not actions and rnd not in self.x.round_text:
                continue
            counts = Counter()
            files: dict[str, Counter] = {}
            for a in actions:
                counts["failed" if a.failed else "ok"] += 1
                for path, op in a.paths:
                    files.setdefault(op, Counter())[path.rsplit("/", 1)[-1]] += 1
            parts = []
            for op in ("created", "written", "edited", "deleted", "read", "searched"):
                if op in files:
                    names = ", ".join(n + (f" ×{c}" if c > 1 else "") for n, c in files[op].most_common(6))
                    more = len(files[op]) - 6
                    parts.append(f"{op} {names}" + (f" (+{more} more)" if more > 0 else ""))
            commands = sum(1 for a in actions if a.kind == "command")
            if commands:
                parts.append(f"ran {commands} command(s)")
            if counts["failed"]:
                parts.append(f"{counts['failed']} tool call(s) failed")
            label = f"round {rnd}" + (f" ({_quote(_cut(_one_line(requests[rnd]), 60))})" if rnd in requests else "")
            summary = "; ".join(parts) if parts else "no tool calls"
            out.append((f"{label}: {summary}; {self.outcome(rnd)}", len(wanted) - 1 - len(out)))
        return out

    def concepts(self) -> list[tuple[str, int]]:
        """The backticked terms the assistant used most."""
        terms = [t for t, n in self.x.terms.most_common(40) if n >= 2 or len(self.x.terms) < 15][:24]
        if not terms:
            return []
        return [("terms the assistant relied on: " + ", ".join(f"`{t}`" for t in terms), 0)]

    def critical(self) -> list[tuple[str, int]]:
        """The working directory and where offloaded or cleared tool output can be recovered."""
        out = []
        if self.x.cwd:
            out.append((f"working directory: {self.x.cwd}", 0))
        for n, text in enumerate(self.x.critical):
            out.append((text, n + 1))
        return out

    def carried(self, category: str) -> list[tuple[str, int]]:
        """Lines of an earlier checkpoint of one category, marked as earlier."""
        lines = self.x.carried.get(category, [])
        return [(f"[earlier] {line}", n) for n, line in enumerate(lines)]


def _render(node: Mapping[str, Any], depth: int, lines: list[str]) -> None:
    """Tree lines of a nested dict (dirs end with '/'; single-child dir chains merged)."""
    dirs = sorted(k for k, v in node.items() if isinstance(v, dict))
    files = sorted(k for k, v in node.items() if not isinstance(v, dict))
    indent = "  " * depth
    for name in files:
        lines.append(f"{indent}{name} — {node[name]}")
    for name in dirs:
        child, label = node[name], name
        while len(child) == 1 and isinstance(next(iter(child.values())), dict):
            key = next(iter(child))
            label, child = label + key, child[key]
        lines.append(f"{indent}{label}")
        _render(child, depth + 1, lines)


# ---------------------------------------------------------------------------------------------
# contracts


def _sections(contract: str, titles: Sequence[str], x: _Extraction, budget: int) -> list[tuple[str, list[_Item]]]:
    """Items of every section of a contract, in the contract's order."""
    c = _Content(x, budget)
    current = {c.current_round}
    earlier = c.body_rounds - current

    def items(*parts: tuple[str, list[tuple[str, int]]]) -> list[_Item]:
        """Items of (kind, entries) groups, each kind with its drop tier."""
        out = []
        for kind, entries in parts:
            tier = _TIERS[kind]
            for text, rank in entries:
                out.append(_Item(text=text, tier=tier, rank=rank, raw=kind == "tree"))
        return out

    common = {
        "Failed Attempts — Do Not Retry": items(("failed", c.failed), ("carried_failed", c.carried("failed"))),
        "Artifact Trail": items(("files", c.files()), ("commands", c.commands), ("carried_files", c.carried("files"))),
        "Resume": [_Item(text=c.resume_line(), tier=_TIERS["resume"], raw=True,
                         variants=tuple(c.resume_line(n) for n in (100, 50, 24)))],
    }
    requests_plain = ("requests", c.requests(False))
    pending = items(("pending", c.pending()), ("carried_pending", c.carried("pending")))
    mapping: dict[str, list[_Item]]
    if contract == "current":
        mapping = {
            "Active Task": items(("active", c.active()), ("carried_requests", c.carried("requests"))),
            "Constraints and Preferences": items(("constraints", c.constraints()),
                                                 ("carried_requests", c.carried("constraints"))),
            "Completed Work in This Active Segment": items(("work_current", c.todos(("completed", "done"))),
                                                           ("work_current", c.work(current)),
                                                           ("history", c.work(earlier)),
                                                           ("carried_history", c.carried("history"))),
            "Current Work and Active State": items(("current", c.current())),
            "Immediate Resume Point": items(("resume_point", c.resume_point())),
            "Pending Tasks and Next Useful Step": pending,
            "Key Facts, Decisions, Evidence, and Fixes": items(*c.decision_items(), ("fixes", c.fixes),
                                                               ("facts", c.facts()),
                                                               ("carried_facts", c.carried("facts"))),
            "Files, Code Areas, Artifacts, and Codebase Understanding": items(("file_notes", c.file_notes()),
                                                                              ("concepts", c.concepts())),
            "Blockers, Risks, and Verification": items(("verification", c.verification())),
            "Critical Context": items(("critical", c.critical())),
            "Relevant Files & Structure": items(("tree", c.tree())),
        }
    elif contract == "dialogue":
        mapping = {
            "Historical User Requests and Outcomes": items(("requests", c.requests(True)),
                                                           ("carried_requests", c.carried("requests"))),
            "Learned User Requirements, Preferences, and Acceptance Criteria": items(
                ("constraints", c.constraints()), ("carried_requests", c.carried("constraints"))),
            "Historical Work Performed": items(("history", c.work(c.body_rounds)), ("history", c.todos()),
                                               ("carried_history", c.carried("history"))),
            "Key Technical Concepts and Codebase Understanding": items(("concepts", c.concepts()),
                                                                       ("file_notes", c.file_notes())),
            "Files, Code Areas, and Artifacts": items(("files", c.files())),
            "Decisions, Constraints, Corrections, and Findings": items(*c.decision_items(),
                                                                       ("carried_facts", c.carried("facts"))),
            "Evidence, Errors, Fixes, and Invalid Attempts": items(("fixes", c.fixes), ("facts", c.facts())),
            "Critical Context": items(("critical", c.critical())),
            "Relevant Files": items(("tree", c.tree())),
            "Historical Pending Notes": items(("pending", [(f"{t} (pending when this checkpoint was written)", r)
                                                          for t, r in c.pending()]),
                                              ("carried_pending", c.carried("pending"))),
        }
    elif contract == "round":
        mapping = {
            "Active Task and Success Criteria": items(("active", c.active(False)), ("constraints", [
                (t, r) for t, r in c.constraints()
                if x.last_request and t[1:-1] in x.last_request[1] and t[1:-1] != x.last_request[1].strip()])),
            "Current Execution State": items(("current", c.todos()), ("current", c.current())),
            "Immediate Resume Point and Next Useful Step": items(("resume_point", c.resume_point()),
                                                                 ("next", c.pending())),
            "Current Task Facts, Decisions, Evidence, and Fixes": items(*c.decision_items(current),
                                                                        ("fixes", c.fixes),
                                                                        ("facts", c.facts(current))),
            "Current Files, Code Areas, and Artifacts": items(("files", c.files(current))),
            "Repository and Codebase Understanding": items(("file_notes", c.file_notes()), ("concepts", c.concepts())),
            "Historical User Requests and Outcomes": items(("requests", c.requests(True, earlier)),
                                                           ("carried_requests", c.carried("requests"))),
            "Learned User Requirements, Preferences, and Acceptance Criteria": items(
                ("constraints", c.constraints()), ("carried_requests", c.carried("constraints"))),
            "Historical Work Performed": items(("history", c.work(earlier)), ("carried_history", c.carried("history"))),
            "Durable Historical Information": items(*c.decision_items(earlier),
                                                    ("carried_facts", c.carried("facts"))),
            "Cross-Cutting Files, Code Areas, and Artifacts": items(("files", c.files(earlier))),
            "Open Work, Blockers, Risks, and Verification": items(("verification", c.verification()),
                                                                  ("carried_pending", c.carried("pending"))),
            "Critical Context": items(("critical", c.critical())),
            "Relevant Files": items(("tree", c.tree())),
        }
        if x.requests and x.requests[-1][1] == c.current_round and x.last_request \
                and x.last_request[0] == x.requests[-1][0]:
            pass  # the active request is quoted in section 1
    else:  # full
        primary = c.active(False)
        noted = {f.path for f in c.ranked_files(searched=False) if f.gist or f.symbols}
        mapping = {
            "Primary Request and Intent": items(("active", primary), ("carried_requests", c.carried("requests"))),
            "Key Technical Concepts": items(("concepts", c.concepts())),
            "Files and Code Sections": items(("file_notes", c.file_notes()), ("files", c.files(exclude=noted))),
            "Errors and Fixes": items(("fixes", c.fixes), ("facts", c.facts()),
                                      ("carried_facts", c.carried("facts"))),
            "Problem Solving": items(*c.decision_items(), ("carried_history", c.carried("history"))),
            "All User Messages": items(requests_plain, ("carried_requests", c.carried("constraints"))),
            "Pending Tasks": items(("pending", c.todos(("pending", "in_progress", "in-progress", "todo"))),
                                   ("carried_pending", c.carried("pending"))),
            "Current Work": items(("current", c.current())),
            "Optional Next Step": items(("next", [(c.next_step(), 0)] if c.next_step() != "(none)" else [])),
        }
    mapping.update(common)
    return [(title, mapping.get(title, [])) for title in titles]


# ---------------------------------------------------------------------------------------------
# budget


def _render_text(sections: Sequence[tuple[str, Sequence[_Item]]]) -> str:
    """The snapshot text: numbered headings, kept items, budget markers and "(none)"."""
    parts = ["<state_snapshot>"]
    for n, (title, entries) in enumerate(sections, start=1):
        parts.append(f"{n}. {title}")
        kept = [item.line for item in entries if item.keep]
        dropped = sum(1 for item in entries if not item.keep)
        if kept:
            parts.extend(kept)
            if dropped:
                parts.append(f"- (+{dropped} omitted for budget)")
        else:
            parts.append("(omitted)" if dropped else "(none)")
        parts.append("")
    parts[-1] = "</state_snapshot>"
    return "\n".join(parts)


def _prepare(item: _Item, limit: int | None, counter: TokenCounter) -> None:
    """Set an item's rendered line (cut to ``limit``, redacted) and its token cost."""
    text = item.text if limit is None else _cut(item.text, limit)
    text = redact(text)
    item.line = text if item.raw else "- " + text
    item.cost = counter.count(item.line) + 1


def _fit(sections: list[tuple[str, list[_Item]]], budget: int, counter: TokenCounter) -> str:
    """The rendered snapshot, with items dropped and then shortened until it fits ``budget`` tokens."""
    everything = [item for _, entries in sections for item in entries]
    for item in everything:
        limit = None if item.tier == 0.0 or item.raw else _ITEM_CHARS
        item.text = item.text if limit is None else _cut(item.text, limit)
        item.line = redact(item.text) if item.raw else "- " + redact(item.text)
    counter.prime(item.line for item in everything)
    for item in everything:
        item.cost = counter.count(item.line) + 1
    skeleton = _render_text([(title, []) for title, _ in sections])
    base = counter.count(skeleton)
    marker = counter.count("- (+999 omitted for budget)") + 1 - counter.count("(none)")
    goal = budget
    for _ in range(4):
        _fit_items(sections, goal, base, marker, counter)
        text = _render_text(sections)
        text = redact(text)
        total = counter.count(text)
        if total <= budget or budget <= 0:
            return text
        goal -= (total - goal) + max(8, budget // 50)
        for item in everything:
            item.keep = True
    return text


def _fit_items(sections: list[tuple[str, list[_Item]]], goal: int, base: int, marker: int,
               counter: TokenCounter) -> None:
    """Decide which items stay (``keep``) and shorten the essential ones so the estimate fits ``goal``."""
    owner = {id(item): n for n, (_, entries) in enumerate(sections) for item in entries}
    total = base + sum(item.cost for _, entries in sections for item in entries)
    marked: set[int] = set()
    if total <= goal:
        return
    droppable = sorted((item for _, entries in sections for item in entries if item.tier > 0.0),
                       key=lambda item: (-item.tier, -item.rank))
    for item in droppable:
        if total <= goal:
            return
        item.keep = False
        total -= item.cost
        section = owner[id(item)]
        if section not in marked:
            marked.add(section)
            total += marker
    essential = [item for _, entries in sections for item in entries if item.tier == 0.0 and item.keep]
    shorter = [item for item in essential if item.variants]

    def use_variant(level: int) -> int:
        """Switch items that have shorter forms to form ``level``; the change in tokens."""
        change = 0
        for item in shorter:
            if level < len(item.variants):
                before = item.cost
                item.text = item.variants[level]
                _prepare(item, None, counter)
                change += item.cost - before
        return change

    for limit in (800, 400, 200, 120, 60):  # then shorten what must stay, longest first
        if total <= goal:
            return
        if limit == 120:
            total += use_variant(0)
        for item in sorted(essential, key=lambda item: -item.cost):
            if total <= goal:
                return
            if len(item.text) > limit and not item.variants:
                before = item.cost
                _prepare(item, limit, counter)
                total += item.cost - before
    requests = [item for item in essential if not item.variants and not item.text.startswith("Latest request")]
    for item in sorted(requests, key=lambda item: -item.rank):  # oldest requests last of all
        if total <= goal:
            return
        item.keep = False
        total -= item.cost
        section = owner[id(item)]
        if section not in marked:
            marked.add(section)
            total += marker
    for level in (1, 2):
        if total <= goal:
            return
        total += use_variant(level)
