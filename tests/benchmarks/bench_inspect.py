"""Benchmark: how close ``tcompact inspect --json`` comes to the cost of bare tokenising.

What it measures
----------------
1. It builds a large OpenAI-chat JSONL session (default ~40 MB) at run time from the real
   third-party transcripts in ``../shared/transcripts`` (read with tcompact's own reader and
   converted with ``tcompact.formats.chat.message_to_dict``). Copies of all messages are
   concatenated until the target size is reached; every copy gets a copy-specific marker on
   every text (content, text parts, reasoning, tool output) and on every tool-call argument
   string, and its tool-call ids are suffixed, so a per-text token cache cannot skip any work.
   The file is written to ``tests/benchmarks/out/`` (git-ignored) and removed afterwards
   unless ``--keep`` is given. The shared transcripts are never copied into the repository.
2. The FLOOR: a fresh interpreter that loads o200k_base (``tcompact.tokens.load_encoding``, the
   bundled rank file, no network), parses the file line by line with orjson, collects every
   text a naive counter would (string content, text parts, name, tool-call names and
   arguments, tool outputs, reasoning_content) and tokenises them with
   ``encode_ordinary_batch`` in chunks, summing the lengths.
3. The TOKENIZER baseline: a fresh interpreter that only loads the encoding.
4. ``tcompact inspect FILE --json`` as a subprocess, output to /dev/null.

Each measurement is its own child process, reaped with ``os.wait4`` so its peak RSS is that
child's alone. Each is repeated (default 3 times); the medians are reported.

Goals: inspect wall time <= 1.3 x floor, and
(inspect peak RSS - tokenizer-only peak RSS) / file size <= 3.

Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_inspect.py [--size-mb 40] [--repeat 3] [--keep]

It always exits 0 when the measurements ran, whether or not the goals were met.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
OUT_DIR = HERE / "out"
DEFAULT_SOURCES = REPO.parent / "shared" / "transcripts"
TIME_GOAL = 1.3
MEMORY_GOAL = 3.0

# The floor, run in a fresh interpreter: argv[1] is the session file.
FLOOR_CODE = r"""
import sys
import orjson
from tcompact.tokens import load_encoding

enc = load_encoding("o200k_base")
CHUNK = 4_000_000
texts, size, total, n_texts = [], 0, 0, 0

def add(t):
    global texts, size, total, n_texts
    if not isinstance(t, str) or not t:
        return
    texts.append(t)
    size += len(t)
    n_texts += 1
    if size >= CHUNK:
        total += sum(map(len, enc.encode_ordinary_batch(texts)))
        texts, size = [], 0

with open(sys.argv[1], "rb") as f:
    for line in f:
        if not line.strip():
            continue
        d = orjson.loads(line)
        content = d.get("content")
        if isinstance(content, str):
            add(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict):
                    add(part.get("text"))
        add(d.get("name"))
        add(d.get("reasoning_content"))
        for call in d.get("tool_calls") or ():
            fn = call.get("function") or call
            add(fn.get("name"))
            add(fn.get("arguments"))
if texts:
    total += sum(map(len, enc.encode_ordinary_batch(texts)))
sys.stdout.write(orjson.dumps({"tokens": total, "texts": n_texts}).decode())
"""

TOKENIZER_CODE = r"""
from tcompact.tokens import load_encoding
load_encoding("o200k_base")
"""


# --------------------------------------------------------------------------- building the input

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


def load_base_messages(sources: Path) -> list[dict[str, Any]]:
    """Chat dicts of every message of every transcript of every file in ``sources``."""
    from tcompact.formats import ReadOptions, read_file
    from tcompact.formats.chat import message_to_dict

    files = sorted(p for p in sources.iterdir() if p.is_file() and p.suffix.lower() in (".jsonl", ".json", ".traj"))
    if not files:
        sys.exit(f"no transcript files in {sources}")
    messages: list[dict[str, Any]] = []
    for path in files:
        source = read_file(path, ReadOptions(keep_raw=False))
        for transcript in source.transcripts:
            messages.extend(message_to_dict(m) for m in transcript.messages)
        print(f"  read {path.name}: {sum(len(t.messages) for t in source.transcripts)} messages "
              f"in {len(source.transcripts)} transcript(s)")
    return messages


def build_session(path: Path, sources: Path, target_bytes: int) -> tuple[int, int, int]:
    """Write the session; returns (bytes, messages, copies)."""
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


# --------------------------------------------------------------------------- measuring

@dataclass
class Run:
    seconds: float
    peak_mb: float
    stdout: bytes = b""


def measure(cmd: list[str], *, capture: bool = False) -> Run:
    """Run one child; wall seconds and that child's own peak RSS (os.wait4, so peaks never mix)."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                stdout=out if capture else subprocess.DEVNULL, stderr=subprocess.PIPE)
        stderr = proc.stderr.read() if proc.stderr else b""
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.stderr:
            proc.stderr.close()
        if proc.returncode != 0:
            sys.exit(f"command failed with exit code {proc.returncode}: {' '.join(cmd)}\n{stderr.decode(errors='replace')}")
        out.seek(0)
        data = out.read() if capture else b""
    return Run(seconds=seconds, peak_mb=usage.ru_maxrss / 1024, stdout=data)  # ru_maxrss is KiB on Linux


