"""Codex rollout lines for tests, as Codex CLI 0.130 writes them (every value invented)."""

from __future__ import annotations

TS = "2026-01-05T10:00:00.000Z"


def ln(kind, payload, ts=TS):
    return {"timestamp": ts, "type": kind, "payload": payload}


def item(payload):
    return ln("response_item", payload)


def message(role, text, kind="input_text"):
    return item({"type": "message", "role": role, "content": [{"type": kind, "text": text}]})


def token_count(total_in, total_out, last_in, last_out, window=272000):
    def u(i, o):
        return {"input_tokens": i, "cached_input_tokens": i // 2, "output_tokens": o, "reasoning_output_tokens": 0,
                "total_tokens": i + o}

    return ln("event_msg", {"type": "token_count", "info": {"total_token_usage": u(total_in, total_out),
                                                            "last_token_usage": u(last_in, last_out),
                                                            "model_context_window": window}})


def rollout():
    return [
        ln("session_meta", {"id": "0199", "cwd": "/repo", "originator": "codex_cli_rs", "cli_version": "0.130.0",
                            "base_instructions": {"text": "You are Codex."}}),
        ln("turn_context", {"cwd": "/repo", "model": "gpt-5-codex", "approval_policy": "never"}),
        message("user", "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"),
        message("developer", "<permissions instructions>sandboxed</permissions instructions>"),
        message("user", "run the tests"),
        ln("event_msg", {"type": "user_message", "message": "run the tests", "images": []}),
        item({"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Plan** run pytest"}],
              "content": None, "encrypted_content": "gAAAA" + "x" * 795}),
        item({"type": "function_call", "name": "shell", "arguments": '{"command":["pytest","-q"]}', "call_id": "c1"}),
        ln("event_msg", {"type": "agent_reasoning", "text": "Plan"}),
        item({"type": "custom_tool_call", "status": "completed", "call_id": "c2", "name": "apply_patch",
              "input": "*** Begin Patch\n*** End Patch"}),
        item({"type": "function_call_output", "call_id": "c1", "output": "Process exited with code 1\n2 failed"}),
        item({"type": "custom_tool_call_output", "call_id": "c2", "output": "Success."}),
        token_count(1000, 50, 1000, 50),
        item({"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "pytest"}}),
        message("assistant", "Two tests fail.", "output_text"),
        item({"type": "ghost_snapshot", "ghost_commit": {"id": "abc"}}),
        {"timestamp": TS, "type": "world_state", "payload": {"x": 1}},
        token_count(2500, 90, 1500, 40),
    ]


def compacted_rollout(with_replacement=True):
    compacted = {"message": "Summary: tests were run, two fail."}
    if with_replacement:
        compacted["replacement_history"] = [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "run the tests"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Summary: two fail."}]},
        ]
    return rollout() + [
        ln("compacted", compacted),
        ln("event_msg", {"type": "context_compacted"}),
        message("user", "now fix them"),
        ln("event_msg", {"type": "user_message", "message": "now fix them", "images": []}),
        message("assistant", "Fixed.", "output_text"),
    ]
