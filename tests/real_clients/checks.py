"""What a resumed client sent, held against what the session file says it should send.

A Claude Code request is flattened into *atoms*, one per content block in order — ``("text",
role, text)``, ``("thinking", text)``, ``("tool_use", id)``, ``("tool_result", id)``, … — and so is
the session's active context as tcompact reads it (from the raw lines of each message, in their
order). :func:`check_claude` then answers the questions of the real-client tests:

* ``messages``: how many messages the request holds;
* ``summary_sent``: whether the compaction summary is among its texts;
* ``missing``: atoms of the context that are not found, in order, in the request;
* ``duplicated``: text and thinking blocks sent more often than the context holds them;
* ``prompt_last``: the new prompt is in the last message, a user one;
* ``unanswered`` / ``orphans``: tool_use ids with no tool_result after them, and results with no
  call before them;
* ``thinking`` / ``late_thinking``: the thinking and redacted_thinking blocks sent, and those sent from
  the summary on (None without a summary) — Anthropic's newest models refuse a thinking block whose
  earlier history changed, so a compaction's must be 0.

For Codex, :func:`check_codex` compares the ``input`` items with the history the rollout says a
resume must rebuild: the newest ``compacted`` line's ``replacement_history``, then every later
``response_item``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Atom", "ClaudeCheck", "CodexCheck", "atoms_of_messages", "check_claude", "check_codex",
           "codex_history", "context_atoms"]

Atom = tuple[str, ...]


def atoms_of_messages(messages: Iterable[Mapping[str, Any]]) -> list[Atom]:
    """The atoms of Anthropic Messages API messages, in order (results of parallel calls sorted, see
    :func:`_results_sorted`)."""
    out: list[Atom] = []
    for m in messages:
        out.extend(_atoms(m.get("role", ""), m.get("content")))
    return _results_sorted(out)


def _results_sorted(atoms: list[Atom]) -> list[Atom]:
    """Each run of consecutive tool_result atoms sorted: the answers to parallel calls have no order of
    their own (the clients send them in call order, the file holds them in arrival order)."""
    out: list[Atom] = []
    run: list[Atom] = []
    for a in [*atoms, ("end",)]:
        if a[0] == "tool_result":
            run.append(a)
            continue
        out += sorted(run)
        run = []
        if a != ("end",):
            out.append(a)
    return out


def context_atoms(records: Sequence[Mapping[str, Any] | None], sources: Iterable[Sequence[int]]) -> list[Atom]:
    """The atoms of the lines behind a transcript's messages (``Message.source`` of each), each line once."""
    seen: set[int] = set()
    out: list[Atom] = []
    for source in sources:
        for i in source:
            d = records[i]
            if i in seen or not d or not isinstance(d.get("message"), dict):
                continue
            seen.add(i)
            out.extend(_atoms(d["message"].get("role") or d.get("type", ""), d["message"].get("content")))
    return _results_sorted(out)


def _atoms(role: str, content: Any) -> list[Atom]:
    if isinstance(content, str):
        return [("text", role, content.strip())] if content.strip() else []
    out: list[Atom] = []
    for b in content or ():
        kind = b.get("type") if isinstance(b, dict) else None
        if kind == "text":
            if str(b.get("text", "")).strip():
                out.append(("text", role, str(b["text"]).strip()))
        elif kind == "thinking":
            out.append(("thinking", str(b.get("thinking", "")).strip()))
        elif kind == "redacted_thinking":
            out.append(("redacted_thinking", _digest(b.get("data"))))
        elif kind == "tool_use":
            out.append(("tool_use", str(b.get("id"))))
        elif kind == "tool_result":
            out.append(("tool_result", str(b.get("tool_use_id"))))
        elif kind is not None:
            out.append((str(kind), _digest(b)))
    return out


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ClaudeCheck:
    """The answers for one Claude Code resume (see the module docstring)."""

    messages: int
    summary_sent: bool | None
    missing: tuple[Atom, ...]
    duplicated: tuple[Atom, ...]
    prompt_last: bool
    unanswered: tuple[str, ...]
    orphans: tuple[str, ...]
    thinking: int = 0
    late_thinking: int | None = None
    problems: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.problems


