"""Text helpers of the extractive summariser: cutting, cleaning, quoting and picking sentences.

Every section line is built from raw transcript text, so the rules for shortening it, stripping
markdown noise and telling an informative sentence from chatter live in one place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from ...model import Message

_HEAD = 6000  # characters of a tool result looked at from the start …
_TAIL = 6000  # … and from the end

_COMMAND_TAG = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.DOTALL)
_COMMAND_ARGS = re.compile(r"<command-args>\s*(.*?)\s*</command-args>", re.DOTALL)
_EMOJI = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\uFE0F]+")
MD_NOISE = re.compile(r"^#+\s*|^\s*(?:[-*+]|\d+[.)])\s+|^>\s*")  # heading, list and quote marks
_EMPHASIS = re.compile(r"\*\*[ \t]*([^*\n]+?)[ \t]*\*\*")  # **bold** (``__`` is never touched: it is part of names)
_CODE_SPAN = re.compile(r"(`[^`\n]*`)")
_BOLD_CODE = re.compile(r"\*\*(`[^`\n]*`)\*\*")  # **`name`**
_MD_CLEAN = re.compile(r"(?m)^\s*#+\s*|^\s*(?:---+|===+|\*\*\*+)\s*$")
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_FLUFF = re.compile(r"(?i)^(?:(?:now,?\s+)?let(?:'s| me| us)\b|i'll now\b|ok(?:ay)?[,.!]?$|sure[,.!]?$)")
_INFORMATIVE = re.compile(
    r"[`/_=()0-9]|(?-i:[a-z][A-Z])|\b(?:because|since|so that|found|root cause|caus|fix|confirm|verif|works?\b|fail|"
    r"error|bug|issue|problem|instead|must|should|need|requir|missing|wrong|correct|decid|chose|choice|use[sd]?\b|"
    r"return|exist|not\b|no\b|never|only|none|cannot|can't|doesn't|isn't|won't|unless|without|supports?|"
    r"handles?|contains?|defaults?|expects?|means|shows?)", re.IGNORECASE)
_TECHNICAL = re.compile(r"[`/_=()0-9]|(?-i:[a-z][A-Z])")
_DECISION = re.compile(
    r"(?i)\b(?:decided|decision|decide to|chose|choose to|opted|opt for|going with|go with|settled on|"
    r"(?:we|i)(?:'ll| will| are going to| am going to) (?:use|keep|go with|switch|pin|drop|store|cache|"
    r"move|rename|replace|implement|add|remove|skip|stick)|instead of|rather than|in favou?r of|"
    r"switch(?:ed)? to|pinn?(?:ed)? (?:to|at)|the plan is to|we should use|better to use)\b")
_CORRECTION = re.compile(
    r"(?i)^(?:actually|correction|update|wait|oops|on second thought|scratch that)\b|"
    r"\b(?:i was wrong|that was wrong|i misread|i mis-?spoke|turns out|was mistaken|not correct after all|"
    r"is actually|was actually|i stand corrected|contrary to what i said)\b")
_FINDING = re.compile(
    r"(?i)\b(?:found|root cause|the (?:issue|problem|bug|cause|reason) (?:is|was)|caused by|because|confirmed|"
    r"verified|the fix|fails? (?:because|when|with)|works now|now passes|is missing|does not exist|"
    r"doesn't exist|returns?|expects?|requires?)\b")
#: Words that make a sentence of the user's an instruction to keep (must, never, only, prefer, …).
CONSTRAINT_CUES = re.compile(
    r"(?i)\b(?:must|should(?:n't)?|don'?t|do not|never|always|only|prefer|avoid|make sure|without|please|"
    r"need(?:s)? to|has to|have to|not acceptable|no longer|instead of|at most|at least|max(?:imum)?|keep|"
    r"constraint|rule|require[sd]?)\b")
#: Where a user's text splits into the sentences constraints are looked for in (stops and line ends).
USER_SPLIT = re.compile(r"(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)(?<!\bvs\.)\s+|\n+")
_ENDS = frozenset(".!?")
_CJK_ENDS = frozenset("。！？")
_OPENERS = {"“": "”", "(": ")", "[": "]", "‘": "’"}
#: The characters split_sentences acts on: code marks, quotes, brackets, stops.
_MARKS = re.compile("[" + re.escape("".join(sorted({"`", '"', *_OPENERS, *_OPENERS.values(), *_ENDS, *_CJK_ENDS})))
                    + "]")
_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "cf", "mr", "mrs", "ms", "dr", "no", "fig", "approx", "incl"})
_STAGE_DIRECTION = re.compile(r"\*[^*].*[^*]\*|_[^_].*[^_]_")  # *nods approvingly*
_MD_NOISE_STARTS = ("#", ">", "-", "*", "+")  # a line with noise starts so (or blank, or a digit)
_MD_CLEAN_MARKS = ("#", "---", "===", "***")  # every match of _MD_CLEAN has one of these
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
    letters such a pattern takes for others (İ, ı, ſ). The last answer is remembered: a tool result is
    looked at for offloads, a test summary and error lines in turn (issue 26)."""
    global _LAST_LOWERED
    last = _LAST_LOWERED  # one read: another thread may replace it
    if last[0] is text:
        return last[1]
    lower = None if not text.isascii() and any(c in text for c in _ODD_CASES) else text.lower()
    _LAST_LOWERED = (text, lower)
    return lower


