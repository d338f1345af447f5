"""Tool calls classified by what they do: shell command, patch, read, edit/write, search, test or other.

Each agent harness names its tools differently, so a call is recognised by its name and by the
shape of its arguments, and turned into an :class:`Action` that later collects its outcome.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import orjson

from ....model import ToolCall
from ....tool_names import EDIT, EDITOR, READ, SEARCH, SHELL, WRITE, is_plan_tool
from .outputs import gist_of, symbols_of
from .shell import command_label, file_ops, normalise_command, shell_segments, ran_tests
from ..text import cut, one_line

_PATH_KEYS = ("file_path", "path", "notebook_path", "filename", "file", "target_file", "filepath")
_PRIMARY_KEYS = _PATH_KEYS + ("command", "cmd", "url", "query", "pattern", "title", "description", "skill",
                              "subagent_type", "prompt")
_VOLATILE_KEYS = frozenset({"timeout", "timeout_ms", "yield_time_ms", "max_output_tokens", "sandbox_permissions",
                            "justification", "description", "workdir", "run_in_background",
                            "with_escalated_permissions"})
_CONTENT_KEYS = ("new_string", "content", "text", "new_str", "replace", "new_source", "file_text")
_PATCH_HEADER = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.MULTILINE)
_PARTIAL_READ = re.compile(r"\bsed\s+-n\s+['\"]?(?!1,)\d|\btail\b")  # a command showing part of a file
_PATCH_VERBS = {"Update": "edited", "Add": "created", "Delete": "deleted"}


@dataclass(slots=True)
class Action:
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
    workdir: str = ""  # a working directory the call itself sets (it holds for later calls too)
    opens: str | None = None  # the file the call makes SWE-agent's open file
    error_lines: tuple[str, ...] = ()  # error statements anywhere in the result, verbatim
    outcome: str = ""  # the line of the result that says how it ended (commands)
    finishes: bool = False  # a tool that ends the task (submit)
    new_text: str = ""  # the text an edit put in (new strings, a patch's added lines), as the call gave it


@dataclass(frozen=True, slots=True)
class _Call:
    """A tool call being classified: where it is, its name and its parsed arguments."""

    index: int
    round: int
    name: str
    args: dict[str, Any]
    raw: str

    @property
    def lname(self) -> str:
        """The tool name in lower case (how tools are recognised)."""
        return self.name.lower()

    def action(self, kind: str, label: str, **fields: Any) -> Action:
        """An action of this call."""
        return Action(self.index, self.round, self.name, kind, label, **fields)


def call_args(call: ToolCall) -> tuple[dict[str, Any], str]:
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


def _shell_command(name: str, args: Mapping[str, Any], *, raw: str, call_type: str) -> str | None:
    """The shell command a call runs, if it is a shell call."""
    value = args.get("command", args.get("cmd"))
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        if len(value) >= 3 and value[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and value[1].startswith("-"):
            return value[-1]
        return shlex.join(value)
    shell = name in SHELL or call_type == "local_shell"
    if isinstance(value, str) and (shell or ("command" in args and not any(k in args for k in _PATH_KEYS))):
        return value
    if not args and name in SHELL and raw.strip():
        return raw.strip()
    return None


def classify(index: int, call: ToolCall, *, round_: int, open_file: str | None) -> Action | None:
    """Classify a tool call: shell command, patch, read, edit/write, search, test tool or other."""
    lname = call.name.lower()
    if is_plan_tool(lname):
        return None  # the plan is read separately
    args, raw = call_args(call)
    c = _Call(index, round_, call.name, args, raw)
    command = _shell_command(lname, args, raw=raw, call_type=call.type)
    if command is not None:
        return _command_action(c, command)
    patch = _patch_text(args, raw)
    if patch is not None:
        return _patch_action(c, patch)
    return _tool_action(c, open_file)


def _command_action(c: _Call, command: str) -> Action:
    """A shell command: the files it touches, the tests it runs, whether it reads only part of a file."""
    ops, quiet, test, partial, label, normalised = _command_facts(command)
    action = c.action("command", f"`{label}`", command=command, paths=list(ops), keys=(("cmd", normalised),),
                      test=test, quiet=quiet and test is None, partial=partial)
    workdir = c.args.get("workdir")
    if isinstance(workdir, str) and workdir.strip():
        action.workdir = workdir.strip()
    return action


@lru_cache(maxsize=1 << 14)
def _command_facts(command: str) -> tuple[tuple[tuple[str, str], ...], bool, Any, bool, str, str]:
    """What a command line says by itself: (path, op) pairs, quiet, test runs, partial read, label, normalised.
    Remembered per command: a compaction classifies each call twice (the summariser's scan, the working set)."""
    segments = shell_segments(command)
    ops, quiet = file_ops(segments)
    return (tuple(ops), quiet, ran_tests(segments), bool(_PARTIAL_READ.search(command)), command_label(command),
            normalise_command(command))


def _patch_text(args: Mapping[str, Any], raw: str) -> str | None:
    """The apply_patch text a call carries (``*** Begin Patch …``), if any."""
    patch = None
    for key in ("patch", "input", "diff"):
        if isinstance(args.get(key), str) and "*** " in args[key]:
            patch = args[key]
    if patch is None and not args and "*** Begin Patch" in raw[:200]:
        patch = raw
    return patch


def _patch_ops(patch: str) -> list[tuple[str, str]]:
    """(path, op) of every file an apply_patch input updates, adds, deletes or moves to."""
    ops = []
    for match in _PATCH_HEADER.finditer(patch):
        if match.group(3):
            ops.append((match.group(3), "created"))
        else:
            ops.append((match.group(2), _PATCH_VERBS[match.group(1)]))
    return ops


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
    return {path: tuple(symbols_of("\n".join(lines))) for path, lines in out.items()}


def _patch_action(c: _Call, patch: str) -> Action:
    """An apply_patch call: an edit of every file the patch names."""
    ops = _patch_ops(patch)
    label = f"{c.name} " + ", ".join(p for p, _ in ops[:4]) if ops else c.name
    action = c.action("edit", label, paths=ops,
                      keys=tuple(("file", p) for p, _ in ops) or (("tool", c.name + " " + c.raw[:200]),))
    action.path_symbols = _patch_symbols(patch)
    action.new_text = "\n".join(line for line in patch.splitlines() if line.startswith(("***", "@@", "+"))
                                 and not line.startswith(("*** Begin Patch", "*** End Patch")))
    return action


def _kind(lname: str, sub: str) -> tuple[str, str]:
    """(action kind, file operation) of a non-shell tool by its name or editor sub-command."""
    if lname in READ or sub == "view":
        return "read", "read"
    if lname in EDIT or sub in ("str_replace", "insert", "undo_edit"):
        return "edit", "edited"
    if lname in WRITE or sub == "create":
        return "edit", "created"
    if lname in SEARCH:
        return "search", "searched"
    if "test" in lname:
        return "command", ""
    return "other", ""


def _tool_action(c: _Call, open_file: str | None) -> Action:
    """A non-shell, non-patch call: file read or edit, search, test tool or anything else."""
    args, lname = c.args, c.lname
    path = next((args[k] for k in _PATH_KEYS if isinstance(args.get(k), str) and args[k].strip()), None)
    editor = lname in EDITOR
    sub = str(args.get("command", "")).lower() if editor else ""
    if path is None and lname in ("edit", "insert") and open_file and ("search" in args or "text" in args
                                                                       or "replace" in args):
        path = open_file  # SWE-agent edits the open file
    kind, op = _kind(lname, sub)
    if kind == "command":
        return _test_tool_action(c)
    if op in ("read", "edited", "created") and path:
        return _file_action(c, path, kind=kind, op=op)
    if kind == "search":
        return _search_action(c)
    return _other_action(c, kind)


def _test_tool_action(c: _Call) -> Action:
    """A run_tests-like tool: a command that runs the tests its arguments name."""
    argv = c.args.get("args", c.args.get("paths", c.args.get("tests", [])))
    words = [str(a) for a in argv] if isinstance(argv, list) else ([str(argv)] if argv else [])
    text = " ".join([c.name] + words)
    targets = frozenset(w for w in words if not w.startswith("-"))
    return c.action("command", f"`{cut(text, 160)}`", command=text,
                    keys=(("tool", one_line(text.lower())),), test=((c.lname, targets),))


def _file_action(c: _Call, path: str, *, kind: str, op: str) -> Action:
    """A read, edit or write of one file; an edit or write also notes what the new content defines."""
    keys: tuple[tuple[str, str], ...] = ((c.lname, path),)
    if op != "read":
        keys += (("file", path),)
    args = c.args
    start = args.get("offset", args.get("line_number", args.get("start_line", args.get("view_range"))))
    partial = start not in (None, 0, 1, "0", "1") and not (isinstance(start, list) and start[:1] == [1])
    action = c.action(kind, f"{c.name} {path}", paths=[(path, op)], keys=keys, partial=partial)
    if op != "read":
        content = _written_content(args)
        action.symbols = tuple(symbols_of(content))
        if op == "created":
            action.gist = gist_of(content)
        else:
            action.new_text = content.strip("\n")
    if c.lname in ("open", "create"):
        action.opens = path
    return action


def _written_content(args: Mapping[str, Any]) -> str:
    """The new text an edit or write call puts into a file."""
    content = "\n".join(str(args.get(k, "")) for k in _CONTENT_KEYS)
    edits = args.get("edits")
    if isinstance(edits, list):
        content += "\n".join(str(e.get("new_string", "")) for e in edits if isinstance(e, Mapping))
    return content


def _search_action(c: _Call) -> Action:
    """A search tool call: its pattern and where it looked."""
    args = c.args
    pattern = args.get("pattern", args.get("query", args.get("file_name", args.get("regex", ""))))
    where = args.get("path", args.get("dir", args.get("directory", "")))
    label = f"{c.name} {cut(one_line(str(pattern)), 80)}" + (f" in {where}" if where else "")
    return c.action("search", label, keys=((c.lname, f"{pattern}|{where}"),), quiet=True)


def _other_action(c: _Call, kind: str) -> Action:
    """Any other call, labelled and keyed by its main argument (or its stable arguments)."""
    args = c.args
    primary = next((args[k] for k in _PRIMARY_KEYS if isinstance(args.get(k), str) and args[k].strip()), None)
    if primary is None:
        stable = {k: v for k, v in args.items() if k not in _VOLATILE_KEYS}
        primary = orjson.dumps(stable, option=orjson.OPT_SORT_KEYS).decode()[:300] if stable else c.raw[:300]
        label = c.name if not stable else f"{c.name} {cut(one_line(primary), 100)}"
    else:
        label = f"{c.name}: {cut(one_line(primary), 100)}"
    return c.action(kind, label, keys=((c.lname, one_line(primary)),))
