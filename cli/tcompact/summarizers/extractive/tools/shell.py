"""Shell command lines read without running them: words, simple commands, programs, test runs, files.

Agents do much of their work through a shell tool, so which files a command line reads, searches,
writes or deletes, and whether it runs tests, has to be recovered from the line itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..text import cut, one_line

_OPERATORS = frozenset({"|", "||", "&&", ";", "&", ";;", "(", ")", "|&"})
_REDIRECTS = frozenset({">", ">>", "<", ">|", "&>", "&>>", ">&", "<&", "<<<"})
_NEUTRAL = frozenset({"sort", "uniq", "cut", "tr", "column", "tac", "rev", "fold", "fmt", "paste", "comm", "expand",
                      "echo", "printf", "pwd", "which", "true", "false", "date", "whoami", "printenv", "basename",
                      "dirname", "realpath", "readlink", "sleep", "clear", "test", "[", "[["})
_WRAPPERS = frozenset({"sudo", "time", "nice", "command", "exec", "env", "nohup", "xargs", "stdbuf"})
_READERS = frozenset({"cat", "head", "tail", "less", "more", "bat", "nl", "sed", "view", "jq", "wc", "xxd", "od",
                      "file", "stat", "diff", "cmp", "awk", "type"})
_GREPS = frozenset({"grep", "rg", "ag", "ack", "egrep", "fgrep"})
_SEARCHERS = frozenset({"grep", "rg", "ag", "ack", "egrep", "fgrep", "find", "fd", "ls", "tree", "locate", "git"})
_GIT_READS = frozenset({"status", "log", "diff", "show", "grep", "ls-files", "branch", "blame", "rev-parse", "remote"})
_CHANGES = {"rm": "deleted", "unlink": "deleted", "touch": "created", "tee": "written"}
_FLAG_VALUES = {
    "head": {"-n", "-c"}, "tail": {"-n", "-c"}, "sed": {"-e", "-f"}, "awk": {"-f", "-v", "-F"},
    "grep": {"-e", "-f", "-A", "-B", "-C", "-m", "--include", "--exclude"},
    "rg": {"-e", "-f", "-A", "-B", "-C", "-m", "-g", "-t", "-T", "-M", "--glob", "--type", "--max-count"},
    "jq": {"--arg", "--argjson", "-f"}, "nl": {"-b", "-w", "-s"},
}
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
_WORD_PIECE = r"""[^ \t\r\n();<>|&#'"\\]+|'[^']*'|"(?:[^"\\]|\\.)*"|\\."""
_TOKEN = re.compile(rf"(?P<blank>[ \t\r\n]+)|(?P<comment>#[^\n]*)|(?P<op>[();<>|&]+)|(?P<word>(?:{_WORD_PIECE})+)",
                    re.DOTALL)
_PIECE = re.compile(r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)|([^'"\\]+)""", re.DOTALL)
_DQ_ESCAPE = re.compile(r'\\([\\"])')
_STDERR = re.compile(r"\s*\d?>\s*&\s*\d|\s*2>\s*/dev/null")
_HEAD_TAIL = re.compile(r"(?:\s*\|\s*(?:head|tail)(?:\s+-n)?(?:\s+-?\d+)?)+$")
_CD = re.compile(r"^cd\s+\S+\s*&&\s*")
_NOT_IN_PATHS = re.compile(r"[*?\[\]{}<>|;`\"'=\n\\,()]")  # globs, quotes, operators, scripts
_NOT_A_PATH = re.compile(r"[\d,.:;+$pPdqgsi/!-]+")  # line numbers, sed scripts
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,9}$")
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=\S*")
_DURATION = re.compile(r"[\d.]+[smhd]?")
_RUNNER_PREFIXES = frozenset({"uv", "poetry", "pipenv", "hatch", "pdm", "rye", "npx", "bunx", "pnpx"})


def normalise_command(command: str) -> str:
    """A command with whitespace collapsed and stderr redirections / trailing head|tail pipes dropped."""
    text = one_line(command)
    text = _STDERR.sub("", text)
    text = _HEAD_TAIL.sub("", text)
    text = _CD.sub("", text)
    return text.strip()


def command_label(command: str) -> str:
    """A command as shown: one line, a leading ``cd dir &&`` dropped, cut."""
    text = _CD.sub("", one_line(command))
    return cut(text, 160)


def _words(text: str) -> list[str]:
    """Shell words and operators of a command line (quotes respected; plain split when they do not parse).

    The words are those of ``shlex.shlex(text, posix=True, punctuation_chars=True)`` with
    ``whitespace_split``: blanks separate, runs of ``();<>|&`` are operators, ``#`` starts a
    comment (to the end of the line), quotes and backslashes are removed as a POSIX shell does."""
    words: list[str] = []
    pos, end = 0, len(text)
    while pos < end:
        token = _TOKEN.match(text, pos)
        if token is None:  # an unclosed quote or a trailing backslash
            return text.split()
        pos = token.end()
        if token.lastgroup == "op":
            words.append(token.group())
        elif token.lastgroup == "word":
            words.append(_unquote(token.group()))
    return words


def _unquote(word: str) -> str:
    """A shell word without its quotes and escapes."""
    if "'" not in word and '"' not in word and "\\" not in word:
        return word
    return "".join(_quoted_piece(piece) for piece in _PIECE.finditer(word))


def _quoted_piece(piece: re.Match[str]) -> str:
    """One piece of a shell word: single-quoted text as it is, double-quoted text with escaped backslashes and
    quotes unescaped, an escaped character as itself, or plain text."""
    single, double, escaped, plain = piece.groups()
    if double is not None:
        return _DQ_ESCAPE.sub(r"\1", double)
    return next(part for part in (single, escaped, plain) if part is not None)


def _command_words(command: str) -> list[str]:
    """Words of a whole command text, its lines joined with ';' (a heredoc body is dropped)."""
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
    return words


def _split_operators(words: Sequence[str]) -> list[list[str]]:
    """Word lists between the control operators (| && || ; & …), empty ones left out."""
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
    return out


def shell_segments(command: str) -> list[list[str]]:
    """The simple commands of a shell line as word lists (split at | && || ; & and newlines; heredoc
    bodies dropped; ``bash -c "…"`` opened up)."""
    expanded: list[list[str]] = []
    for seg in _split_operators(_command_words(command)):
        program, rest = _program(seg)
        if program in ("bash", "sh", "zsh") and len(rest) >= 2 and rest[0].startswith("-") and "c" in rest[0]:
            expanded += shell_segments(rest[1])
        else:
            expanded.append(seg)
    return expanded


def _pathish(token: str) -> bool:
    """Whether a shell word looks like a file path (not a flag, URL, glob, number or sed script)."""
    if not token or token[0] in "-$(" or len(token) > 300 or "://" in token or token in (".", "..", "/", "~"):
        return False
    if _NOT_IN_PATHS.search(token):
        return False
    if _NOT_A_PATH.fullmatch(token):
        return False
    if token.startswith(".") and "/" not in token and token.count(".") > 1:  # jq paths: .payload.type
        return False
    return "/" in token or bool(_EXTENSION.search(token)) or token in (
        "Makefile", "Justfile", "Dockerfile", "LICENSE", "README")


def _program(tokens: Sequence[str]) -> tuple[str, list[str]]:
    """The program of one simple command (wrappers, their flags and VAR=value skipped) and its arguments."""
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        if _ASSIGNMENT.fullmatch(tok):
            i += 1
        elif tok in _WRAPPERS or tok == "timeout":
            i += 1
            while i < n and tokens[i].startswith("-"):
                i += 2 if tokens[i] in ("-I", "-n", "-P", "-L", "-s", "-k", "-u") else 1
            if tok == "timeout" and i < n and _DURATION.fullmatch(tokens[i]):
                i += 1
        else:
            break
    if i >= n:
        return "", []
    program = tokens[i] if tokens[i].startswith("./") else tokens[i].rsplit("/", 1)[-1]
    return program, list(tokens[i + 1:])


def _unwrap_runner(program: str, rest: list[str]) -> tuple[str, list[str]]:
    """The program behind ``uv run``, ``npx``, ``python -m`` and the like, with its arguments."""
    while program in _RUNNER_PREFIXES and rest:
        if rest[0] in ("run", "exec") and len(rest) > 1:
            rest = rest[1:]
        program, rest = rest[0].rsplit("/", 1)[-1], rest[1:]
    if program.startswith("python") and len(rest) >= 2 and rest[0] == "-m":
        program, rest = rest[1], rest[2:]
    return program, rest


def _runner(program: str, rest: list[str]) -> tuple[str | None, list[str]]:
    """The test runner a program is (``pytest``, ``cargo test``, …) and the arguments after it."""
    runner = _TEST_RUNNERS.get(program)
    if runner is None and program in _TEST_SUBCOMMANDS:
        words = [r for r in rest if not r.startswith("-")]
        if words and (words[0] in _TEST_SUBCOMMANDS[program] or (
                program in ("npm", "yarn", "pnpm") and len(words) > 1 and words[0] == "run"
                and words[1].startswith("test"))):
            return f"{program} {words[0]}", rest[rest.index(words[0]) + 1:]
    return runner, rest


def ran_tests(segments: Sequence[Sequence[str]]) -> tuple[tuple[str, frozenset[str]], ...] | None:
    """(runner, targets) of every test run in a shell line; no targets means the whole suite."""
    runs = []
    for segment in segments:
        runner, rest = _runner(*_unwrap_runner(*_program(segment)))
        if runner:
            targets = frozenset(r for r in rest if not r.startswith("-") and ("/" in r or "." in r or "::" in r))
            runs.append((runner, targets))
    return tuple(runs) or None


def _redirections(segment: Sequence[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """A simple command without its redirections, and the files those read or write ('2>&1' is dropped)."""
    tokens: list[str] = []
    ops: list[tuple[str, str]] = []
    i = 0
    while i < len(segment):
        tok = segment[i]
        if tok in _REDIRECTS:
            target = segment[i + 1] if i + 1 < len(segment) else ""
            if tokens and tokens[-1].isdigit():
                tokens.pop()
            if target and _pathish(target) and not target.startswith("/dev/") and "&" not in tok:
                ops.append((target, "read" if tok == "<" else "written"))
            i += 2
            continue
        tokens.append(tok)
        i += 1
    return tokens, ops


def _operands(program: str, rest: Sequence[str]) -> tuple[list[str], bool]:
    """A program's non-flag arguments (flag values skipped) and whether a script came with -e/-f."""
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
    return words, script_given


def _paths(words: Sequence[str], op: str) -> list[tuple[str, str]]:
    """(word, op) for the words that look like paths."""
    return [(w, op) for w in words if _pathish(w)]


def _program_ops(program: str, rest: Sequence[str]) -> tuple[list[tuple[str, str]], bool]:
    """Files one program reads, searches or changes, and whether it may change anything."""
    words, script_given = _operands(program, rest)
    if program == "sed":
        in_place = any(t.startswith("-i") or t == "--in-place" for t in rest)
        return _paths(words if script_given else words[1:], "edited" if in_place else "read"), in_place
    if program in _READERS:
        return _paths(words[1:] if program in ("awk", "jq") and not script_given else words, "read"), False
    if program in _GREPS:
        return _paths(words if script_given else words[1:], "searched"), False
    if program in _SEARCHERS:
        return [], program == "git" and bool(words) and words[0] not in _GIT_READS
    if program in _CHANGES:
        return _paths(words, _CHANGES[program]), True
    if program in ("cp", "mv", "install"):
        paths = [w for w in words if _pathish(w)]
        if len(paths) < 2:
            return [], True
        moved = [(p, "moved") for p in paths[:-1]] if program == "mv" else []
        return [(paths[-1], "written"), *moved], True
    return [], True  # an unknown program may change anything


def file_ops(segments: Sequence[Sequence[str]]) -> tuple[list[tuple[str, str]], bool]:
    """Files a shell line reads, searches, writes or deletes; and whether it only reads/searches."""
    ops: list[tuple[str, str]] = []
    quiet = True
    for segment in segments:
        tokens, redirected = _redirections(segment)
        ops += redirected
        quiet = quiet and all(op != "written" for _, op in redirected)
        program, rest = _program(tokens)
        if not program or program == "cd" or program in _NEUTRAL:
            continue
        found, changes = _program_ops(program, rest)
        ops += found
        quiet = quiet and not changes
    return ops, quiet
