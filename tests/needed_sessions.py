"""Two small sessions for the needed-token recall, every value invented: a Claude Code session that renames a
function of a settings loader, and a Codex rollout that raises a retry limit, a few tool calls each.

Claude Code (messages): 0 the request; 1 Glob; 2 its result lists ``src/app/settings_loader.py``; 3 Read of
it; 4 the file: ``load_settings`` and ``parse_yaml_file`` at its head, ``DEFAULT_TIMEOUT_MS = 45000000`` in
the middle of 40 comment lines; 5 grep for ``parse_yaml_file``; 6 its result names the loader again; 7 Edit
``load_settings`` → ``read_settings``; 8 "updated"; 9 echo ``DEFAULT_TIMEOUT_MS 45000000``; 10 its output;
11 the answer. Cut points: 3, 5, 7 and 9 (1 has no tool result before it).

Codex (messages): 0 developer, 1 environment, 2 the request; 3 ``rg -l retry_limit``; 4 two paths; 5 ``sed``
of ``lib/net/retry_policy.rs``; 6 its 34 lines (``MAX_RETRY_LIMIT``, ``backoff_millis`` at the head); 7 an
apply_patch; 8 "Success"; 9 ``cargo test backoff_millis``; 10 its result; 11 the answer — after the system
message of the base instructions, so each is one index further. Cut points: 6, 8 and 10.
"""

from __future__ import annotations

from pathlib import Path

from claude_lines import assistant, tool_result, usage, user
from codex_lines import item, ln, message
from conftest import jsonl

SETTINGS = ("def load_settings(path):\n    return parse_yaml_file(path)\n\n"
            + "".join(f"# comment line {n:02d} of the loader\n" for n in range(1, 21))
            + "DEFAULT_TIMEOUT_MS = 45000000\n"
            + "".join(f"# comment line {n:02d} of the loader\n" for n in range(21, 41)))


def claude_session(path: Path) -> Path:
    """The Claude Code session, written at ``path``."""
    calls = [("t1", "Glob", {"pattern": "**/*.py"}, "src/app/settings_loader.py\nsrc/app/main_entry.py\n"
                                                  "tests/test_settings.py"),
             ("t2", "Read", {"file_path": "src/app/settings_loader.py"}, SETTINGS),
             ("t3", "Bash", {"command": "grep -rn parse_yaml_file src/"},
              "src/app/settings_loader.py:2:    return parse_yaml_file(path)"),
             ("t4", "Edit", {"file_path": "src/app/settings_loader.py", "old_string": "def load_settings(path):",
                             "new_string": "def read_settings(path):"},
              "The file src/app/settings_loader.py has been updated."),
             ("t5", "Bash", {"command": "echo DEFAULT_TIMEOUT_MS 45000000"}, "DEFAULT_TIMEOUT_MS 45000000")]
    lines = [user("u0", None, "Rename the helper of the loader, and tell me the timeout.")]
    parent = "u0"
    for n, (tid, name, args, result) in enumerate(calls, start=1):
        lines.append(assistant(f"a{n}", parent, f"msg_{n}", [{"type": "tool_use", "id": tid, "name": name,
                                                              "input": args}], usage(1, 1, 1, 1)))
        lines.append(tool_result(f"r{n}", f"a{n}", tid, result, "2026-01-05T10:00:02.000Z"))
        parent = f"r{n}"
    lines.append(assistant("a6", parent, "msg_6", [{"type": "text", "text": "Renamed it; the timeout is 45000000."}],
                           usage(1, 1, 1, 1)))
    return jsonl(path, lines)


def _call(call_id: str, command: str) -> dict:
    return item({"type": "function_call", "name": "exec_command", "arguments": '{"cmd": "%s"}' % command,
                 "call_id": call_id})


def _output(call_id: str, text: str) -> dict:
    return item({"type": "function_call_output", "call_id": call_id,
                 "output": f"Chunk ID: {call_id}\nWall time: 0.1 seconds\nProcess exited with code 0\nOutput:\n{text}"})


PATCH = ("*** Begin Patch\n*** Update File: lib/net/retry_policy.rs\n@@\n-pub const MAX_RETRY_LIMIT: u32 = 3;\n"
         "+pub const MAX_RETRY_LIMIT: u32 = 5;\n*** End Patch\n")


def codex_rollout(path: Path) -> Path:
    """The Codex rollout, written at ``path``."""
    return jsonl(path, [
        ln("session_meta", {"id": "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000", "cwd": "/repo",
                            "originator": "codex_cli_rs", "cli_version": "0.130.0",
                            "base_instructions": {"text": "You are Codex."}}),
        ln("turn_context", {"cwd": "/repo", "model": "gpt-5-codex", "approval_policy": "never"}),
        message("developer", "<permissions instructions>sandboxed</permissions instructions>"),
        message("user", "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"),
        message("user", "Raise the retry limit of the client to 5."),
        ln("event_msg", {"type": "user_message", "message": "Raise the retry limit of the client to 5.", "images": []}),
        _call("c1", "rg -l retry_limit"),
        _output("c1", "lib/net/http_client.rs\nlib/net/retry_policy.rs\n"),
        _call("c2", "sed -n 1,40p lib/net/retry_policy.rs"),
        _output("c2", "pub const MAX_RETRY_LIMIT: u32 = 3;\npub fn backoff_millis(attempt: u32) -> u64 {\n"
                      + "".join(f"    // step {n:02d} of the policy\n" for n in range(1, 31))
                      + "    250 * attempt\n}\n"),
        item({"type": "custom_tool_call", "status": "completed", "call_id": "c3", "name": "apply_patch",
              "input": PATCH}),
        item({"type": "custom_tool_call_output", "call_id": "c3",
              "output": "Success. Updated the following files:\nM lib/net/retry_policy.rs\n"}),
        _call("c4", "cargo test backoff_millis"),
        _output("c4", "test result: ok. 3 passed"),
        message("assistant", "MAX_RETRY_LIMIT is now 5; the backoff tests pass.", "output_text"),
    ])
