"""The HTTP client of the openai backend: a deadline on the *whole* answer of each exchange.

httpx's timeouts bound each connect, write and read, so a server that dribbles its answer a byte
at a time would hold a call for ever. The client here gives each exchange a watchdog that shuts
the exchange's socket down when the answer is not complete after ``deadline`` seconds (or the
call's own timeout, when it set one); the call then fails as a timeout. A streamed answer keeps
its watchdog until the stream is closed. Shutting the socket down also cancels a streamed call at
the server (llama.cpp stops writing at once, and reading the prompt at its batch's end); a call
that is not streamed is computed to its end by llama.cpp all the same (measured). Only :mod:`tcompact.summarizers.openai_compat` uses it (and it is built
from the ``openai`` package's own HTTP client class at run time, so importing this is light).
"""

from __future__ import annotations

import importlib
import socket
import threading
from collections.abc import Mapping
from functools import cache
from typing import Any

__all__ = ["WHOLE_ANSWER", "deadline_client_class"]

WHOLE_ANSWER = "the whole answer did not arrive within"


@cache
def deadline_client_class() -> type:
    """The SDK's default HTTP client class, with a deadline on each exchange and no kept-alive connections.

    Each exchange opens its own connection (a summariser call lasts seconds, a connection costs
    milliseconds), so the watchdog always knows the socket to shut down, from the connection's
    first byte to the answer's last. Built at run time: the SDK's HTTP library (``httpx`` or
    ``httpx2``) is whichever ``openai.DefaultHttpxClient`` derives from.
    """
    import openai

    base = openai.DefaultHttpxClient
    httpx: Any = importlib.import_module(base.__mro__[1].__module__.split(".")[0])

    class DeadlineClient(base):  # type: ignore[misc, valid-type]
        def __init__(self, *, deadline: float, **kwargs: Any) -> None:
            kwargs.setdefault("limits", httpx.Limits(max_connections=1000, max_keepalive_connections=0))
            super().__init__(**kwargs)
            self.deadline = deadline

        def send(self, request: Any, *, stream: bool = False, **kwargs: Any) -> Any:
            watchdog = _Watchdog(_seconds(request, self.deadline), request.extensions.get("trace"))
            request.extensions = {**request.extensions, "trace": watchdog.trace}
            watchdog.__enter__()
            try:
                response = super().send(request, stream=stream, **kwargs)
            except Exception:
                watchdog.__exit__()
                if not watchdog.fired:
                    raise
                response = None
            if response is None:  # outside the except block: the shut-down socket's error is no part of the story
                raise httpx.ReadTimeout(watchdog.message(), request=request)
            if not stream:
                watchdog.__exit__()
                return response
            return _watched(response, watchdog)

    return DeadlineClient


def _watched(response: Any, watchdog: _Watchdog) -> Any:
    """A streamed answer, read after ``send()`` returns: its watchdog runs until the stream is closed (and is
    found in its ``deadline`` extension)."""
    close = response.close

    def closed() -> None:
        watchdog.__exit__()
        close()

    response.close = closed
    response.extensions = {**response.extensions, "deadline": watchdog}
    return response


def _seconds(request: Any, default: float) -> float:
    """The deadline of one exchange: the call's own timeout (``create(timeout=…)``) when it set one."""
    timeout = request.extensions.get("timeout")
    read = timeout.get("read") if isinstance(timeout, Mapping) else None
    return float(read) if isinstance(read, (int, float)) and read > 0 else default


class _Watchdog:
    """Shuts the socket of one HTTP exchange down when the exchange is not over after ``seconds``.

    The socket comes from httpcore's ``trace`` extension (connection made, TLS started); shutting
    it down wakes a read blocked on it, which then fails and the client reports a timeout.
    """

    def __init__(self, seconds: float, chained: Any = None) -> None:
        self.seconds = seconds
        self.fired = False
        self.answering = False  # the status line and headers arrived: the body is what is late
        self._chained = chained
        self._socket: Any = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def trace(self, name: str, info: Mapping[str, Any]) -> None:
        """httpcore's trace callback: remembers the socket, notes when the headers are in."""
        if name.endswith(("connect_tcp.complete", "start_tls.complete", "connect_unix_socket.complete")):
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            with self._lock:
                self._socket, fired = sock, self.fired
            if fired:  # connected after the deadline
                _shutdown(sock)
        elif name.endswith("receive_response_headers.complete"):
            self.answering = True
        if self._chained is not None:
            self._chained(name, info)

    def message(self) -> str:
        if self.answering:
            return f"{WHOLE_ANSWER} {self.seconds:g} s (the server was still sending it)"
        return f"no answer within {self.seconds:g} s"

    def _fire(self) -> None:
        with self._lock:
            self.fired, sock = True, self._socket
        _shutdown(sock)


def _shutdown(sock: Any) -> None:
    """Shut a socket down for reading and writing; a socket already closed is left alone.

    ``socket.socket.shutdown`` also for a TLS socket: ``SSLSocket.shutdown`` would drop its TLS
    state under the thread reading it.
    """
    if isinstance(sock, socket.socket):
        try:
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except OSError:
            pass
