"""``mask``: observation masking — old tool outputs become a placeholder, calls and reasoning stay.

JetBrains' study of SWE-agent and OpenHands (arXiv 2508.21433) found that replacing the tool
outputs older than the last few turns by a placeholder matched LLM summaries on solve rate at half
the cost: the agent keeps every step it took (its calls and its reasoning), and only what the
environment answered long ago goes. Unlike a silent clearing (LESSONS.md §5), the placeholder says
what was cut — the tool and its call, how many lines and bytes —, the error statements the output
held, and where the whole output still is (``file:line`` of the original, as truncate's marker).
:func:`mask_outputs` is the masking itself; the working-set compaction masks its raw tail with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import Field

from ..model import Message, ToolCall, index_tool_calls
from ..summarizers.extractive.tools import error_lines
from ..counting.tokens import TokenCounter
from ._edit import call_preview, result_text, with_text
from .base import CompressionResult, Compressor, Context, Settings, unchanged

__all__ = ["Mask", "MaskSettings", "MASK_MARKER", "mask_outputs", "masked_text", "old_calls", "old_results"]

MASK_MARKER = "[tcompact masked an old tool output"


class MaskSettings(Settings):
    """Which tool outputs are old enough to mask."""

    keep_recent_turns: int = Field(10, ge=0, le=100_000, description="Outputs of the newest N turns (assistant "
                                   "messages with tool calls) are kept whole.")
    min_tokens: int = Field(100, ge=0, le=10_000_000, description="Outputs smaller than this are left alone.")
    tools: list[str] = Field(default_factory=list, description="Only outputs of these tools (all when empty).")


class Mask(Compressor):
    """Replaces tool outputs older than the last N turns by a placeholder stating what was cut."""

    name = "mask"
    description = ("observation masking: tool outputs older than the last N turns become a placeholder stating "
                   "what was cut and where it is; calls and reasoning kept")
    settings_model = MaskSettings

    def compress(self, messages: Sequence[Message], settings: Settings, ctx: Context) -> CompressionResult:
        assert isinstance(settings, MaskSettings)
        before = ctx.counter.total(messages)
        old = old_results(messages, settings.keep_recent_turns, tools=settings.tools)
        out, masked = mask_outputs(messages, old, counter=ctx.counter, locator=ctx.locator,
                                   min_tokens=settings.min_tokens)
        if not masked:
            return unchanged(self.name, messages, "no old tool output to mask", before)
        return CompressionResult(processor=self.name, messages=tuple(out), applied=True, reason="masked",
                                 tokens_before=before, tokens_after=ctx.counter.total(out),
                                 notes=(f"masked {masked} old tool output(s)",), figures={"masked": masked})


def old_results(messages: Sequence[Message], keep_turns: int, *, start: int = 0,
                tools: Sequence[str] = ()) -> dict[int, str]:
    """Index → call preview of the tool results (from ``start`` on) answering calls older than the newest
    ``keep_turns`` turns (assistant messages with tool calls), only of ``tools`` when given."""
    return {i: call_preview(c.name, c.arguments) for i, c in old_calls(messages, keep_turns, start=start,
                                                                        tools=tools).items()}


def old_calls(messages: Sequence[Message], keep_turns: int, *, start: int = 0,
              tools: Sequence[str] = ()) -> dict[int, ToolCall]:
    """Index → the call answered, of the results :func:`old_results` previews (a caller that needs only some
    of the previews makes those alone)."""
    turns = [i for i, m in enumerate(messages) if m.role == "assistant" and m.tool_calls]
    recent = set(turns[len(turns) - keep_turns:]) if keep_turns else set()
    out: dict[int, ToolCall] = {}
    for link in index_tool_calls(messages).links:
        if link.result_at >= start and link.call_at not in recent and (not tools or link.call.name in tools):
            out.setdefault(link.result_at, link.call)
    return out


def masked_text(text: str, call: str, where: str) -> str:
    """The placeholder of one output: what was cut, its error statements, where the whole output is."""
    size = len(text.encode("utf-8", "surrogatepass"))
    lines = text.count("\n") + 1 if text else 0
    errors = error_lines(text)
    said = "".join(f"\n  {line}" for line in errors)
    reported = f"; it reported:{said}" if errors else ""
    return (f"{MASK_MARKER}: {call} — {lines:,} lines / {size:,} bytes cut{reported}\nThe whole output is in "
            f"{where}; run the call again if you need it now.]")


def mask_outputs(messages: Sequence[Message], old: dict[int, str], *, counter: TokenCounter,
                 locator: Callable[[Message], str], min_tokens: int = 0) -> tuple[list[Message], int]:
    """The messages with the outputs at ``old`` masked (those of ``min_tokens`` or more, whose placeholder is
    smaller, not masked yet), and how many were."""
    out = list(messages)
    masked = 0
    for i, call in sorted(old.items()):
        text = result_text(messages[i])
        if text is None or text.startswith(MASK_MARKER):
            continue
        size = counter.message(messages[i]).total
        if size < min_tokens:
            continue
        new = with_text(messages[i], masked_text(text, call, locator(messages[i])))
        if counter.message(new).total < size:
            out[i] = new
            masked += 1
    return out, masked
