"""Read-only trajectory documents: SWE-agent ``.traj`` files and tau-bench result arrays.

* SWE-agent: one JSON object whose ``history`` is the list of chat messages the model saw
  (tool messages may answer several calls through a ``tool_call_ids`` list); ``info.model_stats``
  carries the provider usage the run recorded.
* tau-bench: a JSON array of episodes, each with a ``traj`` message list, a ``task_id`` and a
  ``reward``; every episode becomes one transcript of kind ``episode`` (a single episode object
  is accepted too).
Both import into the chat model; writing goes through the chat format.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from ..model import Record, Transcript
from ._source import ReadContext
from .chat import parse_items, usage_of

__all__ = ["SWE_AGENT", "TAU_BENCH", "is_swe_agent", "is_tau_bench", "read_swe_agent", "read_tau_bench"]

SWE_AGENT = "swe-agent"
TAU_BENCH = "tau-bench"


def is_swe_agent(value: Any) -> bool:
    """A SWE-agent trajectory object."""
    return isinstance(value, dict) and isinstance(value.get("history"), list)


def is_tau_bench(value: Any) -> bool:
    """A tau-bench episode array (or one episode object)."""
    if isinstance(value, dict):
        return isinstance(value.get("traj"), list)
    return isinstance(value, list) and bool(value) and all(isinstance(e, dict) and "traj" in e for e in value)


def read_swe_agent(rec: Record, ctx: ReadContext) -> list[Transcript]:
    """The ``history`` of a SWE-agent trajectory as one transcript."""
    doc = rec.data
    messages = parse_items(doc["history"], rec, ctx, "history")
    info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
    return [Transcript(id="main", kind="main", messages=messages, model=_swe_model(doc),
                       provider_usage=_swe_usage(info.get("model_stats")) or usage_of(messages))]


def _swe_model(doc: Mapping[str, Any]) -> str | None:
    config = doc.get("replay_config")
    if isinstance(config, str):
        import orjson

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
