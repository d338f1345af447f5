"""Text helpers of the extractive summariser: cutting, cleaning, quoting and picking sentences.

Every section line is built from raw transcript text, so the rules for shortening it, stripping
markdown noise and telling an informative sentence from chatter live in one place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ...model import Message

_HEAD = 6000  # characters of a tool result looked at from the start …
_TAIL = 6000  # … and from the end

_COMMAND_TAG = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.DOTALL)
_COMMAND_ARGS = re.compile(r"<command-args>\s*(.*?)\s*</command-args>", re.DOTALL)
_EMOJI = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\uFE0F]+")
MD_NOISE = re.compile(r"\*\*|__|^#+\s*|^\s*(?:[-*+]|\d+[.)])\s+|^>\s*")
_MD_CLEAN = re.compile(r"(?m)\*\*|__|^\s*#+\s*|^\s*(?:---+|===+|\*\*\*+)\s*$")
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_FLUFF = re.compile(r"(?i)^(?:(?:now,?\s+)?let(?:'s| me| us)\b|i'll now\b|ok(?:ay)?[,.!]?$|sure[,.!]?$)")
_INFORMATIVE = re.compile(
    r"[`/_=()0-9]|(?-i:[a-z][A-Z])|\b(?:because|since|so that|found|root cause|caus|fix|confirm|verif|works?\b|fail|"
    r"error|bug|issue|problem|instead|must|should|need|requir|missing|wrong|correct|decid|chose|choice|use[sd]?\b|"
    r"return|exist|not\b|no\b|never|only|none|cannot|can't|doesn't|isn't|won't|unless|without|supports?|"
    r"handles?|contains?|defaults?|expects?|means|shows?)", re.IGNORECASE)
_TECHNICAL = re.compile(r"[`/_=()0-9]|(?-i:[a-z][A-Z])")
SENTENCE_SPLIT = re.compile(  # the cheap look-behind first: most positions fail there
    r"(?<=[。！？])|(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)(?<!\bvs\.)\s+(?=[A-Z0-9`\"'(\[*_])")
_STAGE_DIRECTION = re.compile(r"\*[^*].*[^*]\*|_[^_].*[^_]_")  # *nods approvingly*
_MD_NOISE_STARTS = ("#", ">", "-", "*", "+")  # a line with noise starts so (or blank, or a digit) or has ** or __
_MD_CLEAN_MARKS = ("**", "__", "#", "---", "===")  # every match of _MD_CLEAN has one of these
_ODD_CASES = ("\u0130", "\u0131", "\u017f")  # İ ı ſ: re.IGNORECASE matches them as i and s; lower() does not


def one_line(text: str) -> str:
    """Whitespace (newlines included) collapsed to single spaces."""
    return " ".join(text.split())


def cut(text: str, limit: int) -> str:
    """The text cut to ``limit`` characters with an ellipsis."""
    return text if len(text) <= limit else text[: max(limit - 1, 1)].rstrip() + "…"


def cut_marked(text: str, limit: int) -> str:
    """The text cut to ``limit`` characters with a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit].rstrip()} […{len(text) - limit:,} more chars cut]"


def window(text: str) -> str:
    """Head and tail of a long text (what is scanned of big tool results)."""
    if len(text) <= _HEAD + _TAIL:
        return text
    return text[:_HEAD] + "\n" + text[-_TAIL:]


def lowered(text: str) -> str | None:
    """The text in lower case, to look for the words a case-insensitive pattern needs; None when it has
    letters such a pattern takes for others (İ, ı, ſ)."""
    if not text.isascii() and any(c in text for c in _ODD_CASES):
        return None
    return text.lower()


def words_in(text: str, words: tuple[str, ...]) -> tuple[str, ...]:
    """Those of ``words`` (lower case) the text may hold in any case: a quick test that never misses a
    match of a case-insensitive pattern that needs one of them."""
    lower = lowered(text)
    return words if lower is None else tuple(word for word in words if word in lower)


