"""``tcompact hooks install|status|uninstall``, ``tcompact hook …`` and ``tcompact statusline`` as a user runs them.

Install and uninstall are run on settings files that already hold other hooks, in a test home
(``HOME``, the agents' config folders and ``XDG_STATE_HOME`` all under tmp_path). The hooks are
run as the agent runs them — ``python -m tcompact hook …`` in a new process, the payload on stdin —
and must exit 0 whatever they are given, saying what went wrong on stderr and in the log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import real_file
from typer.main import get_command
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.hooks.run import OPTIONS

CLAUDE_SETTINGS = ('{\n    "permissions": {"allow": ["Bash(ls:*)"]},\n    "hooks": {\n        "PreCompact": [\n'
                   '            {"matcher": "auto", "hooks": [{"type": "command", "command": "cp \\"$X\\" /tmp/x"}]}\n'
                   '        ]\n    }\n}\n')


@pytest.fixture
def home(tmp_path) -> dict[str, str]:
    (tmp_path / "claude").mkdir()
    (tmp_path / "claude" / "settings.json").write_text(CLAUDE_SETTINGS)
    return {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "CODEX_HOME": str(tmp_path / "codex"),
            "XDG_STATE_HOME": str(tmp_path / "state")}


def tcompact(env: dict[str, str], *args: str):
    return CliRunner().invoke(app, list(args), env=env)


def hook(env: dict[str, str], args: list[str], payload: bytes | str, *, client: bool = False
         ) -> subprocess.CompletedProcess:
    """``python -m tcompact ARGS`` with ``payload`` on stdin; ``client``: started by a process of its own, as
    a new agent process would start it (else by this one, as one agent process runs all its hooks)."""
    data = payload.encode() if isinstance(payload, str) else payload
    command = [sys.executable, "-m", "tcompact", *args]
    if client:
        command = [sys.executable, "-c", "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)",
                   *command]
    return subprocess.run(command, input=data, capture_output=True, env={**os.environ, **env}, timeout=60,
                          check=False)


def test_install_twice_then_uninstall_leaves_the_settings_as_they_were(home):
    settings = Path(home["CLAUDE_CONFIG_DIR"]) / "settings.json"
    first = tcompact(home, "hooks", "install", "--agent", "claude", "--statusline", "--json")
    assert first.exit_code == 0, first.output
    (done,) = json.loads(first.stdout)["settings"]
    assert done["action"] == "installed"
    assert done["done"] == ["added PreCompact", "added SessionStart", "added UserPromptSubmit", "added statusLine"]
    assert Path(done["backup"]).read_text() == CLAUDE_SETTINGS
    written = settings.read_bytes()
    assert json.loads(written)["hooks"]["PreCompact"][0] == json.loads(CLAUDE_SETTINGS)["hooks"]["PreCompact"][0]
    second = tcompact(home, "hooks", "install", "--agent", "claude", "--statusline", "--json")
    assert json.loads(second.stdout)["settings"][0]["action"] == "already installed"
    assert settings.read_bytes() == written and len(list((Path(home["XDG_STATE_HOME"]) / "tcompact" / "hooks" /
                                                          "backups").iterdir())) == 1
    gone = tcompact(home, "hooks", "uninstall", "--agent", "claude")
    assert gone.exit_code == 0 and "removed (restored the file as it was before install)" in gone.stdout
    assert settings.read_text() == CLAUDE_SETTINGS


def test_uninstall_after_the_user_changed_the_file_removes_only_tcompacts(home):
    settings = Path(home["CLAUDE_CONFIG_DIR"]) / "settings.json"
    assert tcompact(home, "hooks", "install", "--agent", "claude").exit_code == 0
    changed = settings.read_text().replace('"permissions": {"allow": ["Bash(ls:*)"]}',
                                           '"permissions": {"allow": ["Bash(ls:*)", "Read"]}')
    settings.write_text(changed)
    assert tcompact(home, "hooks", "uninstall", "--agent", "claude").exit_code == 0
    assert settings.read_text() == CLAUDE_SETTINGS.replace('["Bash(ls:*)"]', '["Bash(ls:*)", "Read"]')


def test_a_settings_file_install_created_is_removed_with_its_folder(home):
    codex = Path(home["CODEX_HOME"])
    result = tcompact(home, "hooks", "install", "--agent", "codex")
    said = " ".join(result.stdout.split())
    assert result.exit_code == 0 and "type /hooks" in said and "press t to trust them" in said
    commands = [h["hooks"][0]["command"] for groups in json.loads((codex / "hooks.json").read_text())["hooks"].values()
                for h in groups]
    assert commands == [f"{sys.executable} -m tcompact hook {run} --agent codex" for run in ("pre-compact",
                                                                                          "session-start")]
    assert tcompact(home, "hooks", "uninstall").exit_code == 0  # no --agent: both agents
    assert not codex.exists()
    assert (Path(home["CLAUDE_CONFIG_DIR"]) / "settings.json").read_text() == CLAUDE_SETTINGS


def test_project_scope_and_install_options_reach_the_hook_commands(home, tmp_path):
    project = tmp_path / "repo"
    project.mkdir()
    result = tcompact(home, "hooks", "install", "--agent", "claude", "--scope", "project", "--project", str(project),
                      "--budget", "6000", "--timeout", "2.5")
    assert result.exit_code == 0, result.output
    data = json.loads((project / ".claude" / "settings.json").read_text())
    assert data["hooks"]["SessionStart"][0]["hooks"][0]["command"].endswith(
        "hook session-start --agent claude --budget 6000 --timeout 2.5")
    status = json.loads(tcompact(home, "hooks", "status", "--project", str(project), "--json").stdout)
    rows = {(r["agent"], r["scope"]): r for r in status["settings"]}
    assert [h["event"] for h in rows["claude", "project"]["hooks"]] == ["PreCompact", "SessionStart",
                                                                       "UserPromptSubmit"]
    assert (rows["claude", "project"]["current"], rows["claude", "user"]["hooks"], rows["claude", "user"]["other_hooks"]) \
        == (True, [], 1)
    assert rows["codex", "user"]["exists"] is False


@pytest.mark.parametrize(("args", "message"), [
    (["--agent", "cursor"], "unknown agent 'cursor'; choose one of: claude, codex"),
    (["--agent", "claude", "--scope", "team"], "unknown --scope 'team' — use user or project"),
    (["--agent", "claude", "--budget", "10"], "--budget must be at least 2,000 bytes"),
    (["--agent", "codex", "--statusline"], "--statusline is for Claude Code; Codex has no status line command"),
])
def test_install_refuses_bad_options_and_changes_nothing(home, args, message):
    result = tcompact(home, "hooks", "install", *args)
    assert result.exit_code == 2 and message in result.stderr
    assert (Path(home["CLAUDE_CONFIG_DIR"]) / "settings.json").read_text() == CLAUDE_SETTINGS
    assert not Path(home["CODEX_HOME"]).exists()


def test_broken_settings_are_refused_with_file_and_line(home):
    settings = Path(home["CLAUDE_CONFIG_DIR"]) / "settings.json"
    settings.write_text('{\n  "hooks": {,\n}\n')
    result = tcompact(home, "hooks", "install", "--agent", "claude")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {settings}:2: not valid JSON (Expecting property name enclosed in "
                                    "double quotes) — fix the file")
    assert settings.read_text() == '{\n  "hooks": {,\n}\n'


# ---- the hooks as the agent runs them -------------------------------------------------------------------


def _payload(path: Path, **extra) -> str:
    return json.dumps({"session_id": "sess-1", "transcript_path": str(path), "cwd": "/w", **extra})


def test_pre_compact_then_session_start_keep_the_transcript_and_print_the_handoff(home):
    path = real_file("drmaciver")
    pre = hook(home, ["hook", "pre-compact", "--agent", "claude"], _payload(path, hook_event_name="PreCompact",
                                                                            trigger="manual"))
    assert (pre.returncode, pre.stdout, pre.stderr) == (0, b"", b"")
    start = hook(home, ["hook", "session-start", "--agent", "claude"], _payload(path, source="compact"))
    assert (start.returncode, start.stderr) == (0, b"")
    out = json.loads(start.stdout)
    assert list(out) == ["hookSpecificOutput"] and out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    (folder,) = [p for p in (Path(home["XDG_STATE_HOME"]) / "tcompact" / "live" / "claude-sess-1").iterdir()
                 if p.is_dir()]
    assert folder.name.endswith("-manual")
    assert (folder / path.name).read_bytes() == path.read_bytes()
    assert out["hookSpecificOutput"]["additionalContext"] == (folder / "handoff.md").read_text()
    assert json.loads((folder / "payload.json").read_text())["payload"]["trigger"] == "manual"


@pytest.mark.parametrize(("args", "payload", "why"), [
    (["hook", "session-start"], "not json", "the payload is not JSON (Expecting value: line 1 column 1 (char 0))"),
    (["hook", "session-start"], "[1, 2]", "the payload is not a JSON object"),
    (["hook", "pre-compact"], '{"transcript_path": "/x"}', "the payload has no session_id"),
    (["hook", "pre-compact"], '{"session_id": "s", "transcript_path": "/no/such/file.jsonl"}',
     "cannot read the transcript /no/such/file.jsonl: No such file or directory"),
    (["hook", "session-start", "--agent", "cursor"], "{}", "unknown --agent 'cursor'; choose one of: claude, codex"),
    (["hook", "session-start", "--budget"], "{}", "--budget needs a value"),
    (["hook", "session-start", "--color", "red"], "{}", "unknown option '--color'"),
    (["hook", "post-compact"], "{}", "unknown hook 'post-compact'; choose one of: pre-compact, session-start, "
                                     "prompt-submit"),
])
def test_a_hook_never_breaks_the_agent(home, args, payload, why):
    done = hook(home, args, payload)
    run = args[1] if args[1] != "post-compact" else "post-compact"
    log = Path(home["XDG_STATE_HOME"]) / "tcompact" / "hooks.log"
    assert (done.returncode, done.stdout) == (0, b"")
    assert done.stderr.decode() == f"tcompact hook {run}: {why} — nothing injected (log: {log})\n"
    assert log.read_text().rstrip().endswith(f"failed: {why} — nothing injected")


def test_a_transcript_tcompact_cannot_read_and_a_time_limit_inject_nothing(home, tmp_path):
    bad = tmp_path / "s.jsonl"
    bad.write_bytes(real_file("drmaciver").read_bytes()[:5000] + b"\nnot json\n")
    done = hook(home, ["hook", "session-start"], _payload(bad, source="compact"))
    assert (done.returncode, done.stdout) == (0, b"")
    assert done.stderr.startswith(f"tcompact hook session-start: cannot read the transcript {bad}: ".encode())
    slow = hook(home, ["hook", "session-start", "--timeout", "0.001"], _payload(real_file("codemie"), source="compact"))
    assert (slow.returncode, slow.stdout) == (0, b"")
    assert b"no answer within the time limit of 0.001 s" in slow.stderr


def test_session_start_uses_only_this_compactions_copy(home, tmp_path):
    """A copy kept by a PreCompact whose SessionStart failed, or one older than half an hour, is of another
    compaction: the handoff is built from the transcript then."""
    session = tmp_path / "s.jsonl"
    session.write_bytes(real_file("drmaciver").read_bytes()[:20000].rsplit(b"\n", 1)[0] + b"\nnot json\n")
    assert hook(home, ["hook", "pre-compact"], _payload(session, trigger="auto")).returncode == 0
    failed = hook(home, ["hook", "session-start"], _payload(session, source="compact"))
    assert failed.stdout == b"" and b"cannot read the transcript" in failed.stderr
    session.write_bytes(real_file("drmaciver").read_bytes())  # the session goes on; no PreCompact this time
    done = hook(home, ["hook", "session-start"], _payload(session, source="compact"))
    handoff = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"kept at {session};" in handoff and "Port this Python project to Rust" in handoff
    live = Path(home["XDG_STATE_HOME"]) / "tcompact" / "live" / "claude-sess-1"
    old = hook(home, ["hook", "pre-compact"], _payload(session, trigger="auto"))
    assert old.returncode == 0
    newest = sorted(p for p in live.iterdir() if p.is_dir())[-1]
    os.utime(newest / "payload.json", (0, 0))  # taken long ago
    again = json.loads(hook(home, ["hook", "session-start"], _payload(session, source="compact")).stdout)
    assert f"kept at {session};" in again["hookSpecificOutput"]["additionalContext"]


def test_session_start_of_another_source_does_nothing(home):
    done = hook(home, ["hook", "session-start"], _payload(real_file("drmaciver"), source="resume"))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_prompt_submit_gives_a_pending_handoff_once_unless_the_client_has_it(home, tmp_path):
    session = tmp_path / "session.jsonl"
    session.write_bytes(real_file("drmaciver").read_bytes())
    log = Path(home["XDG_STATE_HOME"]) / "tcompact" / "hooks.log"
    assert hook(home, ["hook", "session-start"], _payload(session, source="compact"), client=True).returncode == 0
    pending = Path(home["XDG_STATE_HOME"]) / "tcompact" / "live" / "claude-sess-1" / "pending.json"
    note = json.loads(pending.read_text())
    assert note["offset"] == session.stat().st_size and note["transcript"] == str(session)
    given = hook(home, ["hook", "prompt-submit"], _payload(session, prompt="go on"), client=True)  # another process
    context = json.loads(given.stdout)["hookSpecificOutput"]
    assert context["hookEventName"] == "UserPromptSubmit"
    assert context["additionalContext"] == Path(note["handoff"]).read_text()
    assert not pending.exists()
    assert hook(home, ["hook", "prompt-submit"], _payload(session, prompt="again"), client=True).stdout == b""  # once
    # the process that compacted gave the handoff with SessionStart already (Claude Code 2.0 in a terminal)
    assert hook(home, ["hook", "session-start"], _payload(session, source="compact")).returncode == 0
    assert hook(home, ["hook", "prompt-submit"], _payload(session, prompt="go on")).stdout == b""
    assert log.read_text().splitlines()[-1].split(" ok: ")[1].startswith(
        "handoff already given by SessionStart in this process")
    # a client that wrote the handoff into the session (Claude Code 2.1) sends it itself on a resume
    assert hook(home, ["hook", "session-start"], _payload(session, source="compact"), client=True).returncode == 0
    line = {"type": "attachment", "attachment": {"type": "hook_additional_context",
                                                 "content": [Path(note["handoff"]).read_text()]}}
    with session.open("a") as fh:
        fh.write(json.dumps(line) + "\n")
    assert hook(home, ["hook", "prompt-submit"], _payload(session, prompt="go on"), client=True).stdout == b""
    assert log.read_text().splitlines()[-1].split(" ok: ")[1].startswith(
        "handoff kept in the session by the client (hook_additional_context)")


def test_the_hook_command_and_the_launcher_take_the_same_options():
    params = get_command(app).commands["hook"].commands["session-start"].params  # type: ignore[attr-defined]
    assert sorted(o for p in params for o in p.opts if o not in ("-h", "--help")) == sorted(OPTIONS)


def test_hooks_and_statusline_start_without_the_command_line():
    code = ("import sys, io; sys.argv = ['tcompact', 'statusline']; sys.stdin = io.TextIOWrapper(io.BytesIO(b'{}'));"
            "import os; os._exit = lambda code: print(sorted(m for m in ('typer', 'rich', 'pydantic', "
            "'tcompact.app', 'tcompact.formats', 'tiktoken') if m in sys.modules)) or sys.exit(code);"
            "from tcompact.launch import main; main()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.splitlines()[-1] == "[]", out.stderr


# ---- statusline ------------------------------------------------------------------------------------------


def _line(home, payload: dict, *args: str) -> str:
    done = hook(home, ["statusline", *args], json.dumps(payload))
    assert (done.returncode, done.stderr) == (0, b"")
    return done.stdout.decode()


def test_statusline_of_claude_code_2_1_and_2_0(home, tmp_path):
    session = tmp_path / "s.jsonl"
    boundary = {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"}
    session.write_text(json.dumps(boundary) + "\n" + json.dumps(boundary) + "\n")
    new = {"session_id": "s2", "transcript_path": str(session), "model": {"id": "claude-sonnet-4-5",
           "display_name": "Sonnet 4.5"}, "cost": {"total_cost_usd": 1.234},
           "context_window": {"context_window_size": 200000, "used_percentage": 85}}
    assert _line(home, new) == ("Sonnet 4.5 · context 85% (170k of 200k) · $1.23 · 2 compactions, 0 handoffs · "
                                "past 80%: a compaction is near\n")
    old = {**new, "context_window": {"context_window_size": 200000, "current_usage": {
        "input_tokens": 1200, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 500, "output_tokens": 9}}}
    assert _line(home, old, "--trigger", "90") == ("Sonnet 4.5 · context 1% (2.0k of 200k) · $1.23 · 2 compactions, "
                                                   "0 handoffs\n")
    session.write_text(session.read_text() + json.dumps(boundary) + "\n")  # counted from where it stopped
    assert "3 compactions" in _line(home, old)


def test_statusline_without_the_clients_figures_reads_the_session(home):
    payload = {"session_id": "s3", "transcript_path": str(real_file("codemie")), "model": {"id": "claude-opus-4-5"}}
    assert _line(home, payload) == "claude-opus-4-5 · context 65% (131k of 200k) · 0 compactions, 0 handoffs\n"


def test_statusline_on_bad_input_prints_why_and_exits_0(home):
    done = hook(home, ["statusline"], "{")
    assert done.returncode == 0
    assert done.stdout.decode().startswith("tcompact: no status (Expecting property name")


def test_what_the_hooks_keep_is_listed_and_cleaned_with_the_rest(home):
    # issue 23 item 18 with issue 24: each compaction of the agent's own adds a copy of the whole transcript to the
    # state folder; `restore --list` and `--clean` must see it as they see the runs of fork and in-place
    path = Path(__file__).parent.parent / "sample_transcripts" / "claude_code_session.jsonl"
    assert hook(home, ["hook", "pre-compact", "--agent", "claude"], _payload(path, trigger="auto")).returncode == 0
    assert hook(home, ["hook", "session-start", "--agent", "claude"], _payload(path, source="compact")).returncode == 0
    root = Path(home["XDG_STATE_HOME"]) / "tcompact"
    (folder,) = [p for p in (root / "live" / "claude-sess-1").iterdir() if p.is_dir()]
    doc = json.loads(tcompact(home, "restore", "--list", "--json").stdout)
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    assert [(e["kind"], e["agent"], e["session"], e["path"], e["bytes"], e["holds"]) for e in doc["entries"]] == [
        ("pre-compaction", "claude", "sess-1", str(folder), size, "the transcript before the compaction, the handoff")]
    assert doc["entries"][0]["created"] == (f"{folder.name[:4]}-{folder.name[4:6]}-{folder.name[6:8]}T"
                                            f"{folder.name[9:11]}:{folder.name[11:13]}:{folder.name[13:15]}Z")
    text = tcompact(home, "restore", "--list").stdout
    assert text.splitlines()[0] == (f"tcompact keeps 0 run(s) in {root}, 1 copy(ies) the live hooks kept before an "
                                    f"agent's compaction and 0 in-place backup(s) beside their sessions: {size:,} bytes")
    gone = tcompact(home, "restore", "--clean", "--older-than", "0d", "--json")
    assert (gone.exit_code, json.loads(gone.stdout)["removed_bytes"]) == (0, size)
    assert not folder.exists()
