"""The ``openai`` backend: any OpenAI-compatible chat-completions endpoint (vLLM, Ollama, llama.cpp, OpenAI).

This is the only module of tcompact that imports ``openai``, and it does so inside functions, so
``import tcompact`` and every offline command stay light. It owns four things:

* :func:`get_client` — the one door to a client: base URL and key from the arguments or the
  environment, a placeholder key for local servers, no built-in retries (the compressors retry,
  by error kind, as in openjiuwen-spec §2.10), and ``timeout`` as a deadline on the *whole* call
  (:mod:`tcompact.summarizers.deadline`: a server that dribbles its answer is cut off too);
* :class:`OpenAISummarizer` — sends a :class:`SummaryRequest` as a real conversation (spec §2.4)
  or, for providers that reject tool-call histories without tool definitions, as one serialised
  transcript; never passes ``tools``; sends the request's answer budget as ``max_tokens``
  (``max_completion_tokens`` to api.openai.com, whose newer models refuse ``max_tokens``) and
  says the model, parameters, ``finish_reason``, usage and server timings of every call;
* the summariser model's context window (:meth:`OpenAISummarizer.context_window`): the one the
  user stated, else what the server reports — ``GET /v1/models`` (llama.cpp's ``meta.n_ctx``, the
  window of one slot; vLLM's ``max_model_len``; ``context_length`` / ``context_window`` of other
  servers), then llama.cpp's ``GET /props`` — asked once, never fatal (None: not known);
* :func:`classify` — spec §2.9 error classification, with these deliberate deviations:

  - numeric markers (413, 429, 401, 403, 500, 502, 503, 504, 400) match only as whole numbers
    (not inside ``req_500abc`` or ``req-12500``), and only when the exception chain carries no
    HTTP status: a real status says more than a number somewhere in a message;
  - ``gateway timeout`` / HTTP 504 → ``server_unstable`` (the gateway answered; our client did
    not time out); HTTP 408 → ``timeout``;
  - a connection refused, or a host that does not resolve or cannot be reached → ``unreachable``
    (nothing answered: retried, as a server still starting would be); other connection failures
    (reset, server disconnected: ``openai.APIConnectionError``) and bodies that are not JSON →
    ``server_unstable`` (both transient, retried like a 5xx), any 5xx status → ``server_unstable``;
  - llama.cpp's HTTP 400 ``exceed_context_size_error`` and its HTTP 500 "Context size has been
    exceeded" → ``context_overflow``, with the window and the prompt's size when the body says
    them (:func:`tcompact.summarizers.classify.overflow_figures`);
  - ``insufficient_quota`` (OpenAI's 429 for an account without credit) → ``authentication``:
    retrying cannot help, the key's account must be fixed;
  - 404/405/415/422 → ``api_request_error`` (wrong model name or URL: retrying cannot help).

Error messages name the endpoint's host, never the API key (it is redacted even when a server
echoes it), and a :class:`SummarizerError` keeps no reference to the ``openai`` exception, whose
request object holds the Authorization header.
"""

from __future__ import annotations

import inspect
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import UsageError
from . import MODES
from .base import ModelWindow, SummarizerError, SummaryRequest, SummaryResponse
from .classify import classify, describe, hint, overflow_figures
from .deadline import WHOLE_ANSWER, deadline_client_class
from .serialized import role_framing, serialize_conversation, transcript_note, wire_text
from .progress import CallProgress, Speed, Streamed, is_local, read_stream, ticker

if TYPE_CHECKING:
    import openai

__all__ = ["OFFICIAL_BASE_URL", "PLACEHOLDER_KEY", "OpenAISummarizer", "classify", "get_client",
           "serialize_conversation"]

OFFICIAL_BASE_URL = "https://api.openai.com/v1"
#: Sent as the key to servers that need none (vLLM, Ollama, llama.cpp accept any key).
PLACEHOLDER_KEY = "not-needed"

#: Request keys the backend sets itself or never sends (tools: the summariser must not call any).
_RESERVED = frozenset({"model", "messages", "stream", "stream_options", "tools", "tool_choice", "functions",
                       "function_call", "parallel_tool_calls", "timeout", "extra_headers", "extra_query"})

# --------------------------------------------------------------------------------------- client