def repeat(cmd: list[str], times: int, label: str) -> tuple[float, float]:
    """Median seconds and median peak MB of ``times`` runs."""
    runs = []
    for i in range(times):
        r = measure(cmd)
        runs.append(r)
        print(f"  {label} run {i + 1}/{times}: {r.seconds:.2f} s, peak {r.peak_mb:.0f} MB")
    return statistics.median(r.seconds for r in runs), statistics.median(r.peak_mb for r in runs)


def inspect_command(path: Path) -> list[str]:
    script = Path(sys.executable).parent / "tcompact"
    base = [str(script)] if script.exists() else [sys.executable, "-m", "tcompact"]
    return [*base, "inspect", str(path), "--json"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=40.0, help="target session size in MB (default 40)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; medians are reported (default 3)")
    parser.add_argument("--sources", type=Path, default=DEFAULT_SOURCES,
                        help=f"folder of real transcripts (default {DEFAULT_SOURCES})")
    parser.add_argument("--keep", action="store_true", help=f"keep the generated session in {OUT_DIR}")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be 1 or more")
    if not args.sources.is_dir():
        parser.error(f"no transcript folder at {args.sources}")

    session = OUT_DIR / "bench_session.jsonl"
    print(f"building ~{args.size_mb:g} MB session from {args.sources}")
    t0 = time.perf_counter()
    size, lines, copies = build_session(session, args.sources, int(args.size_mb * 2**20))
    size_mb = size / 2**20  # MiB, like the peaks
    print(f"  wrote {session} ({size_mb:.1f} MB, {lines} messages, {copies} copies) in "
          f"{time.perf_counter() - t0:.1f} s")
    try:
        floor_cmd = [sys.executable, "-c", FLOOR_CODE, str(session)]
        tok_cmd = [sys.executable, "-c", TOKENIZER_CODE]
        inspect_cmd = inspect_command(session)

        # One untimed pass each for the token totals (and to warm the page cache).
        floor_out = orjson.loads(measure(floor_cmd, capture=True).stdout)
        report = orjson.loads(measure(inspect_cmd, capture=True).stdout)

        print("measuring (median of %d)" % args.repeat)
        tok_s, tok_mb = repeat(tok_cmd, args.repeat, "tokenizer only")
        floor_s, floor_mb = repeat(floor_cmd, args.repeat, "floor")
        insp_s, insp_mb = repeat(inspect_cmd, args.repeat, "inspect")
    finally:
        if not args.keep:
            session.unlink(missing_ok=True)
            print(f"  removed {session}")

    totals = report["totals"]
    framing = 4 * totals["messages"] + 3 * totals["tool_calls"]
    estimated = sum(t["tokens"]["estimated"] for f in report["files"] for t in f["transcripts"])
    ratio = insp_s / floor_s
    per_mb = (insp_mb - tok_mb) / size_mb

    def goal(ok: bool) -> str:
        return "goal met" if ok else "goal missed"

    rows = [
        ("file size", f"{size_mb:.1f} MB", f"{lines} messages, {copies} copies"),
        ("floor time", f"{floor_s:.2f} s", "orjson + encode_ordinary_batch"),
        ("inspect time", f"{insp_s:.2f} s", "tcompact inspect --json"),
        ("inspect / floor", f"{ratio:.2f}x", f"goal <= {TIME_GOAL}: {goal(ratio <= TIME_GOAL)}"),
        ("tokenizer-only peak", f"{tok_mb:.0f} MB", "load_encoding only"),
        ("floor peak", f"{floor_mb:.0f} MB", ""),
        ("inspect peak", f"{insp_mb:.0f} MB", ""),
        ("(inspect - tokenizer) / size", f"{per_mb:.2f}x", f"goal <= {MEMORY_GOAL:g}: {goal(per_mb <= MEMORY_GOAL)}"),
        ("floor tokens", f"{floor_out['tokens']:,}", f"{floor_out['texts']:,} texts"),
        ("inspect tokens", f"{totals['tokens']:,}",
         f"minus framing {framing:,} and estimates {estimated:,} = {totals['tokens'] - framing - estimated:,}"),
    ]
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    print()
    for name, value, note in rows:
        print(f"{name:<{w0}}  {value:>{w1}}  {note}".rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
