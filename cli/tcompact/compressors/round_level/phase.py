"""One summarising stage of the round-level pipeline (openjiuwen-spec §8.1.4, "One LLM phase").

The stage's targets go to the summariser in as few calls as the per-call budget allows (targets
are packed greedily; one that is too big alone gets its prompt cut to fit), and independent calls
run concurrently. When the summariser's context window is known, the per-call budget is also what
fits in it beside the answer, whose limit (the blocks' budgets, at most a quarter of the window)
is sent as ``max_tokens`` and stated in the prompt; an overflow refusal that says the server's
window refits the call's prompt to it. Each answer is parsed as ``{"blocks": [{"block_id",
"summary"}]}``: unknown ids are ignored, a target without a summary keeps its messages, a summary
that is not smaller than what it replaces — or is no summary (:mod:`tcompact.summarizers.validity`:
empty, the instructions echoed, a loop) — is refused, and when the answer is not that JSON but has
usable text, it becomes one replacement for all of the call's targets. An answer with nothing
usable (or cut at ``max_tokens`` before its JSON closed) is refused and retried like any refused
reply; once every attempt is refused the call replaces nothing and the stage goes on. Replacements
are applied from the end backwards. Deviation: a valid JSON answer whose summaries were all
refused does not fall back to its raw text.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ...model import Message
from ...redact import redact
from ...spans import Span
from ...summarizers.base import Block, ModelWindow, SummaryRequest, SummaryResponse, model_window
from ...summarizers.contracts import prompt_text
from ...summarizers.validity import cut_problem, text_problem
from ...counting.join import joined_counts
from ...counting.tokens import TokenCounter
from ...summarizers.calls import Summary, summarize
from ...summarizers.fitting import OUTPUT_SHARE, prompt_room
from ..base import CallRecord, Context
from .ahead import answer_later
from .prompting import PromptParts, fit_prompt, system_prompt
from .targets import memory_message, memory_text, pinned

__all__ = ["Phase", "PhaseResult", "run_phase"]

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


@dataclass(frozen=True)
class Phase:
    """What a stage asks for: its name, the summary budget per block, the raw tail, the prompt style."""

    name: str
    target_tokens: int
    keep_recent: int
    aggressive: bool


@dataclass(frozen=True)
class PhaseResult:
    """The messages after the stage, its calls, how many targets were replaced, and why it stopped."""

    messages: tuple[Message, ...]
    calls: tuple[CallRecord, ...]
    replaced: int
    reason: str
    failed: bool = False


@dataclass(frozen=True)
class _Call:
    blocks: tuple[Block, ...]
    request: SummaryRequest
    make: Callable[[int, int | None], SummaryRequest | None]

    def refit(self, request: SummaryRequest, window: ModelWindow, ratio: float) -> SummaryRequest | None:
        """The call fitted to ``window`` (an overflow refusal's): a smaller prompt, the answer's limit capped."""
        out = _answer_limit(self.blocks, request.target_tokens, window)
        return self.make(prompt_room(window, out, ratio), out)


def _answer_limit(blocks: Sequence[Block], target: int, window: ModelWindow | None) -> int | None:
    """``max_tokens`` of a call: every block's budget and its JSON, at most a quarter of a known window (none
    sent else: the per-block budgets of round-level are no output limit a provider would accept)."""
    return min(len(blocks) * (target + 24), int(window.tokens * OUTPUT_SHARE)) if window else None


def run_phase(messages: Sequence[Message], targets: Sequence[Block], phase: Phase, ctx: Context, *,
              settings, call_budget: int, keep: frozenset[int] = frozenset()) -> PhaseResult:
    """Summarise ``targets`` and replace them by memory blocks.

    A replaced range never loses a system or developer message or a kept message (``keep``, the
    last request) lying inside it: those stay, the pinned ones before the memory block and the
    kept one after it (a merge may span system messages; a raw fallback may span anything).
    """
    if not targets:
        return PhaseResult(tuple(messages), (), 0, "no targets")
    calls, skipped = _plan_calls(messages, targets, phase, ctx, settings=settings, call_budget=call_budget)
    if not calls:
        return PhaseResult(tuple(messages), (), 0, f"the call budget of {call_budget:,} tokens is impossible")
    results = _run_calls(messages, calls, ctx)
    records = tuple(r for got in results for r in got.calls)
    ctx.dumped([r.request.prompt for r in records])
    failed = next((got for got in results if _lost(got)), None)
    if failed is not None:
        return PhaseResult(tuple(messages), records, 0, f"summariser failed: {failed.error}", failed=True)
    replacements = []
    for call, got in zip(calls, results, strict=True):
        if got.response is not None:
            replacements += _replacements(messages, call, got.response.text, ctx, settings=settings,
                                          call_budget=call_budget, keep=keep)
    if not replacements:
        return PhaseResult(tuple(messages), records, 0, "no usable replacement")
    out = list(messages)
    for start, end, new in sorted(replacements, key=lambda r: r[0], reverse=True):
        out[start:end + 1] = new
    note = f"{len(replacements)} block(s) replaced" + (f", {skipped} too big for one call" if skipped else "")
    return PhaseResult(tuple(out), records, len(replacements), note)


def _plan_calls(messages: Sequence[Message], targets: Sequence[Block], phase: Phase, ctx: Context, *,
                settings, call_budget: int) -> tuple[list[_Call], int]:
    """Pack targets into as few calls as the budget allows; a lone target's prompt may be cut to fit.

    Each call's prompt is the stage's shared context plus its own targets, so its size is known
    from the parts' sizes without building it (the packing stays linear in the targets).
    """
    system = system_prompt(aggressive=phase.aggressive)
    parts = PromptParts(messages, targets, keep_recent=phase.keep_recent, marker=settings.compression_marker,
                        counter=ctx.counter, context_max_tokens=settings.context_max_tokens,
                        head_ratio=settings.truncate_head_ratio, truncated_marker=settings.truncated_marker)
    window = model_window(ctx.summarizer)
    if window is not None:  # the summariser's own window, beside the largest answer a call may ask for
        call_budget = min(call_budget, prompt_room(window, int(window.tokens * OUTPUT_SHARE)))
    room = call_budget - ctx.counter.count(system) - 8 - parts.base_cost()
    groups: list[list[Block]] = []
    used = 0
    for block in targets:
        cost = parts.costs[block.block_id]
        if groups and used + cost <= room:
            groups[-1].append(block)
            used += cost
        else:
            groups.append([block])
            used = cost
    answer_later(messages, groups, phase.target_tokens, ctx)
    total = ctx.counter.total(messages)
    calls = [_call(g, phase, ctx, parts=parts, settings=settings, budget=call_budget, system=system, total=total,
                   messages=messages, window=window) for g in groups]
    kept = [c for c in calls if c is not None]
    return kept, len(calls) - len(kept)


def _call(blocks: Sequence[Block], phase: Phase, ctx: Context, *, parts: PromptParts, settings, budget: int,
          system: str, total: int, messages: Sequence[Message], window: ModelWindow | None) -> _Call | None:
    def make(prompt_budget: int, max_tokens: int | None) -> SummaryRequest | None:
        prompt, tokens = parts.counted(blocks, phase=phase.name, target_tokens=phase.target_tokens,
                                       keep_recent=phase.keep_recent, window_tokens=total, call_budget=prompt_budget,
                                       max_output_tokens=max_tokens)
        fitted = fit_prompt(system, prompt, budget=prompt_budget, counter=ctx.counter,
                            head_ratio=settings.truncate_head_ratio, marker=settings.truncated_marker,
                            at_most=parts.upper_bound(blocks), tokens=tokens)
        if fitted is None:
            return None
        return SummaryRequest(processor="round-level", contract="blocks", prompt=fitted, messages=tuple(messages),
                              body=range(blocks[0].start, blocks[-1].end + 1), target_tokens=phase.target_tokens,
                              system=system, stage=phase.name, blocks=tuple(blocks), max_tokens=max_tokens,
                              window=window)

    request = make(budget, _answer_limit(blocks, phase.target_tokens, window))
    return _Call(tuple(blocks), request, make) if request is not None else None


def _run_calls(messages: Sequence[Message], calls: Sequence[_Call], ctx: Context) -> list[Summary]:
    """Every call with the retry policy; independent calls run concurrently. Once a call has
    failed for good the stage fails, so the calls not started yet are not made (a bad key or a
    dead server gets one call's attempts, not every call's)."""
    lost = threading.Event()

    def one(call: _Call) -> Summary:
        span = Span.from_cuts(len(messages), call.request.body.start, call.request.body.stop)
        if lost.is_set():
            return Summary(None, span, (), None)
        got = summarize(messages, span, lambda s: call.request, ctx, fixed_tokens=lambda s: 0, shrink=False,
                        check=_blocks_problem, refit=call.refit)
        if _lost(got):
            lost.set()
        return got

    if len(calls) == 1 or ctx.concurrency <= 1:
        return [one(c) for c in calls]
    pool = ThreadPoolExecutor(max_workers=min(ctx.concurrency, len(calls)), thread_name_prefix="tcompact-call")
    try:
        return list(pool.map(one, calls))
    finally:  # all done, or Ctrl-C: the calls not started are dropped and those in flight not waited for
        pool.shutdown(wait=False, cancel_futures=True)


def _lost(got: Summary) -> bool:
    """A call that failed for good (a refused answer is no failure: it replaces nothing)."""
    return got.response is None and bool(got.calls) and (got.error is None or got.error.kind != "invalid_response")


def _instructions(request: SummaryRequest) -> tuple[str, ...]:
    return (request.system or "", prompt_text("round_level_contract"))


def _blocks_problem(request: SummaryRequest, response: SummaryResponse) -> str | None:
    """Why an answer gives no replacement at all (:mod:`tcompact.summarizers.validity`), or None."""
    parsed = parse_blocks(response.text)
    if parsed is None:
        problem = text_problem(response.text, instructions=_instructions(request))
        return problem or (cut_problem(request.max_tokens) if response.finish_reason == "length" else None)
    if not any(text_problem(v, instructions=_instructions(request)) is None for v in parsed.values()):
        return "the JSON answer holds no usable block summary"
    return None


def parse_blocks(text: str) -> dict[str, str] | None:
    """``block_id → summary`` from a ``{"blocks": [...]}`` answer (a ```json fence allowed), or None."""
    match = _FENCE.match(text)
    try:
        payload = json.loads(match.group(1) if match else text)
    except (json.JSONDecodeError, ValueError):
        return None
    items = payload.get("blocks") if isinstance(payload, dict) else None
    if not isinstance(items, list):
        return None
    out: dict[str, str] = {}
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("block_id"), str) and item["block_id"] \
                and isinstance(item.get("summary"), str) and item["summary"].strip():
            out[item["block_id"]] = item["summary"].strip()
    return out


def _replacements(messages: Sequence[Message], call: _Call, text: str, ctx: Context, *, settings,
                  call_budget: int, keep: frozenset[int]) -> list[tuple[int, int, list[Message]]]:
    parsed = parse_blocks(text)
    if parsed is None:
        return _raw_fallback(messages, call, text, ctx, settings=settings, call_budget=call_budget, keep=keep)
    trusted = ctx.summarizer is not None and ctx.summarizer.trusted  # (its answers are not checked: the extractive)
    usable = [(block, redact(summary)) for block in call.blocks if (summary := parsed.get(block.block_id))
              and (trusted or text_problem(summary, instructions=_instructions(call.request)) is None)]
    _count_memories(ctx.counter, settings.compression_marker, usable)
    out = []
    for block, summary in usable:
        kept = _accept(messages, block, summary, ctx, settings=settings, call_budget=call_budget, keep=keep)
        if kept is not None:
            out.append(kept)
    return out


def _count_memories(counter: TokenCounter, marker: str, usable: Sequence[tuple[Block, str]]) -> None:
    """The texts of a call's memory blocks counted in one batch, from their summaries' counts (the extractive
    summariser counted each summary it wrote): their headers and the joins are tokenised, not the summaries."""
    texts = [(memory_text(marker, block.scope, ""), summary) for block, summary in usable]
    counter.learn(zip((head + summary for head, summary in texts), joined_counts(counter, texts)), persistent=True)


def _raw_fallback(messages: Sequence[Message], call: _Call, text: str, ctx: Context, *, settings,
                  call_budget: int, keep: frozenset[int]) -> list[tuple[int, int, list[Message]]]:
    if not text.strip():
        return []
    blocks = call.blocks
    merged = Block(block_id="raw_fallback", scope="mixed_context", start=min(b.start for b in blocks),
                   end=max(b.end for b in blocks), current_level=max(b.current_level for b in blocks),
                   next_level=max(b.next_level for b in blocks),
                   source_block_count=sum(b.source_block_count for b in blocks))
    kept = _accept(messages, merged, redact(text.strip()), ctx, settings=settings, call_budget=call_budget, keep=keep)
    return [kept] if kept is not None else []


def _accept(messages: Sequence[Message], block: Block, summary: str, ctx: Context, *, settings,
            call_budget: int, keep: frozenset[int]) -> tuple[int, int, list[Message]] | None:
    """The replacement of a block — the messages that stay and the memory block — unless the memory
    block is over the call budget or not smaller than what it replaces."""
    memory = memory_message(settings.compression_marker, block.scope, summary, block.next_level)
    span = range(block.start, block.end + 1)
    before = [messages[i] for i in span if pinned(messages[i])]
    after = [messages[i] for i in span if i in keep and not pinned(messages[i])]
    cost = ctx.counter.message(memory).total
    replaced = sum(ctx.counter.message(messages[i]).total for i in span
                   if not pinned(messages[i]) and i not in keep)
    if cost > call_budget or cost >= replaced:
        return None
    return block.start, block.end, [*before, memory, *after]
