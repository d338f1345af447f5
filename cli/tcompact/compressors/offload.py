"""``offload``: move big old tool results to an offload store, leaving a preview and a handle.

The MessageOffloader of openjiuwen-spec §9.2 with its thresholds in tokens rather than
characters, and with the "keep the last round" boundary it meant to have (the last assistant
message *without* tool calls; upstream's misspelt attribute made it any assistant message).
The originals are returned as :class:`OffloadBlob` values; the command writes them next to the
output, and ``tcompact restore`` puts them back.
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Sequence

import orjson
from pydantic import Field, field_validator

from ..model import Message, ToolCall, index_tool_calls
from ._edit import result_text, with_text
from .base import CompressionResult, Compressor, Context, OffloadBlob, Settings, unchanged

__all__ = ["Offload", "OffloadSettings", "OFFLOAD_MARKER", "marker_for"]

OFFLOAD_MARKER = "[[OFFLOAD: "


class OffloadSettings(Settings):
    """When and what to offload."""

    tokens_threshold: int = Field(20000, ge=0, le=100_000_000,
                                  description="Act only when the transcript has more tokens than this.")
    large_message_tokens: int = Field(1000, ge=1, le=10_000_000, description="Offload results bigger than this.")
    preview_chars: int = Field(200, ge=0, le=100_000, description="Characters of the original kept as a preview.")
    roles: list[str] = Field(default_factory=lambda: ["tool"], description="Roles whose messages may be offloaded.")
    protected_tools: list[str] = Field(default_factory=lambda: ["read_file"],
                                       description="Tool names, or tool:glob patterns on argument values, never offloaded.")
    keep_recent: int = Field(0, ge=0, le=100_000, description="Newest messages never offloaded.")
    keep_last_round: bool = Field(True, description="Never offload after the last assistant answer without tool calls.")

    @field_validator("roles")
    @classmethod
    def _known_roles(cls, roles: list[str]) -> list[str]:
        bad = sorted(set(roles) - {"user", "assistant", "tool"})
        if bad:
            raise ValueError(f"unknown role(s) {bad}; use user, assistant or tool")
        return roles


class Offload(Compressor):
    """Replaces big old tool results by a preview and a handle to the stored original."""

    name = "offload"
    description = "replace big old tool results by a short head and a handle; originals go to an offload store"
    settings_model = OffloadSettings

    def compress(self, messages: Sequence[Message], settings: Settings, ctx: Context) -> CompressionResult:
        assert isinstance(settings, OffloadSettings)
        before = ctx.counter.total(messages)
        if before <= settings.tokens_threshold and not ctx.force:
            return unchanged(self.name, messages, "below the threshold", before, below_trigger=True)
        calls = {link.result_at: link.call for link in index_tool_calls(messages).links}
        out = list(messages)
        blobs: list[OffloadBlob] = []
        for i in range(_boundary(messages, settings) - 1, -1, -1):  # newest first, as upstream
            m = messages[i]
            text = result_text(m)
            if (text is None or m.role not in settings.roles or OFFLOAD_MARKER in text
                    or _protected(calls.get(i), settings.protected_tools)
                    or ctx.counter.message(m).total <= settings.large_message_tokens):
                continue
            handle = _handle(i, text)
            path = f"{ctx.offload_dir}/{handle}.json"
            new = with_text(m, text[: settings.preview_chars] + "...\n" + marker_for(handle, path))
            if ctx.counter.message(new).total >= ctx.counter.message(m).total:
                continue  # preview and marker would not be smaller than the message itself
            out[i] = new
            blobs.append(OffloadBlob(handle=handle, message=m, path=path))
        if not blobs:
            return unchanged(self.name, messages, "no message over the size limit", before)
        blobs.reverse()
        return CompressionResult(processor=self.name, messages=tuple(out), applied=True, reason="offloaded",
                                 tokens_before=before, tokens_after=ctx.counter.total(out), blobs=tuple(blobs),
                                 notes=(f"offloaded {len(blobs)} message(s) to {ctx.offload_dir}/",),
                                 figures={"offloaded": len(blobs)})


def marker_for(handle: str, path: str) -> str:
    """The recovery marker of spec §9.1 (forked form)."""
    return f"{OFFLOAD_MARKER}handle={handle}, type=filesystem, path={path}]]"


def _boundary(messages: Sequence[Message], settings: OffloadSettings) -> int:
    """Messages at or after this index are never offloaded."""
    end = len(messages) - settings.keep_recent
    if settings.keep_last_round:
        for i in range(len(messages) - 1, -1, -1):
            if messages[i].role == "assistant" and not messages[i].tool_calls:
                end = min(end, i)
                break
    return max(end, 0)


def _protected(call: ToolCall | None, rules: Sequence[str]) -> bool:
    """A rule is a tool name, or ``tool:pattern`` matched against every string argument of the call."""
    if call is None:
        return False
    for rule in rules:
        name, _, pattern = rule.partition(":")
        if name != call.name:
            continue
        if not pattern:
            return True
        try:
            args = orjson.loads(call.arguments)
        except orjson.JSONDecodeError:
            args = {"input": call.arguments}
        values = args.values() if isinstance(args, dict) else [args]
        if any(isinstance(v, str) and fnmatch.fnmatch(v, pattern) for v in values):
            return True
    return False


def _handle(index: int, text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{digest[:16]}{index:06d}"
