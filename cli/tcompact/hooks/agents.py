"""What each agent's hooks look like: where its settings live, which events tcompact hooks into, and
the command a hook runs.

One :class:`Agent` entry per agent; everything that differs between Claude Code and Codex is a value
of its entry (REAL-CLIENTS.md, "Hooks and the newest releases"), so a third agent is one more entry.
Both take the same shape of hooks: ``{"hooks": {EVENT: [{"matcher": M, "hooks": [{"type":
"command", "command": C}]}]}}``. The command is the Python that ran ``hooks install`` with ``-m
tcompact``, so that the hook runs the tcompact of that environment whatever the agent's PATH is.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Event", "Agent", "AGENTS", "SCOPES", "RUNS", "agent", "hook_command", "statusline_command",
           "command_kind"]

SCOPES = ("user", "project")
#: The ``tcompact hook`` commands, and the status line.
RUNS = ("pre-compact", "session-start", "prompt-submit")


@dataclass(frozen=True)
class Event:
    """One hook: the agent's event name, its matcher (None: the entry has no matcher key) and the
    ``tcompact hook`` command it runs."""

    name: str
    matcher: str | None
    run: str


@dataclass(frozen=True)
class Agent:
    """One agent: its settings file per scope, its events, what a user does before its hooks run, and the
    handoff's default size in bytes (what the agent injects whole)."""

    name: str
    label: str
    env: str
    folder: str
    file: str
    events: tuple[Event, ...]
    statusline: bool
    trust: str
    budget: int

    def settings_path(self, scope: str, *, env: Mapping[str, str] | None = None, project: Path | None = None) -> Path:
        """The settings file of ``scope``: the user's (``$ENV`` or ``~/<folder>``) or the project's."""
        env = os.environ if env is None else env
        if scope == "project":
            return (project or Path.cwd()) / self.folder / self.file
        home = Path(env.get("HOME") or Path.home())
        return (Path(env[self.env]) if env.get(self.env) else home / self.folder) / self.file


AGENTS: tuple[Agent, ...] = (
    Agent(
        name="claude", label="Claude Code", env="CLAUDE_CONFIG_DIR", folder=".claude", file="settings.json",
        events=(Event("PreCompact", "", "pre-compact"), Event("SessionStart", "compact", "session-start"),
                Event("UserPromptSubmit", None, "prompt-submit")),
        statusline=True,
        trust="Claude Code reads its hooks when a session starts: they act from the next session on.",
        budget=9_000,  # hook context past 10,000 characters: 2.0.76 cuts it, 2.1.332 files it and sends 2 KB of it
    ),
    Agent(
        name="codex", label="Codex", env="CODEX_HOME", folder=".codex", file="hooks.json",
        events=(Event("PreCompact", None, "pre-compact"), Event("SessionStart", "compact", "session-start")),
        statusline=False,
        trust="Codex runs a hook only once it is trusted: start `codex`, type /hooks (it says \"2 hooks need review "
              "before they can run\") and press t to trust them (once; again after their command changes). "
              "`codex exec --dangerously-bypass-hook-trust` runs hooks without that step, for automation that vets "
              "its hooks itself.",
        budget=9_000,  # Codex 0.171 cuts hook context past 2,500 tokens (10,000 bytes: it counts 4 bytes a token)
    ),
)


def agent(name: str) -> Agent:
    """The entry of ``name`` (a ValueError naming the known ones)."""
    for a in AGENTS:
        if a.name == name:
            return a
    raise ValueError(f"unknown agent {name!r}; choose one of: {', '.join(a.name for a in AGENTS)}")


def _python() -> str:
    return shlex.quote(sys.executable or "python3")


def hook_command(a: Agent, run: str, *, options: tuple[str, ...] = ()) -> str:
    """The command line an installed hook runs: ``PYTHON -m tcompact hook RUN --agent NAME [OPTIONS]``."""
    return " ".join([_python(), "-m", "tcompact", "hook", run, "--agent", a.name, *map(shlex.quote, options)])


def statusline_command() -> str:
    """The command line of the status line: ``PYTHON -m tcompact statusline``."""
    return f"{_python()} -m tcompact statusline"


def command_kind(command: object) -> str | None:
    """Which tcompact command a hook's command line runs ("pre-compact", …, "statusline"), else None."""
    if not isinstance(command, str) or "tcompact" not in command:
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for n, word in enumerate(words):
        if word == "tcompact" and n and words[n - 1] == "-m" or Path(word).name == "tcompact" and n == 0:
            rest = words[n + 1:n + 3]
            if rest[:1] == ["statusline"]:
                return "statusline"
            if rest[:1] == ["hook"] and rest[1:] and rest[1] in RUNS:
                return rest[1]
            return None
    return None
