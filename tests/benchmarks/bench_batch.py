"""Benchmark: ``tcompact batch`` over 1,000 sessions on the process pool and on Ray.

What it measures
----------------
1. It builds a corpus of ``--sessions`` (default 1,000) files in a temporary folder from the real
   sessions in ``../shared/transcripts``: each session cut after k of its lines (k spread over its
   length; a SWE-agent trajectory after k history entries), and, since five sessions give only
   ~550 distinct cuts, further copies of the cuts that differ by one unknown record (JSON Lines)
   or key (the trajectory), so every file has its own sha256. Nothing is copied into the
   repository; the folder is removed afterwards.
2. For each engine and worker count (default: pool × 1, pool × 2, ray × 2), ``tcompact batch
   KIND CORPUS --out DIR --json`` (``--kind``: inspect, compact with ``-c truncate,dialogue
   --now``, or eval with its default chains, or those ``--chain`` names) as a child process,
   into a fresh DIR and with a fresh token cache folder of its own (every run counts every text:
   the first run over a corpus, and none profits from another's counts): wall time, tasks a
   second, and the driver's peak RSS (its own VmHWM, polled: not its pool workers' or Ray's
   processes'). Ray is a local Ray that the command starts and stops itself, so
   its time includes Ray's start-up; the start-up alone is measured on a one-file corpus.
3. A resumed run over the finished DIR (every file hashed again, nothing recomputed); and an
   interrupted run (``--interrupt``, default ray:2): Ctrl-C (SIGINT) once ``--stop-at`` (default
   0.4) of the tasks have their line, then the same command again, whose results must be the
   pool's uninterrupted ones byte for byte once sorted.
4. The driver's peak RSS over the distinct cuts alone (about half the sessions) against all of
   them, to show that it does not grow with the corpus beyond the small per-task index.
5. That the pool's and Ray's results are the same bytes once sorted.
6. The engines' own cost per task and the driver's memory growth: ``--overhead`` (default 20,000)
   tasks that do next to nothing (a manifest of paths that do not exist: each task is one failed
   line), on the pool and on Ray, and the driver's peak RSS against a fifth of them.

Each measurement is repeated (``--repeat``, default 1: a run of 1,000 takes tens of seconds)
and the medians are printed, with the load average before and after, since the machine's cores
are shared. Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_batch.py [--sessions 1000] [--repeat 1] [--runs pool:1,pool:2,ray:2]
    [--kind inspect|compact|eval] [--chain CHAIN ...] [--interrupt ray:2] [--stop-at 0.4]
    [--overhead 20000]

It exits 0 when the measurements ran.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests"))
from batch_corpus import build_corpus, real_sources, sorted_lines  # noqa: E402
from conftest import SHARED  # noqa: E402


def make_corpus(dest: Path, sessions: int) -> list[Path]:
    """``sessions`` files: the distinct cuts of the real sessions, then copies differing by one record."""
    cuts = build_corpus(dest / "cuts", real_sources(SHARED), 10_000)
    files = list(cuts)
    copy = 1
    while len(files) < sessions:
        for path in cuts:
            if len(files) >= sessions:
                break
            target = dest / f"copy{copy}" / path.relative_to(dest / "cuts")
            target.parent.mkdir(parents=True, exist_ok=True)
            data = path.read_bytes()
            if path.suffix == ".traj":
                target.write_bytes(orjson.dumps({**orjson.loads(data), "bench_copy": copy}))
            else:
                target.write_bytes(data + orjson.dumps({"type": "bench_copy", "copy": copy}) + b"\n")
            files.append(target)
        copy += 1
    for extra in files[sessions:]:
        extra.unlink()
    return files[:sessions]


def _args(corpus: Path, out: Path, *, engine: str, workers: int, kind: str, chains: list[str]) -> list[str]:
    args = [sys.executable, "-m", "tcompact", "batch", kind, str(corpus), "--out", str(out), "--json",
            "--engine", engine, "--workers", str(workers)]
    if kind == "compact":
        args += ["-c", "truncate,dialogue", "--now"]
    if kind == "eval":
        args += [a for chain in chains for a in ("-c", chain)]
    return args


def _env(out: Path) -> dict[str, str]:
    """The child's environment: no RAY_ADDRESS (a local Ray), and a token cache folder of its own beside DIR."""
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "TCOMPACT_NO_CACHE")}
    env["TCOMPACT_CACHE_DIR"] = str(out.parent / f"{out.name}.cache")
    return env


