"""Re-running a dump: its compaction done again with another backend, model or prompt, and its new dumps
written next to it (``replays/``), linked to the original."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import summarizers
from ..artifacts import write_json_all
from ..compressors import get
from ..compressors.base import CompressionResult
from ..defaults import DEFAULT_SUMMARIZER
from ..dump import Dump, DumpContext, build_dumps, messages_of
from ..errors import UsageError, WorkFailed
from ..redact import redact
from ..summarizers.base import ModelWindow, Summarizer, SummaryRequest, SummaryResponse
from ..summarizers.contracts import extract_snapshot
from .rebuild import rebuild, run_context

__all__ = ["Rerun", "PromptOverride", "rerun", "check_rerun_options", "RerunOutcome", "RerunOptions", "rerun_dump"]


@dataclass(frozen=True)
class Rerun:
    """A dump's run done again with another backend or prompt, next to what was recorded."""

    dump: Dump
    result: CompressionResult
    dumps: list[tuple[str, dict[str, Any]]]
    recorded_summary: str
    new_summary: str


class PromptOverride(Summarizer):
    """A summariser seen through another prompt (the system prompt of a "blocks" request)."""

    def __init__(self, inner: Summarizer, prompt: str | None) -> None:
        self.inner, self.prompt, self.name = inner, prompt, inner.name
        self.narrates, self.trusted = inner.narrates, inner.trusted

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        return self.inner.summarize(self._override(request))

    def prepare(self, request: SummaryRequest) -> SummaryRequest:
        return self.inner.prepare(self._override(request))

    def answer_ahead(self, requests: Sequence[SummaryRequest]) -> None:
        self.inner.answer_ahead([self._override(r) for r in requests])

    def context_window(self) -> ModelWindow | None:
        return self.inner.context_window()

    def _override(self, request: SummaryRequest) -> SummaryRequest:
        from ..summarizers.fitting import state_budget

        if self.prompt is None:
            return request
        field = "system" if request.contract == "blocks" else "prompt"
        return replace(request, **{field: state_budget(self.prompt, request.max_tokens) if field == "prompt"
                                   else self.prompt})


def rerun(dump: Dump, summarizer: Summarizer, *, prompt: str | None = None) -> Rerun:
    """Run the dump's compressor again on its recorded messages with ``summarizer`` (and ``prompt``)."""
    doc = dump.doc
    backend = PromptOverride(summarizer, prompt)
    result = rebuild(doc, backend, path=dump.path)
    compressor = get(doc["processor"]["name"])
    settings = compressor.settings_model(**doc["processor"]["settings"])
    ctx = run_context(doc, backend)
    dctx = DumpContext(session=doc["session_id"], source=doc["source"], summarizer=summarizer.name,
                       preserve=ctx.preserve)
    dumps = build_dumps(result, before=messages_of(doc["context_before"]["messages"]), settings=settings,
                        counter=ctx.counter, ctx=dctx)
    for _, new in dumps:
        new["replayed_from"] = {"dump": dump.name, "run": doc["run"]["id"], "prompt": prompt}
    recorded = (doc.get("response") or {}).get("extracted_summary") or ""
    last = next((c for c in reversed(result.calls) if c.response is not None), None)
    # the new answer is shown on the terminal and in --json: redacted as the dump that holds it is
    new = redact(extract_snapshot(last.response.text, last.request.prompt)) if last and last.response else ""
    return Rerun(dump, result, dumps, recorded, new)


def check_rerun_options(summarizer: str | None, *, model: str | None, base_url: str | None, prompt: object,
                        dump_dir: Path | None) -> None:
    """Options of a re-run are refused where they would be ignored (without ``summarizer``: no re-run)."""
    if summarizer is None:
        given = [o for o, v in (("--model", model), ("--base-url", base_url), ("--prompt", prompt),
                                ("--dump-dir", dump_dir)) if v is not None]
        if given:
            raise UsageError(f"{given[0]} applies to a re-run, and no --summarizer was given",
                             hint="add --summarizer extractive or openai")
        return
    able = [b for b in summarizers.REGISTRY if b.reruns]
    backend = next((b for b in able if b.name == summarizer), None)
    if backend is None:
        raise UsageError(f"--summarizer {summarizer!r} cannot re-run a dump",
                         hint=f"use {' or '.join(b.name for b in able)}")
    if not backend.reads_prompt and prompt is not None:
        raise UsageError(f"--prompt does not apply to the {summarizer} summariser, which builds its summary from the "
                         "transcript and reads no prompt", hint="re-run with --summarizer openai to try a prompt")
    if not backend.calls_model and (model is not None or base_url is not None):
        raise UsageError(f"{'--model' if model is not None else '--base-url'} is an option of the openai summariser",
                         hint="add --summarizer openai, or leave it out")


@dataclass(frozen=True)
class RerunOptions:
    """The summariser a dump is re-run with and how its calls are made: what building a backend reads
    (:class:`tcompact.summarizers.SummarizerOptions`), without a chain to check."""

    summarizer: str = DEFAULT_SUMMARIZER
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    replay_dir: Path | None = None
    run: summarizers.RunSettings = field(default_factory=summarizers.RunSettings)
    #: hears the call's progress (none here: a re-run shows its result when it is done)
    progress: Any = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class RerunOutcome:
    """A re-run, the dumps it wrote and where, and the failure to report once it is shown (None: exit 0)."""

    rerun: Rerun
    written: list[Path]
    folder: Path
    failure: WorkFailed | None


def rerun_dump(dumps: Sequence[Dump], options: Any, *, prompt: str | None, dump_dir: Path | None) -> RerunOutcome:
    """Re-run the one dump given with the backend ``options`` name (:class:`RerunOptions`: the summariser,
    its model — default: the one the dump records — and how calls are made), and write its new dumps to
    ``dump_dir`` (default: ``replays/`` next to the dump)."""
    if len(dumps) != 1:
        raise UsageError(f"--summarizer re-runs one dump; {len(dumps)} were given", hint="pass a single dump file")
    (dump,) = dumps
    request = dump.doc["request"]
    backend = summarizers.get(options.summarizer)
    recorded = request.get("model") if backend.calls_model else None
    mode = request.get("mode")
    # the recorded request mode, for a backend that sends the conversation to a model (the extractive summariser
    # refuses the option)
    run = options.run.model_copy(update={"request_mode": mode if mode in summarizers.MODES else "conversation"}) \
        if backend.calls_model else options.run
    options = replace(options, model=options.model or (recorded if isinstance(recorded, str) else None), run=run)
    settings = summarizers.check(options, used=True)
    assert settings is not None  # a backend that is used has its settings
    from ..counting.tokens import TokenCounter

    built = summarizers.build(settings, counter=TokenCounter(dump.doc["encoding"]["name"]), progress=options.progress)
    result = rerun(dump, built, prompt=prompt)
    folder = dump_dir or dump.path.parent / "replays"
    written = write_json_all(((folder / name, doc) for name, doc in result.dumps), sync=False, inputs=(dump.path,))
    failure = WorkFailed(f"the re-run failed: {result.result.reason}", hint=f"its dumps are in {folder}") \
        if result.result.failed else None
    return RerunOutcome(result, written, folder, failure)
