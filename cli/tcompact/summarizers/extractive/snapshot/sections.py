"""Which items go into which section of each contract, and how soon each kind is dropped.

Every contract (:data:`contracts.SECTIONS`) has its own section titles; the same kinds of items
(requests, failures, files, decisions, …) fill them in different combinations, and each kind has
a drop tier so that the budget fitting knows what to give up first.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..blocks.budget import _Item
from ..blocks.content import _Content
from ..scan.extraction import Scan
from ..blocks.files import _file_lines, _file_notes, _noted_paths, _tree
from ..blocks.history import _carried, _concepts, _critical, _decision_items, _facts, _work
from ..scan.plan import next_step, todos

#: Drop order when over budget (higher tiers go first). Resume line, active task and the user's
#: requests (tier 0) are only ever shortened, or as a last resort the oldest requests dropped.
_TIERS = {
    "resume": 0.0, "active": 0.0, "requests": 0.0,  # the resume line, active task, user requests
    "constraints": 1.0, "carried_requests": 1.5,
    "failed": 2.0, "carried_failed": 2.5,
    "pending": 3.0, "next": 3.0, "resume_point": 3.0, "carried_pending": 3.5,
    "current": 4.0, "verification": 4.2, "work_current": 4.5, "latest_decisions": 4.6, "critical": 4.8,
    "files": 5.0, "commands": 5.2, "tree": 5.4, "file_notes": 5.6, "carried_files": 5.8,
    "decisions": 6.0, "fixes": 6.2, "facts": 6.4, "carried_facts": 6.6,
    "history": 7.0, "concepts": 7.2, "carried_history": 7.4,  # older history goes first
}

_Sections = dict[str, list[_Item]]


def _sections(contract: str, titles: Sequence[str], *, x: Scan, budget: int
              ) -> list[tuple[str, list[_Item]]]:
    """Items of every section of a contract, in the contract's order."""
    c = _Content(x, budget)
    mapping = _CONTRACT_SECTIONS.get(contract, _full)(c)
    mapping.update(_common(c))
    return [(title, mapping.get(title, [])) for title in titles]


def _items(*parts: tuple[str, list[tuple[str, int]]]) -> list[_Item]:
    """Items of (kind, entries) groups, each kind with its drop tier."""
    out = []
    for kind, entries in parts:
        tier = _TIERS[kind]
        for text, rank in entries:
            out.append(_Item(text=text, tier=tier, rank=rank, raw=kind == "tree"))
    return out


def _common(c: _Content) -> _Sections:
    """The sections every contract shares: failed attempts, artifact trail and the resume line."""
    x = c.x
    return {
        "Failed Attempts — Do Not Retry": _items(("failed", c.failed), ("carried_failed", _carried(x, "failed"))),
        "Artifact Trail": _items(("files", _file_lines(x)), ("commands", c.commands),
                                 ("carried_files", _carried(x, "files"))),
        "Resume": [_Item(text=c.resume_line(), tier=_TIERS["resume"], raw=True,
                         variants=tuple(c.resume_line(n) for n in (100, 50, 24)))],
    }


def _current(c: _Content) -> _Sections:
    """The current-round contract: the active segment in detail, earlier rounds in brief."""
    x = c.x
    current = {c.current_round}
    earlier = c.body_rounds - current
    return {
        "Active Task": _items(("active", c.active()), ("carried_requests", _carried(x, "requests"))),
        "Constraints and Preferences": _items(("constraints", c.constraints()),
                                              ("carried_requests", _carried(x, "constraints"))),
        "Completed Work in This Active Segment": _items(("work_current", todos(x, ("completed", "done"))),
                                                        ("work_current", _work(x, current)),
                                                        ("history", _work(x, earlier)),
                                                        ("carried_history", _carried(x, "history"))),
        "Current Work and Active State": _items(("current", c.current())),
        "Immediate Resume Point": _items(("resume_point", c.resume_point())),
        "Pending Tasks and Next Useful Step": _items(("pending", c.pending()),
                                                     ("carried_pending", _carried(x, "pending"))),
        "Key Facts, Decisions, Evidence, and Fixes": _items(*_decision_items(x), ("fixes", c.fixes),
                                                            ("facts", _facts(x)),
                                                            ("carried_facts", _carried(x, "facts"))),
        "Files, Code Areas, Artifacts, and Codebase Understanding": _items(("file_notes", _file_notes(x)),
                                                                           ("concepts", _concepts(x))),
        "Blockers, Risks, and Verification": _items(("verification", c.verification())),
        "Critical Context": _items(("critical", _critical(x))),
        "Relevant Files & Structure": _items(("tree", _tree(x))),
    }


