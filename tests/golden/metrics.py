"""The shape figures of issue 27, read from the code itself (ast), so before and after are counted alike.

    python tests/golden/metrics.py [--root CHECKOUT] [--json]

Counted over ``cli/tcompact/**/*.py`` (the code) and ``tests/**/*.py`` (the tests):

- **files over 300 lines** (physical lines, as ``wc -l`` counts them), listed;
- **functions**: every ``def`` and ``async def``, methods and nested functions included, each
  from its ``def`` line to its last line (decorators left out, a nested function also counted
  in its parent's length): how many are over 40 lines (listed), the longest ten, the median;
- **parameters per function**: every parameter but the ``self`` / ``cls`` of a method, ``*args``
  and ``**kwargs`` one each: p90 (nearest rank) and the maximum, with the functions at the maximum;
- **private cross-imports**: a name starting with one ``_`` that one module of tcompact takes from
  another — ``from .x import _y`` (a private module ``from . import _y`` included, marked
  ``module``), and ``x._y`` where ``x`` is bound by an import to a tcompact module: count, listed;
- **``dict[str, Any]``**: the annotations and expressions that spell it (``Dict[str, Any]`` too);
- **top-level modules** of ``cli/tcompact`` and which packages use each: a user is a subpackage
  (its first folder under ``tcompact/``) or another top-level module; imports inside functions
  count;
- **tests / code**: lines of ``tests/**/*.py`` over lines of ``cli/tcompact/**/*.py``, the scripts
  run by hand (``tests/benchmarks/``, ``tests/golden/``) counted apart and left out of the ratio.

Everything is sorted, so the same checkout gives the same output.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

FILE_LIMIT, FUNCTION_LIMIT = 300, 40
#: folders of tests/ holding scripts run by hand, not tests
_BY_HAND = ("benchmarks", "golden")


@dataclass
class Module:
    """One module of the package: its dotted name, path, source lines and tree."""

    name: str  # "tcompact.formats.codex"
    path: str  # "cli/tcompact/formats/codex.py"
    lines: int
    tree: ast.Module
    is_package: bool

    @property
    def unit(self) -> str:
        """The user this module counts as: its subpackage, or itself when it sits at the top level."""
        parts = self.name.split(".")
        return parts[1] if len(parts) > 2 or (len(parts) == 2 and self.is_package) else parts[-1]


@dataclass
class Figures:
    files_over: list[tuple[str, int]] = field(default_factory=list)
    functions: list[tuple[int, int, str]] = field(default_factory=list)  # (lines, parameters, "path:line name")
    private_imports: list[str] = field(default_factory=list)
    dict_any: list[str] = field(default_factory=list)
    top_level: dict[str, list[str]] = field(default_factory=dict)
    code_lines: int = 0
    test_lines: int = 0
    script_lines: int = 0
    code_files: int = 0
    test_files: int = 0


def load(root: Path, package: str = "tcompact") -> dict[str, Module]:
    """Every module of ``root/cli/<package>``, by dotted name."""
    base = root / "cli"
    out = {}
    for path in sorted((base / package).rglob("*.py")):
        rel = path.relative_to(base).with_suffix("")
        parts = list(rel.parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        text = path.read_text(encoding="utf-8")
        out[".".join(parts)] = Module(".".join(parts), path.relative_to(root).as_posix(), _count_lines(text),
                                      ast.parse(text, filename=str(path)), is_package)
    return out


def _count_lines(text: str) -> int:
    return text.count("\n") + (0 if not text or text.endswith("\n") else 1)


def measure(root: Path) -> Figures:
    """Every figure of the checkout at ``root``."""
    modules = load(root)
    f = Figures()
    for m in modules.values():
        f.code_lines += m.lines
        f.code_files += 1
        if m.lines > FILE_LIMIT:
            f.files_over.append((m.path, m.lines))
        f.functions += _functions(m)
        f.private_imports += _private_imports(m, modules)
        f.dict_any += [f"{m.path}:{n.lineno}" for n in ast.walk(m.tree) if _is_dict_str_any(n)]
    for path in sorted((root / "tests").rglob("*.py")):
        lines = _count_lines(path.read_text(encoding="utf-8"))
        if path.relative_to(root / "tests").parts[0] in _BY_HAND:
            f.script_lines += lines
            continue
        f.test_lines += lines
        f.test_files += 1
    f.files_over.sort(key=lambda x: (-x[1], x[0]))
    f.functions.sort(key=lambda x: (-x[0], x[2]))
    f.top_level = _top_level_users(modules)
    return f


def _functions(m: Module) -> list[tuple[int, int, str]]:
    out = []
    methods = {id(n) for c in ast.walk(m.tree) if isinstance(c, ast.ClassDef) for n in c.body}
    for node in ast.walk(m.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1  # type: ignore[operator]
            out.append((length, _parameters(node, method=id(node) in methods), f"{m.path}:{node.lineno} {node.name}"))
    return out


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef, *, method: bool) -> int:
    a = node.args
    positional = [*a.posonlyargs, *a.args]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
    if method and not static and positional and positional[0].arg in ("self", "cls"):
        positional = positional[1:]
    return len(positional) + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _resolve(m: Module, level: int, target: str | None) -> str:
    """The dotted name a relative (or absolute) import in ``m`` names."""
    if level == 0:
        return target or ""
    parts = m.name.split(".")
    base = parts if m.is_package else parts[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, *([target] if target else [])])


def _private_imports(m: Module, modules: dict[str, Module]) -> list[str]:
    """``path:line module._name`` for every private name this module takes from another tcompact module."""
    out, bound = [], {}
    for node in ast.walk(m.tree):
        if isinstance(node, ast.ImportFrom):
            source = _resolve(m, node.level, node.module)
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if full in modules:
                    bound[alias.asname or alias.name] = full
                if source.split(".")[0] == "tcompact" and _is_private(alias.name):
                    kind = " (module)" if full in modules else ""
                    out.append(f"{m.path}:{node.lineno} {full}{kind}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    bound[alias.asname or alias.name] = alias.name
    for node in ast.walk(m.tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr) and isinstance(node.value, ast.Name):
            target = bound.get(node.value.id)
            if target and target != m.name:
                out.append(f"{m.path}:{node.lineno} {target}.{node.attr} (attribute)")
    return out


def _is_dict_str_any(node: ast.AST) -> bool:
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in ("dict", "Dict")):
        return False
    s = node.slice
    return isinstance(s, ast.Tuple) and len(s.elts) == 2 and all(
        isinstance(e, ast.Name) and e.id == want for e, want in zip(s.elts, ("str", "Any")))


def _top_level_users(modules: dict[str, Module]) -> dict[str, list[str]]:
    """Each top-level module of the package → the users (subpackages, other top-level modules) importing it."""
    top = {n: m for n, m in modules.items() if n.count(".") == 1 and not m.is_package
           and n.rsplit(".", 1)[1] not in ("__init__", "__main__")}
    users: dict[str, set[str]] = {n: set() for n in top}
    for m in modules.values():
        for target in _imported(m, modules):
            if target in users and target != m.name:
                users[target].add(m.unit)
    return {n.rsplit(".", 1)[1]: sorted(u) for n, u in sorted(users.items())}


def _imported(m: Module, modules: dict[str, Module]) -> set[str]:
    """The tcompact modules ``m`` imports (a name taken from a module counts as that module)."""
    out = set()
    for node in ast.walk(m.tree):
        if isinstance(node, ast.ImportFrom):
            source = _resolve(m, node.level, node.module)
            for alias in node.names:
                full = f"{source}.{alias.name}"
                out.add(full if full in modules else source)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {n for n in out if n in modules}


def summary(f: Figures) -> dict:
    """The figures as one JSON-ready document."""
    lengths = sorted(x[0] for x in f.functions)
    params = sorted(x[1] for x in f.functions)
    p90 = params[max(math.ceil(0.9 * len(params)) - 1, 0)] if params else 0
    most = params[-1] if params else 0
    single = sorted(n for n, u in f.top_level.items() if len(u) == 1)
    return {
        "files": {"code": f.code_files, "tests": f.test_files},
        "files_over_300_lines": [{"path": p, "lines": n} for p, n in f.files_over],
        "functions": {"count": len(lengths), "median_lines": statistics.median(lengths) if lengths else 0,
                      "over_40_lines": [{"function": w, "lines": n} for n, _, w in f.functions if n > FUNCTION_LIMIT],
                      "longest": [{"function": w, "lines": n} for n, _, w in f.functions[:10]]},
        "parameters": {"p90": p90, "max": most,
                       "at_max": sorted(w for _, p, w in f.functions if p == most)},
        "private_cross_imports": {"count": len(f.private_imports), **_kinds(f.private_imports),
                                  "list": sorted(f.private_imports, key=_where)},
        "dict_str_any": {"count": len(f.dict_any)},
        "top_level_modules": {"count": len(f.top_level), "used_by_one": len(single),
                              "users": {n: u for n, u in f.top_level.items()}},
        "lines": {"code": f.code_lines, "tests": f.test_lines, "scripts_run_by_hand": f.script_lines,
                  "tests_over_code": round(f.test_lines / f.code_lines, 3) if f.code_lines else None},
    }


def _where(entry: str) -> tuple[str, int, str]:
    """``path:line rest`` in the order of the code: path, then line number."""
    place, _, rest = entry.partition(" ")
    path, _, line = place.rpartition(":")
    return path, int(line), rest


def _kinds(entries: list[str]) -> dict[str, int]:
    """How many are names (``from .x import _y``), private modules, and ``x._y`` attribute uses."""
    modules = sum(e.endswith(" (module)") for e in entries)
    attributes = sum(e.endswith(" (attribute)") for e in entries)
    return {"names": len(entries) - modules - attributes, "modules": modules, "attributes": attributes}


def render(doc: dict) -> str:
    """The figures as text."""
    fn, pa, pr, top = doc["functions"], doc["parameters"], doc["private_cross_imports"], doc["top_level_modules"]
    lines = [f"files: {doc['files']['code']} code, {doc['files']['tests']} tests (benchmarks/, golden/ apart)",
             f"files over 300 lines: {len(doc['files_over_300_lines'])}",
             *(f"  {x['lines']:5d}  {x['path']}" for x in doc["files_over_300_lines"]),
             f"functions: {fn['count']}, median {fn['median_lines']} lines, over 40 lines: {len(fn['over_40_lines'])}",
             *(f"  {x['lines']:5d}  {x['function']}" for x in fn["over_40_lines"]),
             "longest ten:", *(f"  {x['lines']:5d}  {x['function']}" for x in fn["longest"]),
             f"parameters per function: p90 {pa['p90']}, max {pa['max']}",
             *(f"  {w}" for w in pa["at_max"]),
             f"private names imported across modules: {pr['count']} ({pr['names']} names, {pr['modules']} private "
             f"modules, {pr['attributes']} x._y uses)", *(f"  {x}" for x in pr["list"]),
             f"dict[str, Any]: {doc['dict_str_any']['count']}",
             f"top-level modules: {top['count']}, used by one package or module: {top['used_by_one']}",
             *(f"  {n:18s} {len(u):2d}  {', '.join(u)}" for n, u in top["users"].items()),
             f"lines: code {doc['lines']['code']}, tests {doc['lines']['tests']} (and "
             f"{doc['lines']['scripts_run_by_hand']} in benchmarks/ and golden/), tests/code {doc['lines']['tests_over_code']}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2], help="the checkout (default: this one)")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    args = ap.parse_args(argv)
    doc = summary(measure(args.root))
    print(json.dumps(doc, indent=2, ensure_ascii=False) if args.json else render(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
