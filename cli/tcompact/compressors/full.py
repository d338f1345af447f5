"""``full``: a handoff-style full compaction (openjiuwen-spec §8.5, Codex's compact in LESSONS.md).

Everything after the system prompt becomes: the real user messages, verbatim, chosen newest first
within a token budget (the one that overflows keeps its head and tail around a marker,
:mod:`tcompact.user_messages`), one checkpoint summary, and the re-injected state. Users' own words
survive a compaction this way, which is what they miss most when summaries paraphrase them. The
trigger, the request, the retries and the benefit check are the prefix family's
(:class:`~tcompact.compressors.prefix.PrefixCompressor`); only the replacement differs.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from ..markers import CONTINUATION
from ..model import Message
from ..rounds import command_prompt, is_real_user
from ..spans import Span, adjust_keep_recent_for_tool_boundaries
from ..counting.tokens import TokenCounter
from ..user_messages import select
from ._edit import with_text
from .base import Settings
from .prefix import PrefixCompressor, PrefixSettings

__all__ = ["Full", "FullSettings", "SUMMARY_INTRO"]

SUMMARY_INTRO = (f"{CONTINUATION} that ran out of context. The summary below covers the earlier portion of the "
                 "conversation.")


class FullSettings(PrefixSettings):
    """Prefix settings plus the budget of verbatim user messages and an optional raw tail."""

    user_messages_max_tokens: int = Field(20000, ge=0, le=1_000_000,
                                          description="Tokens of real user messages kept verbatim, newest first.")
    keep_recent_messages: int = Field(0, ge=0, le=100_000, description="Newest messages kept raw after the summary.")


class Full(PrefixCompressor):
    """One checkpoint summary + the user's messages verbatim + re-injected state."""

    name = "full"
    description = "full compaction: one handoff summary + the real user messages verbatim within a budget + state"
    settings_model = FullSettings
    keep_recent_setting = "keep_recent_messages"
    may_cut_last_request = True  # the user message that overflows its budget keeps its head and tail
    contract = "full"
    builders = ("plan", "skills", "todo", "read_file")

    def span(self, messages: Sequence[Message], settings: Settings) -> Span:
        """Everything after the leading system prompt, but the newest ``keep_recent_messages``."""
        assert isinstance(settings, FullSettings)
        start = next((i for i, m in enumerate(messages) if m.role not in ("system", "developer")), len(messages))
        keep = adjust_keep_recent_for_tool_boundaries(messages, settings.keep_recent_messages)
        return Span.from_cuts(len(messages), start, max(start, len(messages) - keep))

    def replacement(self, messages: Sequence[Message], span: Span, summary: str, settings: Settings,
                    counter: TokenCounter) -> tuple[list[Message], str]:
        """The real user messages of the body within their budget, then the handoff summary."""
        assert isinstance(settings, FullSettings)
        users = kept_user_messages([messages[i] for i in span.body], settings.user_messages_max_tokens, counter)
        notice = "\n\nRecent messages are preserved verbatim." if len(span.tail) else ""
        handoff = Message(role="user", content=f"{SUMMARY_INTRO}\n\n{summary}{notice}", meta={"memory_block": "full"})
        return users + [handoff], f"{len(span.body)} messages replaced by {len(users)} user message(s) and one summary"


def kept_user_messages(body: Sequence[Message], budget: int, counter: TokenCounter) -> list[Message]:
    """Real user messages of ``body`` chosen newest first within ``budget`` tokens, in their order; the one
    that overflows keeps its head and tail around a marker (:func:`tcompact.user_messages.select`). A slash
    command kept whole keeps its prompt after it (:func:`tcompact.rounds.command_prompt`), paid from the budget."""
    at = [i for i, m in enumerate(body) if is_real_user(m)]
    users = [body[i] for i in at]
    prompts = {i: command_prompt(body, i) for i in at}
    texts = [m.text for m in users]
    framing = {text: counter.message(m).total - counter.count(text)
               + (counter.message(body[prompts[i]]).total if prompts[i] is not None else 0)
               for i, m, text in zip(at, users, texts, strict=True)}
    chosen = select(texts, budget, counter=counter, by="full", cost=lambda text: counter.count(text) + framing[text])
    out: list[Message] = []
    for i, m, whole, text in zip(at, users, texts, chosen, strict=True):
        if text is not None:
            out.append(m if text == whole else with_text(m, text))
            if text == whole and prompts[i] is not None:
                out.append(body[prompts[i]])
    return out
