"""The state-snapshot templates a summary follows, shared by the prompts and the extractive backend.

Section names follow the openJiuwen prompts (openjiuwen-prompts.md A1-A3, C4) plus three that
users of today's compactors miss most (LESSONS.md): failed attempts not to retry, the artifact
trail, and a one-line resume point. ``prompts/<contract>.md`` asks a model for exactly these
sections; :mod:`tcompact.summarizers.extractive` fills them from the transcript itself.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

__all__ = ["SECTIONS", "EXTRA_SECTIONS", "prompt_text", "extract_snapshot", "placeholders"]

EXTRA_SECTIONS = ("Failed Attempts — Do Not Retry", "Artifact Trail", "Resume")

SECTIONS: dict[str, tuple[str, ...]] = {
    "current": (
        "Active Task",
        "Constraints and Preferences",
        "Completed Work in This Active Segment",
        "Current Work and Active State",
        "Immediate Resume Point",
        "Pending Tasks and Next Useful Step",
        "Key Facts, Decisions, Evidence, and Fixes",
        "Files, Code Areas, Artifacts, and Codebase Understanding",
        "Blockers, Risks, and Verification",
        "Critical Context",
        "Relevant Files & Structure",
    ) + EXTRA_SECTIONS,
    "dialogue": (
        "Historical User Requests and Outcomes",
        "Learned User Requirements, Preferences, and Acceptance Criteria",
        "Historical Work Performed",
        "Key Technical Concepts and Codebase Understanding",
        "Files, Code Areas, and Artifacts",
        "Decisions, Constraints, Corrections, and Findings",
        "Evidence, Errors, Fixes, and Invalid Attempts",
        "Critical Context",
        "Relevant Files",
        "Historical Pending Notes",
    ) + EXTRA_SECTIONS,
    "full": (
        "Primary Request and Intent",
        "Key Technical Concepts",
        "Files and Code Sections",
        "Errors and Fixes",
        "Problem Solving",
        "All User Messages",
        "Pending Tasks",
        "Current Work",
        "Optional Next Step",
    ) + EXTRA_SECTIONS,
}

_SNAPSHOT = re.compile(r"<state_snapshot>(.*?)</state_snapshot>", re.IGNORECASE | re.DOTALL)
_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.IGNORECASE | re.DOTALL)
_ANALYSIS = re.compile(r"<analysis>.*?</analysis>", re.IGNORECASE | re.DOTALL)


@cache
def prompt_text(contract: str) -> str:
    """The instruction prompt of a contract (``prompts/<contract>.md``)."""
    return resources.files("tcompact").joinpath("prompts", f"{contract}.md").read_text(encoding="utf-8").strip()


def extract_snapshot(raw: str, prompt: str = "") -> str:
    """The summary inside a reply: the first non-empty ``<state_snapshot>`` body, else a ``<summary>``
    body (analysis dropped), else the whole stripped reply without its ``<analysis>`` block (spec §2.6).

    A body that stands in ``prompt`` word for word (its placeholder, ``<state_snapshot>…</state_snapshot>``,
    said back) is no summary and is passed over; an analysis is never taken for the summary."""
    text = raw.strip()
    for pattern, source in ((_SNAPSHOT, text), (_SUMMARY, _ANALYSIS.sub("", text))):
        for match in pattern.finditer(source):
            body = match.group(1).strip()
            if body and not (prompt and _placeholder(body, prompt)):
                return body
    return _ANALYSIS.sub("", text).strip()


def placeholders(raw: str, prompt: str) -> bool:
    """Whether a reply's snapshot or summary blocks hold nothing but the prompt's own placeholders."""
    bodies = [m.group(1).strip() for p in (_SNAPSHOT, _SUMMARY) for m in p.finditer(raw)]
    said = [b for b in bodies if b]
    return bool(said) and all(_placeholder(b, prompt) for b in said)


def _placeholder(body: str, prompt: str) -> bool:
    return f">{body}<" in prompt.replace("> ", ">").replace(" <", "<") or (len(body) <= 3 and body in prompt)
