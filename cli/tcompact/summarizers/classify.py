"""Error classification of summariser calls (openjiuwen-spec §2.9), with our deliberate fixes.

Kept apart from :mod:`tcompact.summarizers.openai_compat` so it can be used (and tested) without
the ``openai`` package: it reads an exception, its causes and their attributes — text, HTTP
status, Retry-After headers — and never imports a client. :func:`describe` and :func:`hint` say a
failure in one line and what to do about it. :func:`overflow_figures` reads what
a context-overflow refusal says about the server's window and the refused prompt: llama.cpp's body
fields ``n_ctx`` and ``n_prompt_tokens``, or the wording of OpenAI, vLLM and llama.cpp messages.

The deliberate deviations from upstream:

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
"""

from __future__ import annotations

import email.utils
import json
import math
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from functools import cache

from .deadline import WHOLE_ANSWER

__all__ = ["classify", "exception_chain", "overflow_figures", "describe", "hint"]

# (kind, text markers, whole-number markers used only without a status, statuses, exception class names)
_Rule = tuple[str, tuple[str, ...], tuple[int, ...], frozenset[int], frozenset[str]]
_RULES: tuple[_Rule, ...] = (
    ("context_overflow", ("context length", "context_length", "maximum context", "max context", "context window",
                          "context size", "exceed_context_size", "token limit", "too many tokens", "prompt is too long",
                          "input is too long", "request too large", "request entity too large"),
     (413,), frozenset({413}), frozenset()),
    ("authentication", ("insufficient_quota", "exceeded your current quota"), (), frozenset(), frozenset()),
    ("rate_limit", ("rate_limit", "rate limit", "too many requests"), (429,), frozenset({429}), frozenset()),
    ("authentication", ("authentication", "unauthorized", "invalid api key", "api key invalid", "incorrect api key",
                        "invalid_api_key"), (401, 403), frozenset({401, 403}), frozenset()),
    ("server_unstable", ("gateway timeout", "gateway time-out"), (504,), frozenset({504}), frozenset()),
    # nothing answered at all (no server on that port, no such host): not a server that failed
    ("unreachable", ("connection refused", "name or service not known", "nodename nor servname",
                     "temporary failure in name resolution", "no route to host", "network is unreachable"),
     (), frozenset(), frozenset({"ConnectionRefusedError", "gaierror"})),
    ("timeout", ("timeout", "timed out"), (), frozenset({408}),
     frozenset({"TimeoutError", "APITimeoutError", "TimeoutException"})),
    ("server_unstable", ("internal server error", "service unavailable", "bad gateway", "overloaded",
                         "temporarily unavailable", "connection reset", "connection refused", "connection aborted",
                         "server disconnected"),
     (500, 502, 503), frozenset(range(500, 600)),
     frozenset({"APIConnectionError", "ConnectionError", "NetworkError", "RemoteProtocolError", "JSONDecodeError"})),
    ("api_request_error", ("bad request", "invalid request", "invalid_request_error"), (400,),
     frozenset({400, 404, 405, 415, 422}), frozenset()),
)


def classify(exc: BaseException) -> tuple[str, int | None, float | None]:
    """Error kind (spec §2.9, deviations in the module docstring), HTTP status and Retry-After seconds."""
    chain = list(exception_chain(exc))
    status = _status(chain)
    text = " ".join(_texts(chain)).lower()
    classes = {c.__name__ for e in chain for c in type(e).__mro__}
    for kind, words, numbers, statuses, class_names in _RULES:
        if (any(w in text for w in words) or status in statuses or classes & class_names
                or (status is None and any(_number(n).search(text) for n in numbers))):
            return kind, status, _retry_after(chain)
    return "unknown", status, _retry_after(chain)


_WINDOW_WORDS = (re.compile(r"maximum context length is (\d[\d,]*) tokens", re.I),
                 re.compile(r"available context size \((\d[\d,]*) tokens\)"),
                 re.compile(r"context (?:size|window|length) (?:of|is) (\d[\d,]*) tokens"))
_PROMPT_WORDS = (re.compile(r"your messages resulted in (\d[\d,]*) tokens", re.I),
                 re.compile(r"\((\d[\d,]*) in the messages"),
                 re.compile(r"your request has (\d[\d,]*) input tokens"),
                 re.compile(r"request \((\d[\d,]*) tokens\) exceeds"))


def overflow_figures(exc: BaseException) -> tuple[int | None, int | None]:
    """The server's context window and the refused prompt's tokens, as far as the refusal says them."""
    chain = list(exception_chain(exc))
    window = prompt = None
    for e in chain:
        body = getattr(e, "body", None)
        if isinstance(body, Mapping):
            window = window or _positive(body.get("n_ctx"))
            prompt = prompt or _positive(body.get("n_prompt_tokens"))
    text = " ".join(_texts(chain))
    return window or _found(_WINDOW_WORDS, text), prompt or _found(_PROMPT_WORDS, text)


