"""Claude Code session lines for tests, written as Claude Code 2.1 writes them (every value invented)."""

from __future__ import annotations

SID = "11111111-2222-3333-4444-555555555555"


def line(kind, uuid, parent, message=None, ts="2026-01-05T10:00:00.000Z", **extra):
    d = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/repo", "sessionId": SID,
         "version": "2.1.0", "type": kind}
    if message is not None:
        d["message"] = message
    d.update({"uuid": uuid, "timestamp": ts})
    d.update(extra)
    return d


def user(uuid, parent, content, ts="2026-01-05T10:00:00.000Z", **extra):
    return line("user", uuid, parent, {"role": "user", "content": content}, ts, **extra)


def usage(inp, read, create, out):
    return {"input_tokens": inp, "cache_read_input_tokens": read, "cache_creation_input_tokens": create,
            "output_tokens": out}


def assistant(uuid, parent, mid, blocks, use, ts="2026-01-05T10:00:01.000Z", request="req", **extra):
    msg = {"id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": blocks,
           "stop_reason": None, "stop_sequence": None, "usage": use}
    d = line("assistant", uuid, parent, msg, ts, **extra)
    if request:
        d["requestId"] = request
    return d


def tool_result(uuid, parent, tool_id, text, ts, is_error=None):
    block = {"tool_use_id": tool_id, "type": "tool_result", "content": text}
    if is_error is not None:
        block["is_error"] = is_error
    return user(uuid, parent, [block], ts, toolUseResult={"stdout": text, "stderr": ""})


def parallel_session(request="req_A"):
    """A reply split over three lines with two parallel calls, results hanging off their own call lines."""
    return [
        {"type": "queue-operation", "operation": "dequeue", "timestamp": "2026-01-05T10:00:00.000Z", "sessionId": SID},
        user("u1", None, "Fix the bug in parser.py", "2026-01-05T10:00:00.100Z"),
        assistant("a1a", "u1", "msg_A", [{"type": "thinking", "thinking": "Look at the parser.", "signature": "sig"}],
                  usage(10, 100, 5, 1), "2026-01-05T10:00:01.000Z", request),
        assistant("a1b", "a1a", "msg_A", [{"type": "tool_use", "id": "t1", "name": "Read",
                                           "input": {"file_path": "parser.py"}}],
                  usage(10, 100, 5, 7), "2026-01-05T10:00:01.100Z", request),
        assistant("a1c", "a1b", "msg_A", [{"type": "tool_use", "id": "t2", "name": "Bash",
                                           "input": {"command": "pytest -q"}}],
                  usage(10, 100, 5, 12), "2026-01-05T10:00:01.200Z", request),
        tool_result("r1", "a1b", "t1", "def parse(): ...", "2026-01-05T10:00:02.000Z"),
        tool_result("r2", "a1c", "t2", "1 failed", "2026-01-05T10:00:02.100Z", is_error=True),
        assistant("a2", "r2", "msg_B", [{"type": "text", "text": "The test fails; fixing."}],
                  usage(3, 200, 0, 20), "2026-01-05T10:00:03.000Z", "req_B" if request else None),
    ]


def compacted_session():
    pre = [user("u0", None, "old task", "2026-01-05T09:00:00.000Z"),
           assistant("a0", "u0", "msg_0", [{"type": "text", "text": "old answer"}], usage(1, 1, 1, 1),
                     "2026-01-05T09:00:01.000Z")]
    boundary = line("system", "b1", None, None, "2026-01-05T09:30:00.000Z", subtype="compact_boundary",
                    logicalParentUuid="a0", content="Conversation compacted", level="info",
                    compactMetadata={"trigger": "auto", "preTokens": 1234})
    summ = user("s1", "b1", "This session is being continued from a previous conversation. Summary: old task done.",
                "2026-01-05T09:30:01.000Z", isCompactSummary=True, isVisibleInTranscriptOnly=True)
    rest = parallel_session()[1:]
    rest[0] = user("u1", "s1", "Fix the bug in parser.py", "2026-01-05T10:00:00.100Z")
    return pre + [boundary, summ] + rest


def sidechain_session():
    prompt = "Survey the package.json files and report the scripts."
    main = [
        user("u1", None, "Update the docs", "2026-01-05T10:00:00.000Z"),
        assistant("aT", "u1", "msg_T", [{"type": "tool_use", "id": "toolu_task", "name": "Task",
                                         "input": {"description": "survey", "prompt": prompt}}],
                  usage(5, 0, 0, 9), "2026-01-05T10:00:01.000Z"),
    ]
    side = [
        user("s1", None, prompt, "2026-01-05T10:00:02.000Z", isSidechain=True),
        assistant("s2", "s1", "msg_S1", [{"type": "tool_use", "id": "toolu_glob", "name": "Glob",
                                          "input": {"pattern": "**/package.json"}}],
                  usage(2, 0, 0, 3), "2026-01-05T10:00:03.000Z", isSidechain=True),
        tool_result("s3", "s2", "toolu_glob", "package.json", "2026-01-05T10:00:04.000Z"),
        assistant("s4", "s3", "msg_S2", [{"type": "text", "text": "One package.json with 3 scripts."}],
                  usage(4, 0, 0, 8), "2026-01-05T10:00:05.000Z", isSidechain=True),
    ]
    side[2]["isSidechain"] = True
    tail = [
        tool_result("rT", "aT", "toolu_task", "One package.json with 3 scripts.", "2026-01-05T10:00:06.000Z"),
        assistant("aE", "rT", "msg_E", [{"type": "text", "text": "Docs updated."}], usage(7, 0, 0, 4),
                  "2026-01-05T10:00:07.000Z"),
    ]
    return main + side + tail


