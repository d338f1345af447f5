"""A real OpenAI-compatible chat-completions server on 127.0.0.1 for tests, scripted reply by reply.

Tests talk to it through the real ``openai`` client, so what they check is what a user with vLLM,
Ollama or llama.cpp server would see: real HTTP, real status codes, real headers, real timeouts
and connection resets. Nothing of ``openai`` is mocked.

    with FakeOpenAI() as server:
        server.enqueue(error(429, "Rate limit reached", headers={"Retry-After": "2"}))
        ...  # call server.base_url
        server.requests[0].body["messages"]

Replies are answered in the order they were enqueued; with an empty queue the server answers a
plain success. ``GET`` requests get a 404 unless ``serve_get(path, reply)`` says otherwise (what a
server says about its models: ``/v1/models``, llama.cpp's ``/props``); they are not recorded. Every response carries an ``x-request-id`` with ``500`` inside it, so a classifier
that matches status numbers inside ids is caught by any test. Each request is stamped with its
arrival time (``Received.at``, monotonic), so tests can measure the wait between retries.

Faults: ``error(status, ...)`` (any HTTP error, with headers such as Retry-After), ``delay(s)``
(no answer for ``s`` seconds: a client timeout), ``reset()`` (the connection reset, no answer),
``dribble(s)`` (headers at once, then the body one byte every ``s`` seconds: no single read is
slow, the whole answer is), ``raw(...)`` (malformed bodies), ``empty_choices()``,
``tool_calls_only()``; ``streamed(*pieces)`` answers as a server streaming its reply does.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import Self

__all__ = [
    "DEFAULT_TEXT",
    "DEFAULT_USAGE",
    "FakeOpenAI",
    "Received",
    "Reply",
    "delay",
    "dribble",
    "empty_choices",
    "error",
    "ok",
    "raw",
    "reset",
    "streamed",
    "tool_calls_only",
]

DEFAULT_TEXT = "<state_snapshot>ok</state_snapshot>"
DEFAULT_USAGE: Mapping[str, int] = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
_JSON = {"Content-Type": "application/json"}


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a status, headers and body, optionally after a delay, or a reset connection;
    ``byte_interval_s`` > 0 sends the body one byte at a time, that many seconds apart."""

    status: int = 200
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    reset: bool = False
    byte_interval_s: float = 0.0


@dataclass(frozen=True)
class Received:
    """One request the server got: method, path, headers (lower-case names), the parsed JSON body and
    when it arrived (``time.monotonic()`` once the body was read)."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any
    at: float = field(default_factory=time.monotonic)


def _completion(message: Mapping[str, Any], finish: str, *, usage: Mapping[str, Any] | None, model: str) -> Reply:
    data: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": dict(message), "finish_reason": finish}],
    }
    if usage is not None:
        data["usage"] = dict(usage)
    return Reply(200, json.dumps(data).encode(), _JSON)


def ok(text: str, *, usage: Mapping[str, Any] | None = None, model: str = "fake-model") -> Reply:
    """A successful chat completion answering ``text`` (usage defaults to DEFAULT_USAGE)."""
    return _completion({"role": "assistant", "content": text}, "stop",
                       usage=DEFAULT_USAGE if usage is None else usage, model=model)


def error(status: int, message: str, *, headers: Mapping[str, str] | None = None, code: str | None = None,
          type: str | None = None) -> Reply:
    """An error in OpenAI's body shape: ``{"error": {"message", "type", "param", "code"}}``."""
    body = {"error": {"message": message, "type": type, "param": None, "code": code}}
    return Reply(status, json.dumps(body).encode(), {**_JSON, **(headers or {})})


def delay(seconds: float, then: Reply | None = None) -> Reply:
    """``then`` (default: a plain success), answered after ``seconds``."""
    return replace(then if then is not None else ok(DEFAULT_TEXT), delay_s=seconds)


def dribble(interval: float, then: Reply | None = None) -> Reply:
    """``then`` (default: a plain success) with its headers at once and its body one byte every ``interval``
    seconds: each read of the client is quick, the whole answer takes ``len(body) × interval``."""
    return replace(then if then is not None else ok(DEFAULT_TEXT), byte_interval_s=interval)


def reset() -> Reply:
    """Read the request, then reset the connection without answering."""
    return Reply(reset=True)


def raw(status: int, body: bytes, headers: Mapping[str, str] | None = None) -> Reply:
    """Exactly these bytes (e.g. malformed JSON); Content-Type defaults to application/json."""
    return Reply(status, body, dict(_JSON if headers is None else headers))