def _dialogue(c: _Content) -> _Sections:
    """The dialogue contract: every request with its outcome, and what was learned along the way."""
    x = c.x
    return {
        "Historical User Requests and Outcomes": _items(("requests", c.requests(True)),
                                                        ("carried_requests", _carried(x, "requests"))),
        "Learned User Requirements, Preferences, and Acceptance Criteria": _items(
            ("constraints", c.constraints()), ("carried_requests", _carried(x, "constraints"))),
        "Historical Work Performed": _items(("history", _work(x, c.body_rounds)), ("history", todos(x)),
                                            ("carried_history", _carried(x, "history"))),
        "Key Technical Concepts and Codebase Understanding": _items(("concepts", _concepts(x)),
                                                                    ("file_notes", _file_notes(x))),
        "Files, Code Areas, and Artifacts": _items(("files", _file_lines(x))),
        "Decisions, Constraints, Corrections, and Findings": _items(*_decision_items(x),
                                                                    ("carried_facts", _carried(x, "facts"))),
        "Evidence, Errors, Fixes, and Invalid Attempts": _items(("fixes", c.fixes), ("facts", _facts(x))),
        "Critical Context": _items(("critical", _critical(x))),
        "Relevant Files": _items(("tree", _tree(x))),
        "Historical Pending Notes": _items(("pending", [(f"{t} (pending when this checkpoint was written)", r)
                                                       for t, r in c.pending()]),
                                           ("carried_pending", _carried(x, "pending"))),
    }


def _round(c: _Content) -> _Sections:
    """The round contract: the current round's task and state, then the durable history."""
    x = c.x
    current = {c.current_round}
    earlier = c.body_rounds - current
    return {
        "Active Task and Success Criteria": _items(("active", c.active(False)),
                                                   ("constraints", _latest_request_constraints(c))),
        "Current Execution State": _items(("current", todos(x)), ("current", c.current())),
        "Immediate Resume Point and Next Useful Step": _items(("resume_point", c.resume_point()),
                                                              ("next", c.pending())),
        "Current Task Facts, Decisions, Evidence, and Fixes": _items(*_decision_items(x, current),
                                                                     ("fixes", c.fixes),
                                                                     ("facts", _facts(x, current))),
        "Current Files, Code Areas, and Artifacts": _items(("files", _file_lines(x, current))),
        "Repository and Codebase Understanding": _items(("file_notes", _file_notes(x)), ("concepts", _concepts(x))),
        "Historical User Requests and Outcomes": _items(("requests", c.requests(True, earlier)),
                                                        ("carried_requests", _carried(x, "requests"))),
        "Learned User Requirements, Preferences, and Acceptance Criteria": _items(
            ("constraints", c.constraints()), ("carried_requests", _carried(x, "constraints"))),
        "Historical Work Performed": _items(("history", _work(x, earlier)),
                                            ("carried_history", _carried(x, "history"))),
        "Durable Historical Information": _items(*_decision_items(x, earlier),
                                                 ("carried_facts", _carried(x, "facts"))),
        "Cross-Cutting Files, Code Areas, and Artifacts": _items(("files", _file_lines(x, earlier))),
        "Open Work, Blockers, Risks, and Verification": _items(("verification", c.verification()),
                                                               ("carried_pending", _carried(x, "pending"))),
        "Critical Context": _items(("critical", _critical(x))),
        "Relevant Files": _items(("tree", _tree(x))),
    }


def _latest_request_constraints(c: _Content) -> list[tuple[str, int]]:
    """Constraints quoted from part of the latest request (the whole request is already quoted)."""
    latest = c.x.last_request
    return [(t, r) for t, r in c.constraints()
            if latest and t[1:-1] in latest[1] and t[1:-1] != latest[1].strip()]


def _full(c: _Content) -> _Sections:
    """The full-compaction contract: intent, code, errors, problem solving, user messages, next step."""
    x = c.x
    noted = _noted_paths(x)
    step = next_step(x)
    return {
        "Primary Request and Intent": _items(("active", c.active(False)),
                                             ("carried_requests", _carried(x, "requests"))),
        "Key Technical Concepts": _items(("concepts", _concepts(x))),
        "Files and Code Sections": _items(("file_notes", _file_notes(x)), ("files", _file_lines(x, exclude=noted))),
        "Errors and Fixes": _items(("fixes", c.fixes), ("facts", _facts(x)), ("carried_facts", _carried(x, "facts"))),
        "Problem Solving": _items(*_decision_items(x), ("carried_history", _carried(x, "history"))),
        "All User Messages": _items(("requests", c.requests(False)), ("carried_requests", _carried(x, "constraints"))),
        "Pending Tasks": _items(("pending", todos(x, ("pending", "in_progress", "in-progress", "todo"))),
                                ("carried_pending", _carried(x, "pending"))),
        "Current Work": _items(("current", c.current())),
        "Optional Next Step": _items(("next", [(step, 0)] if step != "(none)" else [])),
    }


_CONTRACT_SECTIONS = {"current": _current, "dialogue": _dialogue, "round": _round, "full": _full}