_LAST_LOWERED: tuple[str, str | None] = ("", "")


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
    """Bold marks, rules, heading marks and emoji removed; whitespace collapsed. Code spans, ``__`` and
    every other character of names and paths stay as they are."""
    text = no_emoji(text)
    if any(map(text.__contains__, _MD_CLEAN_MARKS)):
        text = _MD_CLEAN.sub(" ", text)
    return one_line(unbold(text))


def unbold(text: str) -> str:
    """``**bold**`` outside code spans made plain."""
    if "**" not in text:
        return text
    text = _BOLD_CODE.sub(r"\1", text)
    return "".join(piece if piece.startswith("`") else _EMPHASIS.sub(r"\1", piece) for piece in _CODE_SPAN.split(text))


def no_emoji(text: str) -> str:
    """The text without emoji."""
    return text if text.isascii() else _EMOJI.sub("", text)


def unmarked(line: str) -> str:
    """A line without bold marks and heading, list or quote marks (twice: marks can be nested)."""
    first = line[:1]
    if first in _MD_NOISE_STARTS or first.isspace() or first.isdigit():
        once, found = MD_NOISE.subn("", line)
        line = MD_NOISE.sub("", once) if found else once
    return unbold(line)


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
        line = _remembered_line(line) if len(line) <= _REMEMBER_CHARS else _prose_line(line)
        if line:
            yield line


def _prose_line(line: str) -> str:
    """A stripped line of prose without its marks and emoji; '' for a stage direction."""
    if line[0] in "*_" and _STAGE_DIRECTION.fullmatch(line):
        return ""
    return unmarked(no_emoji(line)).strip()


#: A line this short is cleaned once per process: a long session repeats its lines (issue 26: 24,000 lines of
#: assistant prose, 3,300 distinct).
_REMEMBER_CHARS = 2000
_remembered_line = lru_cache(maxsize=1 << 14)(_prose_line)


