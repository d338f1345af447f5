"""One source of a round-level block summary: a run of raw messages turned into section lines.

A "blocks" summary (the round-level pipeline, openjiuwen-spec §8.1.4) is built from *parts*: a
run of raw messages, or an earlier memory block (:mod:`.memory`). A :class:`Part` holds the
lines of every section — the user's requirements in their own words, the final result of a
finished block or the open work of an unfinished one, the work done, failed attempts and the
artifact trail — each with a drop tier (lower tiers are kept longer). Raw runs are scanned with
the same :class:`~..scan.Scan` as the state snapshots; only a small synthetic
context (the request the run continues, the plan, the working directory) stands in for the
messages before it, so the cost stays linear in the size of the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ....model import Message
from ....rounds import is_real_user
from ..tools import last_actions as _last_actions
from ..tools import reported_errors, went_on
from ..tools import test_coverage as _test_coverage
from .content import Content
from ..scan import Earlier, Scan
from .files import file_lines
from .history import critical_lines, round_work
from ..scan import in_progress, next_step, plan_of
from ..text import CONSTRAINT_CUES, USER_SPLIT, classify_sentence, clean, cut, cut_marked, prose_lines, one_line, quote, reply_context, user_text, word_count

#: Drop tiers of the block sections (higher goes first; the user's requirements are tier 0).
TIER_FINAL, TIER_OPEN, TIER_FAILED, TIER_WORK, TIER_FILES, TIER_COMMANDS = 1.0, 1.0, 2.0, 3.0, 3.2, 3.4
_TERSE = 40  # a request shorter than this is shown with what it replies to
_MAX_DECISIONS = 10
_ANSWER_CHARS = 20000  # characters of a final answer looked at
CONTINUES = "(continues an earlier request) "

Line = tuple[str, float]  # (text, drop tier)


@dataclass(slots=True)
class Req:
    """A user requirement: the user's words (``quoted``), or a line carried as it was written."""

    body: str
    prefix: str = ""
    suffix: str = ""
    quoted: bool = True
    continued: bool = False  # the request of an earlier block that this one continues

    def render(self, limit: int) -> str:
        """The requirement cut to about ``limit`` characters (constraints of the cut part kept)."""
        body = _cut_request(self.body, limit)
        body = quote(body) if self.quoted else body
        return (self.prefix + body + self.suffix).replace("\n", "\n  ")


@dataclass(slots=True)
class Part:
    """The section lines of one part, each section in display order."""

    requirements: list[Req] = field(default_factory=list)
    final: list[Line] = field(default_factory=list)
    open: list[Line] = field(default_factory=list)
    work: list[Line] = field(default_factory=list)
    failed: list[Line] = field(default_factory=list)
    artifacts: list[Line] = field(default_factory=list)
    ongoing: bool = False

    def empty(self) -> bool:
        """Whether the part has no line at all."""
        return not (self.requirements or self.final or self.open or self.work or self.failed or self.artifacts)


@dataclass(frozen=True, slots=True)
class Background:
    """What a run continues from the messages before it: request, assistant text, plan, directory."""

    request: Message | None = None  # the last real user message before the run
    reply_to: str = ""  # the last assistant text before the run (what a terse first request answers)
    plan: Message | None = None  # the last assistant message that set the plan
    cwd: str = ""

    def context(self) -> tuple[Message, ...]:
        """Synthetic preserved prefix for the scan: working directory, plan and the continued request."""
        out = []
        if self.cwd:
            out.append(Message(role="user", content=f"<cwd>{self.cwd}</cwd>", internal=True))
        if self.plan is not None:
            out.append(self.plan)
        if self.request is not None:
            out.append(self.request)
        return tuple(out)


