"""Resume a session in the real Claude Code or Codex CLI, offline, and get back what it sent the model.

The promise of ``tcompact compact`` is that the user resumes the compacted file in the agent that
wrote it; this harness checks that with the real clients (installed by
``.ci/install.d/20-npm.sh``; facts in ``../shared/design/REAL-CLIENTS.md``). The model is the one
thing that cannot run here: :class:`~real_clients.server.RecordingServer`, a small server on a
free 127.0.0.1 port, answers in its place and records every request body.

API (four steps: a client, a home, a place, a resume)::

    from real_clients import claude_code, codex, resume_all

    client = claude_code("2.1.332")        # or codex("0.128.0") / codex(CODEX_HOOKS_VERSION); skips (fails under
                                           # TCOMPACT_REQUIRE_NPM) when not installed
    home = client.home(tmp_path / "h")     # a fresh fake HOME with the client's config dir
    home.place(session_file)               # copied to where the client looks for it
    home.place_subagent(agent_file, session_id=sid, agent_id="a1b2")   # Claude Code only
    result = home.resume(sid, "Say OK.")   # one non-interactive resume; a Resume
    result.returncode, result.stdout, result.stderr
    result.requests                        # every Request the client sent, in order
    result.context                         # the request that holds the new prompt (or None)
    result.messages                        # its ``messages`` (Claude) / ``input`` (Codex)

    results = resume_all([lambda: home.resume(sid, "Say OK."), ...])   # two at a time

    # tcompact's hooks (tests/test_real_clients_hooks.py): installed by `tcompact hooks install` in this
    # home, run by the client with this Python; their state folder is home.state (XDG_STATE_HOME)
    home.install_hooks("--timeout", "60")  # Codex then runs with --dangerously-bypass-hook-trust
    home.resume(sid, "/compact")           # Claude Code compacts in print mode
    home.codex_config["model_auto_compact_token_limit"] = 20_000   # Codex compacts when the usage the
    home.tcompact("hooks", "status")       # server reports passes it; tcompact against this home

    # Claude Code 2.0.x resumes a sub-agent when the model calls Task with ``resume``:
    home.place_subagent(agent_file, session_id=sid, agent_id="a83e2917", layout="2.0")
    r = home.resume(sid, "Go on. MARK", responder=task_resume("a83e2917", trigger="MARK", prompt="Continue."))
    r.messages_with("Continue.")           # what the sub-agent sent

Each resume runs the client with an otherwise empty environment: ``HOME``, the config dir
(``CLAUDE_CONFIG_DIR`` / ``CODEX_HOME``), a dummy key, the recording server's base URL, telemetry,
auto-update, error reporting and non-essential traffic off, ``TERM=dumb``, ``PATH`` for ``node``,
stdin closed, and a timeout (:class:`ClientTimeout` when it runs out). Every resume gets its own
server, so two resumes may run at once. Codex 0.169 and later keep a resumed thread's provider, so
their built-in provider is pointed at the server (``openai_base_url``, ``OPENAI_API_KEY``); the
server answers their remote compaction. :func:`session_id` reads a file's session id. The checks
made on what a client sent live in :mod:`real_clients.checks`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools import npm_bin

from .codex_config import builtin_provider, codex_config
from .server import RecordingServer, Request, Responder

__all__ = ["CLAUDE_VERSIONS", "CODEX_VERSION", "CODEX_HOOKS_VERSION", "CLAUDE_MODEL", "Client", "ClientTimeout", "Home",
           "Resume", "Request", "claude_code", "codex", "node_path", "resume_all", "session_id", "task_resume"]

#: The Claude Code releases tested: the last JavaScript one and a native 2.1.x.
CLAUDE_VERSIONS = ("2.0.76", "2.1.332")
CODEX_VERSION = "0.128.0"
#: A Codex release with hooks (PreCompact, SessionStart with source compact): the newest on npm when tested.
CODEX_HOOKS_VERSION = "0.171.0"

CLAUDE_MODEL = "claude-sonnet-4-5-20250929"
_CLAUDE = "@anthropic-ai/claude-code"
_CODEX = "@openai/codex"


class ClientTimeout(AssertionError):
    """The client did not finish within its timeout (it was killed)."""


@dataclass(frozen=True)
class Client:
    """One installed client version: ``kind`` is "claude-code" or "codex"."""

    kind: str
    version: str
    binary: Path

    def home(self, root: Path) -> Home:
        """A fresh fake home under ``root`` (created; it must not exist yet)."""
        return Home(self, Path(root))

    @property
    def label(self) -> str:
        return f"{self.kind} {self.version}"


def claude_code(version: str) -> Client:
    """Claude Code ``version`` as installed by the CI step (skips or fails when it is missing)."""
    return Client("claude-code", version, npm_bin(_CLAUDE, version, "claude"))


def codex(version: str = CODEX_VERSION) -> Client:
    """Codex CLI ``version`` as installed by the CI step (skips or fails when it is missing)."""
    return Client("codex", version, npm_bin(_CODEX, version, "codex"))


@dataclass(frozen=True)
class Resume:
    """What one resume did: exit status, output, and every request the client sent."""

    client: Client
    session_id: str
    prompt: str
    returncode: int
    stdout: str
    stderr: str
    requests: tuple[Request, ...]

    @property
    def context(self) -> dict[str, Any] | None:
        """The model request carrying the new prompt with the most context (the resumed conversation)."""
        return self.request_with(self.prompt)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The resumed context's ``messages`` (Claude Code) or ``input`` items (Codex); [] when none was sent."""
        return self.messages_with(self.prompt)

    def request_with(self, prompt: str) -> dict[str, Any] | None:
        """The model request whose last user message holds ``prompt`` and that has the most context
        (a sub-agent's request holds the prompt its Task call gave it)."""
        key = "messages" if self.client.kind == "claude-code" else "input"
        found = [r.body for r in self.requests if isinstance(r.body, dict) and isinstance(r.body.get(key), list)
                 and not r.path.split("?")[0].endswith("count_tokens") and prompt in _last_user_text(r.body[key])]
        return max(found, key=lambda b: len(b[key]), default=None)

    def messages_with(self, prompt: str) -> list[dict[str, Any]]:
        """The ``messages`` / ``input`` of :meth:`request_with`; [] when no such request was sent."""
        body = self.request_with(prompt)
        return list(body["messages" if self.client.kind == "claude-code" else "input"]) if body else []


