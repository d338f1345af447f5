"""What agents' tools do, told by their names: one vocabulary for every module that needs it.

Each harness names its tools differently (Claude Code ``Bash``/``Read``/``Edit``/``TodoWrite``,
Codex ``exec_command``/``shell``/``apply_patch``/``update_plan``, SWE-agent ``bash``/``open``/
``create``/``str_replace_editor``, OpenAI-style agents ``read_file``/``write_file``…). The
summariser reads what a call did from these sets, state re-injection finds the latest todo list,
plan and file reads with them, and ``tcompact eval`` picks the tool a planted step uses. Names are
compared in lower case; the shape of a call's arguments decides the rest (a call with a
``command`` argument runs a shell command whatever its name).
"""

from __future__ import annotations

__all__ = [
    "SHELL",
    "READ",
    "EDIT",
    "WRITE",
    "SEARCH",
    "PATCH",
    "TODO",
    "PLAN_MODE",
    "SKILL",
    "AGENT",
    "FINISH",
    "EDITOR",
    "POLL",
    "is_plan_tool",
    "kind_of",
]

#: Tools that run a shell command line.
SHELL = frozenset({
    "bash", "shell", "exec_command", "run_command", "execute_command", "terminal", "run_terminal_cmd",
    "local_shell", "shell_command", "run_shell_command", "execute_bash", "cmd", "powershell", "run",
})
#: Tools that show (part of) one file.
READ = frozenset({"read", "read_file", "readfile", "view", "view_file", "open", "open_file", "cat", "get_file",
                  "notebookread", "read_notebook", "fetch_file"})
#: Tools that change a file in place.
EDIT = frozenset({"edit", "multiedit", "str_replace", "edit_file", "notebookedit", "insert", "replace",
                  "apply_diff", "replace_in_file", "search_replace", "edit_notebook", "patch_file"})
#: Tools that create or overwrite a whole file.
WRITE = frozenset({"write", "write_file", "writefile", "create", "create_file", "new_file", "save_file"})
#: Tools that look for files or text.
SEARCH = frozenset({"grep", "glob", "find_file", "search_file", "search_dir", "search", "rg", "ls", "list_dir",
                    "list_files", "find", "codebase_search", "file_search", "grep_search"})
#: Tools whose input is an ``*** Begin Patch`` text (Codex).
PATCH = frozenset({"apply_patch"})
#: Tools that set the agent's todo list or plan (the latest call is the current state).
TODO = frozenset({"todowrite", "todo_write", "update_plan", "write_todos", "manage_todo_list"})
#: Tools that leave plan mode with a plan text (Claude Code).
PLAN_MODE = frozenset({"exitplanmode", "exit_plan_mode"})
#: Tools that load a skill's instructions (Claude Code).
SKILL = frozenset({"skill"})
#: Tools that start a sub-agent; their results are reports, not errors or file contents.
AGENT = frozenset({"task", "agent", "spawn_agent", "subagent", "dispatch_agent"})
#: Tools that end the task (SWE-agent's submit, Cline's attempt_completion, …): a successful call answers it.
FINISH = frozenset({"submit", "finish", "task_complete", "attempt_completion", "complete_task", "final_answer"})
#: Tools that poll or feed a command still running in a session another call opened (Codex ``write_stdin``): their
#: result is that command's.
POLL = frozenset({"write_stdin"})
#: Editor tools with a ``command`` sub-command (view / create / str_replace / insert / undo_edit).
EDITOR = frozenset({"str_replace_editor", "str_replace_based_edit_tool"})

_KINDS = (("shell", SHELL), ("read", READ), ("edit", EDIT), ("write", WRITE), ("search", SEARCH),
          ("patch", PATCH), ("todo", TODO), ("plan_mode", PLAN_MODE), ("skill", SKILL), ("agent", AGENT),
          ("finish", FINISH), ("editor", EDITOR), ("poll", POLL))


def kind_of(name: str) -> str:
    """What a tool of this name does: shell, read, edit, write, search, patch, todo, plan_mode, skill,
    agent, finish, editor, poll — or "other"."""
    lname = name.lower()
    for kind, names in _KINDS:
        if lname in names:
            return kind
    return "todo" if "todo" in lname or lname.endswith("_plan") else "other"


def is_plan_tool(name: str) -> bool:
    """Whether a tool sets the todo list or plan (any name with "todo" in it, or ending in "_plan", counts)."""
    return kind_of(name) == "todo"
