"""What differs between two recordings of the same commit, replaced by placeholders; nothing else.

Every rule below was found by recording the same commit twice and diffing the trees (README,
"Golden outputs"). A value is replaced only when it comes from the run, never from the inputs:

- the root, the interpreter and the repository: ``<ROOT>``, ``<PYTHON>``, ``<REPO>`` (the root is
  the same path in every recording; it is replaced so that the tree reads as relative);
- clock readings — ISO 8601 times (seconds optional), ``MM-DD HH:MM`` and ``HH:MM:SS`` of the
  views, ``YYYYMMDDTHHMMSSZ`` stamps, Codex's ``YYYY-MM-DDTHH-MM-SS`` file times and ``YYYY/MM/DD``
  folders, epoch seconds and milliseconds — only when they fall inside the recording's own time
  window (the inputs' times are months older): ``<TIME>``, ``<STAMP>``, ``<FILETIME>``, ``<DAY>``,
  ``<EPOCH>``, ``<MS>``;
- dump file names ``<ms>_<processor>_<session>[-<call>].json`` → ``<DUMP-k>_<processor>_<session>.json``,
  k numbering the case's dumps in the order they were made (the ``-<call>`` suffix is added only
  when two calls start in the same millisecond, so it goes with the millisecond);
- UUIDs no input holds — a fork's id (random), the ids of the lines a Claude Code compaction adds
  (derived from the time of the compaction): ``<UUID-k>``, numbered in order of first appearance in
  the case, so that the links between lines stay visible; the 8-character short form of such an id
  in a view: ``<ID-k>``; likewise the ``message.id`` a compaction gives a re-chained reply
  (``msg_tc`` + hex, derived from those ids): ``<MSG-k>``;
- what a batch lists in the order its tasks finished: the lines of ``results.jsonl`` (sorted), the
  role rows of its terminal summary and the keys under ``totals`` of its ``--json`` (sorted:
  :func:`batch_order`);
- in an HTML page, the summariser calls' latency (its table column and its chart);
- durations and rates: ``latency_s``, a batch's ``seconds`` and ``tasks_per_second`` and its
  terminal line, the latency column of ``replay --table``; the hashes of what holds a time: a
  dump's hash of its response (``latency_s``), an in-place backup note's hash of the compacted
  file (its new lines' times); in the hooks' log, the time each hook took, and the process a hook
  notes as its client (``pid:start``); the hooks' record of a settings file they wrote (its hash:
  the file names the Python of the run); a batch's progress line, printed only when the batch runs
  long enough (a loaded machine); tcompact's version.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import orjson

#: not \b: in JSON text an id often follows an escape (``\n3f2a…``), a letter before it
UUID = re.compile(r"(?<![0-9a-fA-F])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9a-fA-F])")
_ANY_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_MESSAGE_ID = re.compile(r"\bmsg_tc[0-9a-f]{24}\b")
_SHORT_ID = re.compile(r"(?<![0-9a-f-])[0-9a-f]{8}(?![0-9a-f-])")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?")
_MONTH_DAY = re.compile(r"(?<![\d-])(\d{2})-(\d{2}) (\d{2}):(\d{2})\b")
_TABLE_TIME = re.compile(r"^(\d{2}):(\d{2}):(\d{2})(  .*)$", re.M)
_LATENCY = re.compile(r"(?<=\s)\d+\.\d{2}s(?=\s)")
_STAMP = re.compile(r"\b(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z")
_FILETIME = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})T(\d{2})-(\d{2})-(\d{2})\b")
_DAY = re.compile(r"\b(\d{4})/(\d{2})/(\d{2})\b")
_DUMP = re.compile(r"(?<![\d<])(\d{13})_([A-Za-z0-9._-]+?)\.json\b")
_EPOCH_S = re.compile(r"(?<![\d.])(\d{10})\.\d+")
_EPOCH_MS = re.compile(r"(?<![\d.<])(\d{13})(?!\d)")
_ROLE_ROWS = re.compile(r"(?:^│ role [^\n]*\n)+", re.M)
_TABLE = re.compile(r"<table\b.*?</table>", re.S)
_ROW = re.compile(r"<tr>.*?</tr>", re.S)
_CELL = re.compile(r"<t[hd]\b.*?</t[hd]>", re.S)
_LATENCY_CHART = re.compile(r'("latency":\{"data":\[\{"type":"bar","x":\[[^\]]*\],"y":\[)[^\]]*\]')
#: (pattern, replacement) for durations, rates and the hash of a timed record
_RULES = (
    (re.compile(r'("latency_s": ?)-?[\d.e+-]+'), r"\1<SECONDS>"),
    (re.compile(r'("seconds": ?)[\d.e+-]+'), r"\1<SECONDS>"),
    (re.compile(r'("tasks_per_second": ?)[\d.e+-]+'), r"\1<RATE>"),
    (re.compile(r"(\d+ tasks? in )[\d.]+ s \([\d.]+/s\)"), r"\1<SECONDS> s (<RATE>/s)"),
    (re.compile(r'("response": ?")[0-9a-f]{64}"'), r'\1<SHA256>"'),
    (re.compile(r'("compacted": ?\{\s*"sha256": ?")[0-9a-f]{64}"'), r'\1<SHA256>"'),
    (re.compile(r'("client": ?")\d+:\d+"'), r'\1<PROCESS>"'),
    # the hooks' record of a settings file they wrote: a hash of bytes that name this Python's path
    (re.compile(r'("written": ?")[0-9a-f]{64}"'), r'\1<SHA256>"'),
    # a batch's progress line, printed only when the batch runs long enough (a loaded machine)
    (re.compile(r"^batch \w+: \d+ of \d+ done, [^\n]*ETA [^\n]*\n", re.M), ""),
)
#: the time a hook took, at the end of a line of the hooks' log
_LOG_SECONDS = re.compile(r"\(\d+(?:\.\d+)? s\)$", re.M)


@dataclass
class Normaliser:
    """Normalises the texts of one recording: ``case()`` gives the replacer of one case."""

    literals: dict[str, str]
    window: tuple[float, float]
    version: str
    known_uuids: frozenset[str] = frozenset()
    #: UUIDs made by earlier cases of the recording (their short forms are recognised later)
    new_uuids: set[str] = field(default_factory=set)

    def case(self, texts: Iterable[str]) -> CaseNormaliser:
        """The replacer for one case: its dumps numbered from every text of the case, its new UUIDs noted."""
        names: set[tuple[int, str]] = set()
        for text in texts:
            names.update((int(m.group(1)), m.group(2)) for m in _DUMP.finditer(text)
                         if self._in_window(int(m.group(1)) / 1000))
            self.new_uuids.update(u for u in UUID.findall(text) if self._random(u))
        keys = {name: _dump_key(*name, names) for name in names}
        order = {key: n for n, key in enumerate(sorted(set(keys.values())), start=1)}
        return CaseNormaliser(self, {name: (order[key], key[1]) for name, key in keys.items()},
                              {u[:8] for u in self.new_uuids})

    def _random(self, uuid: str) -> bool:
        """A UUID of the run: in no input."""
        return uuid not in self.known_uuids

    def _in_window(self, epoch: float) -> bool:
        return self.window[0] <= epoch <= self.window[1]

    def _recent(self, *parts: str | None, day: bool = False) -> bool:
        """Whether the time (or the day) written as year, month, day[, hour, minute[, second[, offset]]] is
        of the recording."""
        offset = parts[6] if len(parts) > 6 else None
        try:
            when = datetime(*(int(p) for p in parts[:6] if p is not None), tzinfo=timezone.utc)
        except ValueError:
            return False
        seconds = when.timestamp() - _offset_seconds(offset)
        slack = 86400 if day else 60
        return self.window[0] - slack <= seconds <= self.window[1] + slack

    def _recent_clock(self, *parts: str) -> bool:
        """Whether a time without its year (month-day hour:minute, or hour:minute:second) is of the recording."""
        start, end = (datetime.fromtimestamp(t, timezone.utc) for t in self.window)
        for d in {start.date(), end.date()}:
            full = (str(d.year), *parts) if len(parts) == 4 else (str(d.year), str(d.month), str(d.day), *parts)
            if self._recent(*full):
                return True
        return False


def _offset_seconds(offset: str | None) -> int:
    if not offset or offset == "Z":
        return 0
    sign = -1 if offset[0] == "-" else 1
    digits = offset[1:].replace(":", "")
    return sign * (int(digits[:2]) * 3600 + int(digits[2:4]) * 60)


def _dump_key(ms: int, rest: str, names: set[tuple[int, str]]) -> tuple[int, str, int]:
    """(millisecond, processor and session, call): a name that ends in ``-<call>`` while the same name
    without it was made in the same millisecond is the second call of that millisecond."""
    head, _, call = rest.rpartition("-")
    if call.isdigit() and (ms, head) in names:
        return ms, head, int(call)
    return ms, rest, 0


@dataclass
class CaseNormaliser:
    owner: Normaliser
    dumps: dict[tuple[int, str], tuple[int, str]]  # (ms, name) → (number, name without a call suffix)
    short_ids: set[str]
    uuids: dict[str, str] = field(default_factory=dict)
    shorts: dict[str, str] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)

    def text(self, text: str) -> str:
        o = self.owner
        for literal, placeholder in sorted(o.literals.items(), key=lambda kv: -len(kv[0])):
            text = text.replace(literal, placeholder)
        text = _DUMP.sub(self._dump, text)
        text = UUID.sub(self._uuid, text)
        text = _MESSAGE_ID.sub(lambda m: self.messages.setdefault(m.group(0), f"<MSG-{len(self.messages) + 1}>"), text)
        text = _SHORT_ID.sub(self._short, text)
        text = _ISO.sub(lambda m: "<TIME>" if o._recent(*m.groups()) else m.group(0), text)
        text = _MONTH_DAY.sub(lambda m: "<TIME>" if o._recent_clock(*m.groups()) else m.group(0), text)
        text = _TABLE_TIME.sub(self._table_row, text)
        text = _STAMP.sub(lambda m: "<STAMP>" if o._recent(*m.groups()) else m.group(0), text)
        text = _FILETIME.sub(lambda m: "<FILETIME>" if o._recent(*m.groups()) else m.group(0), text)
        text = _DAY.sub(lambda m: "<DAY>" if o._recent(*m.groups(), day=True) else m.group(0), text)
        text = _EPOCH_S.sub(lambda m: "<EPOCH>" if o._in_window(int(m.group(1))) else m.group(0), text)
        text = _EPOCH_MS.sub(lambda m: "<MS>" if o._in_window(int(m.group(1)) / 1000) else m.group(0), text)
        for pattern, replacement in _RULES:
            text = pattern.sub(replacement, text)
        return _version(text, o.version)

    def file(self, path: str, text: str) -> str:
        """A written file's text: :meth:`text`, and what is particular to its kind."""
        text = self.text(text)
        if path.endswith(".html"):
            text = _LATENCY_CHART.sub(r"\1<SECONDS>]", _TABLE.sub(_latency_column, text))
        elif path.endswith("/hooks.log"):
            text = _LOG_SECONDS.sub("(<SECONDS> s)", text)
        elif path.rsplit("/", 1)[-1] == "results.jsonl":
            text = "".join(sorted(text.splitlines(keepends=True)))
        return text

    def _dump(self, m: re.Match[str]) -> str:
        found = self.dumps.get((int(m.group(1)), m.group(2)))
        return f"<DUMP-{found[0]}>_{found[1]}.json" if found else m.group(0)

    def _uuid(self, m: re.Match[str]) -> str:
        value = m.group(0)
        if not self.owner._random(value):
            return value
        return self.uuids.setdefault(value, f"<UUID-{len(self.uuids) + 1}>")

    def _short(self, m: re.Match[str]) -> str:
        value = m.group(0)
        if value not in self.short_ids:
            return value
        return self.shorts.setdefault(value, f"<ID-{len(self.shorts) + 1}>")

    def _table_row(self, m: re.Match[str]) -> str:
        """A ``replay --table`` row made now: its time and latency."""
        if not self.owner._recent_clock(*m.group(1, 2, 3)):
            return m.group(0)
        return "<HH:MM:SS>" + _LATENCY.sub("<LATENCY>", m.group(4))