def streamed(*pieces: str, timings: dict | None = None) -> Reply:
    """A chat-completion stream as servers send it: one chunk per text piece, the finish, then the usage."""
    def event(choices: list, **extra) -> bytes:
        chunk = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake-model",
                 "choices": choices, **extra}
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    body = b"".join(event([{"index": 0, "delta": {"content": p}, "finish_reason": None}]) for p in pieces)
    body += event([{"index": 0, "delta": {}, "finish_reason": "stop"}])
    body += event([], usage=dict(DEFAULT_USAGE), **({"timings": timings} if timings else {}))
    return raw(200, body + b"data: [DONE]\n\n", {"Content-Type": "text/event-stream"})


def empty_choices() -> Reply:
    """A well-formed completion with ``"choices": []``."""
    data = {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
            "model": "fake-model", "choices": [], "usage": dict(DEFAULT_USAGE)}
    return Reply(200, json.dumps(data).encode(), _JSON)


def tool_calls_only() -> Reply:
    """A completion whose message holds a tool call and no text."""
    call = {"id": "call_fake1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}}
    return _completion({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls",
                       usage=DEFAULT_USAGE, model="fake-model")


class FakeOpenAI:
    """The server: a context manager with ``base_url``, ``enqueue(reply)``, ``requests`` and ``clear()``."""

    ok = staticmethod(ok)
    error = staticmethod(error)
    delay = staticmethod(delay)
    dribble = staticmethod(dribble)
    reset = staticmethod(reset)
    raw = staticmethod(raw)
    empty_choices = staticmethod(empty_choices)
    tool_calls_only = staticmethod(tool_calls_only)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Reply] = deque()
        self._received: list[Received] = []
        self._closing = threading.Event()
        self._responder: Callable[[Received], Reply] | None = None
        self._gets: dict[str, Reply] = {}
        self.get_paths: list[str] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        assert self._httpd is not None, "use FakeOpenAI as a context manager"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def requests(self) -> list[Received]:
        """The requests received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._received)

    def enqueue(self, *replies: Reply) -> None:
        """Answer the next requests with these replies, in order."""
        with self._lock:
            self._queue.extend(replies)

    def respond_with(self, responder: Callable[[Received], Reply] | None) -> None:
        """Answer requests with ``responder(request)`` once the queue is empty (None: the default success)."""
        with self._lock:
            self._responder = responder

    def serve_get(self, path: str, reply: Reply) -> None:
        """Answer ``GET path`` with ``reply`` (e.g. ``raw(200, b'{"data": [...]}')``)."""
        with self._lock:
            self._gets[path] = reply

    def clear(self) -> None:
        """Forget the replies still queued and the requests received (to share one server between tests)."""
        with self._lock:
            self._queue.clear()
            self._received.clear()
            self._responder = None
            self._gets.clear()
            self.get_paths.clear()

    def __enter__(self) -> Self:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01},
                                        name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()  # wakes handlers that are sleeping in a delay
        assert self._httpd is not None and self._thread is not None
        self._httpd.shutdown()
        self._httpd.server_close()  # joins the handler threads
        self._thread.join(timeout=5)

    def _record(self, request: Received) -> Reply:
        with self._lock:
            self._received.append(request)
            if self._queue:
                return self._queue.popleft()
            responder = self._responder
        return responder(request) if responder is not None else ok(DEFAULT_TEXT)


def _handler_for(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = 5  # a client that never sends its request does not block shutdown for long

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length) if length else b""
            try:
                body = json.loads(data) if data else None
            except ValueError:
                body = data
            received = Received("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            if self.path.rstrip("/") != "/v1/chat/completions":
                server._record(received)
                self._send(Reply(404, json.dumps({"error": {"message": "not found"}}).encode(), _JSON))
                return
            self._answer(server._record(received))

        def do_GET(self) -> None:
            with server._lock:
                server.get_paths.append(self.path)
                reply = server._gets.get(self.path)
            self._send(reply or Reply(404, b'{"error": {"message": "not found"}}', _JSON))

        def _answer(self, reply: Reply) -> None:
            if reply.delay_s and server._closing.wait(reply.delay_s):
                self.close_connection = True
                return
            if reply.reset:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()  # linger 0: the client sees a connection reset
                self.close_connection = True
                return
            self._send(reply)

        def _send(self, reply: Reply) -> None:
            try:
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("x-request-id", "req_500abc")
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                if reply.byte_interval_s > 0:
                    self._dribble(reply.body, reply.byte_interval_s)
                else:
                    self.wfile.write(reply.body)
            except OSError:  # the client gave up (timed out) before the answer
                self.close_connection = True

        def _dribble(self, body: bytes, interval: float) -> None:
            self.wfile.flush()
            for i in range(len(body)):
                if server._closing.wait(interval):
                    self.close_connection = True
                    return
                self.wfile.write(body[i:i + 1])
                self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
