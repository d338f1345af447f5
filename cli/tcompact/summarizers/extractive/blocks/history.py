"""What the body did and learned: per-round work, decisions, test facts, terms and critical context.

These are the sections that keep the history of a session once its messages are gone, so each
line states an outcome (what a round changed, what was concluded) rather than the steps taken.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from ..text import clean, cut, prose_lines, one_line, quote, word_count

if TYPE_CHECKING:
    from ..tools.calls import Action
    from ..scan.extraction import Scan

_WORK_OPS = ("created", "written", "edited", "deleted", "read", "searched")


def _outcome(x: Scan, rnd: int) -> str:
    """What came of a round: answered or in progress, with the first line of its last text."""
    last = x.round_text.get(rnd)
    if last is None:
        return "no answer in this part"
    text, tools = last
    first = next((ln for ln in prose_lines(text) if word_count(ln) >= 3), None)
    if first is None:
        first = clean(text)
    state = "answered" if not tools else "in progress"
    return f"{state}: {cut(one_line(first), 200)}"


def _work(x: Scan, rounds: Iterable[int]) -> list[tuple[str, int]]:
    """One line per round: what was created, edited, read and run, and how the round ended."""
    by_round: dict[int, list[Action]] = {}
    for action in x.actions:
        by_round.setdefault(action.round, []).append(action)
    requests = {rnd: text for _, rnd, text in x.requests}
    if x.last_request is not None:
        requests.setdefault(x.round, x.last_request[1])
    out = []
    wanted = sorted(set(rounds))
    for rnd in wanted:
        actions = by_round.get(rnd, [])
        if not actions and rnd not in x.round_text:
            continue
        label = f"round {rnd}" + (f" ({quote(cut(one_line(requests[rnd]), 60))})" if rnd in requests else "")
        out.append((f"{label}: {_round_work(actions)}; {_outcome(x, rnd)}", len(wanted) - 1 - len(out)))
    return out


def _round_work(actions: Sequence[Action]) -> str:
    """The files a round touched by operation, the commands it ran and its failed calls."""
    files: dict[str, Counter] = {}
    for a in actions:
        for path, op in a.paths:
            files.setdefault(op, Counter())[path.rsplit("/", 1)[-1]] += 1
    parts = _file_parts(files)
    commands = sum(1 for a in actions if a.kind == "command")
    if commands:
        parts.append(f"ran {commands} command(s)")
    failed = sum(1 for a in actions if a.failed)
    if failed:
        parts.append(f"{failed} tool call(s) failed")
    return "; ".join(parts) if parts else "no tool calls"


def _file_parts(files: Mapping[str, Counter]) -> list[str]:
    """'edited a.py ×2, b.py (+3 more)' for each operation, the six most touched names shown."""
    parts = []
    for op in _WORK_OPS:
        if op in files:
            names = ", ".join(n + (f" ×{c}" if c > 1 else "") for n, c in files[op].most_common(6))
            more = len(files[op]) - 6
            parts.append(f"{op} {names}" + (f" (+{more} more)" if more > 0 else ""))
    return parts


def _decision_items(x: Scan, rounds: set[int] | None = None, *, latest: int = 5) -> list[tuple[str, list]]:
    """Decisions as item groups: the newest few kept longer than the rest."""
    found = _decisions(x, rounds)
    return [("latest_decisions", found[:latest]), ("decisions", found[latest:])]


def _decisions(x: Scan, rounds: set[int] | None = None) -> list[tuple[str, int]]:
    """Informative assistant sentences, the newest first, deduplicated."""
    seen: dict[str, None] = {}
    out: list[tuple[str, int]] = []
    for _, rnd, sentence in x.newest_sentences():
        if rounds is not None and rnd not in rounds:
            continue
        key = sentence.lower()
        if key in seen:
            continue
        seen[key] = None
        out.append((cut(sentence, 300), len(out)))
    return out


def _facts(x: Scan, rounds: set[int] | None = None) -> list[tuple[str, int]]:
    """Test results of the body, the newest first."""
    out = []
    for action in reversed(x.actions):
        if rounds is not None and action.round not in rounds:
            continue
        if action.summary:
            state = "failed" if action.failed else "ok"
            out.append((f"{action.label} → {state}: {action.summary}", len(out)))
    return out


def _concepts(x: Scan) -> list[tuple[str, int]]:
    """The backticked terms the assistant used most."""
    terms = [t for t, n in x.terms.most_common(40) if n >= 2 or len(x.terms) < 15][:24]
    if not terms:
        return []
    return [("terms the assistant relied on: " + ", ".join(f"`{t}`" for t in terms), 0)]


def _critical(x: Scan) -> list[tuple[str, int]]:
    """The working directory and where offloaded or cleared tool output can be recovered."""
    out = []
    if x.cwd:
        out.append((f"working directory: {x.cwd}", 0))
    for n, text in enumerate(x.critical):
        out.append((text, n + 1))
    return out


def _carried(x: Scan, category: str) -> list[tuple[str, int]]:
    """Lines of an earlier checkpoint of one category, marked as earlier."""
    lines = x.carried.get(category, [])
    return [(f"[earlier] {line}", n) for n, line in enumerate(lines)]