def thinking_session():
    """Thinking as Claude Code writes it: on its own line of a reply (2.0.x), as an empty text with its signature
    (2.1.69 on), redacted, and beside text and a call on one line; the session cut while its last call ran."""
    def reply(uuid, parent, mid, blocks, ts):
        return assistant(uuid, parent, mid, blocks, usage(5, 100, 0, 9), ts, request=f"req_{mid}")

    return [
        user("u1", None, "Fix the failing date filter test", "2026-01-05T10:00:00.000Z"),
        reply("a1a", "u1", "msg_1", [{"type": "thinking", "thinking": "Run the test first.", "signature": "c2lnMQ=="}],
              "2026-01-05T10:00:01.000Z"),
        reply("a1b", "a1a", "msg_1", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest"}}],
              "2026-01-05T10:00:01.100Z"),
        tool_result("r1", "a1b", "t1", "FAILED test_filter - the last day is missing\n" + "\n".join(
            f"  filter.py:{n} in frame_{n}" for n in range(20)), "2026-01-05T10:00:02.000Z"),
        reply("a2a", "r1", "msg_2", [{"type": "thinking", "thinking": "", "signature": "RW1wdHlUaGlua2luZw=="}],
              "2026-01-05T10:00:03.000Z"),
        reply("a2b", "a2a", "msg_2", [{"type": "text", "text": "The filter drops the last day."}],
              "2026-01-05T10:00:03.100Z"),
        reply("a2c", "a2b", "msg_2", [{"type": "tool_use", "id": "t2", "name": "Edit", "input": {"old": "<", "new": "<="}}],
              "2026-01-05T10:00:03.200Z"),
        tool_result("r2", "a2c", "t2", "edited filter.py", "2026-01-05T10:00:04.000Z"),
        reply("a3", "r2", "msg_3", [{"type": "redacted_thinking", "data": "cmVkYWN0ZWQgdGhpbmtpbmc="},
                                    {"type": "text", "text": "Fixed; running the tests again."},
                                    {"type": "tool_use", "id": "t3", "name": "Bash", "input": {"command": "pytest"}}],
              "2026-01-05T10:00:05.000Z"),
    ]


def interleaved_sidechain_session():
    """A Claude Code 1.0 session: the sub-agent's lines (``isSidechain``, no ``agentId``, the first with no parent)
    written into the main file between the Task call and its result, as Claude Code wrote them before 2.0."""
    prompt = "Read the config loader and list every setting it reads, with its default."
    source = "\n".join(f"    {name}_{n} = env.get('{name.upper()}_{n}', {n})  # read at start-up"
                       for n in range(120) for name in ("cache",))

    def side(d):
        return {**d, "isSidechain": True, "version": "1.0.108"}

    def main(d):
        return {**d, "version": "1.0.108"}

    return [
        main(user("m1", None, "Document the settings of the config loader", "2026-01-05T10:00:00.000Z")),
        main(assistant("m2", "m1", "msg_m2", [{"type": "tool_use", "id": "toolu_task", "name": "Task",
                                               "input": {"description": "list settings", "prompt": prompt}}],
                       usage(20, 0, 0, 30), "2026-01-05T10:00:01.000Z")),
        side(user("s1", None, prompt, "2026-01-05T10:00:02.000Z")),
        side(assistant("s2", "s1", "msg_s2", [{"type": "tool_use", "id": "toolu_read", "name": "Read",
                                               "input": {"file_path": "/repo/config/loader.py"}}],
                       usage(30, 0, 0, 12), "2026-01-05T10:00:03.000Z")),
        side(tool_result("s3", "s2", "toolu_read", source, "2026-01-05T10:00:04.000Z")),
        side(assistant("s4", "s3", "msg_s4", [{"type": "text", "text": "The loader reads 120 cache settings."}],
                       usage(900, 0, 0, 15), "2026-01-05T10:00:05.000Z")),
        side(assistant("s5", "s4", "msg_s5", [{"type": "tool_use", "id": "toolu_grep", "name": "Grep",
                                               "input": {"pattern": "env.get", "path": "/repo"}}],
                       usage(920, 0, 0, 10), "2026-01-05T10:00:06.000Z")),
        side(tool_result("s6", "s5", "toolu_grep", "config/loader.py: 120 matches", "2026-01-05T10:00:07.000Z")),
        side(assistant("s7", "s6", "msg_s7", [{"type": "text", "text": "All 120 settings come from the environment; "
                                               "each defaults to its index."}],
                       usage(940, 0, 0, 25), "2026-01-05T10:00:08.000Z")),
        main(tool_result("m3", "m2", "toolu_task", "All 120 settings come from the environment.",
                         "2026-01-05T10:00:09.000Z")),
        main(assistant("m4", "m3", "msg_m4", [{"type": "text", "text": "Documented the 120 settings."}],
                       usage(60, 0, 0, 20), "2026-01-05T10:00:10.000Z")),
    ]
