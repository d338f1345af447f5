"""How long a summariser call may take, and what it says while it runs: deadlines and progress of model calls.

A local server on a CPU reads a few dozen prompt tokens and writes a few tokens a second, so a fixed
60-second deadline abandons every call of a long prompt, and a call that succeeds after minutes
shows nothing until it is over. Here:

* :class:`Speed` — the server's measured speed (prompt tokens read and tokens written a second,
  from llama.cpp's own timings or from usage and latency), and the deadline of the next call
  derived from it and from the call's size: twice the expected time plus 30 s, at least 60 s; a call
  that ran past its deadline halves the speeds, so the next one gets twice the time. Before
  any call is measured it assumes a slow CPU for a local address (20 prompt tokens and 4 written a
  second) and a hosted service elsewhere (1,000 and 30).
* :class:`CallProgress` — one progress event of a call (which of how many, tokens sent, tokens
  received so far, seconds since it started, done), for a terminal view in ``render``.
* :func:`read_stream` — a streamed chat completion read chunk by chunk into the reply's text,
  ``finish_reason``, usage and timings, reporting each piece of text as it arrives.

Pure: the chunks come from the caller (:mod:`tcompact.summarizers.openai_compat`).
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..defaults import MIN_DEADLINE

__all__ = ["CallProgress", "Speed", "Streamed", "read_stream", "is_local"]

#: Assumed speeds (prompt tokens read, tokens written, a second) before the first call is measured.
LOCAL_SPEED = (20.0, 4.0)
HOSTED_SPEED = (1000.0, 30.0)
SLACK = 30.0


def is_local(host: str | None) -> bool:
    """Whether a host is this machine or a private network (where servers run on CPUs)."""
    if not host:
        return False
    if host in ("localhost", "host.docker.internal") or host.endswith((".local", ".localhost")):
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


@dataclass(frozen=True)
class CallProgress:
    """One moment of a call: ``part`` (which of how many, when known), tokens sent (ours) and received so
    far, seconds since it started, and whether it is over."""

    processor: str
    part: tuple[int, int] | None
    sent: int
    received: int
    elapsed: float
    done: bool = False


class Speed:
    """The server's measured speed, and the deadlines derived from it (thread-safe)."""

    def __init__(self, *, local: bool) -> None:
        self.read, self.write = LOCAL_SPEED if local else HOSTED_SPEED
        self.measured = False
        self._lock = threading.Lock()

    def deadline(self, sent: int, max_tokens: int | None) -> float:
        """Seconds a call of ``sent`` prompt tokens and up to ``max_tokens`` written may take."""
        with self._lock:
            expected = sent / self.read + (max_tokens or 1024) / self.write
        return round(max(2 * expected + SLACK, MIN_DEADLINE), 1)

    def slower(self) -> None:
        """A call ran past its deadline: the server is slower than thought, so the next deadline is twice as long."""
        with self._lock:
            self.read, self.write = self.read / 2, self.write / 2

    def learn(self, *, timings: Mapping[str, Any] | None, usage: Mapping[str, Any] | None, latency: float) -> None:
        """Take the speeds of a finished call: llama.cpp's timings, else usage over the latency (all read)."""
        read = write = None
        if timings:
            read, write = timings.get("prompt_per_second"), timings.get("predicted_per_second")
        elif usage and latency > 0:
            prompt, written = usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0
            if prompt + written:
                read = write = None
                share = latency / (prompt / self.read + written / self.write or 1)
                read, write = self.read / share, self.write / share
        with self._lock:
            if isinstance(read, (int, float)) and read > 0:
                self.read = float(read)
            if isinstance(write, (int, float)) and write > 0:
                self.write = float(write)
            self.measured = self.measured or bool(read or write)


@dataclass(frozen=True)
class Streamed:
    """A streamed reply, read whole."""

    text: str
    finish_reason: str | None
    usage: Any
    timings: Mapping[str, Any] | None
    model: str | None


def read_stream(chunks: Iterable[Any], on_text: Callable[[int], None] | None = None) -> Streamed:
    """Read a chat-completion stream; ``on_text(n)`` hears the number of text pieces received so far."""
    parts: list[str] = []
    finish = model = usage = timings = None
    for chunk in chunks:
        model = getattr(chunk, "model", None) or model
        usage = getattr(chunk, "usage", None) or usage
        extra = getattr(chunk, "model_extra", None) or {}
        timings = extra.get("timings") if isinstance(extra.get("timings"), Mapping) else timings
        for choice in getattr(chunk, "choices", None) or ():
            delta = getattr(choice, "delta", None)
            text = getattr(delta, "content", None)
            if isinstance(text, str) and text:
                parts.append(text)
                if on_text is not None:
                    on_text(len(parts))
            finish = getattr(choice, "finish_reason", None) or finish
    return Streamed("".join(parts), finish, usage, timings, model)


def ticker(report: Callable[[CallProgress], None], *, processor: str, part: tuple[int, int] | None, sent: int,
           every: float = 1.0) -> tuple[Callable[[int], None], Callable[[], None]]:
    """``(on_text, stop)``: report a call's progress when text arrives and at least every ``every`` seconds
    while it is quiet (a long prompt is read before the first token), until ``stop()``."""
    started = time.monotonic()
    state = {"received": 0}
    done = threading.Event()

    def emit(final: bool = False) -> None:
        report(CallProgress(processor, part, sent, state["received"], time.monotonic() - started, final))

    def on_text(n: int) -> None:
        state["received"] = n
        emit()

    def beat() -> None:
        while not done.wait(every):
            emit()

    thread = threading.Thread(target=beat, daemon=True, name="tcompact-progress")
    thread.start()
    emit()

    def stop() -> None:
        done.set()
        emit(final=True)

    return on_text, stop
