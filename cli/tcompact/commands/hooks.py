"""``tcompact hooks install|status|uninstall``, ``tcompact hook …`` and ``tcompact statusline``: live use.

``hook`` and ``statusline`` are what the agent runs; :mod:`tcompact.launch` runs them without this
module (it is here for their ``--help``, and for a run through the command line, which does the same).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ._help import Group
from ._options import JsonOpt

hooks_app = typer.Typer(
    name="hooks", no_args_is_help=True, cls=Group,
    help="Put tcompact into the agents' own compaction.\n\nClaude Code and Codex: before each compaction the "
         "transcript is kept in tcompact's state folder; after it, a handoff built from it is injected.")
hook_app = typer.Typer(
    name="hook", no_args_is_help=True, cls=Group,
    help="What the installed hooks run.\n\nEach reads the agent's hook payload on stdin and always exits 0.")

AgentOpt = Annotated[str | None, typer.Option("--agent", help="claude or codex (default: install for those whose "
                                              "config folder exists; status and uninstall look at both).",
                                              show_default=False)]
ScopeOpt = Annotated[str, typer.Option("--scope", help="user (the agent's own config folder) or project (.claude/ "
                                       "or .codex/ of the project folder).")]
ProjectOpt = Annotated[Path | None, typer.Option("--project", help="The project folder of --scope project "
                                                 "(default: the current folder).", show_default=False)]
StatuslineOpt = Annotated[bool, typer.Option("--statusline", help="Also set Claude Code's statusLine to "
                                             "`tcompact statusline`.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace a statusLine of the user's (uninstall puts it "
                                        "back).")]
BudgetOpt = Annotated[int | None, typer.Option("--budget", help="Bytes of the handoff (UTF-8: characters of "
                                               "English text; default 9,000 — both agents cut or file away hook "
                                               "context past 10,000; at least 2,000).", show_default=False)]
TimeoutOpt = Annotated[float | None, typer.Option("--timeout", help="Seconds a hook may take before it gives up "
                                                  "and injects nothing (default 5).", show_default=False)]
HookAgentOpt = Annotated[str, typer.Option("--agent", help="claude or codex: the agent that runs the hook.")]
TriggerOpt = Annotated[float, typer.Option("--trigger", help="Context used, in percent, past which the line says "
                                           "a compaction is near.")]


def _agents(name: str | None, *, detect: bool) -> list:
    from ..errors import UsageError
    from ..hooks.agents import AGENTS, agent

    if name is not None:
        try:
            return [agent(name)]
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    if not detect:
        return list(AGENTS)
    found = [a for a in AGENTS if a.settings_path("user").parent.is_dir()]
    if not found:
        raise UsageError("found neither ~/.claude nor ~/.codex", hint="say which agent with --agent claude|codex")
    return found


def _scope(scope: str) -> str:
    from ..errors import UsageError
    from ..hooks.agents import SCOPES

    if scope not in SCOPES:
        raise UsageError(f"unknown --scope {scope!r}", hint=f"use {' or '.join(SCOPES)}")
    return scope


@hooks_app.command("install")
def install(agent: AgentOpt = None, scope: ScopeOpt = "user", project: ProjectOpt = None,
            statusline: StatuslineOpt = False, force: ForceOpt = False, budget: BudgetOpt = None,
            timeout: TimeoutOpt = None, json_out: JsonOpt = False) -> None:
    """Merge tcompact's hooks into the agent's settings.

    Claude Code: PreCompact, SessionStart (compact) and UserPromptSubmit in settings.json; Codex:
    PreCompact and SessionStart (compact) in hooks.json. Everything else in the file stays as it was;
    the file is backed up first; a second install changes nothing. The hooks run this Python with -m
    tcompact. Codex runs them once they are trusted in /hooks.

    Examples:

    \b
      tcompact hooks install --agent claude --statusline
      tcompact hooks install --agent codex --scope project
    """
    from .. import render
    from ..errors import UsageError
    from ..hooks.events import HookError
    from ..hooks.install import install as run
    from ..hooks.run import parse_options

    options = (*(("--budget", str(budget)) if budget is not None else ()),
               *(("--timeout", f"{timeout:g}") if timeout is not None else ()))
    try:
        parse_options(["session-start", *options])  # the values the hooks will be given must be valid
    except HookError as exc:
        raise UsageError(str(exc)) from None
    outcomes = [run(a, _scope(scope), statusline=statusline and (a.statusline or agent is not None), force=force,
                    options=options, project=project) for a in _agents(agent, detect=True)]
    render.hooks_outcomes([o.as_dict() for o in outcomes], json_out=json_out)


@hooks_app.command("status")
def status(agent: AgentOpt = None, project: ProjectOpt = None, json_out: JsonOpt = False) -> None:
    """Show which of tcompact's hooks are installed where, and what they did lately.

    One row per agent and scope (user, project): the settings file, tcompact's hooks in it, its status
    line, the other hooks there; then the state folder: the compactions kept and the last lines of
    the hooks' log.

    Example:

    \b
      tcompact hooks status --json
    """
    from .. import render
    from ..hooks.agents import SCOPES
    from ..hooks.install import status as row
    from ..hooks.report import state_summary

    rows = [row(a, s, project=project) for a in _agents(agent, detect=False) for s in SCOPES]
    render.hooks_status({"settings": rows, "state": state_summary()}, json_out=json_out)


@hooks_app.command("uninstall")
def uninstall(agent: AgentOpt = None, scope: ScopeOpt = "user", project: ProjectOpt = None,
              json_out: JsonOpt = False) -> None:
    """Remove tcompact's hooks (and status line) from the agent's settings.

    Only tcompact's entries go; a file still as install left it gets back exactly the bytes it had
    before install. The state folder (snapshots, handoffs, log) is kept.

    Example:

    \b
      tcompact hooks uninstall --agent claude
    """
    from .. import render
    from ..hooks.install import uninstall as run

    outcomes = [run(a, _scope(scope), project=project) for a in _agents(agent, detect=False)]
    render.hooks_outcomes([o.as_dict() for o in outcomes], json_out=json_out)


def _hook(run: str, agent: str, budget: int | None, timeout: float | None) -> None:
    from ..hooks.run import run_hook

    argv = [run, "--agent", agent, *(["--budget", str(budget)] if budget is not None else []),
            *(["--timeout", repr(timeout)] if timeout is not None else [])]
    run_hook(argv, stdin=sys.stdin.buffer, stdout=sys.stdout, stderr=sys.stderr)


@hook_app.command("pre-compact")
def pre_compact(agent: HookAgentOpt = "claude", budget: BudgetOpt = None, timeout: TimeoutOpt = None) -> None:
    """Keep the transcript as it stands before the agent compacts it.

    Reads the PreCompact payload (session_id, transcript_path, trigger) on stdin and copies the
    transcript, with the payload, to a new folder of tcompact's state folder. Prints nothing.
    """
    _hook("pre-compact", agent, budget, timeout)


@hook_app.command("session-start")
def session_start(agent: HookAgentOpt = "claude", budget: BudgetOpt = None, timeout: TimeoutOpt = None) -> None:
    """Print the handoff for the agent to inject after its compaction.

    Reads the SessionStart payload (source compact) on stdin, builds the handoff from the transcript
    kept before the compaction and prints it as hookSpecificOutput.additionalContext.
    """
    _hook("session-start", agent, budget, timeout)


@hook_app.command("prompt-submit")
def prompt_submit(agent: HookAgentOpt = "claude", budget: BudgetOpt = None, timeout: TimeoutOpt = None) -> None:
    """Give a pending handoff with the next prompt, where the client lost it.

    Claude Code 2.0 keeps SessionStart context in memory only: after a compaction in another
    process, the next prompt carries the handoff instead, once.
    """
    _hook("prompt-submit", agent, budget, timeout)


def statusline(trigger: TriggerOpt = 80.0) -> None:
    """Print Claude Code's status line.

    Context used, session cost, compactions and handoffs so far, and a hint past the trigger.

    Reads the JSON Claude Code pipes to its statusLine command on stdin and prints one line.

    Example:

    \b
      tcompact hooks install --agent claude --statusline
    """
    from ..hooks.statusline import run_statusline

    run_statusline(["--trigger", repr(trigger)], stdin=sys.stdin.buffer, stdout=sys.stdout, stderr=sys.stderr)


def register(app: typer.Typer) -> None:
    """Add the commands to the app."""
    app.add_typer(hooks_app, name="hooks")
    app.add_typer(hook_app, name="hook")
    app.command("statusline")(statusline)
