"""A stand-in for the model APIs on 127.0.0.1 that records every request a real client sends.

The real-client tests run the real Claude Code and Codex CLIs; the one thing that cannot run here
is the model behind them, so this server answers in its place — just enough of each API for a
client to finish one turn — and keeps every request it got:

* Anthropic Messages: ``POST /v1/messages`` answered with server-sent events when the body says
  ``"stream": true`` (``message_start``, ``content_block_start``, ``content_block_delta``,
  ``content_block_stop``, ``message_delta``, ``message_stop``), else with one JSON message;
  ``POST /v1/messages/count_tokens`` with ``{"input_tokens": N}``;
* OpenAI Responses: ``POST /v1/responses`` answered with ``response.created``,
  ``response.output_item.done`` (one assistant message; for Codex's remote compaction — an input
  that ends with a ``compaction_trigger`` item — one ``compaction`` item) and ``response.completed``
  with usage (about a token per four characters of the request, which is how a test makes Codex
  auto-compact: a ``model_auto_compact_token_limit`` below that);
* every other ``GET`` or ``POST``: 404 with a JSON error (clients treat it as "not available").

    with RecordingServer(reply="Done.") as server:
        ...  # point a client at server.base_url
        server.requests  # [Request(method, path, headers, body)], in arrival order

A Messages API answer can be scripted: ``responder(body)`` returns the content blocks of the reply
(``text`` and ``tool_use`` blocks; ``None`` for the plain text reply), which is how a test makes
Claude Code call a tool — the Task tool that resumes a sub-agent, for instance.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import Self

__all__ = ["RecordingServer", "Request", "Responder", "is_compaction", "COMPACTED"]

#: Scripts a Messages API answer: the request body in, the reply's content blocks out (None: plain text).
Responder = Callable[[Mapping[str, Any]], Sequence[Mapping[str, Any]] | None]

#: The answer every model call gets unless the server is told otherwise.
DEFAULT_REPLY = "Resumed."
#: What a Codex remote compaction gets back (the ``encrypted_content`` of its compaction item).
COMPACTED = "tcompact-recording-server-compaction"


def is_compaction(body: Any) -> bool:
    """Whether a Responses API request is Codex's remote compaction (its input ends with a
    ``compaction_trigger`` item)."""
    items = body.get("input") if isinstance(body, dict) else None
    return bool(items) and isinstance(items[-1], dict) and items[-1].get("type") == "compaction_trigger"


@dataclass(frozen=True)
class Request:
    """One request as it arrived: method, path (query string included), lower-cased headers, JSON body
    (``None`` for an empty or non-JSON body) and the raw body bytes."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any
    raw: bytes


class RecordingServer:
    """A threaded HTTP server on a free loopback port; a context manager that starts and stops it."""

    def __init__(self, *, reply: str = DEFAULT_REPLY, responder: Responder | None = None) -> None:
        self.reply = reply
        self.responder = responder
        self._lock = threading.Lock()
        self._requests: list[Request] = []
        self._httpd = _Quiet(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="recording-server", daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash, no ``/v1``)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def requests(self) -> list[Request]:
        """Every request so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    def record(self, request: Request) -> None:
        with self._lock:
            self._requests.append(request)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


class _Quiet(ThreadingHTTPServer):
    """A client that hangs up early (they do, after their last answer) is no error worth printing."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        return


def _handler_for(server: RecordingServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            server.record(Request("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw))
            route = self.path.split("?", 1)[0].rstrip("/")
            if route.endswith("/v1/messages/count_tokens"):
                self._json(200, {"input_tokens": _size(body)})
            elif route.endswith("/v1/messages"):
                self._messages(body if isinstance(body, dict) else {})
            elif route.endswith("/v1/responses"):
                self._responses(body if isinstance(body, dict) else {})
            else:
                self._json(404, _not_found(self.path))

        def do_GET(self) -> None:  # noqa: N802
            server.record(Request("GET", self.path, {k.lower(): v for k, v in self.headers.items()}, None, b""))
            self._json(404, _not_found(self.path))

        def _messages(self, body: Mapping[str, Any]) -> None:
            usage = {"input_tokens": _size(body), "output_tokens": 3, "cache_creation_input_tokens": 0,
                     "cache_read_input_tokens": 0}
            message = {"id": f"msg_rec{len(server.requests):06d}", "type": "message", "role": "assistant",
                       "model": body.get("model") or "claude-sonnet-4-5-20250929", "content": [],
                       "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}
            content = list((server.responder(body) if server.responder else None) or
                           [{"type": "text", "text": server.reply}])
            stop = "tool_use" if any(b.get("type") == "tool_use" for b in content) else "end_turn"
            if not body.get("stream"):
                self._json(200, {**message, "content": content, "stop_reason": stop, "usage": usage})
                return
            events: list[tuple[str, Mapping[str, Any]]] = [("message_start", {"type": "message_start",
                                                                              "message": message})]
            for n, block in enumerate(content):
                events += _block_events(n, block)
            self._events([*events,
                          ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop,
                                                                                "stop_sequence": None},
                                             "usage": {"output_tokens": 3}}),
                          ("message_stop", {"type": "message_stop"})])

        def _responses(self, body: Mapping[str, Any]) -> None:
            n = len(server.requests)
            response = {"id": f"resp_rec{n:06d}", "object": "response", "status": "in_progress",
                        "model": body.get("model") or "gpt-5.1-codex", "output": []}
            item = {"type": "message", "role": "assistant", "id": f"msg_rec{n:06d}", "status": "completed",
                    "content": [{"type": "output_text", "text": server.reply, "annotations": []}]}
            if is_compaction(body):  # Codex's remote compaction takes exactly one compaction item back
                item = {"type": "compaction", "id": f"cmp_rec{n:06d}", "encrypted_content": COMPACTED}
            usage = {"input_tokens": _size(body), "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 3,
                     "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": _size(body) + 3}
            self._events([
                ("response.created", {"type": "response.created", "response": response}),
                ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
                ("response.completed", {"type": "response.completed",
                                        "response": {**response, "status": "completed", "output": [item],
                                                     "usage": usage}}),
            ])

        def _events(self, events: list[tuple[str, Mapping[str, Any]]]) -> None:
            data = b"".join(f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode() for name, payload in events)
            self._send(200, data, "text/event-stream")

        def _json(self, status: int, payload: Mapping[str, Any]) -> None:
            self._send(status, json.dumps(payload).encode(), "application/json")

        def _send(self, status: int, data: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", "req_recording")
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (silence the access log)
            return

    return Handler


def _block_events(index: int, block: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The stream events of one content block: start (empty), one delta with all of it, stop."""
    if block.get("type") == "tool_use":
        start = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block.get("input") or {})}
    else:
        start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": str(block.get("text", ""))}
    return [("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": index})]


def _size(body: Any) -> int:
    """A stand-in token count: about four characters a token of the request body."""
    return max(1, len(json.dumps(body)) // 4) if body is not None else 1


def _not_found(path: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": "not_found_error", "message": f"no route {path}"}}
