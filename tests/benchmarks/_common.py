"""What the benchmark scripts share: building sessions from the shared transcripts, timing a child process.

Sessions are built at run time from the real transcripts in ``../shared/transcripts`` (never
copied into the repository): chat sessions of distinct copies of all their messages, and Claude
Code sessions of distinct copies of the Claude sessions, chained into one conversation. Every copy
gets a copy-specific marker on every text and its own ids, so no per-text cache can skip work.

Every measurement is one child process, reaped with ``os.wait4`` so that its peak RSS and CPU
time are its own. Children run with a benchmark-private token cache folder (the user's cache is
never touched) and without ``PYTHONDONTWRITEBYTECODE``, so tcompact's modules load from bytecode
as they do for a user.
"""

from __future__ import annotations

import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
OUT_DIR = HERE / "out"
DEFAULT_SOURCES = REPO.parent / "shared" / "transcripts"
CACHE_ENV = "TCOMPACT_CACHE_DIR"


# --------------------------------------------------------------------------- the machine


def machine() -> str:
    """Cores and load average, for the head of a report."""
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{os.cpu_count()} cores, load average {load} (1, 5, 15 min)"


# --------------------------------------------------------------------------- running children


@dataclass
class Run:
    seconds: float
    cpu: float
    peak_mb: float
    stdout: bytes = b""


def child_env(cache: Path | None = None, **extra: str) -> dict[str, str]:
    """The environment of a measured child: bytecode allowed, the given token cache folder."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "TCOMPACT_NO_CACHE")}
    if cache is not None:
        env[CACHE_ENV] = str(cache)
    env.update(extra)
    return env


def measure(cmd: list[str], *, capture: bool = False, env: dict[str, str] | None = None) -> Run:
    """Run one child; its wall and CPU seconds and its own peak RSS (os.wait4, so peaks never mix)."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out if capture else subprocess.DEVNULL,
                                stderr=subprocess.PIPE, env=env if env is not None else child_env())
        stderr = proc.stderr.read() if proc.stderr else b""
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.stderr:
            proc.stderr.close()
        if proc.returncode != 0:
            sys.exit(f"command failed with exit code {proc.returncode}: {' '.join(cmd)}\n"
                     f"{stderr.decode(errors='replace')}")
        out.seek(0)
        data = out.read() if capture else b""
    return Run(seconds=seconds, cpu=usage.ru_utime + usage.ru_stime, peak_mb=usage.ru_maxrss / 1024, stdout=data)


def median_run(runs: list[Run]) -> Run:
    """The medians of wall, CPU and peak (the stdout of the last run)."""
    return Run(statistics.median(r.seconds for r in runs), statistics.median(r.cpu for r in runs),
               statistics.median(r.peak_mb for r in runs), runs[-1].stdout)


def tcompact_base() -> list[str]:
    """The command that starts tcompact (the venv's script, else ``python -m tcompact``)."""
    script = Path(sys.executable).parent / "tcompact"
    return [str(script)] if script.exists() else [sys.executable, "-m", "tcompact"]


def inspect_command(path: Path, *extra: str) -> list[str]:
    return [*tcompact_base(), "inspect", str(path), "--json", *extra]