class Home:
    """A fake home for one client: ``HOME``, its config dir, a working directory and tcompact's state
    folder (``XDG_STATE_HOME``, where the hooks keep what they save), all under ``root``.

    ``codex_config`` adds ``key = value`` lines to Codex's config.toml (``model_auto_compact_token_limit``
    makes it compact when the usage the server reports passes it)."""

    def __init__(self, client: Client, root: Path) -> None:
        self.client = client
        self.root = root
        self.home = root / "home"
        self.config = root / ("claude" if client.kind == "claude-code" else "codex")
        self.cwd = root / "work"
        self.state = root / "state"
        self.hooked = False
        self.codex_config: dict[str, Any] = {}
        for folder in (self.home, self.config, self.cwd):
            folder.mkdir(parents=True)
        if client.kind == "claude-code":
            (self.home / ".claude.json").write_text(json.dumps({"hasCompletedOnboarding": True}))

    @property
    def env(self) -> dict[str, str]:
        """What tcompact needs to find this home's sessions, settings and state folder."""
        agent = "CLAUDE_CONFIG_DIR" if self.client.kind == "claude-code" else "CODEX_HOME"
        return {"HOME": str(self.home), agent: str(self.config), "XDG_STATE_HOME": str(self.state)}

    def tcompact(self, *args: str) -> Any:
        """``tcompact ARGS`` against this home (in this process: the hooks it installs run this Python)."""
        from typer.testing import CliRunner

        from tcompact.app import app

        return CliRunner().invoke(app, list(args), env=self.env)

    def install_hooks(self, *options: str) -> Any:
        """``tcompact hooks install --agent A OPTIONS`` in this home; the client then runs the hooks (Codex
        with ``--dangerously-bypass-hook-trust``, the step a user takes in /hooks)."""
        result = self.tcompact("hooks", "install", "--agent", "claude" if self.client.kind == "claude-code"
                               else "codex", *options)
        assert result.exit_code == 0, result.output
        self.hooked = True
        return result

    @property
    def project_dir(self) -> Path:
        """Claude Code's folder for sessions started in :attr:`cwd`."""
        return self.config / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(self.cwd))

    def place(self, path: Path, *, session: str | None = None) -> Path:
        """Copy a session file (Claude Code) or rollout (Codex) to where the client looks for ``session``
        (default: the file's own session id); returns the new path."""
        sid = session or session_id(path)
        if self.client.kind == "claude-code":
            target = self.project_dir / f"{sid}.jsonl"
        else:
            first = json.loads(Path(path).read_text(encoding="utf-8").split("\n", 1)[0])
            ts = str(first["payload"].get("timestamp") or first["timestamp"])
            target = (self.config / "sessions" / ts[:4] / ts[5:7] / ts[8:10]
                      / f"rollout-{ts[:19].replace(':', '-')}-{sid}.jsonl")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        return target

    def place_subagent(self, path: Path, *, session_id: str, agent_id: str, layout: str = "2.1") -> Path:
        """Copy a Claude Code sub-agent file where Claude Code keeps it: ``<session>/subagents/agent-<id>.jsonl``
        (``layout="2.1"``) or ``agent-<id>.jsonl`` beside the session (``layout="2.0"``)."""
        if self.client.kind != "claude-code":
            raise ValueError("only Claude Code keeps sub-agent files")
        folder = self.project_dir / session_id / "subagents" if layout == "2.1" else self.project_dir
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"agent-{agent_id}.jsonl"
        shutil.copyfile(path, target)
        return target

    def resume(self, session: str, prompt: str, *, timeout: float = 90.0, responder: Responder | None = None
               ) -> Resume:
        """Resume ``session`` non-interactively with ``prompt`` against a fresh recording server
        (``responder`` scripts its Messages API answers, see :mod:`real_clients.server`)."""
        with RecordingServer(responder=responder) as server:
            argv, env = self._command(session, prompt, server.base_url)
            try:
                done = subprocess.run(argv, cwd=self.cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                                      text=True, timeout=timeout, check=False)
            except subprocess.TimeoutExpired as exc:
                raise ClientTimeout(f"{self.client.label} did not finish resuming {session} in {timeout} s; "
                                    f"stderr: {_text(exc.stderr)[-2000:]}") from None
            return Resume(self.client, session, prompt, done.returncode, done.stdout, done.stderr,
                          tuple(server.requests))

    def _command(self, session: str, prompt: str, base_url: str) -> tuple[list[str], dict[str, str]]:
        env = {"HOME": str(self.home), "TERM": "dumb", "PATH": node_path(), "XDG_STATE_HOME": str(self.state)}
        if self.client.kind == "claude-code":
            env |= {"CLAUDE_CONFIG_DIR": str(self.config), "ANTHROPIC_API_KEY": "sk-ant-dummy",
                    "ANTHROPIC_BASE_URL": base_url, "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_ERROR_REPORTING": "1"}
            return [str(self.client.binary), "--resume", session, "-p", prompt, "--output-format", "json",
                    "--model", CLAUDE_MODEL], env
        builtin = builtin_provider(self.client.version)
        (self.config / "config.toml").write_text(codex_config(base_url, builtin=builtin, extra=self.codex_config))
        env |= {"CODEX_HOME": str(self.config), "OPENAI_API_KEY" if builtin else "MOCK_API_KEY": "dummy"}
        trust = ["--dangerously-bypass-hook-trust"] if self.hooked else []
        return [str(self.client.binary), "exec", "--skip-git-repo-check", *trust, "resume", session, prompt], env


