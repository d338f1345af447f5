"""The sessions on this machine: find them, select them, price them, fork them.

The small API other commands build on (``inspect``, ``compact`` and ``eval`` take the same
selectors)::

    from tcompact.sessions import make_selector, find_sessions, session_files

    sel = make_selector(agent="claude", since="20260101", last=3)
    for s in find_sessions(sel):          # Session: agent, id, main, subagents, project, first, last
        print(s.id, s.project, s.last)
    paths = session_files(sel)            # the main file of each selected session, newest first

``env`` (default ``os.environ``) names the stores through ``HOME``, ``CLAUDE_CONFIG_DIR`` and
``CODEX_HOME``; tests pass their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .select import Selector, make_selector, select
from .stores import AGENTS, CLAUDE, CODEX, Session, Stores, discover, stores_from_env

__all__ = ["Selector", "Session", "Stores", "make_selector", "find_sessions", "select_sessions", "session_files",
           "one_session", "stores_from_env", "discover", "AGENTS", "CLAUDE", "CODEX"]


def find_sessions(selector: Selector | None = None, *, env: Mapping[str, str] | None = None,
                  cwd: str | None = None, empty_ok: bool = False) -> list[Session]:
    """The selected sessions of both agents' stores, newest last activity first.

    Raises InputError when the stores hold no session, and when nothing matches the selector unless
    ``empty_ok`` (a listing, which is then empty).
    """
    return select_sessions(selector, env=env, cwd=cwd, empty_ok=empty_ok)[0]


def select_sessions(selector: Selector | None = None, *, env: Mapping[str, str] | None = None,
                    cwd: str | None = None, empty_ok: bool = False) -> tuple[list[Session], list[Session]]:
    """:func:`find_sessions`, and every session of the stores (the ones a fork's original may be among)."""
    stores = stores_from_env(env)
    sessions = discover(stores)
    if not sessions:
        from ..errors import InputError

        looked = ", ".join(str(d) for d in (*stores.claude, *stores.codex))
        raise InputError(f"no Claude Code or Codex sessions found (looked in {looked})",
                         hint="give a PATH, or set CLAUDE_CONFIG_DIR / CODEX_HOME to where your sessions are")
    return select(sessions, selector or Selector(), cwd=cwd, empty_ok=empty_ok), sessions


def session_files(selector: Selector | None = None, *, env: Mapping[str, str] | None = None,
                  cwd: str | None = None) -> list[Path]:
    """The main transcript file of each selected session (a session with only sub-agent files gives its first)."""
    return [s.files[0] for s in find_sessions(selector, env=env, cwd=cwd) if s.files]


def one_session(path: Path | None, selector: Selector, *, env: Mapping[str, str] | None = None,
                cwd: str | None = None) -> Session:
    """The one session a command works on: the store session whose main file is ``path``, or the
    one the selector names (it must name exactly one)."""
    from ..errors import InputError, UsageError

    if path is not None:
        wanted = path.resolve()
        for s in discover(stores_from_env(env)):
            if s.main is not None and s.main.resolve() == wanted:
                return s
        raise InputError("this file is not a session of the Claude Code or Codex stores on this machine",
                         path=str(path), hint="name a stored session with --session ID (see `tcompact inspect`)")
    if not selector.narrows:
        raise UsageError("name the session: a PATH, or --session ID (or --session last)",
                         hint="`tcompact inspect` lists the sessions on this machine")
    found = find_sessions(selector, env=env, cwd=cwd)
    if len(found) > 1:
        shown = ", ".join(s.id[:8] for s in found[:5]) + (", …" if len(found) > 5 else "")
        raise UsageError(f"{len(found)} sessions match ({shown}); this command works on one",
                         hint="name it with --session ID or --session last")
    return found[0]
