"""The terminal views of ``tcompact replay``: verification lines, the dump table, a re-run side by side."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

from . import thousands, console

__all__ = ["replay_checks", "check_dict", "replay_table", "rerun_view", "rerun_dict"]


def check_dict(c: Any) -> dict[str, Any]:
    """A verification result as JSON."""
    return {"dump": c.dump.name, "ok": c.ok, "field": c.field or None,
            "expected": c.expected if not c.ok else None, "got": c.got if not c.ok else None, "note": c.note or None,
            "error": c.error or None}


def replay_checks(checks: Sequence[Any]) -> None:
    """One line per dump (OK; MISMATCH with the first difference; FAILED when it cannot be read or its
    run rebuilt) and a summary line."""
    out = console()
    for c in checks:
        if c.ok:
            out.print(Text(f"OK {c.dump.name}" + (f" ({c.note})" if c.note else "")))
        elif c.error:
            out.print(Text(f"FAILED {c.dump.name}: {c.error}"))
        else:
            out.print(Text(f"MISMATCH {c.dump.name}: {c.field}: expected {c.expected}, got {c.got}"))
    failed = sum(1 for c in checks if c.error)
    bad = sum(1 for c in checks if not c.ok) - failed
    out.print(Text(f"{len(checks)} dump(s): {len(checks) - bad - failed} OK, {bad} mismatched"
                   + (f", {failed} failed" if failed else "")))


def replay_table(rows: Sequence[Mapping[str, Any]]) -> None:
    """One row per dump and the totals."""
    out = console()
    table = Table(title="Compression dumps (--json for their file names)", title_justify="left",
                  box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), show_edge=False, pad_edge=False)
    # no header and no figure is ever cut: the stage goes under its processor, error kinds wrap
    for col in ("time", "processor / stage", "tokens", "saved", "latency", "tries", "errors", "accepted"):
        wraps = col in ("processor / stage", "errors")
        table.add_column(col, no_wrap=not wraps, min_width=13 if col.startswith("processor") else len(col.split()[0]),
                         justify="right" if col in ("tokens", "saved", "latency", "tries") else "left")
    for r in rows:
        latency = "—" if r["latency_s"] is None else f"{r['latency_s']:.2f}s"
        tokens = f"{thousands(r['tokens_before'])}→{thousands(r['tokens_after'])}"
        table.add_row(_clock(r["time"]), Text(" ".join(x for x in (r["processor"], r["stage"]) if x)), tokens,
                      f"{100 * r['reduction_ratio']:.0f}%", latency, str(r["attempts"]),
                      Text(", ".join(r["error_kinds"])), "yes" if r["accepted"] else "no")
    table.add_section()
    accepted = sum(1 for r in rows if r["accepted"])
    failed = sum(1 for r in rows if r["status"] == "failed")
    table.add_row("total", f"{len(rows)} dumps", "", "", "", "", f"{failed} failed", f"{accepted}/{len(rows)}")
    out.print(table)


def _clock(created_at: str | None) -> str:
    """``HH:MM:SS`` of an ISO time (the date is in --json)."""
    return created_at[11:19] if created_at and len(created_at) >= 19 else "—"


def rerun_dict(rerun: Any, written: Sequence[Path]) -> dict[str, Any]:
    """A re-run as JSON: both summaries and both sets of figures."""
    doc, result = rerun.dump.doc, rerun.result
    return {"dump": rerun.dump.name,
            "recorded": {"summary": rerun.recorded_summary, "tokens_before": doc["benefit"]["tokens_before"],
                         "tokens_after": doc["benefit"]["tokens_after"],
                         "reduction_ratio": doc["benefit"]["reduction_ratio"], "accepted": doc["benefit"]["accepted"]},
            "new": {"summary": rerun.new_summary, "tokens_before": result.tokens_before,
                    "tokens_after": result.tokens_after, "reduction_ratio": _ratio(result),
                    "accepted": result.applied, "reason": result.reason},
            "written": [str(p) for p in written]}


def _ratio(result: Any) -> float:
    saved = max(result.tokens_before - result.tokens_after, 0)
    return round(saved / result.tokens_before, 4) if result.tokens_before else 0.0


def rerun_view(rerun: Any, written: Sequence[Path]) -> None:
    """The recorded and the new summary side by side, with their figures."""
    out = console()
    d = rerun_dict(rerun, written)
    table = Table(title=f"Re-run of {d['dump']}", title_justify="left", show_lines=True)
    table.add_column("", no_wrap=True)
    table.add_column("recorded", overflow="fold", ratio=1)
    table.add_column("new", overflow="fold", ratio=1)
    old, new = d["recorded"], d["new"]
    table.add_row("tokens", f"{thousands(old['tokens_before'])} → {thousands(old['tokens_after'])}",
                  f"{thousands(new['tokens_before'])} → {thousands(new['tokens_after'])}")
    table.add_row("saved", f"{100 * old['reduction_ratio']:.1f}%", f"{100 * new['reduction_ratio']:.1f}%")
    table.add_row("accepted", "yes" if old["accepted"] else "no", "yes" if new["accepted"] else f"no ({new['reason']})")
    table.add_row("summary", old["summary"] or "(none)", new["summary"] or "(none)")
    out.print(table)
    out.print(Text(f"Wrote {len(written)} dump(s): " + ", ".join(str(p) for p in written)))
