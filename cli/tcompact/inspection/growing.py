"""The kept state of a file ``inspect`` read, so that the next inspect reads only what was appended since.

A live session grows by lines at its end; the hooks, the status line and a user's ``inspect`` read
it again and again. After reading a JSON Lines file whose last line is complete, ``inspect`` keeps:

* where it stopped (``end``, the file's size then) and the sha256 of those ``end`` bytes;
* the reader's state there (:mod:`tcompact.formats.steps`: the format, the records' bookkeeping, the
  reader's own state — a Claude Code file's lines with what the chain walk needs of them, a Codex
  rollout's assembly state, a chat log's running usage);
* the facts of the messages read (:class:`tcompact.inspection.report.MessageFacts`, with the encoding
  they were counted with): their counts and what the report says of them.

The next inspect of the same path with the same options and code hashes the file once; when its first
``end`` bytes still have that sha256 — whatever else changed: a rewritten, truncated or replaced file
fails it and is read whole — only the bytes after them are parsed, the reader goes on from its state,
and the messages read before come from their facts (their tokens are not even looked up); a reply
that goes on over the old end is built again from the last lines' bytes, read in the same pass.

States live in ``resume-v1/`` of the token cache folder, one per path, options and code (the key of
:mod:`tcompact.inspection.reportcache`, plus the resolved path), written atomically with their sha256
(:func:`tcompact.counting.cache.write_blob`; a damaged one is a miss), within the same bounds as the
reports; ``--no-cache`` turns them off with the rest of the cache. Beside them, per resolved path, where its last
read stopped (``resume-v1/ends/``, :func:`tcompact.counting.cache.keep_end`): a plain ``inspect`` reads that
first, to start building the tokenizer in a copy of the process before the state is even loaded.
"""

from __future__ import annotations

import hashlib
import marshal
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..counting import cache as tokencache
from ..formats._source import gc_paused

if TYPE_CHECKING:
    from .shapes import FileReport
    from . import InspectOptions

__all__ = ["FOLDER", "Kept", "find", "save", "inspect_grown"]

FOLDER = "resume-v1"
MAX_STATES = 2000
MAX_BYTES = 256 << 20
_EVICT_EVERY = 32
_writes = 0


@dataclass
class Kept:
    """Where the state of one file read with one set of options is kept, and that state (None: none)."""

    name: str
    state: dict[str, Any] | None
    path: str | Path | None = None  # the file (where its read stopped is kept for it too: counting.cache.keep_end)

    def mark(self) -> tuple[int, bytes, int] | None:
        """Where the kept read stopped, the sha256 of the bytes up to there, and where the bytes a resumed
        read needs start (the kept last lines); None when nothing is kept."""
        if self.state is None:
            return None
        return self.state["end"], self.state["digest"], self.state["steps"]["ends"][0]  # (formats.steps.Steps.ends)


def find(path: str | Path, options: object) -> Kept | None:
    """The kept state of ``path`` read with ``options`` (None in it when there is none), or None when
    caching is off."""
    if not tokencache.enabled():
        return None
    from .reportcache import code_digest

    key = hashlib.sha256(code_digest())
    key.update(repr(options).encode("utf-8", "backslashreplace"))
    try:
        key.update(os.fsencode(Path(path).resolve()))
    except (OSError, RuntimeError):
        return None
    name = f"{FOLDER}/{key.hexdigest()[:40]}.state"
    blob = tokencache.read_blob(name)
    state = None
    if blob is not None:
        try:
            state = marshal.loads(blob)
        except (ValueError, EOFError, TypeError):
            state = None
        if not isinstance(state, dict) or state.get("version") != _VERSION:
            state = None
    return Kept(name, state, path)


_VERSION = 1


def save(kept: Kept, *, digest: bytes, steps: dict[str, Any], messages: Any) -> None:
    """Keep the state of a read that stopped at ``steps["end"]`` bytes whose sha256 is ``digest``, the
    reader's ``steps`` state and the ``messages`` kept (plain values); then keep the folder in bounds."""
    global _writes
    try:
        data = marshal.dumps({"version": _VERSION, "end": steps["end"], "digest": digest, "steps": steps,
                              "messages": messages})
    except ValueError:  # nothing a state holds, but a state that cannot be kept is no error
        return
    tokencache.write_blob(kept.name, data)
    if kept.path is not None:
        tokencache.keep_end(kept.path, steps["end"])
    _writes += 1
    if _writes % _EVICT_EVERY == 1:
        from .reportcache import evict

        evict(tokencache.cache_folder() / FOLDER, max_reports=MAX_STATES, max_bytes=MAX_BYTES, suffix=".state")
        evict(tokencache.cache_folder() / tokencache.ENDS, max_reports=MAX_STATES, max_bytes=MAX_BYTES, suffix=".end")


