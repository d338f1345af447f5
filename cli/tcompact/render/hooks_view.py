"""The output of ``tcompact hooks install|uninstall|status``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text

from . import console, print_json

__all__ = ["hooks_outcomes", "hooks_status"]

_LABELS = {"claude": "Claude Code", "codex": "Codex"}


def hooks_outcomes(outcomes: Sequence[Mapping[str, Any]], *, json_out: bool) -> None:
    """One paragraph per settings file: what was done, the backup, and what the user does next."""
    if json_out:
        print_json({"settings": list(outcomes)})
        return
    out = console()
    for o in outcomes:
        done = f" ({', '.join(o['done'])})" if o["done"] and o["action"] in ("installed", "updated", "removed") else ""
        out.print(Text(f"{_LABELS.get(o['agent'], o['agent'])}, {o['scope']}: {o['action']}{done} — {o['path']}"))
        if o["backup"]:
            out.print(Text(f"  the file as it was before: {o['backup']}"))
        if o["trust"] and o["action"] in ("installed", "updated", "already installed"):
            out.print(Text(f"  {o['trust']}"))
    if any(o["action"] in ("installed", "updated") for o in outcomes):
        out.print(Text("Check with `tcompact hooks status`: after a compaction it lists the snapshot and the handoff "
                       "kept in the state folder, and the hooks' log says what each hook did."))


def hooks_status(doc: Mapping[str, Any], *, json_out: bool) -> None:
    """The settings files with tcompact's hooks, then the state folder."""
    if json_out:
        print_json(doc)
        return
    out = console()
    for row in doc["settings"]:
        out.print(Text(f"{_LABELS.get(row['agent'], row['agent'])}, {row['scope']}: {_settings_line(row)}"))
        if row["hooks"] and row["trust"] and row["agent"] == "codex":
            out.print(Text(f"  {row['trust']}"))
    s = doc["state"]
    out.print(Text(f"State folder {s['folder']}: {s['compactions']} compaction(s) of {s['sessions']} session(s) "
                   f"kept, {s['handoffs']} with a handoff" + (f"; the newest: {s['newest']}" if s["newest"] else "")))
    out.print(Text(f"Log {s['log']}" + (":" if s["recent"] else " (empty)")))
    for line in s["recent"]:
        out.print(Text(f"  {line}"))


def _settings_line(row: Mapping[str, Any]) -> str:
    if not row["exists"]:
        return f"no file — {row['path']}"
    if row["error"]:
        return f"cannot read: {row['error']}"
    hooks = ", ".join(h["event"] + (f" ({h['matcher']})" if h["matcher"] else "") for h in row["hooks"])
    parts = [f"tcompact hooks {hooks}" if hooks else "no tcompact hooks"]
    if row["hooks"] and not row["current"]:
        parts.append("run by another Python than this one (install again to switch)")
    if row["statusline"]:
        parts.append("status line tcompact")
    parts.append(f"{row['other_hooks']} other hook{'' if row['other_hooks'] == 1 else 's'}")
    return "; ".join(parts) + f" — {row['path']}"
