"""The temporary folder a golden recording runs in: inputs, agents' stores, one folder per case.

Everything a recorded command sees is built here from the repository's samples and, when present,
``../shared/transcripts``, so two recordings on any machine start from the same bytes::

    ROOT/in/samples/           the samples (*.jsonl)
    ROOT/in/shared/            the shared sessions, when present
    ROOT/template/             a home: .claude/projects/<cwd>/<id>.jsonl, .codex/sessions/Y/M/D/rollout-…
    ROOT/homes/<name>/         a copy of the template for each home a case names (made at first use)
    ROOT/work/<dir>/           a case's current folder: samples/, shared/ when named, fixtures/
    ROOT/cache/                the token cache folder (TCOMPACT_CACHE_DIR; not recorded)

Each session goes where its agent keeps it: a Claude Code session under the folder Claude Code
names after its recorded ``cwd``, a Codex rollout under the date of its ``session_meta``.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import orjson

GOLDEN = Path(__file__).resolve().parent
REPO = GOLDEN.parents[1]
SAMPLES = REPO / "sample_transcripts"
SHARED = Path(os.environ.get("TCOMPACT_SHARED_DIR", REPO.parent / "shared")) / "transcripts"
CACHE_ENV = "TCOMPACT_CACHE_DIR"
#: variables a case never inherits: they would point tcompact elsewhere or change what it prints
_DROPPED = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RAY_ADDRESS", "TCOMPACT_NO_CACHE", "TCOMPACT_DEBUG",
            "FORCE_COLOR", "CLICOLOR_FORCE", "PYTHONHASHSEED")


def inputs(root: Path) -> dict[str, list[str]]:
    """Copy the samples and the shared sessions under ``ROOT/in``; the names of each."""
    found: dict[str, list[str]] = {}
    for key, source in (("samples", SAMPLES), ("shared", SHARED)):
        names = sorted(p.name for p in source.glob("*") if p.is_file() and p.suffix in (".jsonl", ".json", ".traj"))
        if not names:
            continue
        (root / "in" / key).mkdir(parents=True)
        for name in names:
            shutil.copyfile(source / name, root / "in" / key / name)
        found[key] = names
    return found


def template_home(root: Path) -> Path:
    """``ROOT/template``: every Claude Code and Codex session of the inputs where its agent keeps it."""
    home = root / "template"
    for key in ("samples", "shared"):
        for path in sorted((root / "in" / key).glob("*.jsonl")) if (root / "in" / key).is_dir() else ():
            target = _store_path(home, path)
            if target is not None:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
    return home


def _store_path(home: Path, path: Path) -> Path | None:
    """Where Claude Code or Codex keeps this session file, or None for another format."""
    with path.open("rb") as fh:
        for line in fh:
            try:
                rec = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(rec, dict):
                return None
            if rec.get("type") == "session_meta" and isinstance(rec.get("payload"), dict):
                sid, stamp = rec["payload"]["id"], rec["payload"]["timestamp"]
                day = stamp[:10].replace("-", "/")
                return home / ".codex" / "sessions" / day / f"rollout-{stamp[:19].replace(':', '-')}-{sid}.jsonl"
            if rec.get("sessionId") and rec.get("cwd"):
                folder = "".join(c if c.isalnum() else "-" for c in rec["cwd"])
                return home / ".claude" / "projects" / folder / f"{rec['sessionId']}.jsonl"
            if rec.get("role") or rec.get("messages"):
                return None
    return None


def home(root: Path, name: str) -> Path:
    """``ROOT/homes/NAME``, a fresh copy of the template the first time it is asked for."""
    path = root / "homes" / name
    if not path.exists():
        shutil.copytree(root / "template", path, symlinks=True)
    return path


def workdir(root: Path, name: str, argv: list[str]) -> Path:
    """``ROOT/work/NAME`` with the fixtures, a copy of the samples and, when the arguments name them,
    of the shared sessions (every case can read and write its own copies)."""
    path = root / "work" / name
    if not path.exists():
        path.mkdir(parents=True)
        _fixtures(root, path / "fixtures")
        shutil.copytree(root / "in" / "samples", path / "samples")
    named = any(a == "shared" or a.startswith("shared/") or "=shared/" in a for a in argv)
    if named and not (path / "shared").exists() and (root / "in" / "shared").is_dir():
        shutil.copytree(root / "in" / "shared", path / "shared")
    return path


def _fixtures(root: Path, folder: Path) -> None:
    """Small files the error and option cases name, made from the samples (never from the shared sessions)."""
    folder.mkdir()
    chat = (root / "in" / "samples" / "chat_tool_session.jsonl").read_bytes().splitlines(keepends=True)
    (folder / "bad_line.jsonl").write_bytes(b"".join(chat[:6]) + b'{"role": "user", "content": \n' + b"".join(chat[6:]))
    (folder / "cut_last_line.jsonl").write_bytes(b"".join(chat[:-1]) + chat[-1][: len(chat[-1]) // 2])
    (folder / "empty.jsonl").write_bytes(b"")
    (folder / "package.json").write_bytes(b'{"name": "not-a-transcript", "version": "1.0.0"}\n')
    (folder / "config.toml").write_text("[truncate]\nmax_chars = 2000\nmax_lines = 40\n\n[full]\nsummary_max_tokens = 600\n")
    (folder / "bad_config.toml").write_text("[truncate]\nmax_charz = 2000\n")
    (folder / "batch").mkdir()  # one failure (the order of several would be the order they finished in)
    (folder / "batch" / "bad_line.jsonl").write_bytes((folder / "bad_line.jsonl").read_bytes())
    (folder / "batch" / "empty.jsonl").write_bytes(b"")
    (folder / "batch" / "package.json").write_bytes((folder / "package.json").read_bytes())
    (folder / "prompt.md").write_text("Summarise the work so far in at most {max_tokens} tokens, as a list.\n")


def env(root: Path, home_dir: Path, *, columns: int) -> dict[str, str]:
    """The environment of every recorded command: fixed home, stores, cache, width, zone and locale."""
    base = {k: v for k, v in os.environ.items() if k not in _DROPPED and not k.startswith(("XDG_", "TCOMPACT_"))}
    state = home_dir / ".local" / "state"
    base.update({
        "HOME": str(home_dir), "CLAUDE_CONFIG_DIR": str(home_dir / ".claude"), "CODEX_HOME": str(home_dir / ".codex"),
        "XDG_STATE_HOME": str(state), "XDG_CONFIG_HOME": str(home_dir / ".config"),
        "XDG_CACHE_HOME": str(home_dir / ".cache"), "XDG_DATA_HOME": str(home_dir / ".local" / "share"),
        CACHE_ENV: str(root / "cache"), "COLUMNS": str(columns), "LINES": "50", "TZ": "UTC", "NO_COLOR": "1",
        "TERM": "dumb", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8",
        "PYTHONPATH": str(REPO / "cli"), "PYTHONUNBUFFERED": "1",
    })
    return base


def python() -> str:
    """The interpreter every case runs ``-m tcompact`` with (this one)."""
    return sys.executable
