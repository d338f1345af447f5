"""The round-level request: system prompt, the task prompt of spec §8.1.5, and fitting it to the call budget.

Messages are serialised one per line as ``[index] role=… | tool_calls=… | tool_call_id=… |
compress_level=l… | content=…``. A prompt over the per-call budget is cut in its middle — the
head and the tail kept, the marker between — at the largest size that fits (binary search);
when even the minimal prompt does not fit, the call cannot be made.

Counting: the prompts are the transcript serialised again, so their counts are made from the
messages' texts, counted already (:func:`tcompact.counting.join.joined_count`): only the stretches
around the joins — a line's head, the first and last few words of its text — are tokenised.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ...model import Message, text_pieces
from ...summarizers.base import Block
from ...summarizers.contracts import prompt_text
from ...counting.join import EdgeCounts, joined_count, joined_counts, rstripped
from ...counting.tokens import TokenCounter
from .targets import level_of, pinned

__all__ = ["serialize", "PromptParts", "system_prompt", "fit_prompt", "head_tail", "cap_text", "MINIMAL_PROMPT"]

MINIMAL_PROMPT = "[Compression Task]\n...[TRUNCATED]...\n[Output Contract]\nReturn valid JSON only."


def system_prompt(*, aggressive: bool) -> str:
    """The normal or the aggressive system prompt (prompts/round_level_*.md)."""
    return prompt_text("round_level_aggressive" if aggressive else "round_level_normal")


def serialize(index: int, m: Message, *, marker: str) -> str:
    """One message on one line (spec §8.1.5); tool-call arguments are left out."""
    return _head(index, m, marker) + m.text


def _head(index: int, m: Message, marker: str) -> str:
    """The line of :func:`serialize` up to the message's text."""
    parts = [f"[{index}] role={m.role}"]
    if m.role == "assistant" and m.tool_calls:
        parts.append("tool_calls=" + ",".join(c.name for c in m.tool_calls))
    if m.tool_call_id:
        parts.append(f"tool_call_id={m.tool_call_id}")
    if m.role == "user" and m.text.startswith(marker):
        parts.append(f"compress_level=l{level_of(m)}")
    parts.append("content=")
    return " | ".join(parts)


def _lines(messages: Sequence[Message], indices: Iterable[int], marker: str) -> list[str]:
    """The pieces of ``"\\n".join(serialize(i, messages[i]) for i in indices)``: each line's head, then
    the pieces of its text (the message's own strings, whose counts the counter holds)."""
    out: list[str] = []
    for i in indices:
        if out:
            out.append("\n")
        out.append(_head(i, messages[i], marker))
        out += text_pieces(messages[i].content)
    return out


