"""What each ``tcompact hook`` command does with the payload the agent gives it, and what it prints.

- ``pre-compact`` (PreCompact, before the agent summarises): a byte copy of the transcript and the
  payload go into a new folder of the state folder (:mod:`.state`); nothing is printed.
- ``session-start`` (SessionStart with source ``compact``, right after the compaction): the
  handoff (:mod:`.handoff`) is built from that copy (or from the transcript, read through the
  compaction, when there is none), kept beside it as ``handoff.md``, and printed in the form both
  agents inject: ``{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": …}}``.
- ``prompt-submit`` (Claude Code's UserPromptSubmit): Claude Code 2.1 writes SessionStart context into
  the session (an ``attachment`` line of type ``hook_additional_context``) and sends it on every later
  resume; 2.0 keeps it in memory, so a compaction in one process (``claude -p /compact``) and the next
  prompt in another lose it. session-start therefore leaves a ``pending.json`` for Claude Code, and the
  next prompt's hook gives the handoff once — unless it runs in the process that compacted (the
  context reached that prompt already) or the session file shows the attachment (the client keeps it).

Every handler returns what to print and a short outcome for the log; a problem is a :class:`HookError`.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import state
from .agents import agent

__all__ = ["Options", "HookError", "HANDLERS", "inject", "DEFAULT_TIMEOUT"]

DEFAULT_TIMEOUT = 5.0
#: A PreCompact copy older than this (seconds) is of an earlier compaction whose SessionStart never came.
FRESH = 1800
_ATTACHMENT = b'"hook_additional_context"'


class HookError(Exception):
    """The hook cannot do its work (bad payload, unreadable transcript): nothing is injected."""


@dataclass(frozen=True)
class Options:
    """The options of ``tcompact hook``: the agent, the handoff's budget in bytes, the time limit."""

    agent: str = "claude"
    budget: int = 9_000
    timeout: float = DEFAULT_TIMEOUT