def run(corpus: Path, out: Path, *, engine: str, workers: int, kind: str, chains: list[str] = ()) -> dict:
    """One ``tcompact batch`` child: wall seconds, the driver's peak RSS (MB) and its summary."""
    args = _args(corpus, out, engine=engine, workers=workers, kind=kind, chains=list(chains))
    load = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(out))
    peak = _Peak(proc.pid)
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - start
    peak.stop()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"batch failed: {stderr.decode()[-2000:]}")
    return {"wall": wall, "rss_mb": peak.kb / 1024, "summary": orjson.loads(stdout),
            "load": (load, os.getloadavg()[0])}


def interrupted(corpus: Path, out: Path, *, engine: str, workers: int, kind: str, chains: list[str], total: int,
                stop_at: float) -> tuple[dict, int, float]:
    """Ctrl-C a run once ``stop_at`` of the tasks have their line, then run it again: (the second run,
    the lines the first left, the first run's seconds)."""
    args = _args(corpus, out, engine=engine, workers=workers, kind=kind, chains=chains)
    results = out / "results.jsonl"
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(out))
    done, offset = 0, 0
    while proc.poll() is None and done < stop_at * total:  # counted from the new bytes only: lines are large
        time.sleep(0.05)
        if results.exists():
            with open(results, "rb") as fh:
                fh.seek(offset)
                tail = fh.read()
            done, offset = done + tail.count(b"\n"), offset + len(tail)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate()
    first = time.perf_counter() - start
    if proc.returncode != 130:
        raise SystemExit(f"the interrupted run ended with {proc.returncode}, not 130: {stderr.decode()[-2000:]}")
    left = results.read_bytes().count(b"\n")
    return run(corpus, out, engine=engine, workers=workers, kind=kind, chains=chains), left, first


