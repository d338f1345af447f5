"""What the messages before each block leave it: one pass over them, resumed across requests.

Every block gets the request it continues, the text a terse first reply answers, the plan and the
working directory, from the messages before it. Every call of a round-level stage sends the same
messages (one tuple), and each call walked them from the first message to its blocks: on the
40 MB benchmark session (71 calls over 15,211 messages) that was 3.9 s of a 36 s profiled run.
The state of the pass at a message depends on the messages before it only, so the states reached
for the last messages seen are kept (that tuple, immutable, held and compared by identity, so it
cannot be another with the same id), and a request over the same messages resumes from the
nearest kept state at or before each of its starts: every background is what a pass from the
first message gives.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Sequence

from ....model import Message
from ....rounds import is_real_user
from ....tool_names import is_plan_tool
from ..scan import CWD_PATTERNS, plan_of
from .memory import is_ack, is_memory
from .parts import Background

#: (index, request, reply_to, plan, cwd): the pass's state before messages[index].
_State = tuple[int, "Message | None", str, "Message | None", str]
_START: _State = (0, None, "", None, "")
_LOCK = threading.Lock()  # the calls of a stage run on several threads
_kept: list = [None, [_START]]  # the messages of the last pass, its states by index


def backgrounds(messages: Sequence[Message], starts: Sequence[int]) -> dict[int, Background]:
    """For every start index (ascending), the background the messages before it leave."""
    out: dict[int, Background] = {}
    with _LOCK:
        if not isinstance(messages, tuple):  # a list may change between requests: nothing kept
            states: list[_State] = [_START]
        else:
            if _kept[0] is not messages:
                _kept[0], _kept[1] = messages, [_START]
            states = _kept[1]
        for start in starts:
            stop = min(start, len(messages))
            k = bisect.bisect_right(states, stop, key=lambda s: s[0]) - 1
            state = _advance(messages, states[k], stop)
            if state[0] != states[k][0]:
                states.insert(k + 1, state)
            _, request, reply_to, plan, cwd = state
            out[start] = Background(request=request, reply_to=reply_to, plan=plan, cwd=cwd)
    return out


def _advance(messages: Sequence[Message], state: _State, stop: int) -> _State:
    """The state before ``messages[stop]``, from ``state`` (an earlier one)."""
    i, request, reply_to, plan, cwd = state
    while i < stop:
        m = messages[i]
        if m.role == "user":
            if is_real_user(m):
                request = m
            elif not is_memory(m):
                cwd = _cwd(m.text[:2000]) or cwd
        elif m.role == "assistant":
            if m.text.strip() and not is_ack(m):
                reply_to = m.text
            if m.tool_calls and _sets_plan(m):
                plan = m
        elif m.role in ("tool", "function"):
            cwd = _cwd(m.text[-400:]) or cwd
        i += 1
    return i, request, reply_to, plan, cwd


def _sets_plan(m: Message) -> bool:
    """Whether an assistant message sets the plan (TodoWrite / update_plan with a list of items)."""
    return any(is_plan_tool(c.name) for c in m.tool_calls) and plan_of(m.tool_calls) is not None


def _cwd(text: str) -> str:
    """The working directory a text states, if any."""
    found = ""
    for pattern in CWD_PATTERNS:
        match = pattern.search(text)
        if match:
            found = match.group(1).strip()
    return found
