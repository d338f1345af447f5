"""tcompact's hooks in the real clients: after the agent's own compaction, its next request carries the handoff.

Each client runs in a fresh home whose settings already hold hooks of the user's, with tcompact's
installed by ``tcompact hooks install`` (the hooks run the Python of this test run with ``-m
tcompact``), against the recording server of :mod:`real_clients`:

- Claude Code 2.0.76 and 2.1.332 resume a real session with ``-p /compact`` (PreCompact, the
  compaction request, SessionStart with source ``compact``), then, in a new process, with one more
  prompt. 2.1.332 keeps the SessionStart context in the session and sends it after the summary;
  2.0.76 keeps it in memory only, so the handoff comes with the prompt through UserPromptSubmit.
- Codex 0.171.0 resumes the real rollout twice: the first answer reports more tokens than
  ``model_auto_compact_token_limit``, so the second turn begins with a remote compaction
  (PreCompact, SessionStart ``compact``), and its request carries the handoff after the compaction
  item. Hooks run with ``--dangerously-bypass-hook-trust`` (a user trusts them once in /hooks).

Checked from what the clients sent: the handoff tcompact kept is in the first request after the
compaction, once, after the summary and before the prompt; the transcript as it stood before the
compaction is in the state folder with the payload, and ``tcompact inspect`` reads it; a hook that
cannot read the transcript (a line that is not JSON, which the clients pass over) injects nothing
and the session goes on; ``hooks uninstall`` gives back each settings file byte for byte.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import real_file
from real_clients import CLAUDE_VERSIONS, CODEX_HOOKS_VERSION, Home, Resume, claude_code, codex, resume_all, session_id
from real_clients.server import is_compaction

from tcompact.formats import ReadOptions, read_file
from tcompact.rounds import is_real_user

PROMPT = "Reply with the word OK. tcompact-after-compaction"
FIRST = "Go on. tcompact-before-compaction"  # Codex: the turn whose usage makes the next one compact
TAG = "<tcompact_handoff>"
#: Settings as a user has them: other settings, a hook on an event tcompact uses too, one on another event.
SETTINGS = {
    "claude": '{\n  "cleanupPeriodDays": 30,\n  "hooks": {\n    "SessionStart": [\n      {\n        "matcher": "startup",\n'
              '        "hooks": [{"type": "command", "command": "true"}]\n      }\n    ],\n    "Stop": [\n'
              '      {"hooks": [{"type": "command", "command": "true"}]}\n    ]\n  }\n}\n',
    "codex": '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true", "timeout": 5}]}]}}',
}


@dataclass
class Cell:
    """One client run: its home, the session placed, what install and the two resumes did."""

    home: Home
    sid: str
    placed: Path
    original: bytes
    settings: Path
    before: bytes
    installed: dict[str, Any]
    compact: Resume
    after: Resume
    uninstalled: bytes | None = None


def _session(kind: str, home: Home, failing: bool) -> tuple[str, Path, bytes]:
    src = real_file("drmaciver" if kind == "claude-code" else "codex")
    placed = home.place(src)
    if failing:  # a line no reader of tcompact's takes: the hooks cannot read the transcript
        lines = placed.read_bytes().split(b"\n")
        placed.write_bytes(b"\n".join([*lines[:10], b"this line is not JSON", *lines[10:]]))
    return session_id(src), placed, placed.read_bytes()


def _prepare(client, root: Path, failing: bool) -> dict[str, Any]:
    home = client.home(root)
    sid, placed, original = _session(client.kind, home, failing)
    agent = "claude" if client.kind == "claude-code" else "codex"
    settings = home.config / ("settings.json" if agent == "claude" else "hooks.json")
    settings.write_text(SETTINGS[agent])
    home.install_hooks("--timeout", "60")  # a loaded CI machine must not make the hooks give up
    installed = json.loads(settings.read_text())
    if agent == "codex":
        home.codex_config["model_auto_compact_token_limit"] = 20_000
    return {"home": home, "sid": sid, "placed": placed, "original": original, "settings": settings,
            "before": SETTINGS[agent].encode(), "installed": installed}


def _job(prep: dict[str, Any]):
    home, sid = prep["home"], prep["sid"]

    def run() -> tuple[Resume, Resume]:
        first = home.resume(sid, "/compact" if home.client.kind == "claude-code" else FIRST, timeout=180)
        return first, home.resume(sid, PROMPT, timeout=180)
    return run


@pytest.fixture(scope="module")
def cells(tmp_path_factory) -> dict[tuple[str, bool], Cell]:
    """(client label, failing) → Cell; each settings file is uninstalled once both resumes are done."""
    work = tmp_path_factory.mktemp("hooks")
    clients = [claude_code(v) for v in CLAUDE_VERSIONS] + [codex(CODEX_HOOKS_VERSION)]
    keys = [(c.label, failing) for c in clients for failing in (False, True)]
    preps = [_prepare(c, work / f"{c.kind}-{c.version}-{'failing' if failing else 'ok'}", failing)
             for c in clients for failing in (False, True)]
    runs = resume_all([_job(p) for p in preps])
    out = {}
    for key, prep, (first, after) in zip(keys, preps, runs):
        cell = Cell(compact=first, after=after, **prep)
        result = cell.home.tcompact("hooks", "uninstall", "--agent", "claude" if cell.home.client.kind ==
                                    "claude-code" else "codex")
        assert result.exit_code == 0, result.output
        cell.uninstalled = cell.settings.read_bytes()
        out[key] = cell
    return out


LABELS = [f"claude-code {v}" for v in CLAUDE_VERSIONS] + [f"codex {CODEX_HOOKS_VERSION}"]


def _live(cell: Cell) -> list[Path]:
    agent = "claude" if cell.home.client.kind == "claude-code" else "codex"
    folder = cell.home.state / "tcompact" / "live" / f"{agent}-{cell.sid}"
    return sorted(p for p in folder.iterdir() if p.is_dir())


def _log(cell: Cell) -> list[str]:
    return (cell.home.state / "tcompact" / "hooks.log").read_text().splitlines()


def _texts(cell: Cell) -> list[tuple[str, str]]:
    """The request that carries the prompt as (kind, text) in order: Claude Code's text blocks, Codex's items
    (a compaction item as ("compaction", ""))."""
    assert cell.after.context is not None, cell.after.stderr[-2000:]
    return _texts_of(cell.after.context)


def _texts_of(body: dict[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for m in body.get("messages") or body.get("input"):
        if m.get("type") == "compaction":
            out.append(("compaction", ""))
            continue
        content = m.get("content")
        parts = [{"text": content}] if isinstance(content, str) else content or []
        out += [(m.get("role", m.get("type", "")), p.get("text", "")) for p in parts if isinstance(p, dict)]
    return out


def _first_request(path: Path) -> str:
    return next(m.text for m in read_file(path, ReadOptions(full_history=True)).transcript().messages
                if is_real_user(m))


@pytest.mark.parametrize("label", LABELS)
def test_the_request_after_the_compaction_carries_the_handoff(cells, label):
    cell = cells[label, False]
    assert (cell.compact.returncode, cell.after.returncode) == (0, 0), cell.after.stderr[-2000:]
    (folder,) = _live(cell)
    handoff = (folder / "handoff.md").read_text()
    texts = _texts(cell)
    carrying = [n for n, (_, text) in enumerate(texts) if handoff in text]
    assert len(carrying) == 1 and sum(text.count(TAG) for _, text in texts) == 1
    if cell.home.client.kind == "claude-code":
        summary = next(n for n, (_, text) in enumerate(texts) if "continued from a previous conversation" in text)
    else:
        summary = [kind for kind, _ in texts].index("compaction")
        assert any(is_compaction(r.body) for r in cell.after.requests)
    assert summary < carrying[0] < len(texts) - 1 and texts[-1] == ("user", PROMPT)
    assert _first_request(cell.placed)[:300] in handoff  # the user's own words, verbatim
    # the clients cut or file away hook context past 10,000 characters (Claude Code) or bytes (Codex): the
    # handoff's 9,000 bytes are used (the session's snapshot and working set are 17,000 bytes unbounded)
    assert 8_000 < len(handoff.encode()) <= 9_000


@pytest.mark.parametrize("label", LABELS)
def test_the_transcript_before_the_compaction_is_kept_and_readable(cells, label):
    cell = cells[label, False]
    (folder,) = _live(cell)
    kept = json.loads((folder / "payload.json").read_text())
    snapshot = folder / kept["snapshot"]
    trigger = "manual" if cell.home.client.kind == "claude-code" else "auto"
    assert (kept["payload"]["hook_event_name"], kept["payload"]["trigger"], kept["transcript"]) == (
        "PreCompact", trigger, str(cell.placed))
    data = snapshot.read_bytes()
    assert data.startswith(cell.original) and kept["bytes"] == len(data)
    assert b"compact_boundary" not in data and b'"type":"compacted"' not in data  # taken before the compaction
    assert b"compact_boundary" in cell.placed.read_bytes() or b'"type":"compacted"' in cell.placed.read_bytes()
    result = cell.home.tcompact("inspect", str(snapshot), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["files"][0]["transcripts"][0]["messages"] > 50


@pytest.mark.parametrize("label", LABELS)
def test_the_hooks_log_says_what_each_did(cells, label):
    lines = _log(cells[label, False])
    events = [line.split()[1] for line in lines]
    outcomes = {line.split()[1]: line.split(" ok: ", 1)[1] for line in lines}
    if label.startswith("codex"):
        assert events == ["pre-compact", "session-start"]
    else:
        assert events == ["pre-compact", "session-start", "prompt-submit"]
        expected = ("pending handoff of" if label.endswith("2.0.76") else "handoff kept in the session by the client")
        assert outcomes["prompt-submit"].startswith(expected)
    assert outcomes["session-start"].startswith("handoff of ")


@pytest.mark.parametrize("label", LABELS)
def test_a_hook_that_cannot_read_the_transcript_leaves_the_session_working(cells, label):
    cell = cells[label, True]
    assert (cell.compact.returncode, cell.after.returncode) == (0, 0), cell.after.stderr[-2000:]
    texts = _texts(cell)
    assert texts[-1] == ("user", PROMPT) and not any(TAG in text for _, text in texts)
    (folder,) = _live(cell)
    assert not (folder / "handoff.md").exists() and (folder / "payload.json").exists()
    failed = [line for line in _log(cell) if " session-start " in line]
    assert len(failed) == 1 and " failed: cannot read the transcript " in failed[0]
    assert failed[0].endswith("— nothing injected")


@pytest.mark.parametrize("label", LABELS)
def test_install_added_hooks_that_run_this_python_beside_the_users(cells, label):
    cell = cells[label, False]
    hooks = cell.installed["hooks"]
    ours = {event: [h["command"] for g in groups for h in g["hooks"] if "tcompact" in h["command"]]
            for event, groups in hooks.items()}
    python = shlex.quote(sys.executable)
    agent = "claude" if label.startswith("claude") else "codex"
    runs = {"PreCompact": "pre-compact", "SessionStart": "session-start", "UserPromptSubmit": "prompt-submit"}
    expected = {event: [f"{python} -m tcompact hook {runs[event]} --agent {agent} --timeout 60"]
                for event in (("PreCompact", "SessionStart", "UserPromptSubmit") if agent == "claude"
                              else ("PreCompact", "SessionStart"))}
    assert {e: c for e, c in ours.items() if c} == expected
    users = json.loads(SETTINGS[agent])
    assert {k: v for k, v in cell.installed.items() if k != "hooks"} == {k: v for k, v in users.items() if k != "hooks"}
    for event, groups in users["hooks"].items():
        assert hooks[event][:len(groups)] == groups  # the user's own hooks first, as they were


@pytest.mark.parametrize("failing", (False, True))
@pytest.mark.parametrize("label", LABELS)
def test_uninstall_gives_back_the_users_settings_byte_for_byte(cells, label, failing):
    cell = cells[label, failing]
    assert cell.uninstalled == cell.before


@pytest.fixture(scope="module")
def forks(cells) -> dict[str, tuple[dict[str, Any], Resume]]:
    """label → (what ``restore --session SID --pre-compaction --json`` wrote, the client resuming it)."""
    out = {}
    for label in LABELS[1:]:  # Claude Code 2.1.332 and Codex
        cell = cells[label, False]
        result = cell.home.tcompact("restore", "--session", cell.sid, "--pre-compaction")
        assert result.exit_code == 0, result.output
        new = result.stdout.split("Forked as a new ", 1)[1].split()[2].rstrip(":")
        out[label] = (new, result.stdout)
        cell.home.codex_config.clear()  # no auto-compaction this time: the history as it was is sent
    runs = resume_all([lambda c=cells[label, False], n=new: c.home.resume(n, PROMPT, timeout=180)
                       for label, (new, _) in out.items()])
    return {label: (entry, run) for (label, entry), run in zip(out.items(), runs)}


@pytest.mark.parametrize("label", LABELS[1:])
def test_the_session_before_the_compaction_resumes_as_a_new_one(cells, forks, label):
    cell = cells[label, False]
    (new, printed), run = forks[label]
    assert new != cell.sid and "Resume it with:" in printed
    assert run.returncode == 0, run.stderr[-2000:]
    sent = json.dumps(run.context, ensure_ascii=False)
    if label.startswith("claude"):
        assert _first_request(cell.placed)[:200] in " ".join(text for _, text in _texts_of(run.context))
    else:  # this rollout keeps the user's words in event_msg lines only, which Codex never sends: its tool calls
        assert sent.count('"type": "function_call_output"') == 38
    assert "continued from a previous conversation" not in sent and '"type": "compaction"' not in sent
    assert TAG not in sent  # the session as it was before the compaction and its handoff
