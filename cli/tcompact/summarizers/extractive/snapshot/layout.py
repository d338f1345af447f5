"""Which section of each contract every kind of item goes to — exactly one, so each fact appears once.

The section titles are the contracts' own (:data:`~tcompact.summarizers.contracts.SECTIONS`,
shared with the prompts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..fitting import Item

__all__ = ["place"]

_FAILED, _TRAIL, _RESUME = "Failed Attempts — Do Not Retry", "Artifact Trail", "Resume"
_COMMON = {"failure": _FAILED, "command": _TRAIL, "resume": _RESUME}

_DIALOGUE = {
    "user": "Historical User Requests and Outcomes",
    "constraint": "Learned User Requirements, Preferences, and Acceptance Criteria",
    "round": "Historical Work Performed", "done": "Historical Work Performed",
    "concept": "Key Technical Concepts and Codebase Understanding",
    "code": "Key Technical Concepts and Codebase Understanding",
    "file_changed": "Files, Code Areas, and Artifacts", "edit": "Files, Code Areas, and Artifacts",
    "decision": "Decisions, Constraints, Corrections, and Findings",
    "correction": "Decisions, Constraints, Corrections, and Findings",
    "finding": "Decisions, Constraints, Corrections, and Findings",
    "note": "Decisions, Constraints, Corrections, and Findings",
    "answer": "Decisions, Constraints, Corrections, and Findings",
    "error": "Evidence, Errors, Fixes, and Invalid Attempts", "fix": "Evidence, Errors, Fixes, and Invalid Attempts",
    "test": "Evidence, Errors, Fixes, and Invalid Attempts",
    "cwd": "Critical Context", "offload": "Critical Context", "preserved": "Critical Context",
    "file_read": "Relevant Files", "file_searched": "Relevant Files",
    "pending": "Historical Pending Notes", "next": "Historical Pending Notes", "state": "Historical Pending Notes",
    "resume_point": "Historical Pending Notes", "active": "Historical User Requests and Outcomes",
    "earlier": "Historical User Requests and Outcomes",
}
_CURRENT = {
    "active": "Active Task", "user": "Active Task", "earlier": "Active Task",
    "constraint": "Constraints and Preferences",
    "done": "Completed Work in This Active Segment", "round": "Completed Work in This Active Segment",
    "state": "Current Work and Active State", "answer": "Current Work and Active State",
    "resume_point": "Immediate Resume Point",
    "pending": "Pending Tasks and Next Useful Step", "next": "Pending Tasks and Next Useful Step",
    **{k: "Key Facts, Decisions, Evidence, and Fixes" for k in ("decision", "correction", "finding", "note",
                                                                "error", "fix")},
    **{k: "Files, Code Areas, Artifacts, and Codebase Understanding" for k in ("file_changed", "concept", "code",
                                                                               "edit")},
    "test": "Blockers, Risks, and Verification",
    "cwd": "Critical Context", "offload": "Critical Context", "preserved": "Critical Context",
    "file_read": "Relevant Files & Structure", "file_searched": "Relevant Files & Structure",
}
_FULL = {
    "active": "Primary Request and Intent", "preserved": "Primary Request and Intent",
    "earlier": "Primary Request and Intent",
    "concept": "Key Technical Concepts", "code": "Key Technical Concepts",
    "file_changed": "Files and Code Sections", "file_read": "Files and Code Sections", "edit": "Files and Code Sections",
    "file_searched": "Files and Code Sections",
    "error": "Errors and Fixes", "fix": "Errors and Fixes", "test": "Errors and Fixes",
    "decision": "Problem Solving", "correction": "Problem Solving", "finding": "Problem Solving",
    "note": "Problem Solving", "round": "Problem Solving",
    "user": "All User Messages", "constraint": "All User Messages",
    "pending": "Pending Tasks",
    "state": "Current Work", "answer": "Current Work", "resume_point": "Current Work", "done": "Current Work",
    "cwd": "Current Work", "offload": "Current Work",
    "next": "Optional Next Step",
}
_LAYOUTS: Mapping[str, Mapping[str, str]] = {"dialogue": _DIALOGUE, "current": _CURRENT, "full": _FULL}


def place(contract: str, titles: Sequence[str], items: Sequence[Item]) -> list[tuple[str, list[Item]]]:
    """The contract's sections in order, each with its items (an item of an unknown kind goes last but one)."""
    layout = {**_LAYOUTS.get(contract, _FULL), **_COMMON}
    sections: dict[str, list[Item]] = {title: [] for title in titles}
    fallback = titles[-2] if len(titles) > 1 else titles[-1]
    for item in items:
        title = layout.get(item.kind, fallback)
        sections.get(title, sections[fallback]).append(item)
    return list(sections.items())
