"""``--preserve TEXT`` for a summariser without a model: keep what the text names.

The instruction reaches every backend inside the prompt (``prompts/preserve.md`` appended to the
contract's prompt); it is found again by that template. Its content words — identifiers, paths,
numbers and words of four letters or more that are not filler — are looked for in the user's
messages, the assistant's sentences, the tool calls and every line of the tool outputs; the lines
that name most of them are kept first, ahead of every other item, each line as it stands.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...contracts import prompt_text
from ..scan import Scan
from ..text import cut, one_line, split_sentences
from ..fitting import Item

__all__ = ["instruction", "keywords", "preserved_items"]

_WORD = re.compile(r"[\w./:@-]+")
_FILLER = frozenset("""
about above after again also among anything been before being below between both could does doing down
during each every from further have having here into itself just keep kept made make many more most much
must only other over same should some such than that their them then there these they this those through
under until very want what when where which while will with would your yours please everything information
relevant summary compaction conversation preserve retain remember details detail things thing session
""".split())
_MAX_LINES = 60
_LINE_CHARS = 400


def instruction(prompt: str) -> str | None:
    """The user's preservation instruction inside a prompt, or None."""
    template = prompt_text("preserve")
    head, _, tail = template.partition("{instruction}")
    start = prompt.find(head.strip())
    if start < 0:
        return None
    begin = start + len(head.strip())
    end = prompt.find(tail.strip()[:40], begin) if tail.strip() else len(prompt)
    text = prompt[begin:end if end >= 0 else len(prompt)].strip()
    return text or None


def keywords(text: str) -> list[str]:
    """The content words of an instruction, lower case, in order, once each."""
    out: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        word = word.strip(".:-")
        technical = any(c.isdigit() or c in "_./@" for c in word)
        if (technical and len(word) >= 2) or (len(word) >= 4 and word not in _FILLER):
            out.setdefault(word)
    return list(out)


def _lines(x: Scan) -> Iterator[tuple[int, int, str]]:
    """(message index, round, line) of every text of the body a preserved fact can stand in."""
    for index in range(x.start, x.stop):
        m = x.messages[index]
        if m.role == "assistant":
            for line in m.text.splitlines():
                yield from ((index, 0, s) for s in split_sentences(line.strip()))
            for call in m.tool_calls:
                yield index, 0, f"{call.name} {call.arguments}"
        elif m.role in ("tool", "function", "user"):
            for line in m.text.splitlines():
                yield index, 0, line.strip()


def preserved_items(x: Scan, text: str | None) -> list[Item]:
    """The lines of the body that name the instruction's words, best matches first, as priority-0 items."""
    words = keywords(text or "")
    if not words:
        return []
    need = 1 if len(words) <= 2 else 2
    scored: dict[str, tuple[int, int]] = {}
    for index, _, line in _lines(x):
        if not line or len(line) > 4000:
            continue
        lower = line.lower()
        score = sum(1 for w in words if w in lower)
        if score >= min(need, len(words)) and line not in scored:
            scored[line] = (score, index)
    best = sorted(scored.items(), key=lambda kv: (-kv[1][0], kv[1][1]))[:_MAX_LINES]
    return [Item("preserved", f"kept on request: {cut(one_line(line), _LINE_CHARS)}", 0, order=index)
            for line, (_, index) in best]
