"""A session compacted with ``--session ID --fork`` (or ``--in-place``) resumes in the real client.

The shared Claude Code session with several requests and the shared Codex rollout are placed where
Claude Code 2.0.76 / 2.1.332 and Codex 0.128.0 look for them (the harness of :mod:`real_clients`);
``tcompact compact --session ID --fork`` then writes the compacted copy as a new session of the
same store, and the client resumes the new id: it must send the summary, the kept messages in
order, the new prompt last, each block once and every tool call answered — while the original file
stays byte for byte as it was. ``--in-place`` replaces the session under its own id (a backup kept)
and must resume the same way. Without the clients these tests skip; under TCOMPACT_REQUIRE_NPM they
fail.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from conftest import real_file
from real_clients import CLAUDE_VERSIONS, claude_code, codex, resume_all, session_id
from real_clients.checks import check_claude, check_codex, codex_history
from test_real_clients import PROMPT, _expected
from typer.testing import CliRunner

from tcompact.app import app


def _compact(home, sid: str, compressor: str, mode: str) -> dict:
    """``tcompact compact --session SID --fork|--in-place`` against the client's fake home."""
    env = {"HOME": str(home.home), "XDG_STATE_HOME": str(home.root / "state"),
           "CLAUDE_CONFIG_DIR": str(home.config if home.client.kind == "claude-code" else home.root / "none"),
           "CODEX_HOME": str(home.config if home.client.kind == "codex" else home.root / "none")}
    result = CliRunner().invoke(app, ["compact", "--session", sid[:8], f"--{mode}", "-c", compressor, "--now", "--json"],
                                env=env)
    assert result.exit_code == 0, result.stderr
    doc = orjson.loads(result.stdout)
    assert (doc["status"], doc["invariants"]) == ("compacted", [])
    return doc["session"]


@pytest.fixture(scope="module")
def forks(tmp_path_factory):
    """(client label, mode) → (session entry of compact --json, the original's path and bytes, what the
    client must send, Resume). What it must send is read before the resume, which appends a turn."""
    work = tmp_path_factory.mktemp("forks")
    clients = [claude_code(v) for v in CLAUDE_VERSIONS] + [codex()]
    cells = [(c, "fork") for c in clients] + [(clients[-2], "in-place"), (clients[-1], "in-place")]
    prepared = []
    for client, mode in cells:
        home = client.home(work / f"{client.kind}-{client.version}-{mode}")
        original = home.place(real_file("codemie" if client.kind == "claude-code" else "codex"))
        before = original.read_bytes()
        entry = _compact(home, session_id(original), "full" if client.kind == "claude-code" else "dialogue", mode)
        path = Path(entry["path"])
        expected = _expected(path) if client.kind == "claude-code" else codex_history(path)
        prepared.append(((client.label, mode), entry, original, before, expected, home))
    runs = resume_all([lambda h=h, e=e: h.resume(e["id"], PROMPT) for _, e, _, _, _, h in prepared])
    return {key: (entry, original, before, expected, run)
            for (key, entry, original, before, expected, _), run in zip(prepared, runs)}


@pytest.mark.parametrize("version", CLAUDE_VERSIONS)
def test_a_forked_claude_code_session_resumes_under_its_new_id(forks, version):
    entry, original, before, (expected, summary), run = forks[f"claude-code {version}", "fork"]
    fork = Path(entry["path"])
    assert (entry["mode"], entry["forked_from"], fork.parent) == ("fork", session_id(original), original.parent)
    assert entry["resume"].endswith(f"&& claude --resume {entry['id']}") and entry["id"] != session_id(original)
    check = check_claude(run.messages, expected, prompt=PROMPT, summary=summary)
    assert (run.returncode, check.problems) == (0, ())
    assert (check.summary_sent, check.missing, check.duplicated, check.unanswered, check.orphans) == (
        True, (), (), (), ())
    assert (check.late_thinking, check.thinking) == (0, 0)  # the original sends 65
    assert original.read_bytes() == before  # the original session is untouched


def test_a_claude_code_session_compacted_in_place_resumes_under_its_own_id(forks):
    entry, original, before, (expected, summary), run = forks[f"claude-code {CLAUDE_VERSIONS[-1]}", "in-place"]
    assert (entry["id"], Path(entry["path"])) == (session_id(original), original)
    assert Path(entry["backup"]).read_bytes() == before  # restore --session brings it back
    check = check_claude(run.messages, expected, prompt=PROMPT, summary=summary)
    assert (run.returncode, check.problems, check.summary_sent, check.missing, check.duplicated) == (
        0, (), True, (), ())
    assert (check.late_thinking, check.thinking) == (0, 0)


@pytest.mark.parametrize("mode", ("fork", "in-place"))
def test_a_codex_session_forked_or_compacted_in_place_resumes(forks, mode):
    entry, original, before, expected, run = forks[f"codex {codex().version}", mode]
    path = Path(entry["path"])
    assert entry["resume"].endswith(f"&& codex resume {entry['id']}")
    assert (path == original) is (mode == "in-place")
    check = check_codex(run.messages, expected, prompt=PROMPT)
    assert (run.returncode, check.prefix_matches, check.first_difference, check.prompt_last) == (0, True, None, True)
    assert len(expected) < 95  # the compacted history, not the 95 items of the original
    assert (original.read_bytes() == before) is (mode == "fork")
