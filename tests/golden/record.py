"""Golden outputs of the tcompact CLI: record what every command prints and writes, compare two recordings.

A restructure that must not change behaviour (issue 27) is checked by recording before and after
and comparing. Each case (``_cases.py``, one line each) runs ``python -m tcompact ARGS`` as a user
would, in a temporary root built from the samples and ``../shared/transcripts`` (``_stores.py``),
with a fixed home, agents' stores, XDG folders, token cache, width (120 columns unless the case
says), time zone (UTC), locale and no colour; the code run is this checkout's (``PYTHONPATH=cli``). For each case the tree
holds ``command``, ``stdout``, ``stderr``, ``exit``, ``written`` (every file the case created,
changed or deleted in its folder and its home) and ``files/`` (their contents; HTML pages by
sha256), all normalised by ``_normalise.py``. Cases run two at a time (``--jobs``) in lanes that
share nothing they write; the tree is the same whatever the number::

    python tests/golden/record.py --out /tmp/golden-before        # about four minutes on 2 cores
    python tests/golden/record.py --compare /tmp/golden-before /tmp/golden-after   # exit 1 when any differ
    python tests/golden/record.py --out DIR --only compact/ --only replay/         # some cases

Not collected by pytest.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _stores  # noqa: E402
from _cases import CASES, Case, SHARED_IDS, generated  # noqa: E402
from _normalise import Normaliser, uuids_in  # noqa: E402
from _tree import compare, write_case  # noqa: E402

COLUMNS = 120
#: the temporary root, the same path in every recording (see _claim_root)
ROOT = Path("/tmp/tcompact-golden")
TIMEOUT_S = 900


@dataclass
class Raw:
    """One case as it ran, before normalisation."""

    argv: list[str]
    stdout: bytes
    stderr: bytes
    code: int
    written: dict[str, bytes | None]  # path under the root → new bytes, None when deleted
    seconds: float


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="write a recording here (a new or empty folder)")
    ap.add_argument("--compare", type=Path, nargs=2, metavar=("DIR_A", "DIR_B"), help="compare two recordings")
    ap.add_argument("--only", action="append", default=[], help="run only the cases whose name starts with this")
    ap.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2; the tree is the same with 1)")
    ap.add_argument("--keep-root", action="store_true", help="leave the temporary root in place (its path is printed)")
    ap.add_argument("--full", action="store_true", help="with --compare: whole diffs, not the first 60 lines of each")
    args = ap.parse_args(argv)
    if args.compare:
        return compare(*args.compare, full=args.full)
    if not args.out:
        ap.error("give --out DIR or --compare DIR_A DIR_B")
    if args.out.exists() and any(args.out.iterdir()):
        ap.error(f"{args.out} is not empty")
    return record(args.out, only=args.only, jobs=args.jobs, keep_root=args.keep_root)


def record(out: Path, *, only: list[str], jobs: int = 2, keep_root: bool = False) -> int:
    """Run every case and write the normalised tree to ``out``."""
    started = time.time()
    lock = _claim_root()
    root = ROOT
    try:
        found = _stores.inputs(root)
        _stores.template_home(root)
        _stores.home(root, "base")
        known = frozenset().union(*(uuids_in(p.read_bytes()) for p in sorted((root / "in").rglob("*")) if p.is_file()))
        commands, compressors = _plan(root)
        cases = _unique([*CASES, *generated(commands, compressors)])
        out.mkdir(parents=True, exist_ok=True)
        (out / "inputs.txt").write_text("".join(f"{key}/{name} {_sha(root / 'in' / key / name)}\n"
                                                for key, names in found.items() for name in names))
        listing = {c.name: f"skipped ({r})" for c in cases if (r := _skip(c, commands, shared="shared" in found))}
        chosen = [c for c in cases if c.name not in listing and (not only or c.name.startswith(tuple(only)))]
        normaliser = Normaliser(literals=_literals(root), window=(started, started), version=_version(), known_uuids=known)
        guard = threading.Lock()

        def run_lane(lane: list[Case]) -> list[tuple[float, str]]:
            timings = []
            for case in lane:
                raw = _run(case, root)
                with guard:  # the normaliser learns the new ids of each case
                    normaliser.window = (started - 60, time.time() + 60)
                    for warning in write_case(out / "cases" / case.name, case, raw, normaliser):
                        _say(f"warning: {case.name}: {warning}")
                    listing[case.name] = f"exit {raw.code}"
                timings.append((raw.seconds, case.name))
            return timings

        with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
            slow = [t for timings in pool.map(run_lane, _lanes(chosen)) for t in timings]
        (out / "cases.txt").write_text("".join(f"{c.name}: {listing[c.name]}\n" for c in cases if c.name in listing))
        _say(f"{len(slow)} cases in {time.time() - started:.0f} s ({jobs} at once); slowest: " +
             ", ".join(f"{name} {s:.1f} s" for s, name in sorted(slow, reverse=True)[:5]))
        return 0
    finally:
        if keep_root:
            _say(f"root kept: {root} (the next recording removes it)")
        else:
            shutil.rmtree(root, ignore_errors=True)
        lock.close()


def _lanes(cases: list[Case]) -> list[list[Case]]:
    """The cases in lanes that may run side by side: cases sharing a folder, or a home other than the
    shared read-only one, are in one lane, in their order. The longest lanes first."""
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    for c in cases:
        if c.home != "base":
            parent[find(f"dir:{c.dir}")] = find(f"home:{c.home}")
    lanes: dict[str, list[Case]] = {}
    for c in cases:
        lanes.setdefault(find(f"dir:{c.dir}"), []).append(c)
    return sorted(lanes.values(), key=len, reverse=True)


def _claim_root():
    """Lock the fixed root (one recording at a time) and start it empty.

    The root is the same path in every recording because its text reaches the outputs in ways no
    placeholder can undo: offload's markers name the store by its path, so the path's length and
    characters change the token counts, the budgets derived from them and every later hash."""
    handle = open(f"{ROOT}.lock", "w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise SystemExit(f"record.py: another recording is running ({ROOT}.lock is held); wait for it") from None
    shutil.rmtree(ROOT, ignore_errors=True)
    ROOT.mkdir(parents=True)
    return handle


def _plan(root: Path) -> tuple[dict[str, list[str]], list[str]]:
    """The commands on ``tcompact --help`` (with their subcommands) and the compressors of the commit."""
    def run(*args: str) -> str:
        env = _stores.env(root, _stores.home(root, "plan"), columns=COLUMNS)
        return subprocess.run([_stores.python(), "-m", "tcompact", *args], env=env, cwd=root, capture_output=True,
                              check=True, timeout=TIMEOUT_S).stdout.decode()

    commands = {name: _commands_of(run(name, "--help")) for name in _commands_of(run("--help"))}
    compressors = [c["name"] for c in orjson.loads(run("compressors", "--json"))["compressors"]]
    shutil.rmtree(root / "homes" / "plan")
    return commands, compressors


def _commands_of(help_text: str) -> list[str]:
    """The names under ``Commands:`` of a --help text."""
    names, inside = [], False
    for line in help_text.splitlines():
        if line.strip() == "Commands:":
            inside = True
        elif inside and line.startswith("  ") and not line.startswith("   "):
            names.append(line.split()[0])
        elif inside and line.strip() and not line.startswith(" "):
            inside = False
    return names


def _unique(cases: list[Case]) -> list[Case]:
    names = [c.name for c in cases]
    doubles = sorted({n for n in names if names.count(n) > 1})
    if doubles:
        raise SystemExit(f"record.py: case names used twice: {', '.join(doubles)}")
    return cases


def _skip(case: Case, commands: dict[str, list[str]], *, shared: bool) -> str | None:
    if case.command and not case.command.startswith("-") and case.command not in commands:
        return f"no command {case.command!r} on this commit"
    names_shared = "shared" in case.args.split() or "shared/" in case.args or any(i in case.args for i in SHARED_IDS)
    if names_shared and not shared:
        return "needs ../shared/transcripts (or TCOMPACT_SHARED_DIR)"
    return None


def _run(case: Case, root: Path) -> Raw:
    """Run one case; what it printed and every file it created, changed or deleted under the root."""
    words = shlex.split(case.args)
    cwd = _stores.workdir(root, case.dir, words)
    home = _stores.home(root, case.home)
    argv = [m for w in words for m in _expand(w, cwd)]
    before = _snapshot(root, case)
    start = time.perf_counter()
    proc = subprocess.run([_stores.python(), "-m", "tcompact", *argv], cwd=cwd, capture_output=True,
                          input=(case.stdin or "").encode(), env=_stores.env(root, home, columns=case.columns),
                          timeout=TIMEOUT_S)
    seconds = time.perf_counter() - start
    after = _snapshot(root, case)
    written: dict[str, bytes | None] = {p: (root / p).read_bytes() for p, sig in after.items() if before.get(p) != sig}
    written.update({p: None for p in before if p not in after})
    shared = sorted(p for p in written if case.home == "base" and p.startswith("homes/base/"))
    if shared:
        raise SystemExit(f"record.py: {case.name} wrote into the shared home ({shared[0]}): give it a home of its own")
    return Raw(argv, proc.stdout, proc.stderr, proc.returncode, written, seconds)


def _expand(word: str, cwd: Path) -> list[str]:
    """``glob:PATTERN`` → the sorted matches in the case's folder (relative); any other word as it is."""
    if not word.startswith("glob:"):
        return [word]
    matches = sorted(str(p.relative_to(cwd)) for p in cwd.glob(word[5:]))
    if not matches:
        raise SystemExit(f"record.py: {word} matches nothing in {cwd}")
    return matches


def _snapshot(root: Path, case: Case) -> dict[str, tuple[int, int, int]]:
    """Every file of the case's folder and home (paths from the root): (size, mtime, inode)."""
    out = {}
    for top in (root / "work" / case.dir, root / "homes" / case.home):
        for folder, dirs, files in os.walk(top):
            dirs.sort()
            for name in files:
                path = os.path.join(folder, name)
                st = os.stat(path)
                out[os.path.relpath(path, root)] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def _literals(root: Path) -> dict[str, str]:
    values = {str(root): "<ROOT>", os.path.realpath(root): "<ROOT>", _stores.python(): "<PYTHON>",
              os.path.realpath(_stores.python()): "<PYTHON>", str(_stores.REPO): "<REPO>"}
    return {k: v for k, v in values.items() if k}


def _version() -> str:
    text = (_stores.REPO / "cli" / "tcompact" / "__init__.py").read_text()
    return text.split('__version__ = "', 1)[1].split('"', 1)[0]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _say(text: str) -> None:
    print(f"record.py: {text}", file=sys.stderr)


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `record.py --compare A B | head` ends quietly
    sys.exit(main())
