"""Corpora and helpers for the batch tests and benchmark, built in a temporary folder at run time.

Variants of real sessions, each different in its bytes: a JSON Lines session cut after its
first k lines (k spread over its length, so sizes run from a few messages to the whole file),
a SWE-agent trajectory with its history cut the same way. Files go into nested folders by
source and size, as corpora are kept. Nothing is copied into the repository.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import orjson
from conftest import SAMPLES, SHARED

__all__ = ["build_corpus", "corrupt_files", "sorted_lines", "real_sources", "descendants", "NAMES", "samples",
           "lines", "by_path", "cli_error", "corpus_of_about_a_hundred"]

NAMES = ["chat_tool_session.jsonl", "claude_code_session.jsonl", "codex_rollout.jsonl"]


def _cuts(total: int, count: int) -> list[int]:
    """``count`` distinct cut points in 1..total, spread evenly (fewer when the file is short)."""
    return sorted({max(1, round(total * (i + 1) / count)) for i in range(count)})


def _variants(source: Path, count: int) -> list[tuple[str, bytes]]:
    data = source.read_bytes()
    if source.suffix == ".traj":  # one JSON document: cut its history
        doc = orjson.loads(data)
        history = doc["history"]
        return [(f"k{k:05d}{source.suffix}", orjson.dumps({**doc, "history": history[:k]}))
                for k in _cuts(len(history), count)]
    lines = data.splitlines(keepends=True)
    return [(f"k{k:05d}{source.suffix}", b"".join(lines[:k])) for k in _cuts(len(lines), count)]


def build_corpus(dest: Path, sources: Sequence[Path], per_source: int) -> list[Path]:
    """Up to ``per_source`` variants of each source under ``dest/<source>/<size band>/``; the files written."""
    written = []
    for source in sources:
        for name, data in _variants(source, per_source):
            band = "short" if len(data) < 100_000 else "long"
            path = dest / source.stem[:40] / band / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            written.append(path)
    return written


def corrupt_files(dest: Path) -> dict[str, Path]:
    """Files that must fail (or be passed over), by what is wrong with them."""
    dest.mkdir(parents=True, exist_ok=True)
    files = {
        "bad_json": (dest / "bad_json.jsonl", b'{"role": "user", "content": "hi"}\n{"role": "assist\n'),
        "binary": (dest / "binary.jsonl", bytes(range(256)) * 4),
        "empty": (dest / "empty.jsonl", b""),
        "not_transcript": (dest / "package.json", b'{"name": "x", "version": "1.0.0"}\n'),
    }
    for path, data in files.values():
        path.write_bytes(data)
    return {name: path for name, (path, _) in files.items()}


def sorted_lines(path: Path) -> list[bytes]:
    """The lines of a results file, sorted (the engines finish tasks in different orders)."""
    return sorted(Path(path).read_bytes().splitlines())


def real_sources(shared: Path) -> list[Path]:
    """The real session files of ../shared/transcripts (not the notes and licences)."""
    return sorted(p for p in shared.iterdir() if p.is_file() and p.suffix in (".jsonl", ".traj")
                  and not p.name.startswith("."))


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (read from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def samples(dest: Path) -> Path:
    """The three samples in ``dest/a`` and, one line shorter, in ``dest/b/c``."""
    for name in NAMES:
        data = (SAMPLES / name).read_bytes()
        (dest / "a").mkdir(parents=True, exist_ok=True)
        (dest / "a" / name).write_bytes(data)
        (dest / "b" / "c").mkdir(parents=True, exist_ok=True)
        (dest / "b" / "c" / name).write_bytes(b"".join(data.splitlines(keepends=True)[:-1]))
    return dest


def lines(out: Path) -> list[dict]:
    """The result lines of a batch folder, in file order."""
    return [orjson.loads(line) for line in (out / "results.jsonl").read_bytes().splitlines()]


def by_path(out: Path) -> dict[str, dict]:
    """The current (last) result line of each path."""
    return {line["path"]: line for line in lines(out)}


def cli_error(runner, *args) -> str:
    """What the single-file command prints after ``Error: ``."""
    from tcompact.app import app

    result = runner.invoke(app, list(args))
    assert result.exit_code != 0 and result.stderr.startswith("Error: "), result.stderr
    return result.stderr.removeprefix("Error: ").rstrip("\n")


def corpus_of_about_a_hundred(dest: Path) -> list[Path]:
    """Variants of the real sessions; in a clone without ../shared, of the samples (126 cuts), each
    also in four copies that differ by one unknown record (630 files: the samples are small, and a
    run over 126 of them can end before a test's Ctrl-C reaches it)."""
    if SHARED.is_dir():
        return build_corpus(dest, real_sources(SHARED), 24)
    cuts = build_corpus(dest, [SAMPLES / name for name in NAMES], 50)
    copies = []
    for path in cuts:
        for n in range(1, 5):
            copy = path.with_name(f"{path.stem}.copy{n}{path.suffix}")
            copy.write_bytes(path.read_bytes() + orjson.dumps({"type": "tcompact-test-copy", "copy": n}) + b"\n")
            copies.append(copy)
    return cuts + copies
