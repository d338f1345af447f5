"""Pure values every other module works on: messages, tool calls, transcripts, source files.

A transcript is what an agent's model saw, normalised to the OpenAI chat roles (system,
developer, user, assistant, tool). Each format reader builds these values from the records of a
file and remembers, in ``Message.source``, which records a message came from, so a writer can
give back the original bytes of everything that did not change. Values are frozen; change one
with :func:`dataclasses.replace`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import is_
import threading
from types import MappingProxyType
from typing import Any

__all__ = [
    "EMPTY",
    "ToolCall",
    "Reasoning",
    "Message",
    "Compaction",
    "Transcript",
    "Record",
    "SourceFile",
    "ToolIndex",
    "ToolLink",
    "index_tool_calls",
    "same_messages",
    "text_of",
    "text_pieces",
    "IMAGE_PART_TYPES",
]

EMPTY: Mapping[str, Any] = MappingProxyType({})

#: Content-part types that hold an image (chat ``image_url``, Codex ``input_image``, Anthropic ``image``).
IMAGE_PART_TYPES = frozenset({"image_url", "input_image", "image"})


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call an assistant message makes: ``arguments`` is JSON text, or raw input for custom tools.

    ``type`` is "function", "custom", "local_shell", or "server" for tools the provider runs itself
    (web search): those have no result message."""

    id: str
    name: str
    arguments: str = ""
    type: str = "function"


@dataclass(frozen=True, slots=True)
class Reasoning:
    """Model reasoning: readable ``text`` or an opaque encrypted payload of ``encrypted_chars`` characters."""

    text: str = ""
    encrypted_chars: int = 0
    kind: str = "thinking"


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a transcript.

    ``content`` is a string, a tuple of chat-style parts (``{"type": "text", "text": ...}``,
    ``{"type": "image_url", ...}``, other part dicts kept as they were) or None.
    ``internal`` is set by a reader when the format itself says the message was injected by the
    tool (Claude ``isMeta`` / ``isCompactSummary``, Codex environment context); the real-user test
    in :mod:`tcompact.rounds` also looks at the text. ``source`` holds indices into
    ``SourceFile.records``; ``meta`` holds format details (line numbers, ids); ``extra`` holds the
    unknown keys of a chat record so that it round-trips.
    """

    role: str
    content: str | tuple[Mapping[str, Any], ...] | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_ids: tuple[str, ...] = ()
    name: str | None = None
    reasoning: tuple[Reasoning, ...] = ()
    is_error: bool = False
    internal: bool = False
    source: tuple[int, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=lambda: EMPTY, compare=False)
    extra: Mapping[str, Any] = field(default_factory=lambda: EMPTY)

    @property
    def text(self) -> str:
        """The text of the content: the string itself, or the text parts joined by newlines."""
        return text_of(self.content)

    @property
    def tool_call_id(self) -> str | None:
        """The (first) tool call this message answers, for tool messages."""
        return self.tool_call_ids[0] if self.tool_call_ids else None

    @property
    def images(self) -> tuple[Mapping[str, Any], ...]:
        """The image parts of the content."""
        if not isinstance(self.content, tuple):
            return ()
        return tuple(p for p in self.content if isinstance(p.get("type"), str) and p["type"] in IMAGE_PART_TYPES)


def text_of(content: str | Sequence[Mapping[str, Any]] | None) -> str:
    """Text of a content value: a string as is, text parts joined by newlines, else ''."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(_part_texts(content))


def text_pieces(content: str | Sequence[Mapping[str, Any]] | None) -> list[str]:
    """The strings :func:`text_of` joins, the line breaks between them included: ``"".join`` of them is
    the text (whose count their counts make, :mod:`tcompact.counting.join`)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    return [p for t in _part_texts(content) for p in ("\n", t)][1:]


def _part_texts(content: Sequence[Mapping[str, Any]]) -> list[str]:
    return [p["text"] for p in content if isinstance(p.get("text"), str) and p.get("type") != "image_url"]


@dataclass(frozen=True, slots=True)
class Compaction:
    """A compaction recorded in a file (Claude compact_boundary, Codex compacted, a memory block)."""

    kind: str
    index: int | None = None
    line: int | None = None
    trigger: str | None = None
    pre_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Transcript:
    """The messages of one conversation in a file: the main one, a sub-agent's, or an episode."""

    id: str
    kind: str
    messages: tuple[Message, ...]
    model: str | None = None
    compactions: tuple[Compaction, ...] = ()
    provider_usage: Mapping[str, Any] | None = None
    parent_tool_call: str | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Record:
    """One record of a file: its 1-based line, the parsed JSON (None if it did not parse) and, when
    kept, the exact bytes including the line ending."""

    line: int
    data: Any
    raw: bytes | None = None


