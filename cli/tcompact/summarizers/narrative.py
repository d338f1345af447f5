"""What a model is asked to write beside the facts the extractive summariser found: the narrative contract.

A model summary used to be a whole state snapshot — an analysis block and 12 sections in a few
hundred tokens —, which small local models cannot write (cut at the limit, loops, the prompt said
back) and larger ones fill with invented state. The facts (the user's words, files, commands,
errors, the resume line) are what the extractive summariser copies from the transcript; what it
cannot write is the story. So a model is asked only for that: a few fields of prose, as many as
its answer's budget allows (:func:`fields_for`), as a JSON object (:data:`SCHEMA`, sent as
``response_format`` where the server constrains replies to a schema; the prompt says the same in
words), and its reply is read back (:func:`parse_reply`) from that JSON, from a text with the
fields' titles as headings, or as one narrative. The summary written is the model's fields
(:func:`render`), marked as the model's, then the extractive snapshot: never less than the offline
summary. Pure: no I/O; the prompts are ``prompts/narrative.md`` and ``prompts/merge.md``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .contracts import prompt_text

__all__ = ["Field", "FIELDS", "fields_for", "schema", "prompt", "merge_prompt", "parse_reply", "render",
           "MODEL_HEADING", "placeholder_problem", "closed"]


@dataclass(frozen=True)
class Field:
    """One field of the reply: its JSON key, its title in the summary, what it must say."""

    key: str
    title: str
    asks: str


FIELDS = (
    Field("narrative", "Narrative", "what the user asked for and what the assistant did about it, in order, with "
          "the outcome of each step"),
    Field("next_step", "Next Step", "the one next action that follows from the user's latest request, or 'none' "
          "when that request was answered"),
    Field("state", "Current State", "where the work stands at the end: what is done, what is not, what the "
          "assistant was doing last"),
)
#: Heading of the model's part of a summary (the sections after it are the extractive facts).
MODEL_HEADING = "Narrative written by the summariser model (the sections after it are copied from the transcript)"
_WORDS_PER_TOKEN = 0.6


def fields_for(max_tokens: int) -> tuple[Field, ...]:
    """The fields asked for in an answer of ``max_tokens``: fewer for a small budget."""
    return FIELDS[:1] if max_tokens < 160 else FIELDS[:2] if max_tokens < 400 else FIELDS


def schema(fields: Sequence[Field]) -> dict[str, Any]:
    """The JSON schema of a reply with ``fields`` (strings, all required, nothing else)."""
    return {"type": "object", "properties": {f.key: {"type": "string"} for f in fields},
            "required": [f.key for f in fields], "additionalProperties": False}


def words(max_tokens: int) -> int:
    """The words an answer of ``max_tokens`` may hold (stated in the prompt, with room for the JSON)."""
    return max(int(max_tokens * _WORDS_PER_TOKEN) - 10, 12)


def _keys(fields: Sequence[Field]) -> str:
    return "\n".join(f'- "{f.key}": {f.asks}.' for f in fields)


def prompt(fields: Sequence[Field], *, max_tokens: int, part: tuple[int, int] | None, facts: str,
           preserve: str | None) -> str:
    """The instruction of one call over the conversation (or over one part of it)."""
    where = f"part {part[0]} of {part[1]} of a recorded conversation" if part and part[1] > 1 else \
        "a recorded conversation"
    extra = f"\nThe user asked that the summary keep: {preserve.strip()}" if preserve and preserve.strip() else ""
    return prompt_text("narrative").format(where=where, keys=_keys(fields), words=words(max_tokens),
                                           facts=facts.strip() or "(none)", preserve=extra)


def merge_prompt(fields: Sequence[Field], *, max_tokens: int, parts: int) -> str:
    """The instruction of a call that merges the summaries of ``parts`` consecutive parts into one."""
    return prompt_text("merge").format(parts=parts, keys=_keys(fields), words=words(max_tokens))


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def _json_object(text: str) -> Mapping[str, Any] | None:
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        start, end = candidate.find("{"), candidate.rfind("}")
        if start < 0 or end <= start:
            continue
        try:
            value = json.loads(candidate[start:end + 1])
        except ValueError:
            continue
        if isinstance(value, Mapping):
            return value
    return None


def _heading(field: Field) -> re.Pattern[str]:
    names = "|".join(re.escape(n) for n in (field.title, field.key, field.key.replace("_", " ")))
    return re.compile(rf"(?im)^[ \t]*(?:[#>*\-]+[ \t]*)?(?:\d+[.)][ \t]*)?(?:\*\*)?(?:{names})(?:\*\*)?[ \t]*:?(?:\*\*)?")


def closed(text: str) -> bool:
    """Whether a reply holds a whole JSON object (one cut at its limit does not)."""
    return _json_object(text) is not None


def parse_reply(text: str, fields: Sequence[Field]) -> dict[str, str]:
    """The fields of a reply: its JSON object, else its text split at the fields' headings, else the whole
    text as the narrative. Empty values are left out."""
    found = _json_object(text)
    if found is not None:
        return {f.key: _text(found.get(f.key)) for f in fields if _text(found.get(f.key))}
    marks = sorted((m.start(), m.end(), f.key) for f in fields for m in _heading(f).finditer(text))
    if not marks:
        return {fields[0].key: text.strip()} if text.strip() else {}
    out: dict[str, str] = {}
    for n, (_, end, key) in enumerate(marks):
        stop = marks[n + 1][0] if n + 1 < len(marks) else len(text)
        value = text[end:stop].strip()
        if value and key not in out:
            out[key] = value
    return out


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return "\n".join(f"- {_text(v)}" for v in value if _text(v))
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def placeholder_problem(values: Mapping[str, str], instructions: Sequence[str]) -> str | None:
    """Why the reply's fields are only the prompt's own words (its field descriptions, an ellipsis), or None."""
    said = [v for v in values.values() if v.strip(" .…'\"") and not any(_same(v, i) for i in instructions)]
    if values and not said:
        return "the reply holds only the prompt's own placeholder text, no summary"
    return None


def _same(value: str, instruction: str) -> bool:
    words_ = " ".join(value.lower().split())
    return len(words_) >= 3 and words_ in " ".join(instruction.lower().split())


def render(values: Mapping[str, str], fields: Sequence[Field]) -> str:
    """The model's part of a summary: its fields under their titles, in the contract's order."""
    lines = [MODEL_HEADING]
    for f in fields:
        if values.get(f.key):
            lines += ["", f"{f.title}:", values[f.key]]
    return "\n".join(lines)