def _latency_column(table: re.Match[str]) -> str:
    """An HTML table with a ``latency`` column: that column's cells as ``<SECONDS>``."""
    heads = _CELL.findall(table.group(0).split("</thead>", 1)[0])
    column = next((n for n, h in enumerate(heads) if ">latency" in h), None)
    if column is None:
        return table.group(0)

    def row(m: re.Match[str]) -> str:
        cells = _CELL.findall(m.group(0))
        if len(cells) <= column or cells[column].startswith("<th"):
            return m.group(0)
        cells[column] = re.sub(r'data-v="[^"]*">[^<]*<', 'data-v="<SECONDS>"><SECONDS><', cells[column])
        return "<tr>" + "".join(cells) + "</tr>"

    return _ROW.sub(row, table.group(0))


def _version(text: str, version: str) -> str:
    """tcompact's version where it is written as one (the JSON field, ``tcompact X``, ``tcompact-X``)."""
    for before in ('"version": "', '"version":"', '"cli_version": "', '"cli_version":"', "tcompact ", "tcompact-"):
        text = text.replace(before + version, before + "<VERSION>")
    return text


def uuids_in(data: bytes) -> set[str]:
    """The UUIDs a file holds, wherever they stand (to tell the inputs' ids from new ones)."""
    return set(_ANY_UUID.findall(data.decode("utf-8", "replace")))


def batch_order(stdout: str) -> str:
    """What a ``batch`` command printed, with its totals in one order: the roles of the terminal
    summary sorted, and every object under ``totals`` of its ``--json`` document with its keys sorted.
    A batch adds each task's figures up in the order the tasks finished, which orders those keys
    and rows; the document is rewritten only when re-printing it gives back the same text."""
    try:
        doc = orjson.loads(stdout)
    except orjson.JSONDecodeError:
        return _ROLE_ROWS.sub(lambda m: "".join(sorted(m.group(0).splitlines(keepends=True))), stdout)
    if not isinstance(doc, dict) or "totals" not in doc or _printed(doc) != stdout:
        return stdout
    return _printed({**doc, "totals": _keys_sorted(doc["totals"])})


def _printed(doc: Any) -> str:
    """A document as tcompact prints one (render.print_json)."""
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"


def _keys_sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _keys_sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_keys_sorted(v) for v in value]
    return value
