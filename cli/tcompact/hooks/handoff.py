"""The handoff: what the agent is given after its own compaction, built from the whole transcript before it.

The agent's summary keeps what its model chose to keep. The handoff adds what a resumed agent needs
most and loses most often (LESSONS.md): the task and the user's own words — constraints verbatim —,
the working set of the open task (files, identifiers, values, the last edits, errors not yet
fixed), the state of tests and builds, and the next step. :func:`handoff_text` is the one place it
is made: today from the extractive summariser's state snapshot (contract ``current``: active
task, constraints, current work, resume point, files, blockers and verification, failed attempts,
artifact trail) over every message of the transcript, counted with a byte-based estimate (four
bytes of UTF-8 a token, as Codex counts hook output) so that a hook never loads a tokenizer. The
result is kept within ``budget`` bytes of UTF-8 (characters, for English text), shrinking the
snapshot's own budget and, as a last resort (the user's messages, quoted whole, outgrow it), cutting
it and ending with its resume point.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..model import Message

__all__ = ["TAG", "DEFAULT_BUDGET", "MIN_BUDGET", "handoff_text", "read_messages"]

TAG = "tcompact_handoff"
#: Bytes of a handoff by default (each agent has its own: :attr:`~.agents.Agent.budget`): well under the
#: 50,000 characters above which Claude Code stores hook output in a file and injects only a preview.
DEFAULT_BUDGET = 20_000
MIN_BUDGET = 2_000
_BYTES_PER_TOKEN = 4
_RESUME = "\nlast request: "  # how the snapshot's resume point starts
_CUT = "\n[… the rest of this handoff was cut to fit its budget; the resume point: …]\n"


class _ByteCounter:
    """The counter the snapshot writer asks: tokens estimated from UTF-8 bytes, nothing loaded."""

    def count(self, text: str) -> int:
        return -(-_size(text) // _BYTES_PER_TOKEN)

    def prime(self, texts: Iterable[str]) -> None:
        return None


def read_messages(path: str | Path) -> tuple[Message, ...]:
    """The messages of a session file, its whole history (earlier compactions read through), without
    tcompact's own earlier handoffs."""
    from ..formats import ReadOptions, read_file

    source = read_file(path, ReadOptions(full_history=True, keep_raw=False))
    return tuple(m for m in source.transcript().messages if not m.text.lstrip().startswith(f"<{TAG}"))


def handoff_text(messages: Sequence[Message], *, budget: int = DEFAULT_BUDGET, snapshot: str | None = None) -> str:
    """The handoff for ``messages`` (the transcript before the compaction), at most ``budget`` bytes of
    UTF-8; ``snapshot`` names where the transcript was kept, for the agent to read more."""
    from ..summarizers.extractive.scan import Scan

    head = _header(snapshot)
    tail = f"\n</{TAG}>"
    room = max(budget, MIN_BUDGET) - _size(head) - _size(tail)
    scan = Scan(tuple(messages), range(len(messages)))
    tokens = room // _BYTES_PER_TOKEN
    body = ""
    for _ in range(4):
        body = _snapshot(scan, tokens)
        if _size(body) <= room:
            break
        tokens = max(int(tokens * room / _size(body) * 0.9), 64)
    if _size(body) <= room and _RESUME in body:
        return head + body + tail
    return head + _cut(body, _resume(scan, room // 3), room) + tail


def _header(snapshot: str | None) -> str:
    where = f" The transcript as it stood is kept at {snapshot}; read it for anything missing here." if snapshot \
        else ""
    return (f"<{TAG}>\nThe conversation was compacted. This handoff from tcompact was built from the whole "
            f"transcript before the compaction, beside the summary above: the user's own words (quoted as they "
            f"wrote them — they win where the summary differs), the files and facts the open task uses, the "
            f"state of tests and builds, and the next step.{where}\n\n")


def _snapshot(scan: Any, tokens: int) -> str:
    from ..summarizers.contracts import SECTIONS
    from ..summarizers.extractive.snapshot import write_snapshot

    return write_snapshot(scan, "current", SECTIONS["current"], budget=tokens, counter=_ByteCounter())  # type: ignore[arg-type]


def _resume(scan: Any, room: int) -> str:
    """The snapshot's resume point (last request, answered, active, next), within ``room`` bytes."""
    from ..summarizers.extractive.snapshot import resume_line

    answered = scan.answered()
    for limit in (200, 100, 50, 24):
        line = resume_line(scan, answered, limit)
        if _size(line) <= room:
            return line
    return _head(line, room)


def _cut(body: str, resume: str, room: int) -> str:
    """The head of ``body`` within ``room`` bytes, then its resume point."""
    end = "\n</state_snapshot>"
    keep = max(room - _size(_CUT) - _size(resume) - _size(end), 0)
    head = _head(body, keep)
    head = head[:head.rfind("\n")] if "\n" in head else head
    return head + _CUT + resume + end


def _head(text: str, room: int) -> str:
    return text.encode("utf-8", "surrogatepass")[:room].decode("utf-8", "ignore")


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))
