"""The handoff: what the agent is given after its own compaction, built from the whole transcript before it.

The agent's summary keeps what its model chose to keep. The handoff adds what a resumed agent needs
most and loses most often (LESSONS.md): the task and the user's own words — constraints verbatim —,
the working set of the open task (files, identifiers, values, the last edits, errors not yet
fixed), the state of tests and builds, and the next step. :func:`handoff_text` is the one place it
is made, in two parts within ``budget`` bytes of UTF-8 (characters, for English text):

- one line on the state of tests and builds (the latest test run and what was edited after it);
- the extractive summariser's state snapshot (contract ``current``: the active task and the user's
  messages quoted whole, constraints, current work, files, blockers and the last test and build
  runs, failed attempts, the artifact trail, and a resume point with the next step) over every
  message of the transcript, in at most :data:`STATE_SHARE` of the budget — shrunk to fit, and as a
  last resort (the user's quoted messages outgrow it) cut and ended with its resume point;
- the working set (:func:`tcompact.working_set.working_set`): the files the open task changed and
  read, with their text as it is now, and an index of the exact paths, identifiers and values the
  tools returned, in the rest; terms the snapshot already names are not repeated.

Sizes are estimated at four bytes of UTF-8 a token (as Codex counts hook output), so that a hook never
loads a tokenizer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..model import Message

__all__ = ["TAG", "DEFAULT_BUDGET", "MIN_BUDGET", "STATE_SHARE", "handoff_text", "read_messages"]

TAG = "tcompact_handoff"
#: Bytes of a handoff by default (:attr:`~.agents.Agent.budget` says it per agent): under the 10,000 characters
#: (Claude Code) or bytes (Codex) past which the clients cut hook context or keep it in a file.
DEFAULT_BUDGET = 9_000
MIN_BUDGET = 2_000
_BYTES_PER_TOKEN = 4
_RESUME = "\nlast request: "  # how the snapshot's resume point starts
#: The share of the handoff's bytes the state snapshot may take; the working set has the rest.
STATE_SHARE = 0.6
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
    tests = _tests(scan, room // 10)
    state = _state(scan, int(room * STATE_SHARE) - _size(tests))
    files = _working_set(messages, room - _size(tests) - _size(state), shown=state)
    return head + tests + state + files + tail


def _tests(scan: Any, room: int) -> str:
    """One line on the state of tests and builds (the latest run, and what was edited after it), first:
    the snapshot may leave it out for its budget."""
    from ..summarizers.extractive.tools import test_coverage

    lines = [line for line, _ in test_coverage(scan.work.actions)] or ["no test or build run recorded"]
    return _head(f"Tests and builds: {'; '.join(lines)}", room - 2).rstrip() + "\n\n"


def _state(scan: Any, room: int) -> str:
    """The state snapshot within ``room`` bytes, ending with its resume point."""
    tokens = int(room * 0.85) // _BYTES_PER_TOKEN  # the rendered snapshot runs past its estimate: fit at once
    body = ""
    for _ in range(4):
        body = _snapshot(scan, tokens)
        if _size(body) <= room:
            break
        tokens = max(int(tokens * room / _size(body) * 0.9), 64)
    if _size(body) <= room and _RESUME in body:
        return body
    return _cut(body, _resume(scan, room // 3), room)


def _working_set(messages: Sequence[Message], room: int, *, shown: str) -> str:
    """The working set (:mod:`tcompact.working_set`: the files in work with their text as it is now, and
    the exact names the tools returned) within ``room`` bytes, as a block; '' when there is none."""
    from ..working_set import working_set

    wrap = ("\n\n<working_set>\n", "\n</working_set>")
    room -= sum(map(_size, wrap))
    for share in (1.0, 0.85, 0.7):
        if room < 200:
            return ""
        text = working_set(messages, _ByteCounter(), int(room * share) // _BYTES_PER_TOKEN,  # type: ignore[arg-type]
                           shown=shown).text
        if _size(text) <= room:
            return wrap[0] + text + wrap[1] if text else ""
    return ""


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
