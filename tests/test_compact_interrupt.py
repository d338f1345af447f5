"""Ctrl-C during ``tcompact compact``: it says so and stops, and leaves nothing behind (issue 23 items 18, 20).

Each run is a real process (``python -m tcompact``) whose summariser calls go to a loopback server
that never answers, so the interrupt always lands where a slow model would keep it: in calls in
flight, on the main thread and on round-level's worker threads. How fast it stops is measured in
``tests/benchmarks/bench_interrupt.py``; here the process must end (the timeout only keeps a hang
from blocking the suite: before the fix it waited for every call in flight).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SAMPLES
from openai_server import FakeOpenAI, delay
from session_stores import D, env_for, small_home

INTERRUPTED = "Error: interrupted, nothing written — the input is untouched; run the same command again\n"


def _tree(root: Path) -> set[str]:
    """Every file and folder below ``root``."""
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _interrupt(args: list[str], *, cwd: Path, env: dict[str, str], server: FakeOpenAI, calls: int):
    """Start ``tcompact ARGS``, wait until ``calls`` summariser calls are in flight, press Ctrl-C."""
    server.respond_with(lambda request: delay(120))
    proc = subprocess.Popen([sys.executable, "-m", "tcompact", *args, "--summarizer", "openai", "--model", "m",
                             "--base-url", server.base_url], cwd=cwd, env={**os.environ, **env,
                                                                           "OPENAI_API_KEY": "sk-test-0000000000"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while len(server.requests) < calls and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(server.requests) >= calls, proc.communicate(timeout=5)
    proc.send_signal(signal.SIGINT)
    try:
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()  # (a run that did not stop: the test fails, and the process goes)
    return proc.returncode, stdout.decode(), stderr.decode()


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


def test_ctrl_c_with_calls_in_flight_on_worker_threads_says_so_and_writes_nothing(tmp_path, server):
    # issue 23 item 20: Ctrl-C was silent, and round-level waited for its calls in flight before it let go
    (tmp_path / "s.jsonl").write_bytes((SAMPLES / "chat_tool_session.jsonl").read_bytes())
    before = _tree(tmp_path)
    code, stdout, stderr = _interrupt(
        ["compact", "s.jsonl", "-c", "round-level", "--now", "--concurrency", "4", "-o", "out.jsonl",
         "--set", "round-level.first_pass_target_tokens=300", "--set", "round-level.compression_call_max_tokens=3000"],
        cwd=tmp_path, env={}, server=server, calls=2)
    assert (code, stdout, stderr) == (130, "", INTERRUPTED)
    assert _tree(tmp_path) == before


def test_ctrl_c_during_a_fork_leaves_no_folder_behind(tmp_path, server):
    # issue 23 item 18: an interrupted run left the folders it had made (the fork's dated folder, the state folder)
    home = small_home(tmp_path / "home")
    before = _tree(home)
    code, stdout, stderr = _interrupt(["compact", "--session", D, "--fork", "-c", "full"], cwd=tmp_path,
                                      env=env_for(home), server=server, calls=1)
    assert (code, stdout, stderr) == (130, "", INTERRUPTED)
    assert _tree(home) == before