class PromptParts:
    """The pieces of a stage's prompts, serialised once: every call of the stage shares the reference
    context (messages in no target of the stage) and the protected recent context."""

    def __init__(self, messages: Sequence[Message], targets: Sequence[Block], *, keep_recent: int, marker: str,
                 counter: TokenCounter, context_max_tokens: int | None = None, head_ratio: float = 0.2,
                 truncated_marker: str = "...[TRUNCATED]...") -> None:
        inside = {i for b in targets for i in range(b.start, b.end + 1)}
        protected_start = max(len(messages) - keep_recent, max(b.end for b in targets) + 1)
        contexts = [_lines(messages, (i for i in range(protected_start) if i not in inside), marker) or ["(none)"],
                    _lines(messages, range(protected_start, len(messages)), marker) or ["(none)"]]
        self._block_pieces = {b.block_id: _target(messages, b, marker) for b in targets}
        self._block_texts: dict[str, str] = {}  # a block's text, made when a prompt's count needs it
        self.counter = counter
        self._tokens: dict[str, int] = {}  # counts of this stage's texts, made from their pieces
        counted = joined_counts(counter, [*contexts, *self._block_pieces.values()])  # one batch for the stage
        self.reference, self.protected = (self._context("".join(pieces), tokens, context_max_tokens,
                                                        head_ratio=head_ratio, marker=truncated_marker)
                                          for pieces, tokens in zip(contexts, counted))
        self._block_tokens = dict(zip(self._block_pieces, counted[2:]))
        self.costs = {k: n + 1 for k, n in self._block_tokens.items()}
        self._base: int | None = None

    @property
    def blocks(self) -> dict[str, str]:
        """The text of every target (block id → text)."""
        return {k: self._block_text(k) for k in self._block_pieces}

    def _block_text(self, block_id: str) -> str:
        text = self._block_texts.get(block_id)
        if text is None:
            text = self._block_texts[block_id] = "".join(self._block_pieces[block_id])
        return text

    def _count(self, pieces: Sequence[str | tuple[str, int]]) -> int:
        return joined_count(self.counter, pieces)

    def _context(self, text: str, tokens: int, cap: int | None, *, head_ratio: float, marker: str) -> str:
        out = text if cap is None else cap_text(text, cap, counter=self.counter, head_ratio=head_ratio, marker=marker,
                                               total=tokens)
        self._tokens[out] = tokens if out is text else self.counter.count(out)
        return out

    def prompt(self, blocks: Sequence[Block], *, phase: str, target_tokens: int, keep_recent: int,
               window_tokens: int, call_budget: int, max_output_tokens: int | None = None) -> str:
        """The user prompt of one call (spec §8.1.5; ``max_output_tokens``, when the answer has a limit, is ours)."""
        return self.counted(blocks, phase=phase, target_tokens=target_tokens, keep_recent=keep_recent,
                            window_tokens=window_tokens, call_budget=call_budget,
                            max_output_tokens=max_output_tokens)[0]

    def counted(self, blocks: Sequence[Block], *, phase: str, target_tokens: int, keep_recent: int,
                window_tokens: int, call_budget: int, max_output_tokens: int | None = None) -> tuple[str, Callable[[], int]]:
        """:meth:`prompt`, and a function that gives its tokens, counted from its pieces when it is called (a
        packed call's prompt fits by :meth:`upper_bound`: its count is seldom asked for)."""
        ids = [b.block_id for b in blocks]
        last = rstripped(list(self._block_pieces[ids[-1]]))  # its header is never blank: the strip ends there
        pieces = [p for k in ids[:-1] for p in (*self._block_pieces[k], "\n")] + last
        limit = [] if max_output_tokens is None else [f"- max_output_tokens: {max_output_tokens}"]
        head = _joined(["[Compression Task]", f"- phase: {phase}", f"- target_summary_tokens: {target_tokens}", *limit,
                        f"- keep_recent_messages: {keep_recent}", f"- selected_blocks: {len(blocks)}",
                        f"- current_context_window_tokens: {window_tokens}",
                        f"- compression_call_budget_limit: {call_budget}",
                        f"- selected_range: [{blocks[0].start}, {blocks[-1].end}]", "", "[Reference Context]",
                        self.reference, "", "[Selected Targets]"], "\n")
        tail = _joined(["", "[Protected Recent Context]", self.protected, "", "[Output Contract]",
                        prompt_text("round_level_contract")], "\n")
        prompt = "".join([*head, "\n", *(pieces if any(pieces) else ["(none)"]), "\n", *tail])  # targets copied once

        def tokens() -> int:
            targets = "".join(pieces) or "(none)"
            # counted from the blocks' own counts (but the last, cut at its end)
            whole = [p for k in ids[:-1] for p in ((self._block_text(k), self._block_tokens[k]), "\n")] + last
            n = self._count(whole) if pieces else self.counter.count(targets)
            known = {id(self.reference): self._tokens[self.reference], id(self.protected): self._tokens[self.protected]}
            return self._count([(t, known[id(t)]) if id(t) in known else t
                                for t in [*head, "\n", (targets, n), "\n", *tail]])

        return prompt, tokens

    def base_cost(self) -> int:
        """Tokens of a prompt with no target (a little over: headers counted with room to spare)."""
        if self._base is None:
            self._base = self._tokens[self.reference] + self._tokens[self.protected] + \
                self.counter.count(prompt_text("round_level_contract")) + 120
        return self._base

    def upper_bound(self, blocks: Sequence[Block]) -> int:
        """At least the tokens of :meth:`prompt` for ``blocks``: the parts counted apart (tiktoken
        never needs more tokens for a text than for its pieces split at line breaks)."""
        return self.base_cost() + sum(self.costs[b.block_id] for b in blocks)


def _target(messages: Sequence[Message], b: Block, marker: str) -> list[str]:
    """The pieces of a target's text: its header lines, its messages' lines, a line break."""
    head = [f"[Block: {b.block_id}]", f"- scope: {b.scope}", f"- replace_range: [{b.start}, {b.end}]",
            f"- current_level: l{b.current_level}", f"- next_level: l{b.next_level}",
            f"- source_block_count: {b.source_block_count}"]
    body = _lines(messages, (i for i in range(b.start, b.end + 1) if not pinned(messages[i])), marker)
    return ["\n".join(head), *(["\n"] if body else []), *body, "\n"]


