"""A summary written by a model — never less than the offline one, in calls that each fit its window.

For a summariser that calls a model (the openai backend, or replayed answers of one), a summarising
compressor of the prefix family works in three steps:

1. **The facts**: the extractive summariser's snapshot of the same request (the user's words, files,
   commands, errors, decisions, the resume line), deterministic and offline.
2. **The narrative**: the model is asked only for what those facts lack — the story, the state,
   the next step (:mod:`tcompact.summarizers.narrative`: fields sized to the answer's budget, a JSON
   schema, the facts' resume line as grounding) — over the body, in pieces that fit its window
   (:mod:`._pieces`) and then merged (groups of partial answers that fit, again until one is left).
   Every call goes through :func:`tcompact.summarizers.calls.summarize`: retries by error kind,
   refused replies resampled, a reply cut at its limit asked again once for less; an overflow refusal that names
   the server's window plans the calls again for it (twice at most).
3. **The summary**: the model's fields under a heading that says they are the model's, then the
   facts. A part whose every reply was refused contributes nothing (a note says so); a merge whose
   every reply was refused keeps its parts' answers side by side. Only when no part gave a usable
   answer, or a call failed for good (a dead server, a bad key), does the compressor fail.

Every call is a :class:`~.base.CallRecord` (one dump each); the requests are built from the
recorded answers alone, so ``replay --verify`` rebuilds the run and ``replay --summarizer`` re-runs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..model import Message
from ..spans import Span
from ..summarizers import narrative
from ..summarizers.base import ModelWindow, Summarizer, SummaryRequest, SummaryResponse, SummarizerError, model_window
from ..summarizers.calls import Summary, summarize
from ..summarizers.contracts import extract_snapshot
from ..summarizers.fitting import FIT_MARGIN, OVERFLOW_BUDGETS, TOKEN_RATIO, output_budget, prompt_room
from ..summarizers.validity import cut_problem, text_problem
from ._pieces import plan_pieces
from .base import CallRecord, Context

__all__ = ["Written", "model_summary", "writes_with_model", "answer_budget"]

ANSWER_MIN, ANSWER_MAX = 160, 1024
#: The fewest tokens (ours) of conversation a request must have room for.
MIN_ROOM = 256
REPLANS = len(OVERFLOW_BUDGETS)
_FIELDS = narrative.FIELDS


@dataclass(frozen=True)
class Written:
    """The summary (None when the model gave none), every call made, and notes for the report."""

    text: str | None
    calls: tuple[CallRecord, ...]
    notes: tuple[str, ...]
    error: SummarizerError | None


def writes_with_model(summarizer: Summarizer | None) -> bool:
    """Whether the summariser is a model that writes the narrative beside the extractive facts (``narrates``:
    the openai backend, and the replay of dumps it recorded so)."""
    return summarizer is not None and summarizer.narrates


def answer_budget(target: int, window: ModelWindow | None) -> int:
    """The model's answer: a quarter of the summary's budget, 160-1,024 tokens (never more than that budget), at
    most a quarter of its window."""
    return output_budget(min(target, max(target // 4, ANSWER_MIN), ANSWER_MAX), window)


def model_summary(messages: Sequence[Message], span: Span, ctx: Context, *, facts_request: SummaryRequest) -> Written:
    """The summary of ``span.body`` by the context's model summariser, grounded on the extractive facts."""
    from ..summarizers.extractive import ExtractiveSummarizer

    facts = extract_snapshot(ExtractiveSummarizer(ctx.counter).summarize(facts_request).text)
    window, ratio = model_window(ctx.summarizer), TOKEN_RATIO
    calls: list[CallRecord] = []
    first = 0.0  # tokens (the server's, estimated) the first request refused as too big needed
    for attempt in range(REPLANS + 1):
        run = _Run(messages, span, ctx, facts=facts, request=facts_request, window=window, ratio=ratio)
        got = run.execute()
        calls += run.calls
        exc = got.error
        overflow = got.text is None and exc is not None and exc.kind == "context_overflow" and run.refused > 0
        if overflow and attempt < REPLANS:
            first = first or run.refused * ratio + run.out + FIT_MARGIN
            window, ratio = _learned(exc, run, first * OVERFLOW_BUDGETS[attempt], ratio)
            calls[-1] = replace(calls[-1], retried=True, reason=f"context overflow: the calls planned again for a "
                                f"window of {window.tokens:,} tokens ({window.source})")
            continue
        if overflow:
            calls[-1] = replace(calls[-1], reason="overflow retries exhausted")
        return replace(got, calls=tuple(calls))
    raise AssertionError("unreachable")


