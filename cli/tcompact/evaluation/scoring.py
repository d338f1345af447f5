"""What survived a compaction: the planted values found verbatim in what the model would see.

"What the model would see" is the compacted transcript as ``compact`` writes it, read back with
the reader of its format (a Claude Code file is read from its ``compact_boundary``, a Codex
rollout from its ``replacement_history``): every message's text and every tool call's name and
arguments. A canary survives when each of its values stands in one of those texts byte for
byte. Alongside: the tokens of that context, the tool calls left without a result or results
left without a call (beyond those the input already had), and whether the last real user
request is still there verbatim.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..compaction import CompactionRun
from ..formats import ReadOptions, read_bytes
from ..model import Message, index_tool_calls
from ..rounds import last_real_user_index
from .canaries import KINDS, Canary

__all__ = ["seen_texts", "visible_messages", "survivors", "pairing_violations", "last_request_kept", "tally"]


def visible_messages(run: CompactionRun) -> tuple[Message, ...]:
    """The context after the run: the written transcript read back, or the input when nothing was written."""
    if run.status != "compacted" or run.output is None:
        return run.transcript.messages
    back = read_bytes(run.output.data, f"{run.source.path} (compacted)", ReadOptions(format=run.output_format,
                                                                                      keep_raw=False))
    same = [t for t in back.transcripts if t.id == run.transcript.id] or list(back.transcripts[:1])
    return same[0].messages


def seen_texts(messages: Iterable[Message]) -> list[str]:
    """One text per message: its content, then each tool call's name and arguments."""
    out = []
    for m in messages:
        calls = "\n".join(f"{c.name} {c.arguments}" for c in m.tool_calls)
        out.append(f"{m.text}\n{calls}" if calls else m.text)
    return out


def survivors(canaries: Sequence[Canary], texts: Sequence[str]) -> set[str]:
    """Ids of the canaries each of whose values stands verbatim in one of ``texts``."""
    return {c.id for c in canaries if all(any(v in t for t in texts) for v in c.values)}


def pairing_violations(before: Sequence[Message], after: Sequence[Message]) -> int:
    """Tool results without their call plus calls without their result, beyond the input's own."""
    b, a = index_tool_calls(before), index_tool_calls(after)
    return max(len(a.orphan_results) - len(b.orphan_results), 0) + max(len(a.unanswered) - len(b.unanswered), 0)


def last_request_kept(before: Sequence[Message], after: Sequence[Message]) -> bool | None:
    """Whether the text of the last real user message stands verbatim in the context after (None: there is none)."""
    i = last_real_user_index(before)
    if i is None:
        return None
    text = before[i].text.strip()
    return any(text in m.text for m in after)


def tally(canaries: Sequence[Canary], kept: set[str]) -> dict[str, dict[str, int]]:
    """``{kind: {"kept", "planted"}}`` for every kind (zeros for kinds not planted)."""
    out = {kind: {"kept": 0, "planted": 0} for kind in KINDS}
    for c in canaries:
        out[c.kind]["planted"] += 1
        out[c.kind]["kept"] += c.id in kept
    return out


def share(counts: dict[str, Any]) -> float | None:
    """kept / planted, or None when nothing was planted."""
    return round(counts["kept"] / counts["planted"], 4) if counts["planted"] else None
