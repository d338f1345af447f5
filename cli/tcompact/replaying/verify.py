"""Verifying dumps: each run rebuilt from its recorded answers, and compared with what it recorded."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..compressors.base import CompressionResult
from .differences import first_difference
from ..dump import Dump, RunIndex, load_dumps, message_dict, read_dump, sibling_dump
from ..errors import InputError
from ..summarizers.base import ModelWindow, Summarizer, SummaryRequest, SummaryResponse
from ..summarizers.contracts import extract_snapshot
from ..summarizers.recorded import ReplaySummarizer, fingerprint, without_token_figures
from .rebuild import rebuild
from .rerun import PromptOverride

__all__ = ["Check", "read_checked", "verify", "verify_paths"]


@dataclass(frozen=True)
class Check:
    """The verdict on one dump: ``ok``, or the first difference (field, expected, got)."""

    dump: Dump
    ok: bool
    field: str = ""
    expected: Any = None
    got: Any = None
    note: str = ""
    error: str = ""  # the dump could not be read or its run rebuilt: what, and what to do

    @classmethod
    def failed(cls, path: Path, exc: InputError) -> Check:
        """The check of a dump that could not be read, or whose run could not be rebuilt."""
        return cls(Dump(path, {}), False, error=f"{exc.what} — {exc.hint}" if exc.hint else exc.what)


def read_checked(paths: Iterable[str | Path]) -> tuple[list[Dump], list[Check]]:
    """The dumps that can be used, and a failed check for each one that cannot."""
    failed: list[Check] = []
    dumps = load_dumps(paths, on_error=lambda path, exc: failed.append(Check.failed(path, exc)))
    return dumps, failed


def _runs(dumps: Sequence[Dump]) -> dict[str, list[Dump]]:
    runs: dict[str, list[Dump]] = defaultdict(list)
    for d in dumps:
        runs[d.doc["run"]["id"] or d.name].append(d)
    for items in runs.values():
        items.sort(key=lambda d: d.doc["run"]["call"])
    return runs


def verify_paths(paths: Iterable[str | Path]) -> list[Check]:
    """One check per dump of ``paths``, in path order: a damaged dump, or a run that cannot be rebuilt,
    fails its own checks only."""
    dumps, failed = read_checked(paths)
    return sorted([*verify(dumps), *failed], key=lambda c: str(c.dump.path))


def verify(dumps: Sequence[Dump]) -> list[Check]:
    """Check every dump by rebuilding its run from the recorded answers.

    The answers of the run's calls that were not given are read from the dumps beside them. A run
    that cannot be rebuilt (a dump beside it unreadable, a stored message of the wrong shape) gives
    each of its dumps a failed check with the error; the other runs are checked as usual.
    """
    checks: list[Check] = []
    folders: RunIndex = {}
    for run in _runs(dumps).values():
        try:
            checks += _verify_run(run, folders)
        except InputError as exc:  # a run that cannot be rebuilt fails its dumps, not the others
            checks += [Check.failed(d.path, exc) for d in run]
    return checks


def _verify_run(run: Sequence[Dump], folders: RunIndex) -> list[Check]:
    answers = [d.doc for d in run]
    have = {d.doc["run"]["call"] for d in run}
    total = run[0].doc["run"].get("calls")
    for n in range(1, total + 1 if isinstance(total, int) and total < 100_000 else 1):
        path = None if n in have else sibling_dump(run[0].path, (run[0].doc["run"]["id"], n), folders)
        if path is not None:
            answers.append(read_dump(path).doc)
    redacted = any(d.get("redactions") for d in answers)
    replay = ReplaySummarizer(answers, origin="the run's dumps", blind=redacted)
    recorder = _Recorder(replay)
    prompt = (run[0].doc.get("replayed_from") or {}).get("prompt")  # a re-run with --prompt sent that text
    result = rebuild(run[0].doc, PromptOverride(recorder, prompt if isinstance(prompt, str) else None),
                     path=run[0].path)
    return [_check(d, result, recorder.requests, redacted=redacted) for d in run]


class _Recorder(Summarizer):
    """Passes requests to another summariser and remembers them."""

    name = "replay"

    def __init__(self, inner: Summarizer) -> None:
        self.inner = inner
        self.requests: list[SummaryRequest] = []
        self.narrates, self.trusted = inner.narrates, inner.trusted  # (the extractive answers are not checked again)

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        self.requests.append(request)
        return self.inner.summarize(request)

    def answer_ahead(self, requests: Sequence[SummaryRequest]) -> None:
        self.inner.answer_ahead(requests)

    def context_window(self) -> ModelWindow | None:
        return self.inner.context_window()


def _check(dump: Dump, result: CompressionResult, requests: Sequence[SummaryRequest], *, redacted: bool) -> Check:
    doc = dump.doc
    recorded = fingerprint(doc["request"]["messages_sent"], str(doc["request"]["contract"]), blind=redacted)
    if recorded not in {fingerprint(r.wire_messages(), r.contract, blind=redacted) for r in requests}:
        return _request_difference(dump, requests, redacted=redacted)
    if doc.get("response"):
        got = extract_snapshot(doc["response"]["raw_content"], doc["request"].get("prompt") or "")
        if got != doc["response"]["extracted_summary"]:
            return _differs(dump, "response.extracted_summary", doc["response"]["extracted_summary"], got)
    note = f"token figures not compared: {doc['redactions']} redacted text(s)" if doc.get("redactions") else ""
    if doc.get("context_after") is not None:
        return _check_after(dump, result, note=note)
    return Check(dump, True, note=note)


def _request_difference(dump: Dump, requests: Sequence[SummaryRequest], *, redacted: bool) -> Check:
    """The first difference between the recorded request and the one the rebuild made at its place."""
    doc, n = dump.doc, dump.doc["run"]["call"]
    if n > len(requests):
        return Check(dump, False, "request", f"call {n} of the run", f"{len(requests)} call(s) made")
    rebuilt = requests[n - 1]
    want = {"contract": doc["request"]["contract"], "messages_sent": doc["request"]["messages_sent"]}
    have = {"contract": rebuilt.contract, "messages_sent": _redacted(rebuilt.wire_messages(), doc)}
    if redacted:
        want, have = without_token_figures(want), without_token_figures(have)
    found = first_difference(want, have, "request")
    return Check(dump, False, *(found or ("request", "the recorded request", "another call's request")))


def _redacted(value: Any, doc: Mapping[str, Any]) -> Any:
    """``value`` redacted as the dump's texts were, when secret redaction changed any of them."""
    if not doc.get("redactions"):
        return value
    from ..redact import redact_value

    return redact_value(value)


def _check_after(dump: Dump, result: CompressionResult, *, note: str) -> Check:
    doc = dump.doc
    expected = doc["context_after"]["messages"]
    got = _redacted([message_dict(m) for m in result.messages], doc)
    if got != expected:
        found = first_difference(expected, got, "context_after.messages")
        return Check(dump, False, *(found or ("context_after.messages", "the recorded messages", "others")))
    if doc.get("redactions"):
        return Check(dump, True, note=note)
    for field, want, have in (("benefit.tokens_before", doc["benefit"]["tokens_before"], result.tokens_before),
                              ("benefit.tokens_after", doc["benefit"]["tokens_after"], result.tokens_after)):
        if want != have:
            return Check(dump, False, field, want, have)
    return Check(dump, True)


def _differs(dump: Dump, field: str, want: Any, have: Any) -> Check:
    found = first_difference(want, have, field)
    return Check(dump, False, *(found or (field, want, have)))
