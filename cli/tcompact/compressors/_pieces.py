"""Planning a model summary's calls so that each fits the summariser's window: the pieces of a body.

When the conversation a summarising compressor would send (its kept prefix, the body, the prompt)
does not fit the summariser model's window, the body is sent in pieces that do: consecutive runs
of messages cut at legal cut points (a tool call never apart from its result), each with what of
the prefix fits beside it — the system and developer messages when they take at most a quarter
of the room (a larger system prompt is left out of the requests, and the compressor says so),
the last real user request before the body cut to an eighth. A run that cannot be cut small
enough (one tool call and its results over the room) has its messages' texts and arguments cut in
their middle to fit, with a marker saying so. The partial answers are then merged
(:mod:`._model`). Everything here is counted in our tokens; the room is what
:func:`tcompact.summarizers.fitting.prompt_room` leaves beside the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import orjson

from ..model import Message
from ..rounds import is_real_user
from ..spans import Span, legal_cut_points
from ..counting.tokens import TokenCounter
from ._edit import with_text
from .round_level.prompting import cap_text

__all__ = ["Plan", "plan_pieces", "fitted", "CUT_NOTE"]

#: Where a message was cut to fit a request (``{n}``: the tokens left out).
CUT_NOTE = "[… {n:,} tokens of this message were left out of the summariser's request to fit its window …]"
_FRAMING = 8  # tokens of a chat message's framing, beside its text
_SYSTEM = ("system", "developer")


@dataclass(frozen=True)
class Plan:
    """The requests' conversations: ``context`` (what of the prefix is sent with every piece) and the pieces
    (ranges of the body, and their messages as sent, cut where they had to be); ``single``: the whole
    conversation fits in one request, sent as it is; ``notes``: what was left out, for the report."""

    context: tuple[Message, ...]
    pieces: tuple[tuple[range, tuple[Message, ...]], ...]
    single: bool
    notes: tuple[str, ...] = ()


def plan_pieces(messages: Sequence[Message], span: Span, *, room: int | None, counter: TokenCounter,
                window: int | None) -> Plan:
    """The pieces of ``span.body`` whose requests fit ``room`` tokens of messages (None: no limit known)."""
    cost = [counter.message(messages[i]).total + _FRAMING for i in range(span.tail.start)]
    if room is None or sum(cost) <= room:
        return Plan(tuple(messages[: span.body.start]), ((span.body, tuple(messages[span.body.start:span.body.stop])),),
                    True)
    context, notes = _context(messages, span, room=room, cost=cost, counter=counter, window=window)
    left = max(room - sum(counter.message(m).total + _FRAMING for m in context), room // 2)
    legal = sorted({c for c in legal_cut_points(messages) if span.body.start < c < span.body.stop} | {span.body.stop})
    pieces = []
    for piece in _runs(span.body, legal, cost, left):
        group = sum(cost[i] for i in piece)
        sent = tuple(fitted(messages[i], int(left * cost[i] / group) - _FRAMING, counter) if group > left
                     else messages[i] for i in piece)
        pieces.append((piece, sent))
    return Plan(context, tuple(pieces), False, notes)


def _context(messages: Sequence[Message], span: Span, *, room: int, cost: list[int], counter: TokenCounter,
             window: int | None) -> tuple[tuple[Message, ...], tuple[str, ...]]:
    """What of the prefix goes with each piece: its system messages if they fit a quarter of the room, and the
    last real user request before the body, cut to an eighth."""
    system = [i for i in span.prefix if messages[i].role in _SYSTEM]
    size = sum(cost[i] for i in system)
    notes: tuple[str, ...] = ()
    if size > room // 4:
        notes = (f"the system prompt ({size:,} tokens) was left out of the summariser's requests: it does not fit "
                 f"beside the conversation in the summariser's window of {window:,} tokens",)
        system = []
    request = next((i for i in reversed(span.prefix) if is_real_user(messages[i])), None)
    chosen = sorted(system + ([request] if request is not None else []))
    return tuple(fitted(messages[i], room // 8, counter) if i == request else messages[i] for i in chosen), notes


def _runs(body: range, legal: Sequence[int], cost: Sequence[int], room: int) -> list[range]:
    """Consecutive runs of the body, each ending at a legal cut and holding at most ``room`` tokens when it can
    (a run between two legal cuts that is bigger alone is one run)."""
    runs, start, at = [], body.start, 0
    while start < body.stop:
        while at < len(legal) and legal[at] <= start:
            at += 1
        k = at  # the first legal cut after start always ends a run
        end = legal[k]
        used = sum(cost[start:end])
        while k + 1 < len(legal) and used + sum(cost[legal[k]:legal[k + 1]]) <= room:
            used += sum(cost[legal[k]:legal[k + 1]])
            k += 1
            end = legal[k]
        runs.append(range(start, end))
        start = end
    return runs


def fitted(m: Message, budget: int, counter: TokenCounter) -> Message:
    """The message cut to about ``budget`` tokens: its tool calls' long argument values and its text cut in
    their middle (a marker in their place), its reasoning dropped (it is never sent)."""
    if counter.message(m).total <= budget:
        return m
    budget = max(budget, 48)
    chars = max(budget * 3 // (2 * max(len(m.tool_calls), 1)), 120)
    calls = tuple(replace(c, arguments=_cut_arguments(c.arguments, chars)) for c in m.tool_calls)
    lean = replace(m, tool_calls=calls, reasoning=())
    text = lean.text
    total = counter.count(text)
    rest = max(budget - (counter.message(lean).total - total), 24)
    if total <= rest:
        return lean
    marker = CUT_NOTE.format(n=total - rest)
    return with_text(lean, cap_text(text, rest, counter=counter, head_ratio=0.5, marker=marker, total=total))


def _cut_arguments(arguments: str, chars: int) -> str:
    """Tool-call arguments with every string value longer than ``chars`` cut in its middle (still JSON
    when they were: chat templates parse them)."""
    if len(arguments) <= chars:
        return arguments
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return _middle(arguments, chars)
    return orjson.dumps(_cut_value(value, chars)).decode()


def _cut_value(value: object, chars: int) -> object:
    if isinstance(value, str):
        return _middle(value, chars)
    if isinstance(value, dict):
        return {k: _cut_value(v, chars) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut_value(v, chars) for v in value]
    return value


def _middle(text: str, chars: int) -> str:
    if len(text) <= chars:
        return text
    head = chars // 2
    return f"{text[:head]} […{len(text) - chars:,} characters cut…] {text[len(text) - (chars - head):]}"
