"""Needed tokens: what an agent learned from its tools and went on to use, at the points where it acts.

A *cut point* is an assistant message with tool calls before which every call made so far has its
result (and at least one tool result exists): the agent is about to act. A *needed token* at a
cut is a path, identifier, URL or number of 8+ characters (:func:`tokens_of`; plain words are not
tokens) that

* first appeared in the session inside a tool result before the cut (not in a user message, the
  system prompt or the agent's own text or calls),
* stands in the arguments of one of the agent's next :data:`CALLS_AHEAD` tool calls from the cut
  on, and
* was not shown again by a tool result after the cut before that use

— the agent had to remember it. Everything here is a pure function of the messages: no clock, no
path, no randomness. :mod:`.recall` compacts the part before each cut and scores these tokens.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from ..model import Message, ToolCall
from ..terms import MIN_CHARS, tokens_of

if TYPE_CHECKING:
    from .shapes import NeededToken

__all__ = ["MIN_CHARS", "CALLS_AHEAD", "tokens_of", "token_kind", "call_tokens", "action_points", "Needed",
           "SessionIndex", "choose_cuts", "message_line"]

#: How many tool calls from the cut on are searched for uses.
CALLS_AHEAD = 40

_NUMBER = re.compile(r"[0-9][0-9.,_:-]*")


def token_kind(token: str) -> str:
    """``url``, ``path`` (holds a ``/``), ``number`` (digits and separators) or ``identifier`` (the
    rest: names, file names, dotted names, ids, hashes)."""
    if "://" in token:
        return "url"
    if "/" in token:
        return "path"
    if _NUMBER.fullmatch(token):
        return "number"
    return "identifier"


def call_tokens(call: ToolCall) -> set[str]:
    """The tokens of a call's arguments: of every string value of its JSON (so that JSON escapes do not
    glue words together), or of its raw input when it is not JSON (a custom tool's patch)."""
    try:
        value = orjson.loads(call.arguments)
    except orjson.JSONDecodeError:
        return tokens_of(call.arguments)
    out: set[str] = set()
    for text in _strings(value):
        out |= tokens_of(text)
    return out


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def action_points(messages: Sequence[Message]) -> list[int]:
    """Indices of the assistant messages with tool calls before which every call made so far has its
    result and some tool result exists (calls the provider runs itself, which have no result, aside)."""
    open_calls: set[str] = set()
    results = False
    out = []
    for i, m in enumerate(messages):
        if m.role == "assistant" and m.tool_calls and results and not open_calls:
            out.append(i)
        open_calls |= {c.id for c in m.tool_calls if c.type != "server"}
        open_calls -= set(m.tool_call_ids)
        results = results or m.role == "tool"
    return out


@dataclass(frozen=True, slots=True)
class Needed:
    """A needed token: where it first appeared (a tool result: message ``source``, answering ``source_tool``)
    and where it was used (call number ``call`` from the cut on, of tool ``tool``, in message ``use``)."""

    token: str
    source: int
    source_tool: str
    use: int
    call: int
    tool: str

    def to_json(self, messages: Sequence[Message]) -> NeededToken:
        """The token's entry in eval's report (lines where the reader recorded them)."""
        return {"token": self.token, "kind": token_kind(self.token),
                "from": {"message": self.source, "line": message_line(messages[self.source]), "tool": self.source_tool},
                "used": {"message": self.use, "line": message_line(messages[self.use]), "call": self.call,
                         "tool": self.tool}}


def message_line(m: Message) -> int | None:
    """The first line of the file a message was read from (None: the format records no lines)."""
    lines = m.meta.get("lines") or ([m.meta["line"]] if "line" in m.meta else [])
    return lines[0] if lines else None


class SessionIndex:
    """The tokens of every message and call of a session, read once, and the needed tokens at any cut."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self.messages = messages
        self.calls: list[tuple[int, ToolCall, set[str]]] = []  # (message, call, its tokens), in order
        self.first: dict[str, int] = {}  # token → the message it first appears in
        self.shown: dict[str, list[int]] = {}  # token → the tool results that hold it, in order
        self.answers: dict[str, str] = {}  # call id → tool name
        for i, m in enumerate(messages):
            tokens = tokens_of(m.text)
            for call in m.tool_calls:
                own = call_tokens(call)
                self.calls.append((i, call, own))
                self.answers[call.id] = call.name
                tokens |= own
            for token in tokens:
                self.first.setdefault(token, i)
                if m.role == "tool":
                    self.shown.setdefault(token, []).append(i)
        self._call_at = [i for i, _, _ in self.calls]

    def needed_at(self, cut: int) -> list[Needed]:
        """The needed tokens at cut point ``cut``, in the order of their first use."""
        start = bisect.bisect_left(self._call_at, cut)
        found: dict[str, Needed] = {}
        for n, (i, call, tokens) in enumerate(self.calls[start:start + CALLS_AHEAD], start=1):
            for token in sorted(tokens - found.keys()):
                source = self.first[token]
                if source < cut and self.messages[source].role == "tool" and not self._shown_between(token, cut, i):
                    tool = next((self.answers[c] for c in self.messages[source].tool_call_ids if c in self.answers), "")
                    found[token] = Needed(token, source, tool, i, n, call.name)
        return list(found.values())

    def _shown_between(self, token: str, start: int, end: int) -> bool:
        """Whether a tool result at an index in [start, end) holds the token."""
        hits = self.shown.get(token, [])
        at = bisect.bisect_left(hits, start)
        return at < len(hits) and hits[at] < end


def choose_cuts(eligible: Sequence[int], cap: int) -> list[int]:
    """At most ``cap`` of the eligible cut points, spread over them: all when there are no more than
    ``cap``, else the middle one of each of ``cap`` equal runs of them in session order."""
    if len(eligible) <= cap:
        return list(eligible)
    return [eligible[(2 * k + 1) * len(eligible) // (2 * cap)] for k in range(cap)]
