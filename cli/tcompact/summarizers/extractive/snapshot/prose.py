"""What the assistant said that outlives its messages: decisions, corrections, findings, the final answer.

Sentences are taken whole (never cut inside), each once, and told apart by their words: a
*decision* commits to a choice (decided, chose, will use, instead of, rather than, pin, switch
to…), a *correction* takes back an earlier statement (actually, correction, I was wrong, turns
out…), a *finding* states what was learnt (found, root cause, is caused by, confirmed, fails
because…); any other informative sentence is a *note*, kept last. A correction replaces every
earlier decision or finding about the same thing — the same identifier, path, number or quoted
term —, so a summary never reports both the claim and its retraction. The final answer of the
part is kept whole, as written, when the budget holds it; else its first paragraph and its code
blocks, each block whole or not at all.
"""

from __future__ import annotations

import re
from ....counting.tokens import TokenCounter
from ..scan import Said, Scan
from ..text import classify_sentence, clean, cut, informative, prose_lines, split_sentences
from ..fitting import Item

__all__ = ["statement_items", "answer_items", "concept_items", "final_answer"]

_SUBJECT = re.compile(r"`[^`\n]+`|[\w./-]*[/._][\w./-]+|\b[a-z]+[A-Z]\w*\b|\b\w*\d\w*\b|“[^”]+”|\"[^\"\n]+\"")
_FENCE = re.compile(r"(?ms)^[ \t]*(```|~~~)[^\n]*\n.*?^[ \t]*\1[ \t]*$")
_ANSWER_CHARS = 800
_CODE_CHARS = 3000  # a code block longer than this is left out whole
_ANSWER_WHOLE_CHARS = 12000  # a final answer up to this is kept whole (on its own budget, or the summary's)


def _subjects(sentence: str) -> set[str]:
    return {s.strip("`“”\"").lower() for s in _SUBJECT.findall(sentence) if len(s.strip("`“”\"")) >= 3}


_PRIORITY = {"decision": 1, "correction": 1, "finding": 2, "note": 3}


def statement_items(said: Said, *, shown: str = "") -> list[Item]:
    """The assistant's sentences of the body as items, once each, corrections replacing what they correct;
    sentences standing in ``shown`` (the final answer's opening, the outcome of a request) are left out."""
    seen: set[str] = set()
    read: set[str] = set()  # a line read again gives nothing (its sentences are seen or not informative)
    out: list[Item] = []
    subjects: list[set[str]] = []
    for index, rnd, text in said.texts:
        for line in prose_lines(text[:20000]):
            if line.startswith("[") or line in read:  # menu options; a long session repeats its lines
                continue
            read.add(line)
            for sentence in split_sentences(line):
                sentence = sentence.strip(" -*")
                key = sentence.lower()
                if key in seen or not informative(sentence):
                    continue
                seen.add(key)
                kind = classify_sentence(sentence)
                about = _subjects(sentence)
                if kind == "correction" and about:  # also when the correction itself is quoted elsewhere
                    keep = [n for n, item in enumerate(out) if not (subjects[n] & about and item.kind != "note")]
                    out, subjects = [out[n] for n in keep], [subjects[n] for n in keep]
                if shown and sentence in shown:
                    continue
                out.append(Item(kind, cut(sentence, 600), _PRIORITY[kind], order=index, round=rnd))
                subjects.append(about)
    return out


def final_answer(x: Scan) -> int | None:
    """Index of the body's final answer: its last assistant text without tool calls, when nothing but
    results follow it and the latest request is answered."""
    if not x.answered() or x.said.last is None:
        return None
    for index, _, _ in reversed(x.said.texts):
        m = x.messages[index]
        return index if not m.tool_calls else None
    return None


def answer_items(x: Scan, counter: TokenCounter, *, own: int = 0) -> list[Item]:
    """The final answer: whole and verbatim — headings, lists and ✅/❌ marks as written, so an item it lists as
    removed never reads as current —, on a budget of its own when it takes at most ``own`` tokens (a third of
    the summary's cap), else when the summary's budget holds it; else its first paragraph of prose with its code
    blocks, each whole, or its first paragraph alone."""
    index = final_answer(x)
    if index is None:
        return []
    text = x.messages[index].text.strip()
    rnd = next(r for i, r, _ in x.said.texts if i == index)
    paragraph = next((p for p in re.split(r"\n\s*\n", _FENCE.sub("", text)) if p.strip()), "")
    prose = " ".join(prose_lines(paragraph)) or clean(paragraph)
    opening = f"- the work ended with this answer: {cut(prose, _ANSWER_CHARS)}" if prose else ""
    codes = [block.group(0).strip("\n") for block in _FENCE.finditer(text) if len(block.group(0)) <= _CODE_CHARS]
    whole = f"The work ended with this answer (verbatim):\n{text}"
    if len(text) <= _ANSWER_WHOLE_CHARS and counter.count(whole) <= own:  # like the user's words: own budget
        return [Item("answer", whole, 1, order=index, round=rnd, block=True, own=True)]
    if len(text) <= _ANSWER_WHOLE_CHARS:
        shorter = tuple(form for form in ("\n".join([opening, *codes]).strip("\n"), opening) if form)
        return [Item("answer", whole, 1, order=index, round=rnd, block=True, shorter=shorter)]
    out = [Item("answer", opening[2:], 1, order=index, round=rnd)] if opening else []
    return out + [Item("code", code, 2, order=index, round=rnd, block=True) for code in codes]


def concept_items(x: Scan) -> list[Item]:
    """The terms the assistant put in backticks most often (at least twice, or all of few)."""
    terms = [t for t, n in x.said.terms.most_common(40) if n >= 2 or len(x.said.terms) < 15][:24]
    if not terms:
        return []
    return [Item("concept", "terms the assistant relied on: " + ", ".join(f"`{t}`" for t in terms), 3,
                 order=x.stop)]