def _cut_request(text: str, limit: int) -> str:
    """A user text cut to about ``limit`` characters: its head, then the constraint sentences of the rest."""
    if len(text) <= limit:
        return text
    if limit < 240:
        return cut_marked(text, limit)
    head = int(limit * 0.6)
    room = limit - head
    kept: list[str] = []
    for sentence in USER_SPLIT.split(text[head:head + 40000]):
        sentence = one_line(sentence.strip(" -*•"))
        if 3 <= word_count(sentence) <= 80 and CONSTRAINT_CUES.search(sentence) and len(sentence) + 3 <= room:
            kept.append(sentence)
            room -= len(sentence) + 3
    if not kept:
        return cut_marked(text, limit)
    omitted = len(text) - head - sum(len(s) for s in kept)
    return f"{text[:head].rstrip()} […] {' … '.join(kept)} [{omitted:,} chars cut]"


def _answer_text(text: str) -> str:
    """A final answer as one line of prose (code blocks, tables and headings left out)."""
    text = text[:_ANSWER_CHARS]
    prose = " ".join(prose_lines(text))
    return one_line(prose) if len(prose) >= 20 else clean(text)


def raw_part(messages: Sequence[Message], start: int, end: int, background: Background,
              completed: bool | None) -> Part:
    """The part of raw messages ``start..end`` (inclusive); ``completed`` None means: decide from the messages."""
    context = background.context()
    seq = context + tuple(messages[start:end + 1])
    body = range(len(context), len(seq))
    x = Scan(seq, body)
    c = Content(x)
    answer = _final_answer(seq, body)
    if completed is None:
        completed = answer is not None and answer == _last_turn(seq, body)
    part = Part(ongoing=not completed)
    part.requirements = _requirements(seq, body, background, x)
    if completed:
        part.final = _final(seq, answer, c)
    else:
        part.open = _open_work(x, c)
    plan_changed = background.plan is None or x.plan.todos is None or _plan_items(background.plan) != x.plan.todos
    part.work = _work_done(x, c, answer, plan_changed=plan_changed)
    part.failed = [(t, TIER_FAILED) for t, _ in c.failed] + _carried(x.earlier, "failed", TIER_FAILED + 0.5)
    part.artifacts = ([(t, TIER_FILES) for t, _ in file_lines(x)] + [(t, TIER_COMMANDS) for t, _ in c.commands]
                      + [(t, TIER_COMMANDS + 0.1) for t, _ in critical_lines(x.work)]
                      + _carried(x.earlier, "files", TIER_COMMANDS + 0.4))
    return part


def _plan_items(message: Message) -> list[tuple[str, str]] | None:
    """The plan items an assistant message sets."""
    plan = plan_of(message.tool_calls)
    return plan[0] if plan else None


def _final_answer(seq: Sequence[Message], body: range) -> int | None:
    """Index of the last assistant text without tool calls in the body (the answer of a finished block)."""
    for i in reversed(body):
        m = seq[i]
        if m.role == "assistant" and not m.tool_calls and m.text.strip():
            return i
    return None


def _last_turn(seq: Sequence[Message], body: range) -> int | None:
    """Index of the last assistant, tool or real user message of the body (what the block ends with)."""
    for i in reversed(body):
        m = seq[i]
        if m.role in ("assistant", "tool", "function") or is_real_user(m):
            return i
    return None


def _requirements(seq: Sequence[Message], body: range, background: Background, x: Scan) -> list[Req]:
    """The user's words: carried earlier requirements, the continued request, the run's requests verbatim."""
    out = [Req(line, quoted=False) for category in ("requests", "constraints")
           for line in (f"[earlier] {t}" for t in x.earlier.carried.get(category, []))]
    own = []
    previous = background.reply_to
    for i in body:
        m = seq[i]
        if m.role == "assistant" and m.text.strip():
            previous = m.text
        elif is_real_user(m):
            text = user_text(m)
            if not text:
                continue
            suffix = ""
            if len(text) < _TERSE and previous:
                suffix = f" (reply to the assistant's previous message: {reply_context(text, previous)})"
            own.append(Req(text, suffix=suffix))
    if not own and background.request is not None:
        text = user_text(background.request)
        if text:
            out.append(Req(cut_marked(text, 1500), prefix=CONTINUES, continued=True))
    return out + own