def task_resume(agent_id: str, *, trigger: str, prompt: str) -> Responder:
    """A responder that makes Claude Code 2.0.x resume sub-agent ``agent_id``: the main loop's request whose
    last message holds ``trigger`` is answered with a Task call (``resume``: the agent id, ``prompt``: what
    the sub-agent is told), every other request with plain text. The sub-agent's own request is then
    ``Resume.request_with(prompt)``. (2.1.x resumes a sub-agent only through SendMessage to a running one.)"""
    def respond(body: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        messages = body.get("messages") or []
        last = json.dumps(messages[-1]) if messages else ""
        if body.get("tools") and trigger in last and "tool_result" not in last:
            return [{"type": "tool_use", "id": "toolu_tcompact_task_resume", "name": "Task",
                     "input": {"description": "Resume the sub-agent", "prompt": prompt,
                               "subagent_type": "general-purpose", "resume": agent_id}}]
        return None
    return respond


def resume_all(jobs: Sequence[Callable[[], Resume]], *, workers: int = 2) -> list[Resume]:
    """Run resume jobs ``workers`` at a time (the machine has two cores); results in the order of ``jobs``."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda job: job(), jobs))


def session_id(path: Path) -> str:
    """The session id of a Claude Code file (first ``sessionId``) or a Codex rollout (``session_meta`` id)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line) if line.strip() else {}
            if d.get("type") == "session_meta":
                return str(d["payload"]["id"])
            if isinstance(d.get("sessionId"), str):
                return d["sessionId"]
    raise ValueError(f"{path}: no session id")


def node_path() -> str:
    """A PATH that finds ``node`` (the JavaScript clients' interpreter) and the basic tools, nothing else."""
    node = shutil.which("node")
    folders = [str(Path(node).parent)] if node else []
    return os.pathsep.join(dict.fromkeys([*folders, "/usr/bin", "/bin"]))


def _last_user_text(items: list[Any]) -> str:
    """The text of the last user message (Claude) or item (Codex), all its text parts joined."""
    for item in reversed(items):
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            return "\n".join(str(p.get("text", "")) for p in content or () if isinstance(p, dict))
    return ""


def _text(value: bytes | str | None) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else value or ""