def word_count(text: str) -> int:
    """Words of a text; CJK characters count as half a word each (those scripts use no spaces)."""
    return max(len(text.split()), len(_CJK.findall(text)) // 2 if not text.isascii() else 0)


def informative(sentence: str) -> bool:
    """Whether a sentence says something: not a lead-in, a question, a heading or excited chatter."""
    words = word_count(sentence)
    return not (words < 4 or words > 80 or sentence.endswith((":", "?")) or _FLUFF.match(sentence)
                or not _INFORMATIVE.search(sentence)
                or (sentence.endswith("!") and not _TECHNICAL.search(sentence)))


def split_sentences(line: str) -> list[str]:
    """The sentences of one line of prose. A stop ends a sentence only outside quotes, brackets and code
    spans, before a blank and a capital, digit, quote or mark — not after e.g., i.e., etc., vs. or an
    initial —, so quoted speech and attributions stay whole; CJK stops end one anywhere outside quotes."""
    out: list[str] = []
    start, closing, code, straight = 0, [], False, False
    n = len(line)
    for m in _MARKS.finditer(line):  # every other character leaves the state as it is
        i, ch = m.start(), m.group()
        if ch == "`":
            code = not code
        elif code:
            continue
        elif ch == '"' or (closing and ch == closing[-1]):
            if ch == '"':
                straight = not straight
            else:
                closing.pop()
            if not closing and not straight and i and line[i - 1] in _ENDS and _ends_here(line, i, n):
                out.append(line[start:i + 1].strip())  # a quoted sentence that ends the sentence
                start = i + 1
        elif ch in _OPENERS:
            closing.append(_OPENERS[ch])
        elif not closing and not straight and (ch in _CJK_ENDS or (ch in _ENDS and _ends_here(line, i, n))):
            out.append(line[start:i + 1].strip())
            start = i + 1
    rest = line[start:].strip()
    if rest:
        out.append(rest)
    return [s for s in out if s]


def _ends_here(line: str, i: int, n: int) -> bool:
    """Whether the stop at ``i`` ends a sentence (a blank, then a sentence start, follows it)."""
    if i + 2 >= n or not line[i + 1].isspace():
        return False
    nxt = line[i + 2:].lstrip()[:1]
    if not nxt or not (nxt.isupper() or nxt.isdigit() or nxt in "`\"'([*_“"):
        return False
    word = line[:i].rsplit(None, 1)[-1].lower().lstrip("(\"'“") if line[:i].strip() else ""
    return word not in _ABBREVIATIONS and not (len(word) == 1 and word.isalpha())


def sentences(text: str) -> Iterable[str]:
    """Informative sentences of assistant prose (lead-ins, questions, menus and chatter skipped)."""
    for line in prose_lines(text):
        if line.startswith("["):  # menu options: [d] Done …
            continue
        for sentence in split_sentences(line):
            sentence = sentence.strip(" -*")
            if informative(sentence):
                yield sentence


def reply_context(reply: str, previous: str) -> str:
    """What a terse reply ('d', '2', 'yes') answers: the option it picks, else the question asked."""
    token = reply.strip().strip(".").lower()
    if 0 < len(token) <= 12:
        option = re.compile(r"(?i)(?:^|[\s*(\[])\[?\(?" + re.escape(token) + r"(?:\]|\)|\.|:|\s+[-–—])")
        for line in previous.splitlines():
            stripped = line.strip().lstrip("-• ").strip()
            if option.match(" " + stripped.replace("**", "")):
                return "it picks the option " + quote(cut(clean(stripped), 200))
    questions = [s for s in split_sentences(clean(previous[-3000:])) if s.rstrip().endswith("?")]
    if questions:
        return "it answers " + quote(cut(questions[-1], 200))
    return "which ended " + quote(cut(clean(previous[-600:]), 240))


def classify_sentence(sentence: str) -> str:
    """"correction", "decision", "finding" or "note"."""
    if _CORRECTION.search(sentence):
        return "correction"
    if _DECISION.search(sentence):
        return "decision"
    if _FINDING.search(sentence):
        return "finding"
    return "note"


_PROMISE = re.compile(r"(?i)^(?:(?:now|next|then|so|ok(?:ay)?|first|right)[,:]?\s+)?(?:i['’]ll|i will|let me(?! know)|"
                      r"i['’]m going to|i am going to)\s+(?!(?:wait|be\b|leave|stop|let you|keep an eye))")


def promise(text: str) -> str:
    """The sentence of a reply's last paragraph that promises work still to do ("I'll fix …", "Let me …"), or ''
    — a reply that ends so has not done what it says."""
    paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    if not paragraphs:
        return ""
    for line in prose_lines(paragraphs[-1]):
        for sentence in split_sentences(line):
            if _PROMISE.match(sentence.strip()):
                return sentence.strip()
    return ""
