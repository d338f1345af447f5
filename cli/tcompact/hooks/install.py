"""``tcompact hooks install | status | uninstall``: tcompact's entries in an agent's settings file.

The text edits are :mod:`.settings`'; this is the file side. Before a settings file changes, its
bytes are copied to ``hooks/backups/`` in the state folder, and ``hooks/installs.json`` there
records, per settings file, whether it existed, that backup, the containers that were empty before
(and their whitespace), a replaced ``statusLine`` and the SHA-256 of the bytes written. Uninstall
then puts the backup back byte for byte when the file is still exactly what install wrote (and
deletes a file or folder install created); when someone changed it since, it removes tcompact's
entries from the text as it is now, with the record's help. An install that would change nothing
writes nothing, not even a backup.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..artifacts import make_folder, remove, write_bytes, write_json
from ..errors import InputError, UsageError
from . import settings, state
from .agents import Agent, hook_command, statusline_command

__all__ = ["Outcome", "install", "uninstall", "status", "records_path"]

_BOM = "\ufeff"


@dataclass
class Outcome:
    """What one install or uninstall did to one settings file."""

    agent: str
    scope: str
    path: str
    action: str
    done: list[str] = field(default_factory=list)
    backup: str | None = None
    trust: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "scope": self.scope, "path": self.path, "action": self.action,
                "done": self.done, "backup": self.backup, "trust": self.trust or None}


def records_path(env: Mapping[str, str] | None = None) -> Path:
    """Where what install changed is recorded."""
    return state.state_root(env) / "hooks" / "installs.json"


def _records(env: Mapping[str, str] | None) -> dict[str, Any]:
    import json

    try:
        data = json.loads(records_path(env).read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the install records: {exc}", path=str(records_path(env)),
                         hint="move the file away (uninstall then removes tcompact's entries without it)") from None
    return data if isinstance(data, dict) else {}


def _read(path: Path) -> tuple[bytes | None, str]:
    if not path.exists():
        return None, settings.EMPTY_DOCUMENT
    if not path.is_file():
        raise InputError("the settings path is not a file", path=str(path), hint="move it away")
    data = path.read_bytes()
    try:
        return data, data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("the settings file is not UTF-8", path=str(path), hint="fix the file") from None


def _backup(a: Agent, scope: str, data: bytes, path: Path, env: Mapping[str, str] | None) -> Path:
    folder = make_folder(state.state_root(env) / "hooks" / "backups")
    base = f"{a.name}-{scope}-{state.stamp()}-{path.name}"
    target, n = folder / base, 1
    while target.exists():
        n += 1
        target = folder / f"{base}.{n}"
    return write_bytes(target, data)


def install(a: Agent, scope: str, *, statusline: bool = False, force: bool = False, options: tuple[str, ...] = (),
            env: Mapping[str, str] | None = None, project: Path | None = None) -> Outcome:
    """Merge tcompact's hooks (and, with ``statusline``, its status line) into the agent's settings."""
    if statusline and not a.statusline:
        raise UsageError(f"--statusline is for Claude Code; {a.label} has no status line command")
    path = a.settings_path(scope, env=env, project=project)
    original, text = _read(path)
    bom = text.startswith(_BOM)
    commands = {ev.run: hook_command(a, ev.run, options=options) for ev in a.events}
    plan = settings.install(text.removeprefix(_BOM), a, commands, statusline=statusline_command() if statusline
                            else None, force=force, path=str(path))
    out = Outcome(a.name, scope, str(path), "already installed", plan.done, trust=a.trust)
    if original is not None and (_BOM if bom else "") + plan.text == text:
        return out
    records = _records(env)
    key = str(path.absolute())
    had = original is not None and bool(settings.installed(text.removeprefix(_BOM))["hooks"])
    earlier = records.get(key) if had else None
    backup = _backup(a, scope, original, path, env) if original is not None else None
    made = None if path.parent.exists() else str(_topmost_missing(path.parent))
    make_folder(path.parent)
    data = ((_BOM if bom else "") + plan.text).encode("utf-8")
    write_bytes(path, data, force=True)
    record = earlier or {"agent": a.name, "scope": scope, "existed": original is not None,
                         "backup": str(backup) if backup else None, "folder_made": made, "kept_empty": {},
                         "replaced": {}}
    record["kept_empty"] = {**plan.kept_empty, **record["kept_empty"]}
    record["replaced"] = {**plan.replaced, **record["replaced"]}
    record["written"] = hashlib.sha256(data).hexdigest()
    write_json(records_path(env), {**records, key: record}, force=True)
    out.action, out.backup = ("updated" if had else "installed"), str(backup) if backup else None
    return out


def _topmost_missing(folder: Path) -> Path:
    while not folder.parent.exists():
        folder = folder.parent
    return folder


def uninstall(a: Agent, scope: str, *, env: Mapping[str, str] | None = None, project: Path | None = None) -> Outcome:
    """Remove tcompact's hooks and status line from the agent's settings, leaving the rest as it was."""
    path = a.settings_path(scope, env=env, project=project)
    out = Outcome(a.name, scope, str(path), "no file")
    original, text = _read(path)
    records = _records(env)
    key = str(path.absolute())
    record = records.pop(key, None) or {}
    if original is None:
        return out
    found = settings.installed(text.removeprefix(_BOM), path=str(path))
    if not found["hooks"] and not found["statusline"]:
        out.action = "not installed"
        return out
    out.backup = str(_backup(a, scope, original, path, env))
    out.action = "removed"
    if record.get("written") == hashlib.sha256(original).hexdigest() and _restore(path, record):
        out.done = ["restored the file as it was before install"]
    else:
        bom = _BOM if text.startswith(_BOM) else ""
        new, out.done = settings.uninstall(text.removeprefix(_BOM), kept_empty=record.get("kept_empty"),
                                           replaced=record.get("replaced"), path=str(path))
        if record.get("existed") is False and new.strip() == settings.EMPTY_DOCUMENT.strip():
            _restore(path, record)
        else:
            write_bytes(path, (bom + new).encode("utf-8"), force=True)
    write_json(records_path(env), records, force=True)
    return out


def _restore(path: Path, record: Mapping[str, Any]) -> bool:
    """The settings file as it was before install: its backup, or no file (and no folder) at all."""
    if record.get("existed"):
        try:
            data = Path(str(record["backup"])).read_bytes()
        except (OSError, KeyError):
            return False
        write_bytes(path, data, force=True)
        return True
    remove(path)
    made = record.get("folder_made")
    if made:
        folder = path.parent
        while folder.is_relative_to(made) and not any(folder.iterdir()):
            folder.rmdir()
            if folder == Path(made):
                break
            folder = folder.parent
    return True


def status(a: Agent, scope: str, *, env: Mapping[str, str] | None = None, project: Path | None = None
           ) -> dict[str, Any]:
    """What of tcompact's the agent's settings file of ``scope`` holds."""
    path = a.settings_path(scope, env=env, project=project)
    row: dict[str, Any] = {"agent": a.name, "scope": scope, "path": str(path), "exists": path.is_file(),
                           "hooks": [], "statusline": None, "other_hooks": 0, "error": None,
                           "trust": a.trust or None}
    if row["exists"]:
        try:
            row |= settings.installed(_read(path)[1].removeprefix(_BOM), path=str(path))
        except InputError as exc:
            row["error"] = str(exc)
    row["current"] = all(c["command"] == hook_command(a, c["run"], options=_options_of(c["command"]))
                         for c in row["hooks"])
    return row


def _options_of(command: str) -> tuple[str, ...]:
    import shlex

    words = shlex.split(command)
    return tuple(words[words.index("--agent") + 2:]) if "--agent" in words else ()
