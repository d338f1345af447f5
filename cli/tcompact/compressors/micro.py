"""``micro``: clear old tool results, keeping the most recent few per tool (spec §8.4).

An agent rarely needs the tenth-last ``grep`` output verbatim. Clearing old results of the same
tool frees context without a model call. Unlike the silent clearing users complain about
(LESSONS.md §5), the marker names the tool, the size of what went, where the full result still is
and the call that would bring it back.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from pydantic import Field

from ..model import Message
from ._edit import result_text, tool_names, with_text
from .base import CompressionResult, Compressor, Context, Settings, unchanged

__all__ = ["Micro", "MicroSettings", "CLEARED_MARKER"]

CLEARED_MARKER = "[Old tool result content cleared]"


class MicroSettings(Settings):
    """Which tool results are old enough to clear."""

    keep_recent_per_tool: int = Field(3, ge=0, le=100_000, description="Newest results kept per tool.")
    tools: list[str] = Field(default_factory=list, description="Only results of these tools (all when empty).")
    min_tokens: int = Field(100, ge=0, le=10_000_000, description="Results smaller than this are left alone.")
    trigger_threshold: int = Field(0, ge=0, le=100_000,
                                   description="Act only when a tool has more than keep + this many results.")


class Micro(Compressor):
    """Clears tool results older than the most recent N per tool."""

    name = "micro"
    description = "clear tool results older than the most recent N per tool, with a recoverable marker"
    settings_model = MicroSettings

    def compress(self, messages: Sequence[Message], settings: Settings, ctx: Context) -> CompressionResult:
        assert isinstance(settings, MicroSettings)
        before = ctx.counter.total(messages)
        names = tool_names(messages)
        per_tool: dict[str, list[int]] = defaultdict(list)
        for i, (tool, _) in names.items():
            text = result_text(messages[i])
            if text is not None and not text.startswith(CLEARED_MARKER) and (not settings.tools or tool in settings.tools):
                per_tool[tool].append(i)
        out = list(messages)
        cleared = 0
        for tool, indices in per_tool.items():
            indices.sort()
            limit = settings.keep_recent_per_tool + (0 if ctx.force else settings.trigger_threshold)
            if len(indices) <= limit:
                continue
            for i in indices[: len(indices) - settings.keep_recent_per_tool]:
                size = ctx.counter.message(messages[i]).total
                if size >= settings.min_tokens:
                    new = with_text(messages[i], _marker(tool, names[i][1], size, ctx.locator(messages[i])))
                    if ctx.counter.message(new).total < size:  # a marker longer than a small result saves nothing
                        out[i] = new
                        cleared += 1
        if not cleared:
            return unchanged(self.name, messages, "no old tool results to clear", before)
        return CompressionResult(processor=self.name, messages=tuple(out), applied=True, reason="cleared",
                                 tokens_before=before, tokens_after=ctx.counter.total(out),
                                 notes=(f"cleared {cleared} old tool result(s)",), figures={"cleared": cleared})


def _marker(tool: str, call: str, tokens: int, where: str) -> str:
    return (f"{CLEARED_MARKER}\n{tool} output of {tokens:,} tokens, cleared by tcompact micro. The full result is "
            f"in {where}; run the call again if you need it: {call}")