def _joined(texts: Sequence[str], sep: str) -> list[str]:
    """The pieces of ``sep.join(texts)``."""
    return [p for t in texts for p in (sep, t)][1:]


def head_tail(text: str, keep: int, *, head_ratio: float, marker: str) -> str:
    """``keep`` characters of ``text``: a head share and the tail, the marker between (spec §8.1.6)."""
    first, last = _cut_ends(text, keep, head_ratio)
    if first is not None and last is not None:
        return f"{text[:first]}\n{marker}\n{text[last:]}"
    return text[:first] if first is not None else text[last:] if last is not None else marker


def _head_tail_tokens(edges: EdgeCounts, text: str, keep: int, *, head_ratio: float, marker: str,
                      counter: TokenCounter) -> int:
    """Tokens of ``head_tail(text, keep, …)``, from the counts of the text's head and tail."""
    first, last = _cut_ends(text, keep, head_ratio)
    if first is not None and last is not None:
        return joined_count(counter, [(text[:first], edges.head(first)), f"\n{marker}\n",
                                      (text[last:], edges.tail(last))])
    return edges.head(first) if first is not None else edges.tail(last) if last is not None else \
        counter.count(marker)


def _cut_ends(text: str, keep: int, head_ratio: float) -> tuple[int | None, int | None]:
    """Where the head of a ``keep``-character cut ends and its tail starts (None: no head, no tail)."""
    if keep <= 0:
        return None, None
    head = int(keep * head_ratio)
    tail = keep - head
    n = len(text)
    end = min(head, n) if head >= 0 else max(n + head, 0)  # text[:end] is text[:head]
    start = n - tail if n - tail >= 0 else max(2 * n - tail, 0)  # text[start:] is text[n - tail:]
    return (end or None), (start if tail and start < n else None)


def cap_text(text: str, max_tokens: int, *, counter: TokenCounter, head_ratio: float, marker: str,
             total: int | None = None) -> str:
    """``text`` when it has at most ``max_tokens`` tokens (``total``, when known), else its head/tail cut
    that does, the marker between (the marker alone when nothing else fits).

    The cut size starts from the characters-per-token ratio and shrinks by a tenth until it fits,
    so a cap costs a few counts of at most ``max_tokens`` tokens, not a binary search.
    """
    total = counter.count(text) if total is None else total
    if total <= max_tokens:
        return text
    keep = int(len(text) * max_tokens / total)
    while keep > 0:
        head = int(keep * head_ratio)
        tail = keep - head
        cut = "\n".join(p for p in (text[:head], marker, text[len(text) - tail:] if tail else "") if p)
        if counter.count(cut) <= max_tokens:
            return cut
        keep = int(keep * 0.9)
    return marker


def fit_prompt(system: str, prompt: str, *, budget: int, counter: TokenCounter, head_ratio: float,
               marker: str, at_most: int | None = None, tokens: int | Callable[[], int] | None = None) -> str | None:
    """The prompt itself when ``[system, prompt]`` fits ``budget`` tokens, else its largest head/tail
    cut that fits, else None (even the minimal prompt is too big). ``at_most``, a known upper
    bound of the prompt's tokens, spares counting a prompt that fits by that bound; ``tokens``, its
    count when known (or a function that makes it, called only when the bound is not enough), spares counting
    it whole."""
    fixed = counter.count(system) + 8  # two messages' framing
    if at_most is not None and fixed + at_most <= budget:
        return prompt
    total = counter.count(prompt) if tokens is None else tokens() if callable(tokens) else tokens
    if fixed + total <= budget:
        return prompt
    # start the search near the size that fits, not at the whole text
    low, high, best = 0, min(len(prompt), int(len(prompt) * max(budget - fixed, 0) / max(total, 1) * 1.25) + 1), None
    edges = EdgeCounts(counter, prompt)  # a candidate's count from its head's and tail's
    while low <= high:
        mid = (low + high) // 2
        if fixed + _head_tail_tokens(edges, prompt, mid, head_ratio=head_ratio, marker=marker,
                                     counter=counter) <= budget:
            best, low = head_tail(prompt, mid, head_ratio=head_ratio, marker=marker), mid + 1
        else:
            high = mid - 1
    if best is not None and best != marker:
        return best
    return MINIMAL_PROMPT if fixed + counter.count(MINIMAL_PROMPT) <= budget else None
