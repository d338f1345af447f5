"""What every summariser backend takes and gives back, and how its failures are described.

A compressor builds a :class:`SummaryRequest` — the conversation the model would see, the
instruction prompt, which messages are to be compressed and the token budget of the answer —
and a backend (extractive, openai, replay) turns it into a :class:`SummaryResponse`. Backends
report failures as :class:`SummarizerError` with one of the error kinds of openjiuwen-spec §2.9
(plus ``empty_response``, and ``invalid_response`` for a reply the compressor refused as no usable
summary), so the retry policy does not depend on the backend. A backend that calls a model may
also say what its model's context window is (:class:`ModelWindow`, :meth:`Summarizer.context_window`)
and fill in the model and parameters it will send (:meth:`Summarizer.prepare`), so that requests are fitted to
the summariser's window, not the transcript's, and dumps record what was really sent.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import TcompactError, UsageError
from ..model import Message

__all__ = [
    "Block",
    "ModelWindow",
    "ERROR_KINDS",
    "TRANSIENT_KINDS",
    "SummaryRequest",
    "SummaryResponse",
    "Summarizer",
    "SummarizerError",
    "BackendSettings",
    "model_window",
    "wire_message",
]

#: Error kinds (openjiuwen-spec §2.9) plus ``unreachable`` (nothing answered at the address: refused, no
#: such host), ``empty_response`` for a reply with no usable text and ``invalid_response`` for a refused one.
ERROR_KINDS = (
    "context_overflow",
    "rate_limit",
    "authentication",
    "timeout",
    "server_unstable",
    "unreachable",
    "api_request_error",
    "unknown",
    "empty_response",
    "invalid_response",
)
#: Kinds retried with the same request after a backoff (spec §2.10).
TRANSIENT_KINDS = frozenset({"rate_limit", "timeout", "server_unstable", "unreachable", "unknown"})


class SummarizerError(TcompactError):
    """A summariser call failed; ``kind`` is one of ERROR_KINDS.

    A context overflow may carry what the server said: its window (``context_window``) and the
    size of the refused prompt in its own tokens (``prompt_tokens``).
    """

    exit_code = 1

    def __init__(self, kind: str, message: str, *, retry_after: float | None = None, status: int | None = None,
                 hint: str | None = None, context_window: int | None = None,
                 prompt_tokens: int | None = None) -> None:
        super().__init__(message, hint=hint)
        self.kind = kind
        self.retry_after = retry_after
        self.status = status
        self.context_window = context_window
        self.prompt_tokens = prompt_tokens


@dataclass(frozen=True)
class ModelWindow:
    """The summariser model's context window in tokens (of its own tokenizer), and where it was learned:
    ``--summarizer-window``, ``GET /props``, ``GET /v1/models``, ``overflow error`` or ``recorded``."""

    tokens: int
    source: str


@dataclass(frozen=True)
class Block:
    """One target of a "blocks" request: messages ``start`` to ``end`` (inclusive) of the request's
    messages, replaced by one memory block of level ``next_level``."""

    block_id: str
    scope: str
    start: int
    end: int
    current_level: int = 0
    next_level: int = 1
    source_block_count: int = 1


@dataclass(frozen=True)
class SummaryRequest:
    """One summarisation call.

    ``messages`` is the conversation the model sees (preserved prefix + the body to compress,
    never the protected tail); ``body`` says which of them are to be compressed; ``prompt`` is
    the instruction sent as the final user message; ``target_tokens`` is the budget of the
    summary; ``contract`` names the state-snapshot template the answer must follow;
    ``cap_tokens`` (the compressor's ``summary_max_tokens``) is the most the whole summary may
    take — the user's messages an extractive summary quotes beside its budget included.

    A "blocks" request (the round-level pipeline) is sent as ``[system, user(prompt)]``: the
    prompt already holds the serialised targets; ``blocks`` lists them (indices into
    ``messages``), ``stage`` names the pipeline stage, and ``target_tokens`` is per block.

    ``schema``: the JSON schema the reply must follow, sent as ``response_format`` by a backend whose
    server constrains replies to it (the prompt asks for the same shape, so a server that does not
    still gets it in words); ``part``: which call of how many of its compressor run this is, when
    the run planned them (summarising in pieces), for the progress shown on a terminal.
    """

    processor: str
    contract: str
    prompt: str
    messages: tuple[Message, ...]
    body: range
    target_tokens: int
    model: str | None = None
    parameters: Mapping[str, Any] = field(default_factory=dict)
    system: str | None = None
    stage: str | None = None
    blocks: tuple[Block, ...] = ()
    max_tokens: int | None = None
    window: ModelWindow | None = None
    mode: str | None = None
    schema: Mapping[str, Any] | None = None
    part: tuple[int, int] | None = None
    cap_tokens: int | None = None

    def wire_messages(self) -> list[dict[str, Any]]:
        """The chat messages sent to a model: the conversation, then the prompt as a user message.

        A tool message answering several calls (SWE-agent's ``tool_call_ids``) becomes one tool
        message per call, as chat-completions endpoints require. A "blocks" request is the system
        prompt and the task prompt only.
        """
        if self.contract == "blocks":
            return [{"role": "system", "content": self.system or ""}, {"role": "user", "content": self.prompt}]
        out = []
        for m in self.messages:
            d = wire_message(m)
            out.append(d)
            for extra in m.tool_call_ids[1:] if d["role"] == "tool" else ():
                out.append({"role": "tool", "content": "(same output as the previous tool message)",
                            "tool_call_id": extra})
        return out + [{"role": "user", "content": self.prompt}]


@dataclass(frozen=True)
class SummaryResponse:
    """A backend's answer: the raw text, provider usage if any, the model that answered, the latency,
    why the model stopped (``"stop"``, ``"length"``: cut at ``max_tokens``; None: not said) and the
    server's own timings where it reports them (llama.cpp)."""

    text: str
    usage: Mapping[str, Any] | None = None
    model: str | None = None
    latency_s: float = 0.0
    finish_reason: str | None = None
    timings: Mapping[str, Any] | None = None


class BackendSettings(BaseModel):
    """Base of every backend's settings: its own options, validated once where a command builds them.

    A field declares its command-line option (``option``), whether that option is the backend's own
    (``own``: refused with another backend) and, for a field without default, what to give it
    (``hint``). :meth:`given` says which value of the command's options each field takes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @classmethod
    def given(cls, options: Any) -> dict[str, object]:
        """The value of each field as ``options`` give it (None: not given; pydantic checks the rest); a backend
        with options overrides it."""
        return {}

    @classmethod
    def own_given(cls, options: Any) -> list[str]:
        """The backend's own options that ``options`` give, by option name, in field order."""
        values = cls.given(options)
        return [str(_meta(cls, name)["option"]) for name in cls.model_fields
                if _meta(cls, name).get("own") and values.get(name) is not None]

    @classmethod
    def of(cls, options: Any, backend: str) -> BackendSettings:
        """The settings ``options`` give, or a :class:`~tcompact.errors.UsageError` naming the first option missing."""
        try:
            return cls(**{k: v for k, v in cls.given(options).items() if v is not None})
        except ValidationError as exc:
            meta = _meta(cls, str(exc.errors()[0]["loc"][0]))
            hint = meta.get("hint")
            raise UsageError(f"--summarizer {backend} needs {meta['option']}",
                             hint=hint if isinstance(hint, str) else None) from None


def _meta(model: type[BaseModel], name: str) -> dict[str, str | bool]:
    """What a settings field declares about its option (``option``, ``own``, ``hint``)."""
    extra = model.model_fields[name].json_schema_extra
    return {k: v for k, v in extra.items() if isinstance(v, (str, bool))} if isinstance(extra, dict) else {}


class Summarizer(ABC):
    """Base class of a summariser backend: subclasses set ``name``, ``description``, ``settings_model``, their
    capabilities, and implement :meth:`summarize` (and :meth:`build`, for a backend of the registry).

    What the registry and the commands ask before one is built: ``calls_model`` (it calls a model,
    ``--model`` names it), ``reruns`` (it can answer a dump's request again: ``replay --summarizer``),
    ``reads_prompt`` (it follows the instruction prompt). What the compressors ask of a built one:
    ``trusted`` (its answers follow the contract by construction: the reply checks of
    :mod:`tcompact.summarizers.validity` are not made) and ``narrates`` (it writes the narrative beside
    the extractive facts, compressors/_model.py), :meth:`context_window`, :meth:`prepare` and :meth:`answer_ahead`.
    """

    name: str
    description: ClassVar[str] = ""
    settings_model: ClassVar[type[BackendSettings]] = BackendSettings
    calls_model: ClassVar[bool] = False
    reruns: ClassVar[bool] = False
    reads_prompt: ClassVar[bool] = False
    trusted: bool = False
    narrates: bool = False

    @classmethod
    def build(cls, settings: Any, *, counter: Any, progress: Any = None) -> Summarizer:
        """The backend for these settings (of its ``settings_model``), counting with ``counter``; ``progress``
        hears each call's progress (a terminal view)."""
        raise NotImplementedError(f"the {cls.name} summariser is not built from settings")

    @abstractmethod
    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        """Answer one request, or raise SummarizerError."""

    def context_window(self) -> ModelWindow | None:
        """The model's context window, when the backend knows it."""
        return None

    def prepare(self, request: SummaryRequest) -> SummaryRequest:
        """``request`` with the model and parameters the backend will send (as it is, for one that sends none)."""
        return request

    def answer_ahead(self, requests: Sequence[SummaryRequest]) -> None:
        """Told that ``requests`` will be sent: a backend that answers in this process may start on them
        elsewhere meanwhile (the extractive one, in a copy of the process). Others need not do anything."""
        return None


def model_window(summarizer: Summarizer | None) -> ModelWindow | None:
    """The summariser model's context window, when there is a summariser and its backend knows it."""
    return summarizer.context_window() if summarizer is not None else None


def wire_message(m: Message) -> dict[str, Any]:
    """A message in the OpenAI chat shape a chat-completions endpoint accepts.

    Roles outside system/user/assistant/tool are mapped (developer → system, function → tool);
    reasoning is not sent; image parts stay; unknown part shapes become text.
    """
    role = {"developer": "system", "function": "tool"}.get(m.role, m.role)
    content: Any = m.content if isinstance(m.content, str) or m.content is None else _parts(m.content)
    d: dict[str, Any] = {"role": role, "content": content if content is not None else ""}
    if m.tool_calls and role == "assistant":
        d["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                           for c in m.tool_calls]
    if role == "tool":
        d["tool_call_id"] = m.tool_call_id or ""
    return d


def _parts(parts: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]] | str:
    out: list[dict[str, Any]] = []
    for p in parts:
        kind = p.get("type")
        if kind == "image_url":
            out.append(dict(p))
        elif isinstance(p.get("text"), str):
            out.append({"type": "text", "text": p["text"]})
        elif kind in ("image", "input_image"):
            out.append({"type": "text", "text": "[image]"})
        else:
            import orjson

            out.append({"type": "text", "text": orjson.dumps(p).decode()})
    if all(p["type"] == "text" for p in out):
        return "\n".join(p["text"] for p in out)
    return out