def seeded_cache(seed: Path, folder: Path) -> Path:
    """An empty token cache folder holding only the decoded tokenizer tables of ``seed`` — as any
    machine has after its first tcompact run: no text of a new file is in it."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for blob in seed.glob("ranks-*.marshal"):
        shutil.copy(blob, folder / blob.name)
    return folder


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log(y) over log(x)."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


# --------------------------------------------------------------------------- chat sessions


def _mark_text(text: Any, tag: str) -> Any:
    """A text with the copy marker appended (a suffix keeps prefix-based injected-text detection)."""
    if not isinstance(text, str) or not text:
        return text
    return f"{text} {tag}"


def _mark_arguments(args: Any, n: int, tag: str) -> Any:
    """Arguments made distinct per copy; JSON objects stay valid JSON (a ``_copy`` key first)."""
    if not isinstance(args, str) or not args:
        return args
    stripped = args.lstrip()
    if stripped.startswith("{"):
        try:
            value = orjson.loads(args)
        except orjson.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            rest = stripped[1:].lstrip()
            return '{"_copy":%d}' % n if rest.startswith("}") else '{"_copy":%d,%s' % (n, stripped[1:])
    return f"{args} {tag}"


def _copy_message(d: dict[str, Any], n: int) -> dict[str, Any]:
    tag = f"[copy {n}]"
    out = dict(d)
    content = d.get("content")
    if isinstance(content, str):
        out["content"] = _mark_text(content, tag)
    elif isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                part = {**part, "text": _mark_text(part["text"], tag)}
            parts.append(part)
        out["content"] = parts
    if "reasoning_content" in d:
        out["reasoning_content"] = _mark_text(d["reasoning_content"], tag)
    if d.get("tool_calls"):
        out["tool_calls"] = [
            {**c, "id": f"{c['id']}_c{n}",
             "function": {**c["function"], "arguments": _mark_arguments(c["function"]["arguments"], n, tag)}}
            for c in d["tool_calls"]
        ]
    if "tool_call_id" in d:
        out["tool_call_id"] = f"{d['tool_call_id']}_c{n}"
    if "tool_call_ids" in d:
        out["tool_call_ids"] = [f"{x}_c{n}" for x in d["tool_call_ids"]]
    return out


def _dumps(d: dict[str, Any]) -> bytes:
    try:
        return orjson.dumps(d) + b"\n"
    except TypeError:  # lone surrogates, which orjson refuses
        import json

        return json.dumps(d, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass") + b"\n"


def transcript_files(sources: Path) -> list[Path]:
    files = sorted(p for p in sources.iterdir() if p.is_file() and p.suffix.lower() in (".jsonl", ".json", ".traj"))
    if not files:
        sys.exit(f"no transcript files in {sources}")
    return files


def load_base_messages(sources: Path, *, quiet: bool = False) -> list[dict[str, Any]]:
    """Chat dicts of every message of every transcript of every file in ``sources``."""
    from tcompact.formats import ReadOptions, read_file
    from tcompact.formats.chat import message_to_dict

    messages: list[dict[str, Any]] = []
    for path in transcript_files(sources):
        source = read_file(path, ReadOptions(keep_raw=False))
        for transcript in source.transcripts:
            messages.extend(message_to_dict(m) for m in transcript.messages)
        if not quiet:
            print(f"  read {path.name}: {sum(len(t.messages) for t in source.transcripts)} messages "
                  f"in {len(source.transcripts)} transcript(s)")
    return messages


def build_session(path: Path, sources: Path, target_bytes: int) -> tuple[int, int, int]:
    """A chat session of distinct copies of every message, to ``target_bytes``; (bytes, messages, copies)."""
    base = load_base_messages(sources)
    path.parent.mkdir(parents=True, exist_ok=True)
    written = lines = copies = 0
    with open(path, "wb") as f:
        while written < target_bytes:
            for d in base:
                line = _dumps(_copy_message(d, copies))
                f.write(line)
                written += len(line)
                lines += 1
            copies += 1
    return written, lines, copies


def write_copies(path: Path, base: list[dict[str, Any]], copies: int, *, system_once: bool = False) -> int:
    """A chat session of ``copies`` distinct copies of ``base`` (copy numbers 0..copies-1); returns bytes.

    ``system_once`` keeps the system and developer messages of the first copy only, as in one long session.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with open(path, "wb") as f:
        for n in range(copies):
            for d in base:
                if system_once and n and d.get("role") in ("system", "developer"):
                    continue
                line = _dumps(_copy_message(d, n))
                f.write(line)
                written += len(line)
    return written


