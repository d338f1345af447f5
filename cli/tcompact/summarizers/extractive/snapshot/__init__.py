"""The state-snapshot writer: a :class:`~..scan.Scan` turned into a contract's numbered sections.

Items come from the user's messages (:mod:`.users`, quoted whole within a budget of their own), what
the tools did (:mod:`.work`), what the assistant decided, corrected and found (:mod:`.prose`), the
instruction of ``--preserve`` (:mod:`.preserve`) and earlier checkpoints in the body; each kind
goes to one section of the contract (:mod:`.layout`), and :mod:`.fit` keeps what the budget
holds, most important first, and lists each section in session order. The last line is the
resume point: ``last request: …; answered: yes|no; active: …; next: …``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ....counting.tokens import TokenCounter
from ....user_messages import DEFAULT_BUDGET
from ..scan import Scan, earlier_block, in_progress, next_step
from ..text import resume_field
from ..tools import describe
from ..fitting import Item
from .fit import fit, render
from .layout import place
from .preserve import instruction, preserved_items
from .prose import answer_items, concept_items, statement_items
from .users import active_items, constraint_items, user_items
from .work import command_items, edit_items, error_items, failure_items, file_items, round_items, state_items

__all__ = ["write_snapshot", "instruction"]

#: The user's messages quoted in a summary take what its cap leaves beside its budget, and at least this share of
#: the cap (beside the headings) — Codex's 20,000 tokens at most: chosen first, they and everything else fit in
#: the cap, so a summary never exceeds it.
USER_SHARE = 0.5
#: The final answer is kept whole on a budget of its own when it takes at most the cap divided by this.
ANSWER_SHARE = 3


def write_snapshot(x: Scan, contract: str, titles: Sequence[str], *, budget: int, counter: TokenCounter,
                   preserve: str | None = None, cap: int | None = None) -> str:
    """The ``<state_snapshot>`` of the scanned body for ``contract``: the user's messages within a budget
    of their own, everything else within ``budget`` tokens, the whole within ``cap`` (the compressor's
    ``summary_max_tokens``; ``budget`` when not given)."""
    answered = x.answered()
    cap = max(cap or 0, budget)
    room = cap - counter.count(render([(title, []) for title in titles]))  # beside the headings
    users = min(DEFAULT_BUDGET, max(cap - budget, int(room * USER_SHARE)))
    items, left_out = _items(x, contract, counter, answered=answered, preserve=preserve, users=users,
                             answer=cap // ANSWER_SHARE)
    items.append(Item("resume", resume_line(x, answered), 0, order=x.stop + 1, block=True,
                      shorter=tuple(resume_line(x, answered, n) for n in (100, 50, 24))))
    sections = place(contract, titles, items)
    users_title = next((title for title, entries in sections if any(i.kind == "user" for i in entries)), None)
    return fit(sections, budget, counter=counter, dropped={users_title: left_out} if users_title and left_out else {},
               cap=cap)


def _items(x: Scan, contract: str, counter: TokenCounter, *, answered: bool, preserve: str | None, users: int,
           answer: int           ) -> tuple[list[Item], int]:
    items: list[Item] = []
    left_out = 0
    if contract == "full":  # the compressor keeps the user's messages as messages, before the summary
        items.append(Item("user", "The user's messages are kept verbatim before this summary (newest first "
                                  "within 20,000 tokens); a constraint of any that did not fit is listed here.",
                          0, order=-2))
    else:
        quoted, left_out = user_items(x, counter, with_outcome=contract != "current", budget=users)
        items += quoted
    items += earlier_items(x) + constraint_items(x, counter, budget=users)
    items += active_items(x, [i for i in items if i.kind == "user"],
                          kept_above=contract in ("full", "current")) if contract != "dialogue" else []
    items += preserved_items(x, preserve)
    answers = answer_items(x, counter, own=answer) if contract != "dialogue" else []
    items += answers
    shown = "\n".join(i.text for i in items if i.kind in ("answer", "user"))  # sentences already quoted there
    items += statement_items(x.said, shown=shown)
    items += failure_items(x.work) + error_items(x.work) + file_items(x.work) + edit_items(x.work) + command_items(x.work)
    items += state_items(x, answered=answered) + concept_items(x)
    items += round_items(x, sorted({r for _, r, _ in x.user.requests} | {a.round for a in x.work.actions}))
    if x.work.cwd:
        items.append(Item("cwd", f"working directory: {x.work.cwd}", 2, order=x.start))
    items += [Item("offload", text, 1, order=x.stop) for text in x.work.critical]
    return items, left_out


def earlier_items(x: Scan) -> list[Item]:
    """Each earlier summary in the body as one block, as it stood, without what is known to be superseded
    (:func:`~..scan.earlier_block`), whole."""
    done = [content for content, status in x.plan.todos or [] if status in ("completed", "done")]
    gone = [info.path for info in x.work.files.values() if info.last_op == "deleted"]
    out = []
    for index, text in x.earlier.checkpoints:
        block = earlier_block(text, done=done, gone=gone, continued=any(a.index > index for a in x.work.actions))
        if block:  # never shortened: the summary's budget has a floor under it (prefix.summary_budget)
            out.append(Item("earlier", _EARLIER.format(block), 0, order=-1, block=True))
    return out


_EARLIER = ("<earlier_summary>\nThe summary of an earlier compaction, as it stood (what follows it is newer and "
            "overrides it):\n{}\n</earlier_summary>")


def resume_line(x: Scan, answered: bool, limit: int = 200) -> str:
    """``last request: …; answered: yes|no; active: …; next: …`` (each field on one line, cut)."""
    request = resume_field(x.user.last[1], limit) if x.user.last else "(none)"
    current = in_progress(x.plan)
    last = x.work.last_action()
    active = f"in_progress todo: {current}" if current else (f"last action: {describe(last)}" if last else "(none)")
    step = next_step(x)
    step = "(none)" if step.rstrip().endswith(":") else step
    return (f"last request: {request}; answered: {'yes' if answered else 'no'}; "
            f"active: {resume_field(active, limit + 20)}; next: {resume_field(step, limit)}")

