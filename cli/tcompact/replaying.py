"""Replaying compression dumps offline: the library side of ``tcompact replay``.

A dump is self-contained: the compressor and its settings, the messages it started from, the
request, the response (or error) of every call of its run. Verifying re-runs the compressor on
the recorded messages with a summariser that gives back the recorded answers, and checks that the
request, the extracted summary, the messages after and the token figures come out the same.
Re-running sends the recorded request to another backend (or with another prompt) and rebuilds
the compaction from the new answer.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


from .compressors import get
from .compressors.base import CompressionResult, Context
from .dump import Dump, RunIndex, load_dumps, message_dict, messages_of, read_dump, sibling_dump
from .differences import first_difference
from .errors import InputError
from .redact import redact
from .summarizers.base import Summarizer, SummaryRequest, SummaryResponse, model_window, prepared
from .summarizers.contracts import extract_snapshot
from .summarizers.recorded import ReplaySummarizer, fingerprint, without_token_figures
from .tokens import TokenCounter

__all__ = ["Check", "read_checked", "verify", "rebuild", "rerun", "Rerun", "table_rows"]

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


def _context(doc: Mapping[str, Any], summarizer: Summarizer) -> Context:
    enc = doc["encoding"]
    counter = TokenCounter(enc["name"], approximate=bool(enc.get("approximate")))
    return Context(counter=counter, window=doc["trigger"]["context_window"], summarizer=summarizer,
                   force=bool(doc["trigger"]["forced"]), preserve=doc["request"].get("preserve"),
                   sleep=lambda s: None)


def rebuild(doc: Mapping[str, Any], summarizer: Summarizer, *, path: Path | None = None) -> CompressionResult:
    """Run the dump's compressor with its settings on its recorded messages, answered by ``summarizer``."""
    compressor = get(doc["processor"]["name"])
    settings = compressor.settings_model(**doc["processor"]["settings"])
    try:
        messages = messages_of(doc["context_before"]["messages"])
    except (ValueError, TypeError, AttributeError) as exc:  # ShapeError: a stored message of the wrong shape
        raise InputError(f"field context_before.messages holds a message tcompact cannot read ({exc})",
                         path=str(path) if path is not None else None,
                         hint="the dump was edited or written by another tool; compact again to get a new one") from None
    return compressor.compress(messages, settings, _context(doc, summarizer))


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
    result = rebuild(run[0].doc, _PromptOverride(recorder, prompt if isinstance(prompt, str) else None),
                     path=run[0].path)
    return [_check(d, result, recorder.requests, redacted=redacted) for d in run]


class _Recorder:
    """Passes requests to another summariser and remembers them."""

    name = "replay"

    def __init__(self, inner: Summarizer) -> None:
        self.inner = inner
        self.requests: list[SummaryRequest] = []

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        self.requests.append(request)
        return self.inner.summarize(request)

    def context_window(self):
        return model_window(self.inner)


def _check(dump: Dump, result: CompressionResult, requests: Sequence[SummaryRequest], *, redacted: bool) -> Check:
    doc = dump.doc
    recorded = fingerprint(doc["request"]["messages_sent"], str(doc["request"]["contract"]), blind=redacted)
    if recorded not in {fingerprint(r.wire_messages(), r.contract, blind=redacted) for r in requests}:
        return _request_difference(dump, requests, redacted=redacted)
    if doc.get("response"):
        got = extract_snapshot(doc["response"]["raw_content"])
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
    from .redact import redact_value

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


def table_rows(dumps: Sequence[Dump]) -> list[dict[str, Any]]:
    """One summary row per dump (time, processor, stage, tokens, reduction, latency, attempts, errors, accepted)."""
    rows = []
    for d in dumps:
        doc = d.doc
        benefit, response = doc["benefit"], doc.get("response") or {}
        rows.append({"dump": d.name, "time": doc.get("created_at"), "processor": doc["processor"]["name"],
                     "stage": doc["request"].get("stage"), "tokens_before": benefit["tokens_before"],
                     "tokens_after": benefit["tokens_after"], "reduction_ratio": benefit["reduction_ratio"],
                     "latency_s": response.get("latency_s"), "attempts": len(doc.get("attempts") or []),
                     "error_kinds": sorted({a["error_kind"] for a in doc.get("attempts") or [] if a["error_kind"]}),
                     "accepted": benefit["accepted"], "status": doc["call"]["status"]})
    return rows


@dataclass(frozen=True)
class Rerun:
    """A dump's run done again with another backend or prompt, next to what was recorded."""

    dump: Dump
    result: CompressionResult
    dumps: list[tuple[str, dict[str, Any]]]
    recorded_summary: str
    new_summary: str


class _PromptOverride:
    """A summariser seen through another prompt (the system prompt of a "blocks" request)."""

    def __init__(self, inner: Summarizer, prompt: str | None) -> None:
        self.inner, self.prompt, self.name = inner, prompt, inner.name

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        return self.inner.summarize(self._override(request))

    def prepare(self, request: SummaryRequest) -> SummaryRequest:
        return prepared(self.inner, self._override(request))

    def context_window(self):
        return model_window(self.inner)

    def _override(self, request: SummaryRequest) -> SummaryRequest:
        from dataclasses import replace

        from .compressors._summarize import state_budget

        if self.prompt is None:
            return request
        field = "system" if request.contract == "blocks" else "prompt"
        return replace(request, **{field: state_budget(self.prompt, request.max_tokens) if field == "prompt"
                                   else self.prompt})


def rerun(dump: Dump, summarizer: Summarizer, *, prompt: str | None = None) -> Rerun:
    """Run the dump's compressor again on its recorded messages with ``summarizer`` (and ``prompt``)."""
    from .dump import DumpContext, build_dumps

    doc = dump.doc
    backend = _PromptOverride(summarizer, prompt)
    result = rebuild(doc, backend, path=dump.path)
    compressor = get(doc["processor"]["name"])
    settings = compressor.settings_model(**doc["processor"]["settings"])
    ctx = _context(doc, backend)
    dctx = DumpContext(session=doc["session_id"], source=doc["source"], summarizer=summarizer.name,
                       preserve=ctx.preserve)
    dumps = build_dumps(result, before=messages_of(doc["context_before"]["messages"]), settings=settings,
                        counter=ctx.counter, ctx=dctx)
    for _, new in dumps:
        new["replayed_from"] = {"dump": dump.name, "run": doc["run"]["id"], "prompt": prompt}
    recorded = (doc.get("response") or {}).get("extracted_summary") or ""
    last = next((c.response for c in reversed(result.calls) if c.response is not None), None)
    # the new answer is shown on the terminal and in --json: redacted as the dump that holds it is
    return Rerun(dump, result, dumps, recorded, redact(extract_snapshot(last.text)) if last else "")
