"""bench_inspect.py's sections on sessions that grow, and on the commands a live session runs (status line, hooks).

* A session grown by 10%: its first inspect (a fresh cache), then — as a live agent has it — the file
  as it was before, inspected, the rest appended to the same file, and inspected again: the second
  read goes on from the state the first one kept. Ratio: the grown read to the first inspect.
* The live case: a long Claude Code session from 70% of its lines on, a turn appended (what the agent
  writes between two requests: the last reply's results and the next reply), read again, 20 times; each read timed next to a read of the same bytes
  from scratch (a new cache, a new path), and their ratio.
* ``tcompact statusline`` (warm: run once before) and ``tcompact hook session-start`` (cold: new cache and
  state folders), when this checkout has them.
"""

from __future__ import annotations

import json
import shlex
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import orjson
from _common import Run, child_env, inspect_command, measure, median_run, seeded_cache, tcompact_base

TURNS = 20


def grown_ratio(full: Path, before: Path, work: Path, *, seed: Path, cache: Path) -> tuple[Run, Run]:
    """The first inspect of ``full`` and the inspect of ``work`` grown from ``before`` to ``full`` by an append."""
    fresh = measure(inspect_command(full), env=child_env(seeded_cache(seed, cache)))
    seeded_cache(seed, cache)
    shutil.copyfile(before, work)
    measure(inspect_command(work), env=child_env(cache))  # the session before it grew
    with open(work, "ab") as fh:
        fh.write(full.read_bytes()[before.stat().st_size:])
    grown = measure(inspect_command(work), env=child_env(cache))
    return fresh, grown


def prefix_of(full: Path, out: Path, share: float = 1 / 1.1) -> Path:
    """``full``'s first whole lines up to ``share`` of its bytes, written to ``out``."""
    data = full.read_bytes()
    out.write_bytes(data[:data.rindex(b"\n", 0, int(len(data) * share)) + 1])
    return out


def turns_of(lines: list[bytes], start: int) -> list[int]:
    """Line numbers (0-based, exclusive ends) where the turns after ``start`` end: a turn is what an agent
    appends between two requests to its model — the results of the last reply's calls (or the user's
    prompt) and the next reply, whatever number of lines it takes — so each ends where a new reply starts."""
    ends, last = [], None
    for i in range(start + 1, len(lines)):
        try:
            d = orjson.loads(lines[i])
        except orjson.JSONDecodeError:
            continue
        reply = _reply_id(d, i)
        if reply is not None and reply != last:
            if last is not None:
                ends.append(i)
            last = reply
    return ends + [len(lines)]


def _reply_id(d: dict, i: int) -> str | None:
    """The id of the reply a line belongs to (a Claude Code assistant line's message id; a chat assistant
    message is a reply of its own), None for any other line."""
    if d.get("type") == "assistant" and not d.get("isSidechain") and isinstance(d.get("message"), dict):
        return str(d["message"].get("id") or i)
    return f"line-{i}" if d.get("role") == "assistant" else None


def live(session: Path, work: Path, *, seed: Path, cache: Path, turns: int = TURNS) -> list[tuple[int, Run, Run]]:
    """Append a turn and read again, ``turns`` times: (bytes, the read, a read from scratch) each time."""
    lines = session.read_bytes().splitlines(keepends=True)
    start = int(len(lines) * 0.7)
    ends = [e for e in turns_of(lines, start) if e > start][:turns]
    seeded_cache(seed, cache)
    work.write_bytes(b"".join(lines[:start]))
    measure(inspect_command(work), env=child_env(cache))
    scratch_cache, scratch_file = cache.with_name(cache.name + "-scratch"), work.with_name("scratch-" + work.name)
    out, at = [], start
    for end in ends:
        with open(work, "ab") as fh:  # as the agent appends: the same file
            fh.write(b"".join(lines[at:end]))
        at = end
        read = measure(inspect_command(work), env=child_env(cache))
        shutil.copyfile(work, scratch_file)
        scratch = measure(inspect_command(scratch_file), env=child_env(seeded_cache(seed, scratch_cache)))
        out.append((work.stat().st_size, read, scratch))
    return out


def print_live(rows: list[tuple[int, Run, Run]]) -> float:
    """The live reads one by one; the median ratio."""
    for n, (size, read, scratch) in enumerate(rows, 1):
        print(f"  turn {n:2}: {size / 2**20:6.2f} MB, read {read.seconds:.3f} s (cpu {read.cpu:.3f}), from scratch "
              f"{scratch.seconds:.3f} s (cpu {scratch.cpu:.3f}): {read.seconds / scratch.seconds:.2f}x", flush=True)
    ratio = statistics.median(r.seconds / s.seconds for _, r, s in rows)
    cpu = statistics.median(r.cpu / s.cpu for _, r, s in rows)
    print(f"  median per read {statistics.median(r.seconds for _, r, _ in rows):.3f} s; ratio {ratio:.2f}x "
          f"(cpu {cpu:.2f}x)")
    return ratio


def has_command(name: str) -> bool:
    """Whether this checkout's tcompact has the command ``name``."""
    return subprocess.run([*tcompact_base(), name, "--help"], capture_output=True, env=child_env()).returncode == 0


def piped(args: list[str], payload: Path) -> list[str]:
    """``tcompact ARGS < payload`` as one process (the shell execs it)."""
    return ["sh", "-c", f"exec {shlex.join([*tcompact_base(), *args])} < {shlex.quote(str(payload))}"]


def statusline(session: Path, work: Path, repeat: int) -> Run:
    """``tcompact statusline`` on ``session``, warm: each run after one that read it."""
    payload = work / "statusline.json"
    payload.write_text(json.dumps({"session_id": "bench", "transcript_path": str(session),
                                   "model": {"id": "claude-sonnet-4-5", "display_name": "Sonnet 4.5"},
                                   "cost": {"total_cost_usd": 1.5}}))
    env = child_env(work / "cache", XDG_STATE_HOME=str(work / "state"))
    measure(piped(["statusline"], payload), env=env)
    return median_run([measure(piped(["statusline"], payload), env=env) for _ in range(repeat)])


def hook_cold(session: Path, work: Path, repeat: int, *, fresh: Callable[[], Path]) -> Run:
    """``tcompact hook session-start`` on ``session``, cold: new cache and state folders for every run."""
    payload = work / "hook.json"
    payload.write_text(json.dumps({"session_id": "bench", "transcript_path": str(session), "source": "compact",
                                   "trigger": "manual"}))
    runs = []
    for n in range(repeat):
        state = work / f"state-{n}"
        runs.append(measure(piped(["hook", "session-start", "--agent", "claude"], payload),
                            env=child_env(fresh(), XDG_STATE_HOME=str(state))))
    return median_run(runs)


if __name__ == "__main__":
    sys.exit("a module of bench_inspect.py")
