"""The commands a golden recording runs: one line a case.

A case is ``case(NAME, "ARGS", ...)``: NAME is its folder in the recorded tree (``inspect/chat``),
ARGS what follows ``tcompact`` on the command line (split as a shell would; ``glob:PATTERN`` is
replaced by the sorted matches in the case's folder). Options:

- ``dir``: the current folder (``ROOT/work/DIR``); cases that share one run in order in it, so a
  later case reads what an earlier one wrote (default: the case's own folder). A folder gets a
  copy of ``samples/`` and ``shared/`` when its arguments name them, and ``fixtures/``.
- ``home``: the home whose stores the case sees (default ``base``, shared by the read-only cases;
  a case that forks, replaces or installs into the stores names a home of its own).
- ``stdin``: text given on standard input.
- ``columns``: the terminal width (default 120); wider where a table would wrap a new id, which
  no placeholder can then find (``record.py`` warns of such a case).
- ``command``: the command that must be on ``tcompact --help`` for the case to run (default: the
  first word of ARGS); a case of a command not on the commit is listed as skipped.

Cases that name ``shared/`` or a shared session id (``SHARED_IDS``) are skipped without
``../shared/transcripts``. The ``--help`` of every command on ``tcompact --help``, and the
per-compressor cases, are made from what the commit itself lists (``generated``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

SAMPLE_FILES = ("chat_tool_session.jsonl", "claude_code_session.jsonl", "codex_rollout.jsonl")
#: the shared sessions by a short name
SHARED = {"ccviewer": "claude_ccviewer_5c0375b4_japanese_task_subagents.jsonl",
          "codemie": "claude_codemie_3fe1b6bc_thinking.jsonl",
          "drmaciver": "claude_drmaciver_python_to_rust_port.jsonl",
          "codex": "codex_codemie_rollout_019e1695_desktop.jsonl",
          "sweagent": "openai_sweagent_marshmallow-1867_function_calling.traj"}
#: the shared sessions as they sit in the stores (prefixes of their ids)
SHARED_IDS = ("5c0375b4", "3fe1b6bc", "c7d3d95c", "019e1695")
CHAT, CLAUDE, CODEX = (f"samples/{f}" for f in SAMPLE_FILES)
CODEMIE, CODEX_REAL, SWE = (f"shared/{SHARED[k]}" for k in ("codemie", "codex", "sweagent"))
#: the samples' sessions in the stores (prefixes of their ids)
CLAUDE_ID, CODEX_ID = "8d2f6c1e", "019c4e2a"
CLAUDE_SESSION = "8d2f6c1e-4b7a-4e59-9c3d-5a1e7f0b2c64"


@dataclass(frozen=True)
class Case:
    name: str
    args: str
    dir: str
    home: str = "base"
    stdin: str | None = None
    command: str = ""
    columns: int = 120


def case(name: str, args: str, *, dir: str | None = None, home: str = "base", stdin: str | None = None,
         command: str | None = None, columns: int = 120) -> Case:
    first = args.split()[0] if args else ""
    return Case(name, args, dir or name.replace("/", "-"), home, stdin, first if command is None else command,
                columns)


def _short(path: str) -> str:
    """chat, claude or codex for a sample."""
    return path.rsplit("/", 1)[-1].split("_")[0]


def _hook(**fields: str) -> str:
    """A Claude Code hook payload about the sample session."""
    payload = {"session_id": CLAUDE_SESSION, "transcript_path": CLAUDE, "cwd": "/home/dev/invoice-app", **fields}
    return json.dumps(payload)


CASES: list[Case] = [
    case("root/bare", ""),
    case("root/version", "--version"),
    case("root/unknown-command", "frobnicate", command=""),
    # ---------------------------------------------------------------- inspect: files
    *(case(f"inspect/{_short(f)}", f"inspect {f}") for f in (CHAT, CLAUDE, CODEX)),
    *(case(f"inspect/{_short(f)}-json", f"inspect {f} --json") for f in (CHAT, CLAUDE, CODEX)),
    *(case(f"inspect/shared-{k}", f"inspect shared/{f}") for k, f in SHARED.items()),
    *(case(f"inspect/shared-{k}-json", f"inspect shared/{f} --json") for k, f in SHARED.items()),
    case("inspect/folder", "inspect samples"),
    case("inspect/folder-json", "inspect samples fixtures --json"),
    case("inspect/shared-folder", "inspect shared"),
    case("inspect/fold", "inspect samples shared --fold"),
    case("inspect/fold-one", f"inspect {CLAUDE} --fold"),
    case("inspect/unknown-model", f"inspect {CHAT} --model nope-9 --json"),
    case("inspect/claude-full-history", f"inspect {CLAUDE} --full-history --json"),
    case("inspect/claude-subagent", f"inspect {CLAUDE} --transcript sidechain-26dd4578 --json"),
    case("inspect/options", f"inspect {CODEX} --model gpt-5 --top 3 --encoding cl100k_base"),
    case("inspect/context-window", f"inspect {CHAT} --context-window 12000 --format chat --no-cache"),
    case("inspect/keep-recent", f"inspect {CHAT} --spans full --keep-recent 4"),
    case("inspect/html", f"inspect {CLAUDE} --html page.html"),
    case("inspect/bad-line", "inspect fixtures/bad_line.jsonl"),
    case("inspect/skip-bad-lines", "inspect fixtures/bad_line.jsonl --skip-bad-lines --json"),
    case("inspect/error-missing", "inspect samples/nope.jsonl samples/chat_tool_session.jsonl"),
    case("inspect/error-keep-recent", f"inspect {CHAT} --keep-recent 2"),
    case("inspect/error-not-transcript", "inspect fixtures/package.json"),
    # ---------------------------------------------------------------- inspect: the sessions on this machine
    case("sessions/list", "inspect"),
    case("sessions/list-json", "inspect --json"),
    *(case(f"sessions/group-{k}", f"inspect --group-by {k}") for k in ("project", "day", "model", "tool")),
    *(case(f"sessions/group-{k}-json", f"inspect --group-by {k} --json") for k in ("project", "day", "model", "tool")),
    case("sessions/filters", "inspect --agent claude --since 20260101 --until 2026-06-30 --no-cost"),
    case("sessions/last", "inspect --last 2 --timezone Europe/Paris --json"),
    case("sessions/project", "inspect --project /home/dev/invoice-app --json"),
    case("sessions/none-match", "inspect --since 20300101 --json"),
    case("sessions/session", f"inspect --session {CLAUDE_ID}"),
    case("sessions/session-json", f"inspect --session {CODEX_ID} --json"),
    case("sessions/session-shared", "inspect --session 3fe1b6bc --json"),
    case("sessions/session-last", "inspect --session last"),
    case("sessions/error-no-session", "inspect --session ffffffff"),
    case("sessions/error-path-and-session", f"inspect {CHAT} --session last"),
    # ---------------------------------------------------------------- compact: outputs and options
    case("compact/nothing-to-do", f"compact {CHAT}"),
    case("compact/nothing-to-do-json", f"compact {CODEX} --json"),
    case("compact/force-is-not-now", f"compact {CLAUDE} -c dialogue --force"),
    case("compact/outputs", f"compact {CLAUDE} -c dialogue --now -o out/claude.jsonl --dump-dir out/dumps "
                            "--report out/report.json --offload-dir out/offload --json", dir="compact-outputs"),
    case("compact/outputs-exist", f"compact {CLAUDE} -c dialogue --now --force -o out/claude.jsonl",
         dir="compact-outputs"),
    case("compact/outputs-exist-no-force", f"compact {CLAUDE} -c dialogue -o out/claude.jsonl --context-window 3000",
         dir="compact-outputs"),
    *(case(f"compact/to-{t}-{_short(f)}", f"compact {f} -c truncate,full --now --to {t} -o to-{t}.jsonl")
      for f in (CHAT, CLAUDE, CODEX) for t in ("chat", "claude-code", "codex")),
    case("compact/to-chat-swe", f"compact {SWE} -c full --now --json"),
    case("compact/set-config", f"compact {CHAT} -c truncate,full --now --config fixtures/config.toml "
                               "--set full.user_messages_max_tokens=300 --preserve 'the --encoding flag' --json"),
    case("compact/trigger", f"compact {CHAT} -c current-round --context-window 14000 --trigger-ratio 0.5"),
    case("compact/dry-run", f"compact {CODEX} -c full --now --dry-run"),
    case("compact/strict", f"compact {CLAUDE} -c round-level --now --strict --json"),
    case("compact/html", f"compact {CHAT} -c full --now --html compact.html"),
    case("compact/chain-shared", f"compact {CODEMIE} -c truncate,offload,dialogue --now"),
    case("compact/error-compressor", f"compact {CHAT} -c truncate,nope"),
    case("compact/error-setting", f"compact {CHAT} -c truncate --set max_charz=10"),
    case("compact/error-config", f"compact {CHAT} -c truncate --config fixtures/bad_config.toml"),
    case("compact/error-request-mode", f"compact {CHAT} --request-mode serialized"),
    case("compact/error-replay-dir", f"compact {CHAT} --replay-dir fixtures"),
    case("compact/error-missing", "compact samples/nope.jsonl"),
    case("compact/error-bad-line", "compact fixtures/bad_line.jsonl -c truncate --now"),
    case("compact/error-openai-no-url", f"compact {CHAT} -c full --now --summarizer openai --model m"),
    # ---------------------------------------------------------------- compact: the sessions in the stores
    case("fork/claude", f"compact --session {CLAUDE_ID} -c full --fork", home="fork-claude"),
    case("fork/claude-sessions", "inspect --agent claude --json", home="fork-claude", dir="fork-claude"),
    case("fork/codex-json", f"compact --session {CODEX_ID} -c full --fork --json", home="fork-codex"),
    case("fork/codex-sessions", "inspect --agent codex", home="fork-codex", dir="fork-codex-json"),
    case("fork/list", "restore --list", home="fork-claude", dir="fork-claude", columns=200),
    case("fork/list-json", "restore --list --json", home="fork-claude", dir="fork-claude"),
    case("fork/clean-none", "restore --clean --older-than 30d --json", home="fork-claude", dir="fork-claude"),
    case("fork/shared", "compact --session 019e1695 --fork --json", home="fork-shared"),
    case("in-place/claude", f"compact --session {CLAUDE_ID} -c full --in-place --json", home="in-place"),
    case("in-place/restore", f"restore --session {CLAUDE_ID}", home="in-place", dir="in-place-claude"),
    case("in-place/restore-again", f"restore --session {CLAUDE_ID}", home="in-place", dir="in-place-claude"),
    case("in-place/codex", f"compact --session {CODEX_ID} -c truncate,full --in-place", home="in-place-codex"),
    case("in-place/codex-restore-json", "restore --session last --agent codex", home="in-place-codex",
         dir="in-place-codex"),
    case("session/to-cwd", f"compact --session {CLAUDE_ID} -c dialogue --now"),
    case("session/nothing-to-do", "compact --session last --agent claude"),
    case("session/error-two", "compact --agent claude --last 2 --now"),
    case("session/error-fork-and-path", f"compact {CHAT} --fork"),
    case("session/error-fork-in-place", f"compact --session {CLAUDE_ID} --fork --in-place"),
    # ---------------------------------------------------------------- replay
    case("replay/compact-dialogue", f"compact {CLAUDE} -c dialogue --now -o d.jsonl", dir="replay"),
    case("replay/compact-round-level", f"compact {CHAT} -c round-level --now -o r.jsonl", dir="replay"),
    case("replay/compact-shared", f"compact {CODEX_REAL} -c full --now -o s.jsonl", dir="replay"),
    case("replay/verify", "replay d.dumps r.dumps s.dumps", dir="replay"),
    case("replay/verify-json", "replay d.dumps r.dumps s.dumps --verify --json", dir="replay"),
    case("replay/table", "replay d.dumps r.dumps s.dumps --table", dir="replay"),
    case("replay/table-json", "replay r.dumps --table --json", dir="replay"),
    case("replay/rerun", "replay glob:s.dumps/*.json --summarizer extractive", dir="replay"),
    case("replay/rerun-json", "replay glob:d.dumps/*.json --summarizer extractive --dump-dir rerun --json", dir="replay"),
    case("replay/verify-rerun", "replay rerun", dir="replay"),
    case("replay/error-not-dump", f"replay {CHAT}", dir="replay"),
    case("replay/error-prompt-extractive", "replay glob:d.dumps/*.json --summarizer extractive --prompt "
                                           "fixtures/prompt.md", dir="replay"),
    case("replay/error-model-without-summarizer", "replay d.dumps --model m", dir="replay"),
    # ---------------------------------------------------------------- convert
    *(case(f"convert/{_short(f)}-to-{t}", f"convert {f} --to {t}") for f in (CHAT, CLAUDE, CODEX)
      for t in ("chat", "claude-code", "codex")),
    case("convert/chat-lossy", f"convert {CHAT} --to claude-code --lossy -o lossy.jsonl"),
    case("convert/subagent", f"convert {CLAUDE} --to codex --transcript sidechain-26dd4578"),
    case("convert/full-history", f"convert {CLAUDE} --to chat --full-history -o full.jsonl"),
    case("convert/exists", f"convert {CODEX} --to chat -o {CHAT}"),
    case("convert/swe", f"convert {SWE} --to chat -o swe.jsonl"),
    case("convert/shared-codex", f"convert {CODEX_REAL} --to claude-code --lossy -o codex.claude.jsonl"),
    case("convert/error-format", f"convert {CHAT} --to yaml"),
    # ---------------------------------------------------------------- restore
    case("restore/offload", f"compact {CHAT} -c offload --now --set large_message_tokens=200 "
                            "--set tokens_threshold=100 -o off.jsonl", dir="restore"),
    case("restore/restore", "restore off.jsonl -o back.jsonl", dir="restore"),
    case("restore/store", "restore off.jsonl -o back2.jsonl --store off.offload", dir="restore"),
    case("restore/exists", "restore off.jsonl -o back.jsonl", dir="restore"),
    case("restore/offload-claude", f"compact {CLAUDE} -c offload --now --set large_message_tokens=100 "
                                   "--set tokens_threshold=100 -o offc.jsonl", dir="restore"),
    case("restore/restore-claude", "restore offc.jsonl -o backc.jsonl --force", dir="restore"),
    case("restore/error-no-output", f"restore {CHAT}"),
    # ---------------------------------------------------------------- compressors
    case("compressors/terminal", "compressors"),
    case("compressors/json", "compressors --json"),
    # ---------------------------------------------------------------- eval
    case("eval/samples", "eval samples"),
    case("eval/samples-json", "eval samples --json --seed 3 --per-kind 1"),
    case("eval/needed", "eval samples --metric needed -c full -c truncate,dialogue"),
    case("eval/needed-shared", "eval shared --metric needed --json"),
    case("eval/needed-shared-terminal", "eval shared --metric needed -c full -c truncate,dialogue --cuts 2"),
    case("eval/both-json", f"eval {CLAUDE} --metric both --json -c full"),
    case("eval/canaries-shared", f"eval {CODEMIE} {CODEX_REAL} -c full -c truncate,dialogue --json"),
    case("eval/dump-dir", f"eval {CHAT} -c full --dump-dir evaldumps --per-kind 1"),
    case("eval/session-last", "eval --session last --agent claude -c full"),
    case("eval/error-per-kind", f"eval {CHAT} --per-kind 99"),
    case("eval/error-metric", f"eval {CHAT} --metric nope"),
    case("eval/error-missing", f"eval samples/nope.jsonl {CHAT} -c truncate"),
    # ---------------------------------------------------------------- batch
    case("batch/inspect", "batch inspect samples fixtures/batch --out b-inspect --workers 1", dir="batch"),
    case("batch/inspect-again-json", "batch inspect samples fixtures/batch --out b-inspect --workers 1 --json", dir="batch"),
    case("batch/inspect-spans-json", "batch inspect shared --out b-spans --workers 1 --spans full --json", dir="batch"),
    case("batch/compact", "batch compact samples --out b-compact --workers 1 -c truncate,full --now", dir="batch"),
    case("batch/compact-json", "batch compact samples --out b-compact2 --workers 1 --to chat --json", dir="batch"),
    case("batch/eval", "batch eval samples --out b-eval --workers 1 -c full -c truncate", dir="batch"),
    case("batch/eval-needed-json", "batch eval samples --out b-needed --workers 1 --metric needed -c full --json",
         dir="batch"),
    case("batch/retry-failed", "batch inspect samples fixtures/batch --out b-inspect --workers 1 --retry-failed",
         dir="batch"),
    case("batch/error-out-kind", "batch compact samples --out b-inspect --workers 1", dir="batch"),
    # ---------------------------------------------------------------- hooks and status line (issue 24)
    case("hooks/status", "hooks status", home="hooks"),
    case("hooks/install", "hooks install --agent claude --statusline --json", home="hooks"),
    case("hooks/status-json", "hooks status --json", home="hooks", dir="hooks-status"),
    case("hooks/uninstall", "hooks uninstall --json", home="hooks"),
    case("hooks/pre-compact", "hook pre-compact --agent claude", home="hook-run", stdin=_hook(trigger="manual")),
    case("hooks/session-start", "hook session-start --agent claude", home="hook-run", dir="hooks-pre-compact",
         stdin=_hook(source="compact")),
    case("hooks/prompt-submit", "hook prompt-submit --agent claude", home="hook-run", dir="hooks-pre-compact",
         stdin=_hook(prompt="go on")),
    case("hooks/pre-compaction", f"restore --session {CLAUDE_ID} --pre-compaction", home="hook-run",
         dir="hooks-pre-compact"),
    case("hooks/list", "restore --list", home="hook-run", dir="hooks-pre-compact", columns=200),
    case("hooks/list-json", "restore --list --json", home="hook-run", dir="hooks-pre-compact"),
    case("hooks/session-start-bad", "hook session-start", home="hook-bad", stdin="not json"),
    case("hooks/statusline", "statusline", home="statusline", stdin='{"model": {"display_name": "Sonnet 4.5"}, "transcript_path": '
                                              '"samples/claude_code_session.jsonl", "cost": {"total_cost_usd": 1.5}}'),
    case("hooks/statusline-bad", "statusline", home="statusline", dir="hooks-statusline", stdin="not json"),
]


def generated(commands: dict[str, list[str]], compressors: list[str]) -> list[Case]:
    """Cases made from the commit: every command's --help, and per compressor its spans and its run
    on each sample (terminal and --json) and on each shared session (--json); "default" is no ``-c``."""
    out = [case("help/root", "--help")]
    for command, subcommands in commands.items():
        out.append(case(f"help/{command}", f"{command} --help"))
        out += [case(f"help/{command}-{sub}", f"{command} {sub} --help") for sub in subcommands]
    for name in compressors:
        out.append(case(f"spans/{name}", f"inspect {CLAUDE} --spans {name}"))
        out.append(case(f"spans/{name}-json-shared", f"inspect {CODEMIE} --spans {name} --json"))
    for name in (*compressors, "default"):
        chain = f" -c {name}" if name != "default" else ""
        for f in (CHAT, CLAUDE, CODEX):
            out.append(case(f"run/{name}/{_short(f)}", f"compact {f}{chain} --now", dir=f"run-{name}-{_short(f)}"))
            out.append(case(f"run/{name}/{_short(f)}-json", f"compact {f}{chain} --now --json",
                            dir=f"run-{name}-{_short(f)}-json"))
        for k, f in SHARED.items():
            out.append(case(f"run/{name}/shared-{k}", f"compact shared/{f}{chain} --now --json"))
    return out
