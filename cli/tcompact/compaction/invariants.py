"""What every compaction must hold, checked on its output.

* every tool result keeps its call and every call its result (unless the input already lacked it);
* system and developer messages are kept;
* the last real user request is kept verbatim (a compressor that says so — ``full``, and round-level
  for its hard truncation — may cut an over-budget one, with a marker);
* messages in a stage's preserved prefix are kept unchanged;
* a compaction that was applied has fewer tokens than its input.
Each check returns readable violations; the tests run them over every compressor and file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..compressors._edit import CUT_MARK
from ..model import Message, index_tool_calls
from ..rounds import last_real_user_index

__all__ = ["violations"]


def violations(before: Sequence[Message], after: Sequence[Message], stages: Sequence[Any] = ()) -> list[str]:
    """Every invariant the output breaks (empty when all hold)."""
    found = _pairs(before, after) + _system(before, after) + _request(before, after, stages)
    for stage in stages:
        found += _stage(stage)
    return found


def _pairs(before: Sequence[Message], after: Sequence[Message]) -> list[str]:
    b, a = index_tool_calls(before), index_tool_calls(after)
    out = []
    if len(a.orphan_results) > len(b.orphan_results):
        out.append(f"{len(a.orphan_results) - len(b.orphan_results)} tool result(s) lost their call")
    if len(a.unanswered) > len(b.unanswered):
        out.append(f"{len(a.unanswered) - len(b.unanswered)} tool call(s) lost their result")
    return out


def _system(before: Sequence[Message], after: Sequence[Message]) -> list[str]:
    kept = [m.text for m in after if m.role in ("system", "developer")]
    missing = [m for m in before if m.role in ("system", "developer") and m.text not in kept]
    return [f"{len(missing)} system/developer message(s) dropped"] if missing else []


def _request(before: Sequence[Message], after: Sequence[Message], stages: Sequence[Any]) -> list[str]:
    i = last_real_user_index(before)
    if i is None:
        return []
    text = before[i].text
    texts = [m.text for m in after]
    if text in texts:
        return []
    cut = any(s.compressor.may_cut_last_request for s in stages)
    if cut and any(t.startswith(text[:200]) and CUT_MARK in t for t in texts):
        return []
    return ["the last real user request is not kept verbatim"]


def _stage(stage: Any) -> list[str]:
    r = stage.result
    out = []
    if r.applied and r.tokens_after >= r.tokens_before:
        out.append(f"{r.processor}: applied but not smaller ({r.tokens_before} → {r.tokens_after})")
    if r.applied and r.span is not None:
        head = list(stage.before[: r.span.prefix.stop])
        if list(r.messages[: len(head)]) != head:
            out.append(f"{r.processor}: the preserved prefix changed")
    if not r.applied and tuple(r.messages) != tuple(stage.before):
        out.append(f"{r.processor}: not applied but the messages changed")
    return out