class _Peak(threading.Thread):
    """The driver's own peak RSS: its VmHWM, read every 20 ms until it exits (``wait4``'s figure would
    include the pool workers and Ray processes it reaped)."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.kb, self._done = pid, 0, threading.Event()
        self.start()

    def run(self) -> None:
        while not self._done.is_set():
            try:
                for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        self.kb = max(self.kb, int(line.split()[1]))
            except (OSError, ValueError):
                pass
            self._done.wait(0.02)

    def stop(self) -> None:
        self._done.set()
        self.join()


def measure(corpus: Path, work: Path, *, engine: str, workers: int, kind: str, repeat: int, chains: list[str],
            keep: bool = False):
    """The median of ``repeat`` fresh runs (the last run's folder kept when ``keep``)."""
    runs = []
    for i in range(repeat):
        out = work / f"{engine}-{workers}-{i}"
        runs.append(run(corpus, out, engine=engine, workers=workers, kind=kind, chains=chains))
        shutil.rmtree(out.parent / f"{out.name}.cache", ignore_errors=True)
        if not (keep and i == repeat - 1):
            shutil.rmtree(out)
    runs.sort(key=lambda r: r["wall"])
    best = runs[len(runs) // 2]
    best["out"] = work / f"{engine}-{workers}-{repeat - 1}"
    return best


def _row(label: str, r: dict, sessions: int) -> str:
    t = r["summary"]["tasks"]
    rate = r["summary"]["tasks_per_second"] or 0.0  # the run alone, start-up and survey left out
    return (f"{label:<34} {r['wall']:8.2f} s {sessions / r['wall']:9.1f}/s {rate:9.1f}/s {r['rss_mb']:8.1f} MB   "
            f"ok {t['ok']}, failed {t['failed']}, not transcripts {t['not_transcript']}, resumed {t['resumed']}   load {r['load'][0]:.1f}→{r['load'][1]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--runs", default="pool:1,pool:2,ray:2", help="engine:workers,… to measure")
    parser.add_argument("--kind", default="inspect", choices=("inspect", "compact", "eval"))
    parser.add_argument("--chain", action="append", default=[], help="eval: a chain to run (repeatable; default: "
                        "eval's own, every compressor and the default chain)")
    parser.add_argument("--interrupt", default="ray:2", help="engine:workers of the interrupted run ('': none)")
    parser.add_argument("--stop-at", type=float, default=0.4, help="share of the tasks done when it is interrupted")
    parser.add_argument("--overhead", type=int, default=20_000, help="near-empty tasks to time (0: none)")
    opts = parser.parse_args()
    if not SHARED.is_dir():
        raise SystemExit(f"the real sessions are not at {SHARED} (set TCOMPACT_SHARED_DIR)")
    work = Path(tempfile.mkdtemp(prefix="bench-batch-"))
    try:
        _bench(work, opts)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _bench(work: Path, opts: argparse.Namespace) -> None:
    files = make_corpus(work / "corpus", opts.sessions)
    size = sum(f.stat().st_size for f in files)
    what = f"batch {opts.kind}" + (f" -c {' -c '.join(opts.chain)}" if opts.chain else "")
    print(f"corpus: {len(files)} sessions, {size / 1e6:.1f} MB, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}; {what}, median of {opts.repeat}")
    print(f"{'run':<34} {'wall':>10} {'tasks/wall':>11} {'in the run':>11} {'driver':>11}")
    results = {}
    for spec in opts.runs.split(","):
        engine, workers = spec.split(":")
        r = measure(work / "corpus", work, engine=engine, workers=int(workers), kind=opts.kind, repeat=opts.repeat,
                    chains=opts.chain, keep=True)
        results[spec] = r
        print(_row(f"{engine} × {workers}", r, len(files)), flush=True)
    first = next(iter(results.values()))
    resumed = run(work / "corpus", first["out"], engine="pool", workers=first["summary"]["workers"], kind=opts.kind,
                  chains=opts.chain)
    print(_row("resumed (pool, all done)", resumed, len(files)))
    if opts.interrupt:
        _interrupted(work, opts, results, total=len(files))
    q = run(work / "corpus" / "cuts", work / "cuts", engine="pool", workers=2, kind=opts.kind, chains=opts.chain)
    print(_row(f"pool × 2, {q['summary']['tasks']['total']} sessions", q, q["summary"]["tasks"]["total"]))
    one = work / "one"
    one.mkdir()
    shutil.copy(files[0], one / files[0].name)
    for engine in ("pool", "ray"):
        if any(s.startswith(engine) for s in results):
            r = run(one, work / f"one-{engine}", engine=engine, workers=2, kind=opts.kind, chains=opts.chain)
            print(_row(f"{engine} × 2, one file (start-up)", r,
                       r["summary"]["tasks"]["total"]))
    _compare(results)
    if opts.overhead:
        _overhead(work, opts.overhead, engines={s.split(":")[0] for s in results})


def _interrupted(work: Path, opts: argparse.Namespace, results: dict, *, total: int) -> None:
    """Ctrl-C at ``--stop-at``, the same command again, and its results against the pool's."""
    engine, workers = opts.interrupt.split(":")
    out = work / f"interrupted-{engine}-{workers}"
    again, left, first = interrupted(work / "corpus", out, engine=engine, workers=int(workers), kind=opts.kind,
                                     chains=opts.chain, total=total, stop_at=opts.stop_at)
    print(f"{'interrupted (' + opts.interrupt + ')':<34} {first:8.2f} s  Ctrl-C after {left} lines, exit 130")
    print(_row(f"  then resumed ({opts.interrupt})", again, total))
    pools = [r for s, r in results.items() if s.startswith("pool")]
    if pools:
        same = sorted_lines(pools[0]["out"] / "results.jsonl") == sorted_lines(out / "results.jsonl")
        totals = pools[0]["summary"]["totals"] == again["summary"]["totals"]
        print(f"  interrupted + resumed over the pool's uninterrupted run: results identical once sorted: {same}; "
              f"totals identical: {totals}")


def _overhead(work: Path, count: int, *, engines: set[str]) -> None:
    """Near-empty tasks: what an engine and the driver cost per task, and what the driver's memory does."""
    for n in (count // 5, count):
        manifest = work / f"missing-{n}.txt"
        manifest.write_text("".join(f"{work}/missing/{i:08d}.jsonl\n" for i in range(n)))
        for engine in sorted(engines) if n == count else ["pool"]:
            r = run(manifest, work / f"missing-{engine}-{n}", engine=engine, workers=2, kind="inspect")
            print(_row(f"{engine} × 2, {n:,} empty tasks", r, n), flush=True)


def _compare(results: dict) -> None:
    pools = {s: r for s, r in results.items() if s.startswith("pool")}
    rays = {s: r for s, r in results.items() if s.startswith("ray")}
    for spec, r in rays.items():
        twin = pools.get(spec.replace("ray", "pool"))
        if twin is None:
            continue
        same = sorted_lines(twin["out"] / "results.jsonl") == sorted_lines(r["out"] / "results.jsonl")
        totals = twin["summary"]["totals"] == r["summary"]["totals"]
        print(f"{spec} over {spec.replace('ray', 'pool')}: {r['wall'] / twin['wall']:.2f}× the time "
              f"(+{r['wall'] - twin['wall']:.1f} s); results identical once sorted: {same}; totals identical: {totals}")
    if "pool:1" in pools and "pool:2" in pools:
        print(f"pool × 2 over pool × 1: speed-up {pools['pool:1']['wall'] / pools['pool:2']['wall']:.2f}×")


if __name__ == "__main__":
    main()