def _learned(exc: SummarizerError, run: _Run, guess: float, ratio: float) -> tuple[ModelWindow, float]:
    """The window to plan for after an overflow refusal: the one it names (and the token ratio its prompt size
    shows), else ``guess`` (a share of what the first refused request needed)."""
    if exc.context_window:
        ratio = exc.prompt_tokens / run.refused * 1.03 if exc.prompt_tokens else ratio
        return ModelWindow(exc.context_window, "overflow error"), ratio
    return ModelWindow(int(guess), "overflow error, estimated"), ratio


class _Run:
    """One plan of calls for a window, carried out."""

    def __init__(self, messages: Sequence[Message], span: Span, ctx: Context, *, facts: str,
                 request: SummaryRequest, window: ModelWindow | None, ratio: float) -> None:
        self.messages, self.span, self.ctx = messages, span, ctx
        self.facts, self.processor, self.window = facts, request.processor, window
        self.out = answer_budget(request.target_tokens, window)
        self.hint = _resume_line(facts)
        probe = narrative.prompt(_FIELDS, max_tokens=self.out, part=(99, 99), facts=self.hint,
                                 preserve=ctx.preserve)
        self.room = None if window is None else \
            prompt_room(window, self.out, ratio) - ctx.counter.count(probe) - 16
        self.calls: list[CallRecord] = []
        self.notes: list[str] = []
        self.refused = 0  # tokens (ours) of a request refused as too big
        self.planned = 0

    def execute(self) -> Written:
        counter = self.ctx.counter
        if self.room is not None and self.room < MIN_ROOM:
            return self._failed(self._no_room())
        plan = plan_pieces(self.messages, self.span, room=self.room, counter=counter,
                           window=self.window.tokens if self.window else None)
        self.notes += plan.notes
        pieces = len(plan.pieces)
        self.planned = pieces + (pieces > 1)
        if pieces > 1:
            self.notes.append(f"summarised in {pieces} pieces and a merge, each call within the summariser's window "
                              f"of {self.window.tokens:,} tokens" if self.window else f"{pieces} pieces")
        partials: list[dict[str, str]] = []
        for k, (body, sent) in enumerate(plan.pieces, 1):
            msgs = tuple(self.messages[: self.span.tail.start]) if plan.single else plan.context + sent
            inside = self.span.body if plan.single else range(len(plan.context), len(msgs))
            got = self._ask(msgs, inside, Span.from_cuts(len(self.messages), body.start, body.stop),
                            piece=(k, pieces))
            if got.response is None:
                if _lost(got):
                    return self._failed(got.error)
                self.notes.append(f"part {k} of {pieces}: no usable answer ({got.error}); its facts are kept")
                continue
            partials.append(narrative.parse_reply(got.response.text, _FIELDS))
        if not partials:
            return self._failed(self._last_error())
        merged = self._merge(partials)
        if isinstance(merged, SummarizerError):
            return self._failed(merged)
        text = f"{narrative.render(merged, _FIELDS)}\n\n{self.facts}" if merged else self.facts
        return Written(text, tuple(self.calls), tuple(self.notes), None)

    def _no_room(self) -> SummarizerError:
        assert self.window is not None and self.room is not None
        return SummarizerError("context_overflow", f"the request's prompt and answer leave {max(self.room, 0):,} "
                               f"tokens of the summariser's context window of {self.window.tokens:,} tokens (from "
                               f"{self.window.source}) for the conversation, fewer than a piece needs "
                               f"({MIN_ROOM:,})", hint="use a model with a larger context, or lower summary_max_tokens")

    def _request(self, msgs: tuple[Message, ...], body: range, *, piece: tuple[int, int] | None, ask: int,
                 parts: int = 0) -> SummaryRequest:
        fields = narrative.fields_for(ask)
        text = narrative.merge_prompt(fields, max_tokens=ask, parts=parts) if parts else \
            narrative.prompt(fields, max_tokens=ask, part=piece, facts=self.hint, preserve=self.ctx.preserve)
        return SummaryRequest(processor=self.processor, contract="narrative", prompt=text, messages=msgs, body=body,
                              target_tokens=self.out, max_tokens=self.out, schema=narrative.schema(fields),
                              part=(len(self.calls) + 1, max(self.planned, len(self.calls) + 1)))

    def _ask(self, msgs: tuple[Message, ...], body: range, span: Span, *, piece: tuple[int, int] | None = None,
             parts: int = 0) -> Summary:
        request = self._request(msgs, body, piece=piece, ask=self.out, parts=parts)

        def less(sent: SummaryRequest) -> SummaryRequest:
            return replace(self._request(msgs, body, piece=piece, ask=self.out // 2, parts=parts), part=sent.part)

        got = summarize(self.messages, span, lambda s: request, self.ctx, fixed_tokens=lambda s: 0, shrink=False,
                        check=_check, less=less, window=self.window)
        self.calls += got.calls
        overflow = next((c for c in got.calls if c.error is not None and c.error.kind == "context_overflow"), None)
        if overflow is not None:
            self.refused = sum(self.ctx.counter.message(m).total + 8 for m in overflow.request.messages) + \
                self.ctx.counter.count(overflow.request.prompt)
        return got

    def _merge(self, partials: list[dict[str, str]]) -> dict[str, str] | SummarizerError:
        """Merge the partial answers, groups that fit one call at a time, until one is left."""
        level = partials
        while len(level) > 1:
            merged = []
            for group in self._groups(level):
                merged.append(group[0] if len(group) == 1 else self._merge_group(group))
                if isinstance(merged[-1], SummarizerError):
                    return merged[-1]
            if len(merged) == len(level):  # nothing merged (each too big beside another): side by side
                return _side_by_side(level)
            level = merged
        return level[0]

    def _merge_group(self, group: list[dict[str, str]]) -> dict[str, str] | SummarizerError:
        text = "\n\n".join(f"<part {n}>\n{_plain(values)}\n</part {n}>" for n, values in enumerate(group, 1))
        msgs = (Message(role="user", content=text),)
        got = self._ask(msgs, range(0, 1), self.span, parts=len(group))
        if got.response is None:
            if _lost(got):
                return got.error or SummarizerError("unknown", "the merge call failed")
            self.notes.append(f"a merge of {len(group)} parts gave no usable answer ({got.error}); the parts are "
                              "kept side by side")
            return _side_by_side(group)
        return narrative.parse_reply(got.response.text, _FIELDS)

    def _groups(self, level: list[dict[str, str]]) -> list[list[dict[str, str]]]:
        if self.room is None:
            return [level]
        groups: list[list[dict[str, str]]] = [[]]
        used = 0
        for values in level:
            cost = self.ctx.counter.count(_plain(values)) + 12
            if groups[-1] and used + cost > self.room:
                groups.append([])
                used = 0
            groups[-1].append(values)
            used += cost
        return groups

    def _failed(self, error: SummarizerError | None) -> Written:
        return Written(None, tuple(self.calls), tuple(self.notes), error)

    def _last_error(self) -> SummarizerError | None:
        return next((c.error for c in reversed(self.calls) if c.error is not None), None)


def _check(request: SummaryRequest, response: SummaryResponse) -> str | None:
    """Why a reply to a narrative request is no usable answer: empty, the prompt said back, a loop, cut at its
    limit before its JSON closed, only the prompt's placeholders."""
    values = narrative.parse_reply(response.text, _FIELDS)
    problem = text_problem("\n".join(values.values()), instructions=(request.prompt,))
    if problem:
        return problem
    if response.finish_reason == "length" and not narrative.closed(response.text):
        return cut_problem(request.max_tokens)
    return narrative.placeholder_problem(values, (request.prompt,))


def _lost(got: Summary) -> bool:
    """A call that failed for good (every reply refused is no failure of the run)."""
    return got.response is None and (got.error is None or got.error.kind != "invalid_response")


def _plain(values: dict[str, str]) -> str:
    return "\n".join(f"{f.title}: {values[f.key]}" for f in _FIELDS if values.get(f.key))


def _side_by_side(level: Sequence[dict[str, str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in _FIELDS:
        said = [v[f.key] for v in level if v.get(f.key)]
        if said:
            out[f.key] = said[-1] if f.key != "narrative" else "\n".join(said)
    return out


def _resume_line(facts: str) -> str:
    """The facts given to the model: the extractive snapshot's resume line."""
    line = next((x for x in facts.splitlines() if "last request:" in x), "")
    return line.strip().lstrip("-*# ").strip()[:600]