def inject(event: str, text: str) -> str:
    """The JSON both agents take as context for the model."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}, ensure_ascii=False)


def _field(payload: Mapping[str, Any], key: str) -> str:
    value = payload.get(key)
    if not isinstance(value, str) or not value:
        raise HookError(f"the payload has no {key}")
    return value


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise HookError(f"cannot read the transcript {path}: {exc.strerror or exc}") from None


def pre_compact(payload: Mapping[str, Any], opts: Options, env: Mapping[str, str]) -> tuple[str, str]:
    """Keep the transcript as it stands, with the payload."""
    from ..artifacts import make_folder, write_bytes, write_json

    session, path = _field(payload, "session_id"), _field(payload, "transcript_path")
    data = _read(path)
    folder = make_folder(state.new_snapshot_dir(opts.agent, session, str(payload.get("trigger") or ""), env=env))
    write_bytes(folder / Path(path).name, data, sync=False)
    write_json(folder / state.SNAPSHOT_PAYLOAD, {"payload": dict(payload), "agent": opts.agent, "transcript": path,
                                                 "bytes": len(data), "taken_at": state.stamp(),
                                                 "snapshot": Path(path).name}, sync=False)
    return "", f"snapshot of {len(data):,} bytes in {folder}"


def session_start(payload: Mapping[str, Any], opts: Options, env: Mapping[str, str]) -> tuple[str, str]:
    """Build the handoff, keep it, print it for the agent."""
    from ..artifacts import make_folder, write_bytes, write_json
    from .handoff import handoff_text, read_messages

    session, transcript = _field(payload, "session_id"), _field(payload, "transcript_path")
    if payload.get("source", "compact") != "compact":
        return "", f"source {payload.get('source')!r}: nothing to do"
    kept = _fresh_snapshot(opts.agent, session, env)
    if kept is not None:
        folder, source = kept
    else:
        _read(transcript)  # the one error a missing transcript gives
        source = Path(transcript)
        folder = make_folder(state.new_snapshot_dir(opts.agent, session, "compact", env=env))
        write_json(folder / state.SNAPSHOT_PAYLOAD, {"payload": dict(payload), "agent": opts.agent,
                                                     "transcript": transcript, "snapshot": None,
                                                     "taken_at": state.stamp()}, sync=False)
    try:
        messages = read_messages(source)
    except Exception as exc:  # noqa: BLE001 (a transcript tcompact cannot read: nothing injected)
        write_bytes(folder / state.FAILED_FILE, f"{exc}\n".encode(), force=True, sync=False)  # not used again
        raise HookError(f"cannot read the transcript {source}: {exc}") from None
    text = handoff_text(messages, budget=opts.budget, snapshot=str(source))
    write_bytes(folder / state.HANDOFF_FILE, text.encode("utf-8"), force=True, sync=False)
    if any(ev.run == "prompt-submit" for ev in agent(opts.agent).events):
        write_json(state.session_dir(opts.agent, session, env=env) / state.PENDING_FILE,
                   {"handoff": str(folder / state.HANDOFF_FILE), "client": _client(), "transcript": transcript,
                    "offset": _size(transcript)}, force=True, sync=False)
    size = len(text.encode("utf-8", "surrogatepass"))
    return inject("SessionStart", text), f"handoff of {size:,} bytes from {len(messages)} messages"


def _fresh_snapshot(agent: str, session: str, env: Mapping[str, str]) -> tuple[Path, Path] | None:
    """(folder, transcript copy) of this compaction's PreCompact: the session's newest compaction folder
    when it has a copy, no handoff (nor a failed attempt at one) yet, and was made within :data:`FRESH`
    seconds; else None."""
    found = state.snapshots(agent, session, env=env)
    if not found or any((found[-1] / name).exists() for name in (state.HANDOFF_FILE, state.FAILED_FILE)):
        return None
    payload = found[-1] / state.SNAPSHOT_PAYLOAD
    try:
        name = json.loads(payload.read_bytes()).get("snapshot")
        fresh = time.time() - payload.stat().st_mtime < FRESH
    except (OSError, ValueError, AttributeError):
        return None
    copy = found[-1] / name if isinstance(name, str) and name else None
    return (found[-1], copy) if fresh and copy is not None and copy.is_file() else None


def prompt_submit(payload: Mapping[str, Any], opts: Options, env: Mapping[str, str]) -> tuple[str, str]:
    """Give a pending handoff once, where the client would not send it otherwise."""
    session = _field(payload, "session_id")
    pending = state.session_dir(opts.agent, session, env=env) / state.PENDING_FILE
    try:
        note = json.loads(pending.read_bytes())
    except FileNotFoundError:
        return "", ""  # the usual case: nothing pending, and nothing logged
    except (OSError, ValueError) as exc:
        raise HookError(f"cannot read {pending}: {exc}") from None
    from ..artifacts import remove

    remove(pending)
    if note.get("client") and note.get("client") == _client():
        return "", "handoff already given by SessionStart in this process"
    if _attached(str(note.get("transcript") or ""), int(note.get("offset") or 0)):
        return "", "handoff kept in the session by the client (hook_additional_context)"
    try:
        text = Path(str(note["handoff"])).read_text(encoding="utf-8")
    except (OSError, KeyError) as exc:
        raise HookError(f"cannot read the pending handoff: {exc}") from None
    return inject("UserPromptSubmit", text), f"pending handoff of {len(text.encode()):,} bytes given with this prompt"


def _attached(transcript: str, offset: int) -> bool:
    """Whether the session file, after ``offset``, holds tcompact's handoff as hook context."""
    try:
        with open(transcript, "rb") as fh:
            fh.seek(offset)
            tail = fh.read()
    except OSError:
        return False
    tag = b"<tcompact_handoff>"
    return any(_ATTACHMENT in line and tag in line for line in tail.splitlines())


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _client() -> str | None:
    """The agent process that runs this hook (the first ancestor that is not a shell), as ``pid:start``."""
    pid = os.getppid()
    for _ in range(4):
        info = _process(pid)
        if info is None:
            return None
        parent, name, started = info
        if name not in ("sh", "bash", "dash", "zsh", "fish"):
            return f"{pid}:{started}"
        pid = parent
    return None


def _process(pid: int) -> tuple[int, str, str] | None:
    """(parent pid, name, start time) of a process, from /proc (Linux) or ps."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
        name = raw[raw.index("(") + 1:raw.rindex(")")]
        fields = raw[raw.rindex(")") + 2:].split()
        return int(fields[1]), name, fields[19]
    except (OSError, ValueError, IndexError):
        pass
    import subprocess

    try:
        out = subprocess.run(["ps", "-o", "ppid=,lstart=,comm=", "-p", str(pid)], capture_output=True, text=True,
                             timeout=2, check=False).stdout.split()
        return int(out[0]), Path(out[-1]).name, " ".join(out[1:-1])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return None


HANDLERS: dict[str, Callable[[Mapping[str, Any], Options, Mapping[str, str]], tuple[str, str]]] = {
    "pre-compact": pre_compact, "session-start": session_start, "prompt-submit": prompt_submit}