def _found(patterns: Sequence[re.Pattern[str]], text: str) -> int | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return _positive(int(match.group(1).replace(",", "")))
    return None


def _positive(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


@cache
def _number(n: int) -> re.Pattern[str]:
    """A status number as a whole word, not inside an id (``req_500abc``, ``req-500``, ``12500``), a decimal
    (``403.3``) or a duration (``within 403 s``: a deadline's seconds are no HTTP status)."""
    return re.compile(rf"(?<![\w.-]){n}(?![\w-]|\.\d|\s*s\b)")


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception and its causes/contexts, each once."""
    seen: set[int] = set()
    todo = [exc]
    while todo and len(seen) < 32:
        e = todo.pop(0)
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        todo += [c for c in (e.__cause__, getattr(e, "cause", None), e.__context__) if isinstance(c, BaseException)]


def _texts(chain: Sequence[BaseException]) -> Iterator[str]:
    for e in chain:
        yield str(e)
        for attr in ("code", "type", "param", "params", "details", "body"):
            value = getattr(e, attr, None)
            if value is not None and not callable(value):
                yield _clip(value if isinstance(value, str) else repr(value), 2000)
        status = getattr(e, "status", None)
        if status is not None and not isinstance(status, int):
            yield " ".join(str(getattr(status, a, "")) for a in ("name", "errmsg"))


def _status(chain: Sequence[BaseException]) -> int | None:
    for e in chain:
        for value in (getattr(e, "status_code", None), getattr(e, "status", None),
                      getattr(getattr(e, "response", None), "status_code", None)):
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            if isinstance(value, str) and value.isdigit():
                return int(value)
    return None


def _retry_after(chain: Sequence[BaseException]) -> float | None:
    """Seconds to wait, from the first response on the chain that has headers."""
    for e in chain:
        headers = getattr(getattr(e, "response", None), "headers", None)
        if headers is not None:
            return _header_seconds(headers)
    return None


def _header_seconds(headers: Mapping[str, str]) -> float | None:
    """``retry-after-ms``, else ``Retry-After`` as seconds or as an HTTP date."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = _header(headers, name)
        try:
            seconds = float(value) * scale if value is not None else None
        except ValueError:
            continue
        if seconds is not None and math.isfinite(seconds):
            return max(seconds, 0.0)
    return _http_date(_header(headers, "retry-after"))


def _header(headers: Mapping[str, str], name: str) -> str | None:
    """A header by name, case-insensitively also for plain dicts (httpx headers already are)."""
    value = headers.get(name)
    if value is None and isinstance(headers, Mapping):
        value = next((v for k, v in headers.items() if isinstance(k, str) and k.lower() == name), None)
    return value


def _http_date(value: str | None) -> float | None:
    if not value:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _clip(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def describe(exc: BaseException, status: int | None, *, timeout: float) -> str:
    """One line saying what happened."""
    names = {c.__name__ for c in type(exc).__mro__}
    if "APITimeoutError" in names or isinstance(exc, TimeoutError):
        late = next((str(e) for e in exception_chain(exc) if str(e).startswith(WHOLE_ANSWER)), None)
        return late or f"no answer within {timeout:g} s"
    if status is not None:
        return f"HTTP {status}: {_clip(_server_message(exc), 300)}"
    if "APIConnectionError" in names:
        root = list(exception_chain(exc))[-1]
        return f"connection failed ({type(root).__name__}: {_clip(str(root), 200)})"
    if isinstance(exc, json.JSONDecodeError):
        return f"answered with a body that is not valid JSON ({exc})"
    return f"{type(exc).__name__}: {_clip(str(exc), 300)}"


def _server_message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping) and isinstance(body.get("message"), str):
        code = body.get("code") or body.get("type")
        return body["message"] + (f" ({code})" if code else "")
    if isinstance(body, str) and body.strip():
        return body
    return str(exc)


def hint(kind: str, exc: BaseException, *, timeout: float) -> str:
    if kind == "authentication" and "quota" in str(exc).lower() + repr(getattr(exc, "body", "")).lower():
        return "the account behind this key has no quota left: check its plan and billing"
    if kind == "unreachable" or (kind == "server_unstable" and
                                 "APIConnectionError" in {c.__name__ for c in type(exc).__mro__}):
        return "is the server running and is the base URL right? retrying may help"
    return {
        "context_overflow": "the request is larger than the model's context: a smaller span or a larger model",
        "rate_limit": "wait and retry, or lower the request rate",
        "authentication": "check OPENAI_API_KEY for this endpoint",
        "timeout": f"the model took longer than {timeout:g} s: raise the timeout or use a faster model",
        "server_unstable": "the server failed or is overloaded: retry later, or look at its log",
        "api_request_error": "the endpoint rejected the request: check the model name and the parameters",
    }.get(kind, "see the message; retrying may help")
