"""The recorded tree: one case written into it, two recordings compared.

A case's folder holds ``command``, ``stdout``, ``stderr``, ``exit``, ``written`` and ``files/``, every
text normalised with one numbering per case. Comparing lists the cases that differ, each with a
unified diff; a JSON document (or JSON Lines file) is shown indented in the diff, so that one changed
field is one changed line, while the comparison itself is of the recorded bytes.
"""

from __future__ import annotations

import difflib
import hashlib
import shlex
import sys
from pathlib import Path
from typing import Any

import orjson
from _normalise import batch_order

_SHOWN = 60


def write_case(folder: Path, case: Any, raw: Any, normaliser: Any) -> list[str]:
    """The case's files in the tree, every text normalised with the same numbering (``case``: a
    ``_cases.Case``, ``raw``: a ``record.Raw``, ``normaliser``: a ``_normalise.Normaliser``); what
    a placeholder could not reach (a new id a table wrapped)."""
    texts = {p: _text(b) for p, b in sorted(raw.written.items()) if b is not None}
    command = f"tcompact {shlex.join(raw.argv)}\ncwd: work/{case.dir}\nhome: homes/{case.home}\n"
    if case.stdin is not None:
        command += f"stdin: {case.stdin}\n"
    stdout, stderr = _text(raw.stdout), _text(raw.stderr)
    if stdout is not None and raw.argv[:1] == ["batch"]:
        stdout = batch_order(stdout)
    n = normaliser.case([command, stdout or "", stderr or "", *raw.written, *(t for t in texts.values() if t)])
    folder.mkdir(parents=True)
    (folder / "command").write_text(n.text(command))
    written = []
    for name, data, text in (("stdout", raw.stdout, stdout), ("stderr", raw.stderr, stderr)):
        written.append(n.text(text).encode() if text is not None else data)
        (folder / name).write_bytes(written[-1])
    (folder / "exit").write_text(f"{raw.code}\n")
    lines = []
    for path, data in sorted(raw.written.items()):
        name = n.text(path)
        if data is None:
            lines.append(f"deleted {name}")
            continue
        text = texts[path]
        body = n.file(path, text).encode() if text is not None else data
        if path.endswith(".html"):
            lines.append(f"written {name} sha256 {hashlib.sha256(body).hexdigest()} (normalised)")
            continue
        lines.append(f"written {name}" + ("" if text is not None else " (binary, not normalised)"))
        target = folder / "files" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
        written.append(body)
    (folder / "written").write_text("".join(f"{line}\n" for line in lines))
    return [f"part of the new id {u} is left (wrapped by a table?): give the case more columns"
            for u in sorted(normaliser.new_uuids) if any(u[-12:].encode() in body for body in written)]


def _text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def compare(a: Path, b: Path, *, full: bool = False) -> int:
    """Print the cases of recordings ``a`` and ``b`` that differ (with their diffs) or that only one has;
    1 when there are any."""
    for folder in (a, b):
        if not (folder / "cases.txt").is_file():
            print(f"Error: {folder}: not a golden recording (no cases.txt) — give two --out folders", file=sys.stderr)
            return 2
    files_a, files_b = _files(a), _files(b)
    cases_a, cases_b = _cases(files_a), _cases(files_b)
    differing: dict[str, list[str]] = {}
    for rel in sorted(files_a | files_b):
        name = _case_of(rel)
        left, right = (files_a.get(rel), files_b.get(rel))
        if (name in cases_a) == (name in cases_b) and (
                left is None or right is None or left.read_bytes() != right.read_bytes()):
            differing.setdefault(name, []).append(rel)
    only = [(f"only in {a.name}", sorted(cases_a - cases_b)), (f"only in {b.name}", sorted(cases_b - cases_a))]
    if not differing and not any(names for _, names in only):
        print(f"identical: {len(cases_a)} cases")
        return 0
    print(f"{len(differing)} differ, {len(only[0][1])} only in {a.name}, {len(only[1][1])} only in {b.name}:")
    for label, names in (("differs", list(differing)), *only):
        print("".join(f"  {label}: {name}\n" for name in names), end="")
    for name, rels in differing.items():
        print(f"\n=== {name}")
        for rel in rels:
            _show(rel, files_a.get(rel), files_b.get(rel), a.name, b.name, full=full)
    return 1


def _files(root: Path) -> dict[str, Path]:
    return {p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.is_file()}


def _case_of(rel: str) -> str:
    """``cases/inspect/chat/files/x`` → ``inspect/chat``; top-level files are their own entry."""
    if not rel.startswith("cases/"):
        return rel
    head = rel[len("cases/"):]
    if "/files/" in head:
        return head.split("/files/", 1)[0]
    return head.rsplit("/", 1)[0]


def _cases(files: dict[str, Path]) -> set[str]:
    return {_case_of(rel) for rel in files if rel.startswith("cases/")}


def _show(rel: str, left: Path | None, right: Path | None, name_a: str, name_b: str, *, full: bool) -> None:
    if left is None or right is None:
        print(f"--- {rel}: only in {name_a if right is None else name_b}")
        return
    lines = list(difflib.unified_diff(_lines(left.read_bytes()), _lines(right.read_bytes()),
                                      f"{name_a}/{rel}", f"{name_b}/{rel}", lineterm=""))
    for line in lines if full else lines[:_SHOWN]:
        print(line)
    if not full and len(lines) > _SHOWN:
        print(f"... {len(lines) - _SHOWN} more diff lines (--full shows them)")


def _lines(data: bytes) -> list[str]:
    """The file as lines to diff: JSON indented, JSON Lines one indented record after another."""
    text = data.decode("utf-8", "replace")
    try:
        return orjson.dumps(orjson.loads(data), option=orjson.OPT_INDENT_2).decode().splitlines()
    except orjson.JSONDecodeError:
        pass
    lines = text.splitlines()
    out: list[str] = []
    for line in lines:
        try:
            out += orjson.dumps(orjson.loads(line), option=orjson.OPT_INDENT_2).decode().splitlines()
        except orjson.JSONDecodeError:
            out.append(line)
    return out