def check_claude(sent: Sequence[Mapping[str, Any]], expected: Sequence[Atom], *, prompt: str,
                 summary: str | None) -> ClaudeCheck:
    """Hold the ``messages`` a Claude Code client sent against the ``expected`` context atoms."""
    got = atoms_of_messages(sent)
    missing = tuple(_not_in_order(expected, got))
    want = Counter(a for a in expected if a[0] in ("text", "thinking"))
    have = Counter(a for a in got if a[0] in ("text", "thinking"))
    duplicated = tuple(sorted(a for a, n in have.items() if n > max(1, want.get(a, 0))))
    last = sent[-1] if sent else {}
    prompt_last = last.get("role") == "user" and any(prompt in a[2] for a in _atoms("user", last.get("content"))
                                                      if a[0] == "text")
    at = next((n for n, a in enumerate(got) if a[0] == "text" and summary and summary.strip()[:400] in a[2]), None)
    summary_sent = None if summary is None else at is not None
    thinking = [n for n, a in enumerate(got) if a[0] in ("thinking", "redacted_thinking")]
    late = None if summary is None else sum(1 for n in thinking if n >= (at or 0))
    unanswered, orphans = _pairing(sent)
    problems = [f"{len(missing)} block(s) of the context not sent in order, first {missing[0]!r:.200}"] if missing else []
    problems += [f"{len(duplicated)} block(s) sent twice, first {duplicated[0]!r:.200}"] if duplicated else []
    problems += [] if prompt_last else ["the new prompt is not the last message"]
    problems += ["the summary was not sent"] if summary_sent is False else []
    problems += [f"tool_use without tool_result: {', '.join(unanswered)}"] if unanswered else []
    problems += [f"tool_result without tool_use: {', '.join(orphans)}"] if orphans else []
    problems += [f"{late} thinking block(s) sent from the summary on"] if late else []
    return ClaudeCheck(len(sent), summary_sent, missing, duplicated, prompt_last, tuple(unanswered), tuple(orphans),
                       len(thinking), late, tuple(problems))


def _not_in_order(expected: Sequence[Atom], got: Sequence[Atom]) -> list[Atom]:
    """Atoms of ``expected`` that a greedy in-order match through ``got`` does not find."""
    missing: list[Atom] = []
    pos = 0
    for atom in expected:
        try:
            pos = got.index(atom, pos) + 1
        except ValueError:
            missing.append(atom)
    return missing


def _pairing(sent: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """tool_use ids not answered in the next user message, and tool_result ids with no earlier call."""
    unanswered: list[str] = []
    orphans: list[str] = []
    called: set[str] = set()
    for n, m in enumerate(sent):
        content = m.get("content") if isinstance(m.get("content"), list) else []
        if m.get("role") == "assistant":
            ids = [str(b.get("id")) for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
            called.update(ids)
            nxt = sent[n + 1].get("content") if n + 1 < len(sent) else None
            answered = {str(b.get("tool_use_id")) for b in nxt or () if isinstance(b, dict)
                        and b.get("type") == "tool_result"} if isinstance(nxt, list) else set()
            unanswered += [i for i in ids if i not in answered]
        else:
            orphans += [str(b.get("tool_use_id")) for b in content if isinstance(b, dict)
                        and b.get("type") == "tool_result" and str(b.get("tool_use_id")) not in called]
    return unanswered, orphans


# ---- Codex ---------------------------------------------------------------------------------------


def codex_history(path: Path) -> list[dict[str, Any]]:
    """The history a resume of this rollout must rebuild: the newest ``compacted`` line's
    ``replacement_history`` (or the start), then every later ``response_item`` payload."""
    lines = [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines() if x.strip()]
    start, history = 0, []
    for n, d in enumerate(lines):
        if d.get("type") == "compacted" and isinstance((d.get("payload") or {}).get("replacement_history"), list):
            start, history = n + 1, list(d["payload"]["replacement_history"])
    return history + [d["payload"] for d in lines[start:] if d.get("type") == "response_item"]


@dataclass(frozen=True)
class CodexCheck:
    """How the ``input`` a Codex client sent compares with the rollout's history."""

    items: int
    expected: int
    prefix_matches: bool
    first_difference: int | None
    prompt_last: bool

    @property
    def ok(self) -> bool:
        return self.prefix_matches and self.prompt_last


def check_codex(sent: Sequence[Mapping[str, Any]], expected: Sequence[Mapping[str, Any]], *, prompt: str
                ) -> CodexCheck:
    """The request's ``input`` must start with ``expected`` (item by item, see :func:`_same_item`) and end
    with the prompt."""
    first = next((n for n, (a, b) in enumerate(zip(sent, expected)) if not _same_item(a, b)), None)
    if first is None and len(sent) < len(expected):
        first = len(sent)
    last = sent[-1] if sent else {}
    prompt_last = last.get("role") == "user" and prompt in json.dumps(last.get("content"), ensure_ascii=False)
    return CodexCheck(len(sent), len(expected), first is None, first, prompt_last)


#: Fields a Codex client drops or rewrites when it loads history: ids and status, and ``metadata``
#: (the compress_level tcompact keeps on a memory block for its own next run).
_CODEX_IGNORED = ("id", "status", "metadata")


def _same_item(got: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    """An item as the model sees it. Codex cuts a long tool output to its head and tail around
    ``…N chars truncated…``: such an output matches when its head and tail are the original's."""
    a = {k: v for k, v in got.items() if k not in _CODEX_IGNORED}
    b = {k: v for k, v in want.items() if k not in _CODEX_IGNORED}
    if a == b:
        return True
    cut, full = a.get("output"), b.get("output")
    if set(a) != set(b) or not isinstance(cut, str) or not isinstance(full, str) or a.get("type") != b.get("type"):
        return False
    parts = re.split(r"\u2026\d+ chars truncated\u2026", cut)
    return (len(parts) == 2 and full.startswith(parts[0]) and full.endswith(parts[1]) and len(full) > len(cut)
            and {k: v for k, v in a.items() if k != "output"} == {k: v for k, v in b.items() if k != "output"})
