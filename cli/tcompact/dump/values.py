"""The parts of a dump that both its writer and its reader need: the schema versions, file names,
the stored form of a message and the content hashes an edited dump no longer matches."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..formats.chat import message_to_dict
from ..model import Message

__all__ = ["SCHEMA_VERSION", "READABLE_SCHEMAS", "safe_name", "dump_name", "digest", "content_hashes",
           "message_dict", "message_from_dict", "messages_of"]

SCHEMA_VERSION = 3
READABLE_SCHEMAS = (1, 2, 3)
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_name(value: str) -> str:
    """A filename-safe form: runs of other characters become '-', trimmed, at most 80 characters."""
    return _UNSAFE.sub("-", value).strip("-")[:80] or "unknown"


def dump_name(epoch_ms: int, processor: str, session: str) -> str:
    """``{epoch_ms}_{processor}_{session}.json``."""
    return f"{epoch_ms}_{safe_name(processor)}_{safe_name(session)}.json"


def digest(value: Any) -> str:
    """sha256 of a JSON value, keys sorted."""
    import hashlib

    import orjson

    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()


def content_hashes(doc: Mapping[str, Any], *, context_before: str | None = None) -> dict[str, str]:
    """sha256 of the parts a replay rebuilds from: an edited dump no longer matches them.
    ``context_before``: the digest of the dump's context messages when it is known already."""
    after = doc.get("context_after") or {}
    before = context_before if context_before is not None else digest((doc.get("context_before") or {}).get("messages"))
    return {"context_before": before,
            "context_after": digest(after.get("messages")),
            "request": digest(doc.get("request")), "response": digest(doc.get("response")),
            "processor": digest(doc.get("processor"))}


def message_dict(m: Message) -> dict[str, Any]:
    """A message as a dump stores it: its chat dict plus, under ``_``-keys, what the chat shape cannot
    hold (injected-context flag, error flag, every reasoning item, tool types) — lossless for replay."""
    d = message_to_dict(m)
    if m.internal:
        d["_internal"] = True
    if m.is_error:
        d["_is_error"] = True
    if any(r.encrypted_chars or r.kind != "reasoning_content" for r in m.reasoning):
        d.pop("reasoning_content", None)
        d["_reasoning"] = [{"text": r.text, "encrypted_chars": r.encrypted_chars, "kind": r.kind} for r in m.reasoning]
    if any(c.type != "function" for c in m.tool_calls):
        d["_tool_types"] = [c.type for c in m.tool_calls]
    return d


def message_from_dict(d: Mapping[str, Any]) -> Message:
    """The message :func:`message_dict` stored."""
    from dataclasses import replace

    from ..formats.chat import parse_message
    from ..model import Reasoning

    plain = {k: v for k, v in d.items() if not k.startswith("_")}
    m = parse_message(plain)
    reasoning = tuple(Reasoning(**r) for r in d["_reasoning"]) if "_reasoning" in d else m.reasoning
    calls = tuple(replace(c, type=t) for c, t in zip(m.tool_calls, d["_tool_types"], strict=False)) \
        if "_tool_types" in d else m.tool_calls
    return replace(m, internal=bool(d.get("_internal")), is_error=bool(d.get("_is_error")), reasoning=reasoning,
                   tool_calls=calls)


def messages_of(items: Sequence[Mapping[str, Any]]) -> tuple[Message, ...]:
    """Messages from a dump's stored dicts."""
    return tuple(message_from_dict(item) for item in items)