# --------------------------------------------------------------------------- Claude Code sessions


def claude_files(sources: Path) -> list[Path]:
    """The shared Claude Code sessions of one conversation (no sub-agents), largest first."""
    from tcompact.formats import read_file

    found = []
    for p in transcript_files(sources):
        source = read_file(p) if p.suffix == ".jsonl" else None
        if source is not None and source.format == "claude-code" and len(source.transcripts) == 1:
            found.append(p)
    if not found:
        sys.exit(f"no Claude Code session in {sources}")
    return sorted(found, key=lambda p: -p.stat().st_size)


def _copy_block(block: Any, n: int, tag: str) -> Any:
    if not isinstance(block, dict):
        return block
    out = dict(block)
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        out["text"] = _mark_text(block["text"], tag)
    elif kind == "thinking" and isinstance(block.get("thinking"), str):
        out["thinking"] = _mark_text(block["thinking"], tag)
    elif kind == "tool_use":
        out["id"] = f"{block.get('id')}_c{n}"
        if isinstance(block.get("input"), dict):
            out["input"] = {"_copy": n, **block["input"]}
    elif kind == "tool_result":
        out["tool_use_id"] = f"{block.get('tool_use_id')}_c{n}"
        content = block.get("content")
        out["content"] = (_mark_text(content, tag) if isinstance(content, str)
                          else [_copy_block(b, n, tag) for b in content] if isinstance(content, list) else content)
    return out


def _later(stamp: str, days: int) -> str:
    """An ISO 8601 time stamp ``days`` days later (as it was when it does not parse)."""
    from datetime import datetime, timedelta

    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    return (when + timedelta(days=days)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _copy_claude_record(d: dict[str, Any], n: int, ids: dict[str, str], session: str) -> dict[str, Any]:
    tag = f"[copy {n}]"
    out = dict(d)
    for key in ("uuid", "parentUuid", "messageId", "logicalParentUuid"):
        if isinstance(d.get(key), str):
            out[key] = ids.setdefault(d[key], str(uuid.uuid5(uuid.NAMESPACE_URL, f"{d[key]}/{n}")))
    if "sessionId" in d:
        out["sessionId"] = session
    if isinstance(d.get("timestamp"), str):  # each copy later than the one before, as in one long session
        out["timestamp"] = _later(d["timestamp"], n)
    message = d.get("message")
    if isinstance(message, dict):
        message = dict(message)
        if isinstance(message.get("id"), str):
            message["id"] = f"{message['id']}_c{n}"
        content = message.get("content")
        message["content"] = (_mark_text(content, tag) if isinstance(content, str)
                              else [_copy_block(b, n, tag) for b in content] if isinstance(content, list) else content)
        out["message"] = message
    return out


def write_claude_session(path: Path, sources: list[Path], copies: int, *, session: str | None = None,
                         first_copy: int = 0) -> int:
    """A Claude Code session of ``copies`` distinct copies of the records of ``sources`` (cycled), each
    copy's first message chained to the last of the one before, as one long conversation; bytes."""
    records = [[orjson.loads(line) for line in p.read_bytes().splitlines() if line.strip()] for p in sources]
    session = session or str(uuid.uuid5(uuid.NAMESPACE_URL, f"{path.name}/{copies}"))
    path.parent.mkdir(parents=True, exist_ok=True)
    written, last = 0, None
    with open(path, "wb") as f:
        for n in range(first_copy, first_copy + copies):
            ids: dict[str, str] = {}
            for d in records[n % len(records)]:
                out = _copy_claude_record(d, n, ids, session)
                if "parentUuid" in d and d["parentUuid"] is None and last is not None:
                    out["parentUuid"] = last  # the copies form one conversation
                if isinstance(out.get("uuid"), str) and out.get("type") in ("user", "assistant"):
                    last = out["uuid"]
                line = _dumps(out)
                f.write(line)
                written += len(line)
    return written
