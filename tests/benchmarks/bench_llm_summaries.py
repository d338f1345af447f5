"""Benchmark: real small instruction models through the openai summariser, beside the extractive one.

What it measures
----------------
One llama.cpp server (``tests/llm_server.py``: xllamacpp) with Qwen2.5-Coder-0.5B- or 1.5B-Instruct
(GGUFs joined from their PyPI chunks by ``tests/llm_models.py``), one slot of ``--window`` tokens,
two threads, on 127.0.0.1. For each shared session (``../shared/transcripts``) and chain, ``tcompact
eval --metric both`` as a library call, twice: with the extractive summariser and with the openai
one against the server (the run options of ``compact``: the window the server reports, the derived
deadline, dumps written). Per session and summariser it prints:

* calls (the dumps written), the seconds the model spent, and the replies refused, by reason;
* every compaction's outcome (the canary run and one per needed-token cut): accepted, or why not;
* the size after (tokens of the planted copy's compaction, and its share of the input);
* canary survival (kept / planted) and the needed-token recall (kept / needed over the cuts).

Run it by hand (a 0.5B call takes tens of seconds to minutes on two shared cores, a 1.5B one minutes):

    python tests/benchmarks/bench_llm_summaries.py --model qwen2.5-coder-0.5b --window 4096 \\
        --sessions ccviewer,sweagent,ccviewer:sidechain-6340ddef --cuts 2 [--chain full] [--out FILE.json]

``--base-url`` uses a server already running (its model and window), instead of starting one.
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

from conftest import REAL_FILES, SHARED  # noqa: E402
from llm_models import MODELS, model_path  # noqa: E402
from llm_server import LlamaServer, missing_components  # noqa: E402

from tcompact.defaults import DEFAULT_CHAIN  # noqa: E402
from tcompact.evaluation import EvalOptions, evaluate_paths  # noqa: E402
from tcompact.summarizers import RunSettings  # noqa: E402


def reasons(dumps: list[dict]) -> Counter:
    """What came of each call: ok, or the first words of why it failed."""
    out: Counter = Counter()
    for d in dumps:
        error = d.get("error") or {}
        message = (error.get("message") or "").removeprefix("not a usable summary: ")
        out["ok" if not error else f"{error.get('kind')}: {message[:48]}"] += 1
    return out


def outcomes(report: dict) -> Counter:
    """Accepted, or the reason, of every compaction of the report (canaries, then each needed cut)."""
    out: Counter = Counter()
    for f in report["files"]:
        runs = list(f.get("results") or []) + [r for cut in (f.get("needed") or {}).get("cuts", [])
                                                 for r in cut.get("results", [])]
        for r in runs:
            status = r.get("status")
            out["accepted" if status == "compacted" else f"{status}: {str(r.get('reason'))[:60]}"] += 1
    return out


def measure(path: Path, chain: str, options: EvalOptions, dumps: Path | None) -> dict:
    started = time.perf_counter()
    report = evaluate_paths([path], options)
    elapsed = time.perf_counter() - started
    docs = [json.loads(p.read_text()) for p in sorted(dumps.rglob("*.json"))] if dumps and dumps.exists() else []
    canary = report["summary"][0]
    needed = next((r for r in report["needed"]["summary"] if r["chain"] == chain), {"kept": 0, "needed": 0})
    latency = sum((d.get("response") or {}).get("latency_s") or 0 for d in docs)
    return {"session": path.name + (f":{options.transcript}" if options.transcript else ""), "chain": chain, "summarizer": options.summarizer, "elapsed_s": round(elapsed, 1),
            "calls": len(docs), "model_s": round(latency, 1), "replies": dict(reasons(docs)),
            "outcomes": dict(outcomes(report)), "tokens_before": canary["tokens_before"],
            "tokens_after": canary["tokens_after"], "ratio": canary["ratio"],
            "canaries": [canary["overall"]["kept"], canary["overall"]["planted"]],
            "needed": [needed["kept"], needed["needed"]], "report": report, "dumps": docs}


def row(r: dict) -> str:
    kept, planted = r["canaries"]
    nk, nn = r["needed"]
    return (f"| {r['session'][:16]}…{r['session'][-20:]} | {r['chain']} | {r['summarizer']} | {r['calls']} | {r['model_s']:,.0f} | "
            f"{r['elapsed_s']:,.0f} | {', '.join(f'{k} ×{v}' for k, v in r['outcomes'].items())} | "
            f"{', '.join(f'{k} ×{v}' for k, v in r['replies'].items()) or '—'} | {r['tokens_before']:,} → "
            f"{r['tokens_after']:,} ({r['ratio']}) | {kept}/{planted} | {nk}/{nn} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="qwen2.5-coder-0.5b")
    parser.add_argument("--window", type=int, default=4096)
    parser.add_argument("--sessions", default="ccviewer,sweagent", help=f"of {', '.join(REAL_FILES)}; NAME:ID for "
                        "one transcript of the file (a sub-agent)")
    parser.add_argument("--chain", action="append", help=f"(repeatable; default: full and {DEFAULT_CHAIN})")
    parser.add_argument("--cuts", type=int, default=2)
    parser.add_argument("--per-kind", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--base-url", help="a server already running")
    parser.add_argument("--timeout", type=float, help="seconds per call (default: derived from the server's speed)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    chains = list(dict.fromkeys(args.chain or ["full", DEFAULT_CHAIN]))
    model = model_path(args.model)
    if not args.base_url and (missing_components() or isinstance(model, str)):
        print(f"cannot run: {missing_components() or model}")
        return 2
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        server = None if args.base_url else LlamaServer(n_ctx=args.window, parallel=1, threads=args.threads,
                                                         batch_threads=args.threads, model=Path(str(model)),
                                                         alias=args.model, log=Path(scratch) / "llama.log")
        url = args.base_url or server.__enter__().base_url
        try:
            for spec in args.sessions.split(","):
                name, _, transcript = spec.partition(":")
                path = SHARED / REAL_FILES[name]
                for chain in chains:
                    common = {"chains": (chain,), "metric": "both", "cuts": args.cuts, "per_kind": args.per_kind,
                              "transcript": transcript or None}
                    results.append(measure(path, chain, EvalOptions(**common), None))
                    print(row(results[-1]), flush=True)
                    dumps = Path(scratch) / f"{name}-{chain}"
                    options = EvalOptions(**common, summarizer="openai", model=args.model, base_url=url,
                                          run=RunSettings(concurrency=1, timeout=args.timeout), dump_dir=dumps)
                    results.append(measure(path, chain, options, dumps))
                    print(row(results[-1]), flush=True)
                    if args.out:
                        args.out.write_text(json.dumps(results, indent=1, default=str))
        finally:
            if server is not None:
                server.__exit__(None, None, None)
    print("\n| session | chain | summariser | calls | model s | wall s | compactions | replies | tokens (ratio) | "
          "canaries | needed |\n|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(row(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