@dataclass(frozen=True, slots=True)
class SourceFile:
    """Everything read from one file: its records, the transcripts built from them and what was
    skipped or not understood (kept, never dropped)."""

    path: str
    format: str
    records: tuple[Record, ...]
    transcripts: tuple[Transcript, ...]
    skipped: tuple[tuple[int, str], ...] = ()
    unknown_types: Mapping[str, int] = field(default_factory=lambda: EMPTY)
    meta: Mapping[str, Any] = field(default_factory=lambda: EMPTY)

    def transcript(self, transcript_id: str | None = None) -> Transcript:
        """The transcript with this id, or the first main one (the first one when none is main)."""
        if transcript_id is not None:
            for t in self.transcripts:
                if t.id == transcript_id:
                    return t
            known = ", ".join(t.id for t in self.transcripts)
            from .errors import UsageError

            raise UsageError(
                f"no transcript {transcript_id!r} in this file",
                path=self.path,
                hint=f"choose one of: {known}",
            )
        for t in self.transcripts:
            if t.kind == "main":
                return t
        return self.transcripts[0]


@dataclass(frozen=True, slots=True)
class ToolLink:
    """A tool call (issued by message ``call_at``) and one message answering it (``result_at``)."""

    call_at: int
    call: ToolCall
    result_at: int


@dataclass(frozen=True, slots=True)
class ToolIndex:
    """How the tool calls and results of a message list pair up."""

    links: tuple[ToolLink, ...]
    orphan_results: tuple[int, ...]
    unanswered: tuple[tuple[int, ToolCall], ...]


#: The last few message lists paired, with their index: one compaction pairs the same list up to eight times
#: (layout, masking, the working set's files and index, the invariants). Messages are frozen, so the same
#: messages, the same objects in the same order, pair the same way.
_PAIRED: list[tuple[tuple[Message, ...], ToolIndex]] = []
_PAIRED_KEPT = 4
_PAIRING = threading.Lock()


def same_messages(a: Sequence[Message], b: Sequence[Message]) -> bool:
    """Whether two lists hold the same message objects in the same order (messages are frozen: what is made
    of one list holds for the other)."""
    return len(a) == len(b) and all(map(is_, a, b))


def index_tool_calls(messages: Sequence[Message]) -> ToolIndex:
    """Pair every tool result with the nearest earlier call carrying its id.

    Ids are matched to the *latest* call with that id, because real files reuse ids (a replayed
    SWE-agent demonstration answers ``call_5iDd…`` four times). Calls the provider runs itself
    (``type == "server"``) expect no result.
    """
    with _PAIRING:  # (summariser and batch threads pair lists too)
        for n, (seen, index) in enumerate(_PAIRED):
            if same_messages(seen, messages):
                _PAIRED.insert(0, _PAIRED.pop(n))
                return index
    index = _index_tool_calls(messages)
    with _PAIRING:
        _PAIRED.insert(0, (tuple(messages), index))
        del _PAIRED[_PAIRED_KEPT:]
    return index


def _index_tool_calls(messages: Sequence[Message]) -> ToolIndex:
    latest: dict[str, tuple[int, ToolCall]] = {}
    answered: set[tuple[int, str]] = set()
    links: list[ToolLink] = []
    orphans: list[int] = []
    issued: list[tuple[int, ToolCall]] = []
    for i, m in enumerate(messages):
        for call in m.tool_calls:
            latest[call.id] = (i, call)
            issued.append((i, call))
        matched = False
        for cid in m.tool_call_ids:
            found = latest.get(cid)
            if found is not None and found[0] < i:
                links.append(ToolLink(call_at=found[0], call=found[1], result_at=i))
                answered.add((found[0], cid))
                matched = True
        if m.tool_call_ids and not matched:
            orphans.append(i)
    unanswered = tuple((i, c) for i, c in issued if (i, c.id) not in answered and c.type != "server")
    return ToolIndex(links=tuple(links), orphan_results=tuple(orphans), unanswered=unanswered)