def get_client(*, base_url: str | None, api_key: str | None, timeout: float) -> openai.OpenAI:
    """An ``openai.OpenAI`` client for the endpoint, with the client's own retries off."""
    url = (base_url or os.environ.get("OPENAI_BASE_URL") or OFFICIAL_BASE_URL).strip()
    hostname = _hostname(url)
    if hostname is None:
        raise SummarizerError("api_request_error", f"base URL {_safe_url(url)!r} is not an http(s) URL",
                              hint="pass e.g. --base-url http://127.0.0.1:8000/v1")
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if not key:
        if _is_official(hostname):
            raise SummarizerError("authentication", f"no API key for {_host(url)}",
                                  hint="set OPENAI_API_KEY (or pass --base-url for a local server)")
        key = PLACEHOLDER_KEY
    import openai

    return openai.OpenAI(base_url=url, api_key=key, timeout=timeout, max_retries=0,
                         http_client=deadline_client_class()(deadline=timeout, timeout=timeout))


def _hostname(url: str) -> str | None:
    """The host of an http(s) URL with a valid port, else None."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError for a port that is not a number
    except ValueError:
        return None
    return parts.hostname if parts.scheme in ("http", "https") and parts.hostname else None


def _is_official(hostname: str) -> bool:
    return hostname == "openai.com" or hostname.endswith(".openai.com")


def _host(url: str) -> str:
    """``host[:port]`` of a URL, without user info."""
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)


def _safe_url(url: str) -> str:
    """The URL without user info (which may hold a password)."""
    scheme, sep, rest = url.partition("://")
    netloc, slash, path = rest.partition("/")
    return f"{scheme}{sep}{netloc.rsplit('@', 1)[-1]}{slash}{path}" if sep else url.rsplit("@", 1)[-1]


# ----------------------------------------------------------------------------------- summariser


class OpenAISummarizer:
    """A summariser backed by an OpenAI-compatible chat-completions endpoint."""

    name = "openai"
    #: it writes the narrative beside the extractive facts (compressors/_model.py), not a whole snapshot
    narrates = True

    def __init__(self, *, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout: float | None = 60.0, mode: str = "conversation", temperature: float | None = 0.0,
                 max_output_tokens: int | None = None, context_window: int | None = None,
                 progress: Callable[[CallProgress], None] | None = None, counter: Any = None) -> None:
        if mode not in MODES:
            raise UsageError(f"summariser mode {mode!r} is not known", hint=f"choose one of: {', '.join(MODES)}")
        self.model = model
        self.mode = mode
        self.timeout = timeout  # None: each call's deadline derived from its size and the server's speed
        self.temperature = temperature
        self.max_output_tokens = max_output_tokens
        self.progress, self.counter = progress, counter
        self._client = get_client(base_url=base_url, api_key=api_key, timeout=timeout or 3600.0)
        self._key = self._client.api_key
        self.host = _host(str(self._client.base_url))
        self._official = _is_official(str(self._client.base_url.host))
        self.speed = Speed(local=is_local(self._client.base_url.host))
        self._window: ModelWindow | None = ModelWindow(context_window, "--summarizer-window") \
            if context_window else None
        self._asked = context_window is not None
        self._lock = threading.Lock()
        #: replies are constrained to a request's JSON schema (``response_format``) until the server refuses one
        self.structured = True

    def close(self) -> None:
        """Close the client's connections."""
        self._client.close()

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        """Send the request; the reply's text, usage, model, finish_reason and timings, or a SummarizerError.

        Streamed when someone watches its progress; a server that refuses the reply's JSON schema is
        asked again at once without it (and never sent one again)."""
        kwargs = self.call_arguments(request)
        sent = self._sent(kwargs["messages"])
        deadline = self.timeout or self.speed.deadline(sent, request.max_tokens)
        started = time.perf_counter()
        failure: SummarizerError | None = None
        try:
            reply = self._send(kwargs, request, sent=sent, deadline=deadline)
        except SummarizerError as exc:  # an answer that is no reply (no choices, only tool calls)
            failure = exc
        except Exception as exc:  # noqa: BLE001 - every client failure becomes a SummarizerError
            failure = self._error(exc, deadline)
        if failure is not None and "response_format" in kwargs and _schema_refused(failure):
            self.structured = False
            return self.summarize(request)
        if failure is not None:
            if failure.kind == "timeout" and self.timeout is None:
                self.speed.slower()  # the next attempt gets twice the time (it may also wait for the server)
            raise failure  # outside the except block: no __context__ holding the request and its key
        latency = time.perf_counter() - started
        text = self._text(reply, request.processor)
        self.speed.learn(timings=reply.timings, usage=_usage(reply.usage), latency=latency)
        return SummaryResponse(text=text, usage=_usage(reply.usage), model=reply.model or kwargs["model"],
                               latency_s=latency, finish_reason=reply.finish_reason, timings=reply.timings)

    def _send(self, kwargs: dict[str, Any], request: SummaryRequest, *, sent: int, deadline: float) -> Streamed:
        """One exchange: streamed (its progress reported) when there is a progress view, else one answer."""
        create = self._client.chat.completions.create
        if self.progress is None:
            return self._whole(create(**kwargs, timeout=deadline))
        on_text, stop = ticker(self.progress, processor=request.processor, part=request.part, sent=sent)
        try:
            chunks = create(**kwargs, stream=True, stream_options={"include_usage": True}, timeout=deadline)
            with chunks:
                try:
                    return read_stream(chunks, on_text)
                except Exception as exc:
                    watchdog = chunks.response.extensions.get("deadline")
                    if watchdog is None or not watchdog.fired:
                        raise
                    late = exc
            raise TimeoutError(f"{WHOLE_ANSWER} {deadline:g} s (the server was still sending it)") from late
        finally:
            stop()

    def _sent(self, messages: Sequence[Mapping[str, Any]]) -> int:
        """Tokens sent, as counted here (characters / 4 without a counter)."""
        texts = [wire_text(m["content"]) if m.get("content") else "" for m in messages]
        texts += [c["function"]["arguments"] for m in messages for c in m.get("tool_calls") or ()]
        if self.counter is None:
            return sum(len(t) for t in texts) // 4
        return sum(self.counter.count(t) + 4 for t in texts)

    def prepare(self, request: SummaryRequest) -> SummaryRequest:
        """The request with the model and the parameters this backend sends for it (what a dump records)."""
        kwargs = self.call_arguments(request)
        params = {k: v for k, v in kwargs.items() if k not in ("model", "messages", "extra_body")}
        return replace(request, model=kwargs["model"], parameters={**params, **kwargs.get("extra_body", {})},
                       mode="conversation" if request.contract == "blocks" else self.mode)

    def call_arguments(self, request: SummaryRequest) -> dict[str, Any]:
        """``create()`` arguments: request parameters over the defaults (None: not sent), unknown ones in extra_body.

        The answer's budget is ``request.max_tokens`` (at most ``max_output_tokens`` when that is set).
        """
        # The model, messages, tools and streaming are never taken from the parameters: no tools, ever.
        params: dict[str, Any] = {"temperature": self.temperature}
        limits = [n for n in (request.max_tokens, self.max_output_tokens) if n is not None]
        if not {"max_tokens", "max_completion_tokens"} & set(request.parameters):
            params["max_completion_tokens" if self._official else "max_tokens"] = min(limits) if limits else None
        params.update(request.parameters)
        if request.schema is not None and self.structured and "response_format" not in params:
            params["response_format"] = {"type": "json_schema",
                                         "json_schema": {"name": "summary", "schema": dict(request.schema)}}
        known = _create_parameters()
        kwargs: dict[str, Any] = {"model": request.model or self.model, "messages": self.messages(request)}
        extra: dict[str, Any] = {}
        for key, value in params.items():
            if key == "extra_body" and isinstance(value, Mapping):
                extra.update(value)
            elif value is not None and key not in _RESERVED:
                (kwargs if key in known else extra)[key] = value
        if extra:
            kwargs["extra_body"] = extra
        return kwargs

    def context_window(self) -> ModelWindow | None:
        """The model's context window: the one given, else the server's word for it (asked once), else None."""
        with self._lock:
            if not self._asked:
                self._asked = True
                self._window = self._ask_window()
            return self._window

    def _ask_window(self) -> ModelWindow | None:
        """``GET …/models`` (the entry of this model, or the only one), then llama.cpp's ``GET /props``
        (api.openai.com says neither)."""
        if self._official:
            return None
        base = str(self._client.base_url).rstrip("/")
        for url, pick in ((f"{base}/models", self._models_window), (f"{base.removesuffix('/v1')}/props", _props_window)):
            try:
                body = self._client.get(url, cast_to=object, options={"timeout": min(self.timeout or 10.0, 10.0)})
            except Exception:  # noqa: BLE001 - a server that does not say is a server whose window is unknown
                continue
            tokens = pick(body)
            if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0:
                return ModelWindow(tokens, f"GET {urlsplit(url).path}")
        return None

    def _models_window(self, body: Any) -> Any:
        items = body.get("data") if isinstance(body, Mapping) else None
        if not isinstance(items, list):
            return None
        entries = [m for m in items if isinstance(m, Mapping)]
        mine = [m for m in entries if m.get("id") == self.model or self.model in (m.get("aliases") or ())]
        entry = mine[0] if mine else entries[0] if len(entries) == 1 else None
        if entry is None:
            return None
        meta = entry.get("meta") if isinstance(entry.get("meta"), Mapping) else {}
        return next((v for v in (meta.get("n_ctx"), entry.get("max_model_len"), entry.get("context_length"),
                                 entry.get("context_window")) if v is not None), None)

    def messages(self, request: SummaryRequest) -> list[dict[str, Any]]:
        """The chat messages sent for a request in this backend's mode."""
        if self.mode == "conversation" or request.contract == "blocks":  # blocks are serialised already
            return request.wire_messages()
        system = f"{role_framing(request.prompt)}\n\n{transcript_note()}"
        user = f"{serialize_conversation(request.messages)}\n\n{request.prompt}"
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def _whole(self, completion: Any) -> Streamed:
        """A chat completion answered at once, in the shape of a streamed one (or the failure it is)."""
        if not hasattr(completion, "choices"):  # a body that is not JSON comes back as a str
            raise SummarizerError("server_unstable", f"{self.host} answered with a body that is not a chat "
                                  f"completion: {_clip(self._redact(str(completion)), 120)}",
                                  hint="check that the base URL is the endpoint's /v1 address")
        choices = completion.choices
        if not choices:
            raise self._empty("no choices")
        message = getattr(choices[0], "message", None)
        text = _content_text(getattr(message, "content", None))
        if not text.strip() and getattr(message, "tool_calls", None):
            raise self._empty("only tool calls")
        if not text.strip() and isinstance(getattr(message, "refusal", None), str) and message.refusal:
            raise self._empty(f"a refusal ({_clip(message.refusal, 120)})")
        timings = (getattr(completion, "model_extra", None) or {}).get("timings")
        return Streamed(text, getattr(choices[0], "finish_reason", None), getattr(completion, "usage", None),
                        timings if isinstance(timings, Mapping) else None, getattr(completion, "model", None))

    def _text(self, reply: Streamed, processor: str) -> str:
        """The reply's text as the model wrote it (not stripped), or an ``empty_response``."""
        if reply.text.strip():
            return reply.text
        raise self._empty_text(reply.finish_reason, processor)

    def _empty_text(self, reason: str | None, processor: str) -> SummarizerError:
        hint = (f"raise summary_max_tokens (--set {processor}.summary_max_tokens=N): the model spent its budget "
                "(on reasoning?) before answering" if reason == "length" else "try another model")
        return SummarizerError("empty_response", f"{self.host} answered with no text (finish_reason {reason})",
                               hint=hint)

    def _empty(self, what: str) -> SummarizerError:
        return SummarizerError("empty_response", f"{self.host} answered with {what}, no text",
                               hint="try another model, or mode 'serialized' if it keeps calling tools")

    def _error(self, exc: BaseException, timeout: float) -> SummarizerError:
        kind, status, retry_after = classify(exc)
        what = self._redact(describe(exc, status, timeout=timeout))
        window, prompt = overflow_figures(exc) if kind == "context_overflow" else (None, None)
        return SummarizerError(kind, f"{self.host}: {what}", retry_after=retry_after, status=status,
                               hint=hint(kind, exc, timeout=timeout), context_window=window,
                               prompt_tokens=prompt)

    def _redact(self, text: str) -> str:
        return text.replace(self._key, "[REDACTED]") if len(self._key) >= 4 else text


@cache
def _create_parameters() -> frozenset[str]:
    from openai.resources.chat.completions import Completions

    names = set(inspect.signature(Completions.create).parameters)
    return frozenset(names - {"self", "extra_headers", "extra_query", "extra_body", "timeout"})


def _schema_refused(failure: SummarizerError) -> bool:
    """A refusal of the reply's JSON schema (a server that does not support ``response_format``)."""
    text = failure.what.lower()
    return failure.kind == "api_request_error" and any(w in text for w in ("response_format", "json_schema",
                                                                           "grammar", "schema"))


def _props_window(body: Any) -> Any:
    """llama.cpp's ``/props``: the context of one slot."""
    settings = body.get("default_generation_settings") if isinstance(body, Mapping) else None
    return settings.get("n_ctx") if isinstance(settings, Mapping) else None


def _usage(usage: Any) -> dict[str, Any] | None:
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