def _final(seq: Sequence[Message], answer: int | None, c: Content) -> list[Line]:
    """The final answer of a finished block, then the state of its verification."""
    if answer is None:
        out = [("(no final answer text in this block)", TIER_FINAL)]
    else:
        out = [(_answer_text(seq[answer].text), TIER_FINAL)]
    out += [(t, TIER_FINAL + 0.3) for t, _ in _test_coverage(c.x.work.actions) if not t.startswith("no test run")]
    return out


def _open_work(x: Scan, c: Content) -> list[Line]:
    """What an unfinished block leaves open: state, last action and result, the agent's last words, next steps."""
    out: list[Line] = [("status: unfinished — the block ends before a final answer; continue from the last action",
                        TIER_OPEN)]
    current = in_progress(x.plan)
    if current:
        out.append((f"in progress (todo): {current}", TIER_OPEN))
    points = c.resume_point()
    if points and points[0][0].startswith("last action:"):
        out.append((points[0][0], TIER_OPEN))
    last = x.said.last
    said = clean(last.text[-4000:]) if last is not None else ""
    if said:
        out.append((f"last assistant message: {quote(cut(said, 300))}", TIER_OPEN + 0.1))
    step = next_step(x)
    if step != "(none)" and step.rstrip("…") not in said[-320:]:
        out.append((f"next step: {step}", TIER_OPEN + 0.1))
    for content, status in x.plan.todos or []:
        if status not in ("completed", "done") and content != current and content != step:
            out.append((f"[{status}] {content}", TIER_OPEN + 0.3))
    # the latest test run is told by the last action line when it was the last action
    repeated = ("latest test run", "not verified") if x.work.actions and x.work.actions[-1].test else ("latest test run",)
    out += [(t, TIER_OPEN + 0.4) for t, _ in _test_coverage(x.work.actions) if not t.startswith(repeated)]
    out += [("recent: " + t, TIER_OPEN + 0.5) for t, _ in _last_actions(x.work.actions)[1:]]
    out += _carried(x.earlier, "pending", TIER_OPEN + 0.6)
    return out


def _work_done(x: Scan, c: Content, answer: int | None, *, plan_changed: bool) -> list[Line]:
    """What the run did: completed plan items, the files and commands in one line, fixes, the agent's findings."""
    out: list[Line] = []
    if plan_changed:
        out += [(f"[{status}] {content}", TIER_WORK) for content, status in x.plan.todos or []
                if status in ("completed", "done")]
    if x.work.actions:
        out.append((round_work(x.work.actions), TIER_WORK))
    out += [(t, TIER_WORK + 0.1) for t, _ in c.fixes]
    out += [(text, TIER_WORK + 0.05) for a in x.work.actions if reported_errors(a)
            for text in went_on(a, one_per_line=True)]
    seen: set[str] = set()
    found, decided = [], []
    for index, _, sentence in x.said.newest_sentences():
        key = sentence.lower()
        if index == answer or key in seen:
            continue
        seen.add(key)
        if classify_sentence(sentence) in ("decision", "correction"):  # every decision, before other findings
            decided.append((cut(sentence, 300), TIER_WORK + 0.3))
        elif len(found) < _MAX_DECISIONS:
            found.append((cut(sentence, 300), TIER_WORK + 0.6))
    out += decided[::-1] + found
    return out + _carried(x.earlier, "history", TIER_WORK + 0.8) + _carried(x.earlier, "facts", TIER_WORK + 0.8)


def _carried(earlier: Earlier, category: str, tier: float) -> list[Line]:
    """Lines of an earlier checkpoint inside the run, of one category."""
    return [(f"[earlier] {line}", tier) for line in earlier.carried.get(category, [])]

