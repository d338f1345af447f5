"""``truncate``: keep the head and tail of oversized tool outputs, with a marker saying what was cut.

Long tool outputs (test logs, file dumps, search results) are the usual bloat. The middle of
such an output is the least useful part: the head shows what ran, the tail how it ended. The
marker says how many lines and characters were cut and where the full output still is.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from ..model import Message
from ._edit import result_text, tool_names, with_text
from .base import CompressionResult, Compressor, Context, Settings, unchanged

__all__ = ["Truncate", "TruncateSettings", "truncate_text"]

MARKER_START = "[... tcompact truncated "


class TruncateSettings(Settings):
    """Limits of a tool output before it is cut."""

    max_chars: int = Field(10240, ge=256, le=10_000_000, description="Characters kept at most (10 KiB).")
    max_lines: int = Field(256, ge=8, le=1_000_000, description="Lines kept at most.")
    max_tokens: int | None = Field(None, ge=64, le=1_000_000,
                                   description="When set, limit by tokens instead of characters and lines.")
    head_ratio: float = Field(0.4, gt=0, lt=1, description="Share of the kept text taken from the head.")
    keep_recent: int = Field(0, ge=0, le=100_000, description="Newest tool results left untouched.")
    tools: list[str] = Field(default_factory=list, description="Only outputs of these tools (all when empty).")


class Truncate(Compressor):
    """Head + tail truncation of oversized tool outputs."""

    name = "truncate"
    description = "head+tail truncation of oversized tool outputs, with a marker saying how much was cut and where"
    settings_model = TruncateSettings

    def compress(self, messages: Sequence[Message], settings: Settings, ctx: Context) -> CompressionResult:
        assert isinstance(settings, TruncateSettings)
        before = ctx.counter.total(messages)
        names = tool_names(messages)
        results = [i for i, m in enumerate(messages) if m.role in ("tool", "function")]
        protected = set(results[len(results) - settings.keep_recent:]) if settings.keep_recent else set()
        out = list(messages)
        cut = 0
        for i in results:
            text = result_text(messages[i])
            tool = names.get(i, ("?", ""))[0]
            if text is None or i in protected or (settings.tools and tool not in settings.tools):
                continue
            new = truncate_text(text, settings, ctx, where=ctx.locator(messages[i]))
            if new == text:
                continue
            cut_message = with_text(messages[i], new)
            # an output just over a limit can come out longer with the marker: then it stays as it is
            if ctx.counter.message(cut_message).total < ctx.counter.message(messages[i]).total:
                out[i] = cut_message
                cut += 1
        if not cut:
            return unchanged(self.name, messages, "no tool output over the limits", before)
        after = ctx.counter.total(out)
        return CompressionResult(processor=self.name, messages=tuple(out), applied=True, reason="truncated",
                                 tokens_before=before, tokens_after=after,
                                 notes=(f"truncated {cut} tool output(s)",), figures={"truncated": cut})


def truncate_text(text: str, settings: TruncateSettings, ctx: Context, *, where: str) -> str:
    """The text cut to the limits (unchanged when it fits or was already truncated)."""
    if MARKER_START in text:
        return text
    if settings.max_tokens is not None:
        return _by_tokens(text, settings, ctx, where)
    # both limits cut the original once: the kept head ends at the earlier of the two head cuts and
    # the kept tail starts at the later of the two tail cuts, so one marker states the whole cut
    head_end, tail_start = len(text), 0  # overlapping: everything kept
    lines = text.splitlines(keepends=True)
    if len(lines) > settings.max_lines:
        head_n = max(1, int(settings.max_lines * settings.head_ratio))
        head_end = sum(map(len, lines[:head_n]))
        tail_start = len(text) - sum(map(len, lines[len(lines) - (settings.max_lines - head_n):]))
    kept = len(text) if head_end >= tail_start else head_end + len(text) - tail_start
    if kept > settings.max_chars:
        head_c = int(settings.max_chars * settings.head_ratio)
        head_end = min(head_end, head_c)
        tail_start = max(tail_start, len(text) - (settings.max_chars - head_c))
    if head_end >= tail_start:
        return text
    return _join(text, [text[:head_end]], [text[tail_start:]], where)


def _by_tokens(text: str, settings: TruncateSettings, ctx: Context, where: str) -> str:
    total = ctx.counter.count(text)
    limit = settings.max_tokens or 0
    if total <= limit:
        return text
    chars = int(len(text) * limit / total)
    for _ in range(8):  # shrink until the kept text fits the token limit
        head_c = int(chars * settings.head_ratio)
        out = _join(text, [text[:head_c]], [text[len(text) - (chars - head_c):]], where)
        if ctx.counter.count(out) <= limit or chars < 64:
            return out
        chars = int(chars * 0.85)
    return out


def _join(original: str, head: list[str], tail: list[str], where: str) -> str:
    kept_head, kept_tail = "".join(head), "".join(tail)
    cut_chars = len(original) - len(kept_head) - len(kept_tail)
    cut_lines = original.count("\n") - kept_head.count("\n") - kept_tail.count("\n")
    marker = (f"{MARKER_START}{cut_lines:,} lines / {cut_chars:,} characters of {len(original):,} here; "
              f"the full output is in {where} ...]")
    sep_head = "" if kept_head.endswith("\n") else "\n"
    sep_tail = "" if kept_tail.startswith("\n") else "\n"
    return f"{kept_head}{sep_head}{marker}{sep_tail}{kept_tail}"
