"""What an OpenAI-compatible server answers, read: a chat completion answered at once (or the failure it
is), its usage, and the context window a ``GET /v1/models`` or llama.cpp ``GET /props`` body states.

Pure: the bodies come from :mod:`tcompact.summarizers.openai_compat`, which alone talks to the server;
a streamed answer is read by :func:`tcompact.summarizers.progress.read_stream` into the same shape.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .base import SummarizerError
from .progress import Streamed

__all__ = ["whole_reply", "empty_text", "schema_refused", "models_window", "props_window", "usage_dict"]


def whole_reply(completion: Any, *, host: str, redact: Callable[[str], str]) -> Streamed:
    """A chat completion answered at once, in the shape of a streamed one (or the failure it is)."""
    if not hasattr(completion, "choices"):  # a body that is not JSON comes back as a str
        raise SummarizerError("server_unstable", f"{host} answered with a body that is not a chat "
                              f"completion: {_clip(redact(str(completion)), 120)}",
                              hint="check that the base URL is the endpoint's /v1 address")
    choices = completion.choices
    if not choices:
        raise _empty(host, "no choices")
    message = getattr(choices[0], "message", None)
    text = _content_text(getattr(message, "content", None))
    if not text.strip() and getattr(message, "tool_calls", None):
        raise _empty(host, "only tool calls")
    if not text.strip() and isinstance(getattr(message, "refusal", None), str) and message.refusal:
        raise _empty(host, f"a refusal ({_clip(message.refusal, 120)})")
    timings = (getattr(completion, "model_extra", None) or {}).get("timings")
    return Streamed(text, getattr(choices[0], "finish_reason", None), getattr(completion, "usage", None),
                    timings if isinstance(timings, Mapping) else None, getattr(completion, "model", None))


def empty_text(host: str, reason: str | None, processor: str) -> SummarizerError:
    """The failure of a reply with no text (``reason``: why the model stopped)."""
    hint = (f"raise summary_max_tokens (--set {processor}.summary_max_tokens=N): the model spent its budget "
            "(on reasoning?) before answering" if reason == "length" else "try another model")
    return SummarizerError("empty_response", f"{host} answered with no text (finish_reason {reason})", hint=hint)


def _empty(host: str, what: str) -> SummarizerError:
    return SummarizerError("empty_response", f"{host} answered with {what}, no text",
                           hint="try another model, or mode 'serialized' if it keeps calling tools")


def schema_refused(failure: SummarizerError) -> bool:
    """A refusal of the reply's JSON schema (a server that does not support ``response_format``)."""
    text = failure.what.lower()
    return failure.kind == "api_request_error" and any(w in text for w in ("response_format", "json_schema",
                                                                           "grammar", "schema"))


def models_window(body: Any, model: str) -> Any:
    """``GET /v1/models``: the window of ``model``'s entry (or of the only entry) — llama.cpp's ``meta.n_ctx``,
    vLLM's ``max_model_len``, other servers' ``context_length`` / ``context_window``."""
    items = body.get("data") if isinstance(body, Mapping) else None
    if not isinstance(items, list):
        return None
    entries = [m for m in items if isinstance(m, Mapping)]
    mine = [m for m in entries if m.get("id") == model or model in (m.get("aliases") or ())]
    entry = mine[0] if mine else entries[0] if len(entries) == 1 else None
    if entry is None:
        return None
    meta = entry.get("meta") if isinstance(entry.get("meta"), Mapping) else {}
    return next((v for v in (meta.get("n_ctx"), entry.get("max_model_len"), entry.get("context_length"),
                             entry.get("context_window")) if v is not None), None)


def props_window(body: Any) -> Any:
    """llama.cpp's ``/props``: the context of one slot."""
    settings = body.get("default_generation_settings") if isinstance(body, Mapping) else None
    return settings.get("n_ctx") if isinstance(settings, Mapping) else None


def usage_dict(usage: Any) -> dict[str, Any] | None:
    """Provider usage as a plain dict (nested details kept, absent values dropped)."""
    if hasattr(usage, "model_dump"):
        return usage.model_dump(mode="json", exclude_none=True)
    return dict(usage) if isinstance(usage, Mapping) else None


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # some providers answer content parts
        return "".join(p.get("text", "") if isinstance(p, Mapping) else str(getattr(p, "text", "")) for p in content)
    return ""


def _clip(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
