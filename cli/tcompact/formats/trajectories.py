"""Read-only trajectory documents: SWE-agent ``.traj`` files and tau-bench result arrays.

* SWE-agent: one JSON object whose ``history`` is the list of chat messages the model saw
  (tool messages may answer several calls through a ``tool_call_ids`` list); ``info.model_stats``
  carries the provider usage the run recorded. Without function calling (SWE-agent before 1.0, and
  its thought-action parser since) a command is the ``action`` of an assistant message and its output
  the user message after it: they are read as a tool call and its result. A file with only the
  ``trajectory`` of steps (``action``, ``observation``, ``response``, ``thought``) is read from them.
* tau-bench: a JSON array of episodes, each with a ``traj`` message list, a ``task_id`` and a
  ``reward``; every episode becomes one transcript of kind ``episode`` (a single episode object
  is accepted too).
Both import into the chat model; writing goes through the chat format.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import orjson

from ..model import Message, Record, ToolCall, Transcript
from ._source import ReadContext
from .chat import parse_items, usage_of

__all__ = ["is_swe_agent", "is_tau_bench", "read_swe_agent", "read_tau_bench"]



def is_swe_agent(value: Any) -> bool:
    """A SWE-agent trajectory object: a ``history``, or only the ``trajectory`` of its steps."""
    if not isinstance(value, dict):
        return False
    steps = value.get("trajectory")
    return isinstance(value.get("history"), list) or (
        isinstance(steps, list) and bool(steps) and all(isinstance(s, dict) and "action" in s for s in steps))


def is_tau_bench(value: Any) -> bool:
    """A tau-bench episode array (or one episode object)."""
    if isinstance(value, dict):
        return isinstance(value.get("traj"), list)
    return isinstance(value, list) and bool(value) and all(isinstance(e, dict) and "traj" in e for e in value)


def read_swe_agent(rec: Record, ctx: ReadContext) -> list[Transcript]:
    """The ``history`` of a SWE-agent trajectory (else its ``trajectory`` steps) as one transcript."""
    doc = rec.data
    if isinstance(doc.get("history"), list):
        messages = parse_items(doc["history"], rec, ctx, "history")
    else:
        messages = parse_items(_step_messages(doc["trajectory"]), rec, ctx, "trajectory")
    messages = _commands_as_calls(messages)
    info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
    return [Transcript(id="main", kind="main", messages=messages, model=_swe_model(doc),
                       provider_usage=_swe_usage(info.get("model_stats")) or usage_of(messages))]


def _step_messages(steps: list[Any]) -> list[Any]:
    """The messages of ``trajectory`` steps (``{"action", "observation", "response", "thought"}``): the
    model's response with its thought and command, then the command's output."""
    out: list[Any] = []
    for step in steps:
        if not isinstance(step, dict):
            out.append(step)  # rejected as a message of the wrong shape
            continue
        response = step.get("response") if isinstance(step.get("response"), str) else step.get("thought")
        out.append({"role": "assistant", "content": response or "",
                    **{k: step[k] for k in ("thought", "action") if isinstance(step.get(k), str)}})
        out.append({"role": "user", "content": step.get("observation") if isinstance(step.get("observation"), str)
                    else "", "message_type": "observation"})
    return out


def _commands_as_calls(messages: Sequence[Message]) -> tuple[Message, ...]:
    """SWE-agent without function calling: an assistant message whose ``action`` is the command it ran
    becomes a tool call (named by the command's first word, the whole command its ``command`` argument;
    its text the ``thought`` when the message is the thought and the fenced command), and the user
    message after it that holds the command's output (no ``message_type``, as SWE-agent wrote them
    before 1.0, or ``observation``) the call's result."""
    out = list(messages)
    for n, m in enumerate(out):
        action = m.extra.get("action")
        if m.role != "assistant" or m.tool_calls or not isinstance(action, str) or not action.strip():
            continue
        command = action.strip()
        call = ToolCall(f"swe-step-{n}", command.split(None, 1)[0], orjson.dumps({"command": command}).decode())
        thought = m.extra.get("thought")
        text = thought if isinstance(thought, str) and thought.strip() and command in m.text else m.content
        out[n] = replace(m, content=text, tool_calls=(call,))
        answer = out[n + 1] if n + 1 < len(out) else None
        if answer is not None and answer.role == "user" and not answer.tool_call_ids \
                and answer.extra.get("message_type", "observation") == "observation":
            out[n + 1] = replace(answer, role="tool", tool_call_ids=(call.id,))
    return tuple(out)


def _swe_model(doc: Mapping[str, Any]) -> str | None:
    config = doc.get("replay_config")
    if isinstance(config, str):
        try:
            config = orjson.loads(config)
        except orjson.JSONDecodeError:
            return None
    agent = config.get("agent") if isinstance(config, dict) else None
    model = agent.get("model") if isinstance(agent, dict) else None
    name = model.get("name") if isinstance(model, dict) else None
    return name if isinstance(name, str) else None


def _swe_usage(stats: Any) -> dict[str, Any] | None:
    """SWE-agent's model_stats (a dict, or its Python repr in older files); None when all zero."""
    if isinstance(stats, str):
        try:
            stats = ast.literal_eval(stats)
        except (ValueError, SyntaxError):
            return None
    if not isinstance(stats, dict):
        return None
    sent, received = stats.get("tokens_sent"), stats.get("tokens_received")
    if not isinstance(sent, int) or not isinstance(received, int) or (sent == 0 and received == 0):
        return None
    return {"source": "swe-agent", "requests": stats.get("api_calls"), "input_tokens": sent,
            "output_tokens": received, "last_context_tokens": None}


def read_tau_bench(rec: Record, ctx: ReadContext) -> list[Transcript]:
    """One ``episode`` transcript per element of a tau-bench result array."""
    value = rec.data
    episodes = [value] if isinstance(value, dict) else value
    out = []
    for n, ep in enumerate(episodes):
        traj = ep.get("traj")
        if not isinstance(traj, list):
            ctx.reject(rec, '"traj" must be a list of messages', where=f"[{n}]")
            continue
        task = ep.get("task_id", n)
        trial = ep.get("trial")
        tid = f"task-{task}" + (f"-trial-{trial}" if trial is not None else "")
        messages = parse_items(traj, rec, ctx, f"[{n}].traj")
        notes = (f"reward {ep['reward']}",) if isinstance(ep.get("reward"), (int, float)) else ()
        out.append(Transcript(id=tid, kind="episode", messages=messages, provider_usage=usage_of(messages),
                              notes=notes))
    return out
