"""Test homes laid out as Claude Code and Codex lay out their sessions.

``small_home`` writes invented sessions whose every figure is chosen by hand (usage, models,
times), so that rows, filters, group-bys and costs have exact expected values without
../shared: Claude sessions A and B in ``/home/dev/app`` (A with a nested 2.1-style sub-agent, B
with a flat older-style ``agent-*.jsonl`` and a reply without requestId), C in ``/home/dev/lib``
(a prompt over 200k tokens with one-hour cache writes, and a model no price table knows), an
empty session file, and Codex session D in ``/home/dev/app`` with a spawned sub-agent E.
``shared_home`` copies the real sessions of ../shared/transcripts into their places.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from conftest import jsonl, real_file

A = "a1a1a1a1-0000-4000-8000-000000000001"
B = "a1b2b2b2-0000-4000-8000-000000000002"
C = "c3c3c3c3-0000-4000-8000-000000000003"
D = "019b0000-0000-7000-8000-000000000004"
E = "019b0000-0000-7000-8000-000000000005"
BEDROCK_SAME = "f6f6f6f6-0000-4000-8000-000000000006"
BEDROCK_DIFF = "f7f7f7f7-0000-4000-8000-000000000007"
USAGE_CODEX = "019b0000-0000-7000-8000-0000000000a3"
USAGE_CLAUDE = "e5e5e5e5-0000-4000-8000-000000000001"
FALLS_TO_ZERO = "019b0000-0000-7000-8000-0000000000a4"
LAST_DIFFERS = "019b0000-0000-7000-8000-0000000000a5"
#: a tool output long enough for `-c truncate` (10 KiB) to cut
LISTING = "\n".join(f"src/module_{i:04d}.py" for i in range(1200))
SONNET, OPUS, HAIKU = "claude-sonnet-4-5-20250929", "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001"

#: the real sessions: file key → (agent, session id, recorded working directory)
SHARED = {
    "ccviewer": ("claude", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7", "/path/to/Demo"),
    "codemie": ("claude", "3fe1b6bc-dbd0-4320-b980-4f147befa187", "/Users/user/repo"),
    "drmaciver": ("claude", "c7d3d95c-57f0-4359-8f4b-926a9bef5a3f", "/tmp/tmpqwh7888i"),
    "codex": ("codex", "019e1695-0522-7c83-8b39-0dd379793f80", "/Users/Sample_User/naya"),
}


def env_for(home: Path) -> dict[str, str]:
    """The variables that point tcompact (and ccusage) at a test home, never at the machine's."""
    return {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"), "CODEX_HOME": str(home / ".codex")}


def project_folder(cwd: str) -> str:
    """Claude Code's folder name for a working directory: every non-alphanumeric character → '-'."""
    return "".join(c if c.isalnum() else "-" for c in cwd)


def _line(kind: str, uuid: str, parent: str | None, sid: str, ts: str, message: dict[str, Any], *,
          cwd: str, side: str | None = None, request: str | None = None) -> dict[str, Any]:
    rec = {"parentUuid": parent, "isSidechain": side is not None, "userType": "external", "cwd": cwd,
           "sessionId": sid, "version": "2.1.0", "gitBranch": "main", "type": kind, "message": message,
           "uuid": uuid, "timestamp": ts}
    if side:
        rec["agentId"] = side
    if request:
        rec["requestId"] = request
    return rec


def _user(text: Any) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _reply(mid: str, model: str, blocks: list[dict[str, Any]], usage: dict[str, Any]) -> dict[str, Any]:
    return {"id": mid, "type": "message", "role": "assistant", "model": model, "content": blocks,
            "stop_reason": "end_turn", "stop_sequence": None, "usage": usage}


def _usage(inp: int, write: int, read: int, out: int, **extra: Any) -> dict[str, Any]:
    return {"input_tokens": inp, "cache_creation_input_tokens": write, "cache_read_input_tokens": read,
            "output_tokens": out, **extra}


def _text(t: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": t}]


def _claude_a(folder: Path, cwd: str) -> None:
    u1 = _usage(10, 1000, 0, 5)
    jsonl(folder / f"{A}.jsonl", [
        _line("user", "a-u1", None, A, "2026-01-05T10:00:00.000Z", _user("Add a login page"), cwd=cwd),
        _line("assistant", "a-a1", "a-u1", A, "2026-01-05T10:00:05.000Z",
              _reply("msg_A1", SONNET, _text("Let me look."), u1), cwd=cwd, request="req_A1"),
        _line("assistant", "a-a1b", "a-a1", A, "2026-01-05T10:00:06.000Z",
              _reply("msg_A1", SONNET, [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                         "input": {"command": "ls"}}], {**u1, "output_tokens": 50}),
              cwd=cwd, request="req_A1"),
        _line("user", "a-r1", "a-a1b", A, "2026-01-05T10:00:10.000Z",
              _user([{"type": "tool_result", "tool_use_id": "toolu_1", "content": LISTING}]), cwd=cwd),
        _line("assistant", "a-a2", "a-r1", A, "2026-01-05T10:05:00.000Z",
              _reply("msg_A2", SONNET, _text("Done: the login page is added."), _usage(20, 200, 1000, 100)),
              cwd=cwd, request="req_A2"),
    ])
    sub = folder / A / "subagents"
    sub.mkdir(parents=True)
    _subagent(sub, A, "x1", ("Find the tests", "Found 3 tests."), HAIKU, _usage(100, 0, 0, 10),
              ("2026-01-05T10:01:00.000Z", "2026-01-05T10:01:30.000Z"), cwd=cwd)


def _subagent(folder: Path, sid: str, agent: str, texts: tuple[str, str], model: str, usage: dict[str, Any],
              times: tuple[str, str], *, cwd: str) -> None:
    """``agent-<id>.jsonl``: one request of a sub-agent and its answer (sidechain lines of session ``sid``)."""
    jsonl(folder / f"agent-{agent}.jsonl", [
        _line("user", f"{agent}-u1", None, sid, times[0], _user(texts[0]), cwd=cwd, side=agent),
        _line("assistant", f"{agent}-a1", f"{agent}-u1", sid, times[1],
              _reply(f"msg_{agent}", model, _text(texts[1]), usage), cwd=cwd, side=agent, request=f"req_{agent}"),
    ])


def _claude_b(folder: Path, cwd: str) -> None:
    b1 = _usage(5, 0, 2000, 40)
    jsonl(folder / f"{B}.jsonl", [
        _line("user", "b-u1", None, B, "2026-01-06T23:30:00.000Z", _user("Fix the failing test"), cwd=cwd),
        _line("assistant", "b-a1", "b-u1", B, "2026-01-06T23:30:10.000Z",
              _reply("msg_bdrk_B1", OPUS, _text("Looking at it."), b1), cwd=cwd),
        _line("assistant", "b-a1b", "b-a1", B, "2026-01-06T23:30:11.000Z",
              _reply("msg_bdrk_B1", OPUS, _text("Fixed: the assertion was off by one."), {**b1, "output_tokens": 80}),
              cwd=cwd),
        _line("user", "b-u2", "b-a1b", B, "2026-01-07T00:30:00.000Z", _user("thanks"), cwd=cwd),
        _line("assistant", "b-a2", "b-u2", B, "2026-01-07T00:30:05.000Z",
              _reply("msg_bdrk_B2", OPUS, _text("You're welcome."), _usage(3, 10, 2000, 7)), cwd=cwd),
    ])
    _subagent(folder, B, "y2", ("Run pytest", "2 passed."), OPUS, _usage(50, 0, 0, 20),
              ("2026-01-06T23:40:00.000Z", "2026-01-06T23:40:10.000Z"), cwd=cwd)


def _claude_c(folder: Path, cwd: str) -> None:
    long = _usage(1000, 50000, 160000, 2000,
                  cache_creation={"ephemeral_5m_input_tokens": 40000, "ephemeral_1h_input_tokens": 10000})
    jsonl(folder / f"{C}.jsonl", [
        _line("user", "c-u1", None, C, "2026-01-08T12:00:00.000Z", _user("Summarise the repo"), cwd=cwd),
        _line("assistant", "c-a1", "c-u1", C, "2026-01-08T12:00:30.000Z",
              _reply("msg_C1", SONNET, _text("It is a small web app."), long), cwd=cwd, request="req_C1"),
        _line("user", "c-u2", "c-a1", C, "2026-01-08T12:10:00.000Z", _user("And the docs?"), cwd=cwd),
        _line("assistant", "c-a2", "c-u2", C, "2026-01-08T12:10:05.000Z",
              _reply("msg_C2", "claude-mystery-9", _text("There are none."), _usage(10, 0, 0, 10)), cwd=cwd,
              request="req_C2"),
    ])
    (folder / "d4d4d4d4-0000-4000-8000-000000000009.jsonl").write_bytes(b"")  # Claude Code leaves these


def claude_replies(home: Path, sid: str, replies: list[tuple[str, str, dict[str, Any]]], *, cwd: str = "/home/dev/app",
                   day: str = "2026-02-02") -> Path:
    """A Claude Code session of one request and one reply per ``(model, message id, usage)``, a minute apart."""
    folder = home / ".claude" / "projects" / project_folder(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    lines, parent = [], None
    for n, (model, mid, usage) in enumerate(replies):
        at = f"{day}T10:{n:02d}:00.000Z"
        lines.append(_line("user", f"{sid[:4]}-u{n}", parent, sid, at, _user(f"question {n}"), cwd=cwd))
        lines.append(_line("assistant", f"{sid[:4]}-a{n}", f"{sid[:4]}-u{n}", sid, at.replace(":00.000Z", ":05.000Z"),
                           _reply(mid, model, _text(f"answer {n}"), usage), cwd=cwd, request=f"req_{sid[:4]}_{n}"))
        parent = f"{sid[:4]}-a{n}"
    return jsonl(folder / f"{sid}.jsonl", lines)


def claude_fork(home: Path, original: str, fork: str, *, marked: bool = False, reply: bool = True) -> Path:
    """A fork of Claude session ``original`` in its project folder, as tcompact's ``--fork`` or Claude Code's own
    branching writes one: every line of the original copied with ``sessionId`` set to ``fork`` (and, ``marked``,
    Claude Code's ``forkedFrom`` naming the original), a compaction written when it was made (a boundary and its
    summary, no usage), then — ``reply`` — a request and a reply of its own."""
    import orjson

    folder = home / ".claude" / "projects" / project_folder("/home/dev/app")
    lines = [orjson.loads(x) for x in (folder / f"{original}.jsonl").read_bytes().splitlines()]
    copied = [{**d, "sessionId": fork, **({"forkedFrom": {"sessionId": original, "messageUuid": d["uuid"]}}
                                          if marked else {})} for d in lines]
    boundary = {**_line("system", f"{fork[:4]}-b0", None, fork, "2026-03-01T08:59:00.000Z", _user(""),
                        cwd="/home/dev/app"), "subtype": "compact_boundary", "logicalParentUuid": copied[-1]["uuid"],
                "compactMetadata": {"trigger": "manual", "preTokens": 4000}}
    del boundary["message"]
    summary = {**_line("user", f"{fork[:4]}-s0", f"{fork[:4]}-b0", fork, "2026-03-01T08:59:00.000Z",
                       _user("This session is being continued from a previous conversation. Summary: a login page."),
                       cwd="/home/dev/app"), "isCompactSummary": True}
    own = [_line("user", f"{fork[:4]}-u9", f"{fork[:4]}-s0", fork, "2026-03-01T09:00:00.000Z",
                 _user("Now add a logout button"), cwd="/home/dev/app"),
           _line("assistant", f"{fork[:4]}-a9", f"{fork[:4]}-u9", fork, "2026-03-01T09:00:05.000Z",
                 _reply(f"msg_{fork[:4]}", SONNET, _text("Added."), _usage(7, 0, 1000, 30)), cwd="/home/dev/app",
                 request=f"req_{fork[:4]}")]
    return jsonl(folder / f"{fork}.jsonl", [*copied, boundary, summary, *(own if reply else [])])


def bedrock_home(home: Path) -> Path:
    """Two Claude sessions run on Amazon Bedrock (``msg_bdrk_`` ids, Bedrock model ids; 1,000 input, 2,000
    cache-write, 3,000 cache-read and 400 output tokens a request): BEDROCK_SAME's ids are priced alike by
    tcompact and ccusage; BEDROCK_DIFF's (in-region and apac.) are the README's explained difference."""
    use = _usage(1000, 2000, 3000, 400)
    claude_replies(home, BEDROCK_SAME, [(model, f"msg_bdrk_01F{n}", use) for n, model in enumerate((
        "converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "global.anthropic.claude-haiku-4-5-20251001-v1:0", "bedrock/eu.anthropic.claude-haiku-4-5-20251001-v1:0"))])
    claude_replies(home, BEDROCK_DIFF, [(model, f"msg_bdrk_01G{n}", use) for n, model in enumerate((
        "anthropic.claude-haiku-4-5-20251001-v1:0", "apac.anthropic.claude-haiku-4-5-20251001-v1:0"))],
        day="2026-02-03")
    return home


def _codex_line(ts: str, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": ts, "type": kind, "payload": payload}


def _tokens(ts: str, total: tuple[int, int, int], last: tuple[int, int, int]) -> dict[str, Any]:
    def usage(inp: int, cached: int, out: int) -> dict[str, int]:
        return {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out,
                "reasoning_output_tokens": 0, "total_tokens": inp + out}

    return _codex_line(ts, "event_msg", {"type": "token_count", "info": {
        "total_token_usage": usage(*total), "last_token_usage": usage(*last), "model_context_window": 272000}})


def _codex(root: Path, cwd: str) -> None:
    day = root / "2026" / "01" / "09"
    day.mkdir(parents=True)
    meta = {"id": D, "timestamp": "2026-01-09T08:00:00.000Z", "cwd": cwd, "originator": "codex_cli_rs",
            "cli_version": "0.128.0", "source": "cli", "model_provider": "openai"}
    jsonl(day / f"rollout-2026-01-09T08-00-00-{D}.jsonl", [
        _codex_line("2026-01-09T08:00:00.000Z", "session_meta", meta),
        _codex_line("2026-01-09T08:00:01.000Z", "turn_context", {"cwd": cwd, "model": "gpt-5.1-codex",
                                                                 "approval_policy": "never", "summary": "auto",
                                                                 "sandbox_policy": {"type": "read-only"}}),
        _codex_line("2026-01-09T08:00:01.500Z", "response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "List the files"}]}),
        _codex_line("2026-01-09T08:00:03.000Z", "response_item", {"type": "function_call", "name": "shell",
                                                                  "arguments": '{"command":["ls"]}',
                                                                  "call_id": "call_1"}),
        _codex_line("2026-01-09T08:00:04.000Z", "response_item", {"type": "function_call_output",
                                                                  "call_id": "call_1", "output": LISTING}),
        _tokens("2026-01-09T08:00:04.100Z", (5000, 1000, 200), (5000, 1000, 200)),
        _tokens("2026-01-09T08:00:04.500Z", (5000, 1000, 200), (5000, 1000, 200)),  # repeated: no new request
        _codex_line("2026-01-09T08:00:06.000Z", "response_item", {"type": "message", "role": "assistant",
                                                                  "content": [{"type": "output_text",
                                                                               "text": "Two files: a.py, b.py."}]}),
        _tokens("2026-01-09T08:00:06.100Z", (11000, 6000, 300), (6000, 5000, 100)),
    ])
    sub = {**meta, "id": E, "timestamp": "2026-01-09T08:00:02.000Z",
           "source": {"subagent": {"thread_spawn": {"parent_thread_id": D, "depth": 1}}}}
    jsonl(day / f"rollout-2026-01-09T08-00-02-{E}.jsonl", [
        _codex_line("2026-01-09T08:00:02.000Z", "session_meta", sub),
        _codex_line("2026-01-09T08:00:02.100Z", "turn_context", {"cwd": cwd, "model": "gpt-5.1-codex"}),
        _codex_line("2026-01-09T08:00:02.200Z", "response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "Count the tests"}]}),
        _codex_line("2026-01-09T08:00:02.900Z", "response_item", {"type": "message", "role": "assistant",
                                                                  "content": [{"type": "output_text",
                                                                               "text": "There are 3."}]}),
        _tokens("2026-01-09T08:00:03.000Z", (100, 0, 10), (100, 0, 10)),
    ])


def codex_rollout(home: Path, sid: str, events: list[tuple[Any, Any]], *, messages: bool = True,
                  hour: int = 8) -> Path:
    """A Codex rollout of session ``sid`` (gpt-5.1-codex, OpenAI) with one token_count event per ``(total, last)``
    — (input, cached input, output) figures, or None for a figure the event leaves out — a second apart, after a
    user request and an answer (``messages``) or alone (a rollout that records usage only), from ``hour`` on."""
    day = home / ".codex" / "sessions" / "2026" / "01" / "10"
    day.mkdir(parents=True, exist_ok=True)
    at = f"2026-01-10T{hour:02d}:00:"
    meta = {"id": sid, "timestamp": f"{at}00.000Z", "cwd": "/home/dev/app", "originator": "codex_cli_rs",
            "cli_version": "0.128.0", "source": "cli", "model_provider": "openai"}
    talk = [_codex_line(f"{at}01.500Z", "response_item", {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "Count the files"}]}),
            _codex_line(f"{at}02.000Z", "response_item", {"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": "There are 12."}]})]
    lines = [_codex_line(f"{at}00.000Z", "session_meta", meta),
             _codex_line(f"{at}01.000Z", "turn_context", {"cwd": "/home/dev/app", "model": "gpt-5.1-codex"}),
             *(talk if messages else [])]
    for n, (total, last) in enumerate(events):
        info: dict[str, Any] = {"model_context_window": 272000}
        for key, figures in (("total_token_usage", total), ("last_token_usage", last)):
            if figures is not None:
                inp, cached, out = figures
                info[key] = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out,
                             "reasoning_output_tokens": 0, "total_tokens": inp + out}
        lines.append(_codex_line(f"{at}{10 + n:02d}.000Z", "event_msg", {"type": "token_count", "info": info}))
    return jsonl(day / f"rollout-2026-01-10T{hour:02d}-00-00-{sid}.jsonl", lines)


def usage_only_home(home: Path) -> Path:
    """Sessions that record usage and no message: a Codex rollout of token_count events only (USAGE_CODEX), and a
    Claude session file of lines with ``message.usage`` and no ``type`` (USAGE_CLAUDE) — two with the ``costUSD``
    the line recorded (one of them naming no model), one without."""
    codex_rollout(home, USAGE_CODEX, [((5000, 1000, 200), (5000, 1000, 200)), ((11000, 6000, 300), (6000, 5000, 100))],
                  messages=False)
    folder = home / ".claude" / "projects" / project_folder("/home/dev/app")
    folder.mkdir(parents=True, exist_ok=True)
    jsonl(folder / f"{USAGE_CLAUDE}.jsonl", [
        {"timestamp": "2026-02-01T10:00:00.000Z", "sessionId": USAGE_CLAUDE,
         "message": {"usage": {"input_tokens": 1000, "output_tokens": 500}}, "costUSD": 0.0123},
        {"timestamp": "2026-02-01T10:01:00.000Z", "sessionId": USAGE_CLAUDE,
         "message": {"usage": {"input_tokens": 2000, "output_tokens": 100, "cache_read_input_tokens": 300},
                     "model": SONNET}, "costUSD": 0.02},
        {"timestamp": "2026-02-01T10:02:00.000Z", "sessionId": USAGE_CLAUDE,
         "message": {"usage": {"input_tokens": 2000, "output_tokens": 100}, "model": SONNET}},
    ])
    return home


def small_home(home: Path) -> Path:
    """Write the invented sessions into ``home`` (see the module docstring)."""
    projects = home / ".claude" / "projects"
    for cwd, writers in (("/home/dev/app", (_claude_a, _claude_b)), ("/home/dev/lib", (_claude_c,))):
        folder = projects / project_folder(cwd)
        folder.mkdir(parents=True, exist_ok=True)
        for write in writers:
            write(folder, cwd)
    _codex(home / ".codex" / "sessions", "/home/dev/app")
    return home


def shared_home(home: Path) -> Path:
    """Copies of the real sessions of ../shared/transcripts, each where its agent would keep it
    (skips when ../shared is absent)."""
    for key, (agent, sid, cwd) in SHARED.items():
        source = real_file(key)
        if agent == "claude":
            target = home / ".claude" / "projects" / project_folder(cwd) / f"{sid}.jsonl"
        else:  # its name in the source repository: Codex's own, local start time and id
            target = home / ".codex" / "sessions" / "2026" / "05" / "11" / f"rollout-2026-05-11T13-28-45-{sid}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return home
