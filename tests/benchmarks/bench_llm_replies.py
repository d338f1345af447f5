"""Benchmark: how often a tiny real model's replies are refused as no usable summary, and why.

What it measures
----------------
One llama.cpp server (``tests/llm_server.py``: xllamacpp with SmolLM2-135M-Instruct, 4096 tokens
over two slots, so 2,048 per request; one thread) on 127.0.0.1, then
``tcompact compact FILE -c NAME --summarizer openai --base-url … --max-retries 2`` for every
case of CASES below (real sessions of ``../shared/transcripts``, summary budgets of 64 and 256
tokens), each in this process through typer's runner. Every reply the server sent is read back
from the dumps and counted once: accepted, or refused and for which reason (the first words of
the rule of ``summarizers/validity.py``); requests the server refused as too big are counted
apart. Printed: one line per case (exit code, seconds, replies, what came of each) and a table
of reasons with their share of all replies, and the server's prompt and generation speeds.

Run it by hand (it takes minutes: the model reads ~100-180 prompt tokens a second here):

    python tests/benchmarks/bench_llm_replies.py [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from conftest import SHARED  # noqa: E402
from llm_server import MODEL_ALIAS, LlamaServer, missing_components  # noqa: E402

CCVIEWER = "claude_ccviewer_5c0375b4_japanese_task_subagents.jsonl"
CASES = [
    # (name, file, arguments)
    ("current-round sub-agent", CCVIEWER, ["--transcript", "sidechain-6340ddef", "-c", "current-round"]),
    ("current-round sub-agent 2", CCVIEWER, ["--transcript", "sidechain-83e2917c", "-c", "current-round"]),
    ("current-round main", CCVIEWER, ["-c", "current-round"]),
    ("current-round swe-agent", "openai_sweagent_marshmallow-1867_function_calling.traj", ["-c", "current-round"]),
    ("dialogue codemie", "claude_codemie_3fe1b6bc_thinking.jsonl", ["-c", "dialogue"]),
    ("full codemie", "claude_codemie_3fe1b6bc_thinking.jsonl", ["-c", "full"]),
    ("full drmaciver", "claude_drmaciver_python_to_rust_port.jsonl", ["-c", "full"]),
]
BUDGETS = (64, 256)


def reason_of(dump: dict) -> str:
    error = dump.get("error") or {}
    if dump.get("response") is None:
        return f"no reply: {error.get('kind')}"
    if not error:  # a usable summary; the benefit check may still keep the original
        return "accepted" if dump["benefit"]["accepted"] else "accepted, no benefit"
    message = error["message"].removeprefix("not a usable summary: ")
    for key in ("cut at", "repeats the instruction", "a loop", "no section heading", "empty"):
        if key in message:
            return f"refused: {key}"
    return f"refused: {message[:40]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="also write the per-reply records as JSON")
    args = parser.parse_args()
    missing = missing_components()
    if missing:
        print(f"cannot run: {missing}")
        return 2
    from typer.testing import CliRunner

    from tcompact.app import app

    records, speeds = [], []
    with LlamaServer(n_ctx=4096, parallel=2) as server, tempfile.TemporaryDirectory() as scratch:
        server.post("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1})
        for name, file, extra in CASES:
            for budget in BUDGETS:
                tmp = Path(scratch) / f"{name}-{budget}".replace(" ", "_")
                started = time.perf_counter()
                result = CliRunner().invoke(app, [
                    "compact", str(SHARED / file), *extra, "--now", "--summarizer", "openai", "--model",
                    MODEL_ALIAS, "--base-url", server.base_url, "--set", f"summary_max_tokens={budget}",
                    "--max-retries", "2", "--timeout", "900", "-o", str(tmp / "out.jsonl"), "--dump-dir",
                    str(tmp / "dumps"), "--report", str(tmp / "report.json")])
                elapsed = time.perf_counter() - started
                dumps = sorted((json.loads(p.read_text()) for p in (tmp / "dumps").glob("*.json")),
                               key=lambda d: d["run"]["call"]) if (tmp / "dumps").exists() else []
                outcomes = [reason_of(d) for d in dumps]
                for d, outcome in zip(dumps, outcomes, strict=True):
                    response = d.get("response") or {}
                    timings = response.get("timings") or {}
                    if timings.get("prompt_n"):
                        speeds.append((timings["prompt_n"], timings["prompt_ms"], timings["predicted_n"],
                                       timings["predicted_ms"]))
                    records.append({"case": name, "budget": budget, "outcome": outcome,
                                    "usage": response.get("usage"), "finish_reason": response.get("finish_reason"),
                                    "reply": (response.get("raw_content") or "")[:200]})
                print(f"{name:28} budget {budget:4}: exit {result.exit_code}, {elapsed:6.1f} s, "
                      f"{len(dumps)} call(s): {', '.join(outcomes) or result.stderr.strip()[:100]}", flush=True)
    replies = [r for r in records if not r["outcome"].startswith("no reply")]
    counts = Counter(r["outcome"] for r in replies)
    print(f"\n{len(replies)} replies ({len(records) - len(replies)} requests refused by the server as too big):")
    for outcome, n in counts.most_common():
        print(f"  {outcome:36} {n:3}  {n / len(replies):6.1%}")
    if speeds:
        pn, pms, gn, gms = (sum(x) for x in zip(*speeds, strict=True))
        print(f"server: {pn / pms * 1000:.0f} prompt tokens/s, {gn / gms * 1000:.0f} generated tokens/s (all calls)")
    if args.out:
        args.out.write_text(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