def resume_field(text: str, limit: int) -> str:
    """A Resume field: one line, no semicolons, cut."""
    return cut(one_line(text[: limit * 4 + 100]).replace(";", ","), limit) or "(none)"


def quote(text: str) -> str:
    """A text in typographic quotes (marks the user's or a file's own words)."""
    return f"“{text}”"


def user_text(message: Message) -> str:
    """A real user message as the user typed it (a slash command shown as ``/name args``)."""
    text = message.text.strip()
    name = _COMMAND_TAG.search(text)
    if name and len(text) < 2000:
        args = _COMMAND_ARGS.search(text)
        return f"{name.group(1)} {args.group(1)}".strip() if args else name.group(1)
    return text


def clean(text: str) -> str:
    """Markdown emphasis, rules, heading marks and emoji removed; whitespace collapsed."""
    text = no_emoji(text)
    if any(map(text.__contains__, _MD_CLEAN_MARKS)):
        text = _MD_CLEAN.sub(" ", text)
    return one_line(text)


def no_emoji(text: str) -> str:
    """The text without emoji."""
    return text if text.isascii() else _EMOJI.sub("", text)


def unmarked(line: str) -> str:
    """A line without markdown emphasis and heading, list or quote marks (twice: marks can be nested)."""
    first = line[:1]
    if first in _MD_NOISE_STARTS or first.isspace() or first.isdigit() or "**" in line or "__" in line:
        once, found = MD_NOISE.subn("", line)
        return MD_NOISE.sub("", once) if found else once
    return line


def prose_lines(text: str) -> Iterable[str]:
    """Prose lines of assistant text: code blocks, tables, headings, rules and stage directions skipped."""
    fenced = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not line or line.startswith(("|", "#", "---", "===", "<", ">")):
            continue
        if line[0] in "*_" and _STAGE_DIRECTION.fullmatch(line):
            continue
        line = unmarked(no_emoji(line)).strip()
        if line:
            yield line


def word_count(text: str) -> int:
    """Words of a text; CJK characters count as half a word each (those scripts use no spaces)."""
    return max(len(text.split()), len(_CJK.findall(text)) // 2 if not text.isascii() else 0)


def informative(sentence: str) -> bool:
    """Whether a sentence says something: not a lead-in, a question, a heading or excited chatter."""
    words = word_count(sentence)
    return not (words < 4 or words > 80 or sentence.endswith((":", "?")) or _FLUFF.match(sentence)
                or not _INFORMATIVE.search(sentence)
                or (sentence.endswith("!") and not _TECHNICAL.search(sentence)))


def sentences(text: str) -> Iterable[str]:
    """Informative sentences of assistant prose (lead-ins, questions, menus and chatter skipped)."""
    for line in prose_lines(text):
        if line.startswith("["):  # menu options: [d] Done …
            continue
        for sentence in SENTENCE_SPLIT.split(line):
            sentence = sentence.strip(" -*")
            if informative(sentence):
                yield sentence


def reply_context(reply: str, previous: str) -> str:
    """What a terse reply ('d', '2', 'yes') answers: the option it picks, else the question asked."""
    token = reply.strip().strip(".").lower()
    if 0 < len(token) <= 12:
        option = re.compile(r"(?i)(?:^|[\s*(\[])\[?\(?" + re.escape(token) + r"(?:\]|\)|\.|:|\s+[-–—])")
        for line in previous.splitlines():
            stripped = line.strip().lstrip("-*• ").strip()
            if option.match(" " + stripped.replace("**", "")):
                return "it picks the option " + quote(cut(clean(stripped), 200))
    questions = [s for s in SENTENCE_SPLIT.split(clean(previous[-3000:])) if s.rstrip().endswith("?")]
    if questions:
        return "it answers " + quote(cut(questions[-1], 200))
    return "which ended " + quote(cut(clean(previous[-600:]), 240))
