"""Parts merged into one block summary: the rules of a merge target of the round-level pipeline.

The user's requirements are united in order (a cut or continued copy of a listed one left out),
every final result kept oldest first, only the newest part's open work kept open (older open work
becomes history), failed attempts deduplicated by what they tried (one a later part ran ok becomes
history), and the artifact trail by command and file (operations added up).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from .parts import TIER_WORK, Line, Part, Req

__all__ = ["merge_parts", "FILE_LINE"]

_CUT_MARK = re.compile(r"\s*\[(?:…[\d,]+ more chars cut|[\d,]+ chars cut|…)\]")
#: An artifact line of a file: "path — created, edited ×2".
FILE_LINE = re.compile(r"^(?P<path>\S.*?) — (?P<status>[a-z][a-z ×\d,]*)$")
_COMMAND_LINE = re.compile(r"^(?P<cmd>`[^`]+`)(?: ×(?P<n>\d+))? → (?P<outcome>.+)$", re.DOTALL)
_STATUS_OPS = ("created", "written", "edited", "deleted", "moved", "read", "searched")


def merge_parts(parts: Sequence[Part]) -> Part:
    """One part from several, oldest first (see the module docstring for the rules)."""
    parts = [p for p in parts if not p.empty()] or list(parts[-1:]) or [Part()]
    if len(parts) == 1:
        return parts[0]
    n = len(parts)
    out = Part(ongoing=parts[-1].ongoing)
    out.requirements = _union_requirements(r for p in parts for r in p.requirements)
    failed, fixed = _union_failed(parts)
    for k, p in enumerate(parts):
        age = min(n - 1 - k, 9) * 0.01  # older parts' lines go first within a tier
        out.final += [(t, tier + age) for t, tier in p.final]
        if k == n - 1:
            out.open = list(p.open)
        else:
            history = [t for t, _ in p.open if not t.startswith("status:")][:3]
            out.work += [(f"earlier open work (continued later): {t}", TIER_WORK + 0.7 + age) for t in history]
        out.work += [(t, tier + age) for t, tier in p.work]
    out.work += fixed
    out.failed = failed
    out.artifacts = _union_artifacts(parts)
    return out


def _req_key(r: Req) -> tuple[str, bool]:
    """The normalised text a requirement is recognised by, and whether it is only the start of one."""
    text = re.sub(r"^(?:\(continues an earlier request\)\s*|\[earlier\]\s*)+", "", r.body + r.suffix)
    mark = _CUT_MARK.search(text)
    cut = mark is not None or r.continued or text.rstrip().rstrip("”").endswith("…")
    if mark is not None:
        text = text[:mark.start()]
    text = " ".join(text.replace("“", "").replace("”", "").split()).lower().rstrip("… ")
    return text[:300], cut


def _union_requirements(reqs: Iterable[Req]) -> list[Req]:
    """Requirements without repeats, in order; a cut or continued copy of a listed one is left out."""
    out: list[Req] = []
    where: dict[str, int] = {}
    partial: list[tuple[str, int]] = []  # keys of cut requirements (a fuller copy may follow)
    for r in reqs:
        key, cut = _req_key(r)
        if not key or key in where:
            continue
        if cut and any(k.startswith(key) for k in where):
            continue
        fuller = next((n for k, n in partial if key.startswith(k)), None)
        if fuller is not None and not cut:
            out[fuller] = r  # the full text replaces a cut copy, in its place
            where[key] = fuller
            continue
        where[key] = len(out)
        if cut:
            partial.append((key, len(out)))
        out.append(r)
    return out


def _failure_key(text: str) -> str:
    """What a failed attempt tried: its label without the tool name and repeat count."""
    label = text.removeprefix("[earlier] ").split(" → ", 1)[0]
    return re.sub(r"(?:\s+\([^()]*\)|\s+×\d+)+$", "", label).strip()


def _union_failed(parts: Sequence[Part]) -> tuple[list[Line], list[Line]]:
    """(failed attempts not fixed by a later part, newest first; history lines of those fixed later)."""
    ok_in: dict[str, int] = {}
    for k, p in enumerate(parts):
        for text, _ in p.artifacts:
            match = _COMMAND_LINE.match(text)
            if match and match.group("outcome").startswith("ok"):
                ok_in[match.group("cmd")] = k
    n = len(parts)
    failed: list[Line] = []
    fixed: list[Line] = []
    seen: set[str] = set()
    for k in range(n - 1, -1, -1):
        age = min(n - 1 - k, 9) * 0.01
        for text, tier in parts[k].failed:
            key = _failure_key(text)
            if key in seen:
                continue
            seen.add(key)
            if ok_in.get(key, -1) > k:
                fixed.append((f"failed earlier, later ran ok: {text}", TIER_WORK + 0.1 + age))
            else:
                failed.append((text, tier + age))
    return failed, fixed


def _union_artifacts(parts: Sequence[Part]) -> list[Line]:
    """Artifact lines of all parts, newest first, one per file (operations added up) and per command."""
    n = len(parts)
    entries: dict[str, list] = {}  # key -> [kind, text or (path, Counter) or (cmd, count, outcome), tier]
    for k in range(n - 1, -1, -1):
        age = min(n - 1 - k, 9) * 0.01
        for text, tier in parts[k].artifacts:
            file = FILE_LINE.match(text)
            command = None if file else _COMMAND_LINE.match(text)
            if file:
                key = "file:" + file.group("path")
                ops = _ops(file.group("status"))
                if key in entries:
                    entries[key][1][1].update(ops)
                else:
                    entries[key] = ["file", (file.group("path"), ops), tier + age]
            elif command:
                key = "cmd:" + command.group("cmd")
                times = int(command.group("n") or 1)
                if key in entries:
                    cmd, count, outcome = entries[key][1]
                    entries[key][1] = (cmd, count + times, outcome)
                else:
                    entries[key] = ["cmd", (command.group("cmd"), times, command.group("outcome")), tier + age]
            elif "text:" + text not in entries:
                entries["text:" + text] = ["text", text, tier + age]
    return [(_artifact_text(kind, value), tier) for kind, value, tier in entries.values()]


def _ops(status: str) -> Counter:
    """A file status ('created, edited ×3, read failed') as counts per operation."""
    ops: Counter = Counter()
    for token in status.split(","):
        name, _, times = token.strip().partition(" ×")
        if name:
            ops[name] += int(times) if times.isdigit() else 1
    return ops


def _artifact_text(kind: str, value) -> str:
    """An artifact line again after merging."""
    if kind == "file":
        path, ops = value
        parts = [op + (f" ×{ops[op]}" if ops[op] > 1 else "") for op in _STATUS_OPS if ops.get(op)]
        parts += [name + (f" ×{n}" if n > 1 else "") for name, n in ops.items()
                  if name not in _STATUS_OPS and not (name.endswith(" failed") and ops.get(name[:-7]))]
        return f"{path} — {', '.join(parts) or 'touched'}"
    if kind == "cmd":
        cmd, count, outcome = value
        return f"{cmd}{f' ×{count}' if count > 1 else ''} → {outcome}"
    return value
