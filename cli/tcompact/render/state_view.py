"""The terminal view of what tcompact keeps of the sessions it forked or replaced (``restore --list``,
``restore --clean``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table
from rich.text import Text

from . import console

__all__ = ["kept_view", "cleaned_view"]

_AGE_WORDS = {"m": "minute(s)", "h": "hour(s)", "d": "day(s)", "w": "week(s)"}


def kept_view(doc: Mapping[str, Any]) -> None:
    """One row per run of the state folder, per copy the live hooks kept and per in-place backup: when, what, how
    big, where."""
    out = console()
    rows = doc["entries"]
    live = sum(1 for e in rows if e["kind"] == "pre-compaction")
    runs = sum(1 for e in rows if e["kind"] not in ("backup", "pre-compaction"))
    if not rows:
        what = f"is older than {_age(doc['older_than'])}" if doc["older_than"] else "is kept"
        out.print(Text(f"tcompact keeps nothing: {doc['state']} holds no run, and no session has an in-place backup"
                       if not doc["older_than"] else f"Nothing tcompact keeps {what}"))
        return
    hooks = f", {live} copy(ies) the live hooks kept before an agent's compaction" if live else ""
    out.print(Text(f"tcompact keeps {runs} run(s) in {doc['state']}{hooks} and {len(rows) - runs - live} in-place "
                   f"backup(s) beside their sessions: {doc['total_bytes']:,} bytes"
                   + (f", older than {_age(doc['older_than'])}" if doc["older_than"] else "")))
    table = Table(show_header=True, title_justify="left")
    for col, justify in (("created (UTC)", "left"), ("kind", "left"), ("session", "left"), ("bytes", "right"),
                         ("holds", "left"), ("path", "left")):
        table.add_column(col, justify=justify, overflow="fold", no_wrap=col != "holds" and col != "path")  # type: ignore[arg-type]
    state = doc["state"].rstrip("/") + "/"
    for e in rows:  # a run's path is shown from the state folder (the line above names it), a backup's whole
        path = e["path"].removeprefix(state) if e["kind"] != "backup" else e["path"]
        table.add_row(e["created"][:16].replace("T", " "), e["kind"], f"{e['agent']} {e['session'][:8]}",
                      f"{e['bytes']:,}", e["holds"], path)
    out.print(table)
    out.print(Text("`tcompact restore --clean --older-than AGE` removes what is older than AGE (30d, 12h); a "
                   "removed backup can no longer be restored"))


def cleaned_view(doc: Mapping[str, Any]) -> None:
    """What ``--clean`` removed."""
    out = console()
    gone = doc["removed"]
    if not gone:
        out.print(Text(f"Removed nothing: no entry is older than {_age(doc['older_than'])}"))
        return
    out.print(Text(f"Removed {len(gone)} entr{'y' if len(gone) == 1 else 'ies'} older than "
                   f"{_age(doc['older_than'])}: {doc['removed_bytes']:,} bytes"))
    for e in gone:
        out.print(Text(f"  {e['path']}"))


def _age(text: str) -> str:
    """``30d`` → ``30 day(s)``."""
    text = text.strip()
    return f"{text[:-1]} {_AGE_WORDS.get(text[-1:], text[-1:])}"
