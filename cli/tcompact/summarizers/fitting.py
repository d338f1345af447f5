"""Fitting a summariser call to the summariser model's own window (not the transcript's).

When the backend knows its window (``--summarizer-window``, or what the server reports), the
answer's budget is capped at a quarter of it and sent as ``max_tokens`` (and stated in the prompt:
``{max_tokens}`` in prompts/*.md), and a body too big for the rest is shrunk before the first call.
Our token counts are not the server's tokenizer's: a request fits when
``counted × TOKEN_RATIO + FIT_MARGIN + max_tokens ≤ window``; an overflow refusal that says the
server's figures teaches the window and the ratio (:func:`learned`). A body is shrunk to a prefix
that ends at a legal cut point, so a tool call never loses its result (:func:`shrink_span`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model import Message
from ..spans import Span, legal_cut_points
from .base import ModelWindow, SummarizerError

__all__ = ["OVERFLOW_BUDGETS", "TOKEN_RATIO", "FIT_MARGIN", "OUTPUT_SHARE", "BUDGET_SENTENCE", "output_budget",
           "prompt_room", "learned", "state_budget", "shrink_span"]

#: A refusal without figures shrinks the body to these shares of the first refused request, in turn.
OVERFLOW_BUDGETS = (0.85, 0.65, 0.5)
#: The server's tokenizer may count up to this many tokens per token of ours (measured: 1.05-1.27 for SmolLM2).
TOKEN_RATIO = 1.15
#: Tokens of room kept for the chat template and a default system prompt the server may add.
FIT_MARGIN = 64
#: The answer's budget is at most this share of the summariser's window.
OUTPUT_SHARE = 0.25
BUDGET_SENTENCE = "Your whole answer must fit in {max_tokens} tokens: it is cut off there."


def output_budget(target: int, window: ModelWindow | None) -> int:
    """``max_tokens`` for a summary budget of ``target``: at most a quarter of a known window."""
    return max(min(target, int(window.tokens * OUTPUT_SHARE)), 1) if window else target


def prompt_room(window: ModelWindow, max_tokens: int, ratio: float = TOKEN_RATIO) -> int:
    """Tokens (as we count them) a request may hold in ``window`` beside an answer of ``max_tokens``."""
    return max(int((window.tokens - max_tokens - FIT_MARGIN) / ratio), 0)


def learned(exc: SummarizerError, counted: int, window: ModelWindow | None, ratio: float
            ) -> tuple[ModelWindow | None, float]:
    """The window and token ratio after an overflow refusal that said the server's figures."""
    if exc.context_window:
        window = ModelWindow(exc.context_window, "overflow error")
    if exc.prompt_tokens and counted > 0:
        ratio = exc.prompt_tokens / counted * 1.03
    return window, ratio


def state_budget(prompt: str, max_tokens: int | None) -> str:
    """The prompt with its ``{max_tokens}`` filled in (a prompt without one gets the budget sentence)."""
    if max_tokens is None:
        return prompt.replace("{max_tokens}", "the limit")
    if "{max_tokens}" not in prompt:
        prompt = f"{prompt.rstrip()}\n\n{BUDGET_SENTENCE}"
    return prompt.replace("{max_tokens}", f"{max_tokens:,}")


def shrink_span(messages: Sequence[Message], span: Span, *, budget: int, fixed: int, counter) -> Span | None:
    """A span whose body is a prefix of the old body that fits ``budget - fixed`` tokens.

    At least one message moves to the tail; the new cut is moved back to a legal cut point so
    that no tool call is separated from its result. None when no smaller body is possible.
    """
    body = list(span.body)
    room = budget - fixed
    if room <= 0 or len(body) <= 1:
        return None
    fit, used = 0, 0
    for i in body:
        used += counter.message(messages[i]).total
        if used > room:
            break
        fit += 1
    fit = min(max(fit, 1), len(body) - 1)
    cut = span.body.start + fit
    legal = [c for c in legal_cut_points(messages) if span.body.start < c <= cut]
    if not legal:
        return None
    return Span.from_cuts(len(messages), span.body.start, legal[-1])
