"""The terminal view of summariser calls while they run: which call of how many, tokens sent, tokens
received so far, seconds since it started — one live line per call in flight, and a line that stays
once it is over. A local model on a CPU takes minutes a call; without this the screen stays blank.
Shown on a terminal only (stderr), never with ``--json``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from rich.live import Live
from rich.text import Text

from . import stderr_console

__all__ = ["call_progress", "call_line"]


def call_line(event: Any) -> str:
    """One line of a call's progress (:class:`tcompact.summarizers.progress.CallProgress`)."""
    which = f"call {event.part[0]} of {event.part[1]}" if event.part else "call"
    state = "done" if event.done else "running"
    return (f"{event.processor}: summariser {which}: {event.sent:,} tokens sent, {event.received:,} received, "
            f"{event.elapsed:,.0f} s ({state})")


@contextlib.contextmanager
def call_progress(*, enabled: bool) -> Iterator[Callable[[Any], None] | None]:
    """A progress callback for the summariser's calls, shown on a terminal (None elsewhere)."""
    err = stderr_console() if enabled else None
    if err is None or not err.is_terminal:
        yield None
        return
    lines: dict[int, str] = {}
    lock = threading.Lock()
    with Live(Text(""), console=err, transient=True, refresh_per_second=4) as live:

        def report(event: Any) -> None:
            key = threading.get_ident()
            with lock:
                if event.done:
                    lines.pop(key, None)
                    live.console.print(Text(call_line(event)))
                else:
                    lines[key] = call_line(event)
                live.update(Text("\n".join(lines.values())))

        yield report