def inspect_grown(path: str | Path, options: InspectOptions, kept: Kept) -> FileReport:
    """The report of ``path``: the one kept for its bytes (:mod:`tcompact.inspection.reportcache`), else made from
    its kept state when its first bytes are those the state was taken at, else made from the file read
    whole; the state after it is kept (when a later read can go on from it), and the report."""
    from . import reportcache
    from ..formats._digest import digest_with_mark

    mark = kept.mark()
    if mark is not None and tokencache.grown_by(path, mark[0]) >= tokencache.GROWN_FROM:  # (before the file is hashed; a
        # plain inspect started it before this state was loaded: commands/_inspect_run.py)
        from ..counting import helper

        helper.start(_encoding(options))  # the tokenizer built meanwhile, for the appended texts
    scan = digest_with_mark(Path(path), *(mark[:2] if mark else (None, None)), keep_from=mark[2] if mark else 0)
    where = reportcache.slot_of(scan[0], options) if scan is not None else None
    if where is not None and (found := reportcache.get(where, path)) is not None:
        return found
    report = _resumed(path, options, kept, scan) if scan is not None and scan[2] is not None else None
    if report is None:
        return _read_whole(path, options, kept, where)
    if where is not None:
        reportcache.put(where, report, _Read(where.digest))
    return report


def _encoding(options: InspectOptions) -> str:
    """The encoding the appended texts will most likely be counted with: the one asked for, else the model's
    (o200k_base when none is named, as for Claude Code and Codex sessions)."""
    from ..counting.encodings import encoding_for_model

    return options.encoding or encoding_for_model(options.model)[0]


class _Read:
    """What :func:`tcompact.inspection.reportcache.put` asks of the hash fed while reading: the bytes' digest."""

    def __init__(self, digest: bytes) -> None:
        self._digest = digest

    def digest(self) -> bytes:
        return self._digest


def _read_whole(path: str | Path, options: InspectOptions, kept: Kept, where: Any) -> FileReport:
    """The report of a file read whole, its state kept when a later read can go on from it."""
    from . import reportcache
    from ..formats import read_steps
    from ..formats.steps import Steps
    from . import inspect_source

    read = hashlib.sha256()
    source = read_steps(path, options.read, digest=read)
    if not isinstance(source, Steps):
        report = inspect_source(source, options)
    else:
        with gc_paused():
            report, state, messages = _inspect_steps(source, options, None)
        del source  # (the records and messages go before the state is written: less memory at its peak)
        if state is not None:
            save(kept, digest=read.digest(), steps=state, messages=messages)
    if where is not None:
        reportcache.put(where, report, read)
    return report


def _resumed(path: str | Path, options: InspectOptions, kept: Kept, scan: tuple[bytes, Any, bytes]
             ) -> FileReport | None:
    """The report of a file read on from its kept state (``scan``: the file's digest, that of the kept
    prefix, the bytes from the kept last lines on); None when it cannot be (then it is read whole)."""
    from ..errors import TcompactError
    from ..formats import ReadContext
    from ..formats.steps import NotResumable, resume

    ctx = ReadContext(path=str(path), options=options.read)
    try:
        with gc_paused():
            report, state, messages = _inspect_steps(resume(kept.state["steps"], ctx, scan[2]), options,
                                                     kept.state["messages"])
    except (NotResumable, TcompactError):  # a bad line is for the whole read to report, as it would
        return None
    except Exception:  # noqa: BLE001 — a state this code cannot go on from: the whole read is the same report
        return None
    if state is not None:
        save(kept, digest=scan[0], steps=state, messages=messages)
    return report


def _inspect_steps(steps: Any, options: InspectOptions, kept: Any) -> tuple[FileReport, Any, Any]:
    """The report of a JSON Lines file read in steps, the state to keep (None: none) and its messages'
    facts to keep; raises NotResumable when ``kept`` facts were counted with another encoding."""
    from ..formats.steps import NotResumable
    from .report import counters, facts_of, file_report, from_plain, plain, transcript_report, usage_of
    from ..model import Message
    from ..counting.tokens import texts_of

    state = steps.snapshot(steps.ends[-1] if steps.ends else 0)
    transcripts, unknown, _meta = steps.finish(kept)
    counted = counters(transcripts, options)
    for counter in {id(c): c for _, c in counted}.values():  # one parallel pass over the texts not kept
        counter.prime(text for t, c in counted if c is counter
                      for text in texts_of(m for m in t.messages if isinstance(m, Message)))
    facts: list[list[Any]] = []  # per transcript: each message's facts, and what keeps them (a kept one as it was)
    for t, counter in counted:
        mine = []
        for m in t.messages:
            if isinstance(m, Message):
                mine.append((facts_of(m, counter), counter.encoding_name))
            elif m[0] != counter.encoding_name:
                raise NotResumable("the kept messages were counted with another encoding")
            else:
                mine.append((from_plain(m[1]), m))
        facts.append(mine)
    stamps = steps.stamps
    reports = [transcript_report(t, [f for f, _ in mine], c, top=options.top, context_window=options.context_window,
                                 model=options.model, usage=usage_of(t, lambda lines: {n: stamps.get(n) for n in lines}))
               for (t, c), mine in zip(counted, facts)]
    report = file_report(str(steps.ctx.path), steps.format, steps.count, sorted(steps.ctx.skipped), unknown, reports)
    del transcripts, counted, reports  # what the state does not hold goes before it is taken
    if state is None:
        return report, None, None
    kept_facts = [[(how, plain(f)) if isinstance(how, str) else how for f, how in mine] for mine in facts]
    return report, steps.complete(state), steps.kept(kept_facts)
