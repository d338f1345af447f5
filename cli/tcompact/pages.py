"""The HTML reports: what they draw beyond the report dicts (worked out here, so that ``render/html_*``
only lays out), the check that a page can be written, and writing it.

``inspect --html`` of one file draws its messages one by one (cumulative tokens, kinds per round, the
largest messages expanded) and the span layouts: :func:`file_page` takes them from what inspection
counted (:func:`tcompact.inspection.inspect_counted`), nothing is read or counted again.
``compact --html`` draws, per summariser call, what the report does not hold, the dump each call
wrote and the memory blocks the run produced: :func:`compact_page`. A page needs the ``html`` extra
(plotly) and a path that :func:`tcompact.artifacts.check_page` accepts, checked before any work.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from .artifacts import check_page, write_page
from .compressors import build_span, span_names
from .errors import UsageError
from .inspection import Counted, InspectOptions, span_part
from .model import Message
from .counting.tokens import MessageTokens

if TYPE_CHECKING:
    from .inspection.shapes import FileReport, InspectReport, SpanPart, TranscriptReport
    from .compaction.report import CompactReport

__all__ = ["check_html", "SpanLayout", "CallFacts", "MemoryBlock", "FilePage", "file_page", "write_inspect_page", "span_layouts", "CompactPage", "compact_page",
           "write_compact_page", "call_facts", "memory_blocks_made"]


class SpanLayout(TypedDict):
    """A compressor's prefix/body/tail of a transcript: message ranges and tokens."""

    compressor: str
    prefix: SpanPart
    body: SpanPart
    tail: SpanPart


class CallFacts(TypedDict):
    """What a compaction's page shows of a summariser call beyond the report: stage, target, usage, retried."""

    stage: str | None
    target_tokens: int
    usage: dict[str, int] | None
    retried: bool


class MemoryBlock(TypedDict):
    """A memory block the compaction made: its message index, kind, text (and on the page its tokens)."""

    index: int
    kind: str
    text: str
    tokens: NotRequired[int]


def check_html(path: Path, *, force: bool, keep: Sequence[str | Path | None] = ()) -> None:
    """Before any work: the ``html`` extra is installed and a page can be written at ``path``."""
    from .render.html_common import require_plotly

    require_plotly()
    check_page(path, force=force, keep=keep)


@dataclass(frozen=True)
class FilePage:
    """The page of one transcript: its file's and its own report entries, its messages and their counts,
    and the span layouts it draws."""

    file: FileReport
    transcript: TranscriptReport
    messages: Sequence[Message]
    counts: Sequence[MessageTokens]
    layouts: list[SpanLayout]


def file_page(report: InspectReport, counted: Mapping[str, Counted] | None, *, spans: str | None = None,
              keep_recent: int | None = None, wanted: str | None = None) -> FilePage | None:
    """The page of the transcript ``wanted`` (default: the main one) when the report is of one file read
    without error, else None (the page then has one row per file). Span layouts: ``spans``, else every
    compressor that has a span, with ``keep_recent`` newest messages kept raw instead of the default."""
    files = report["files"]
    if len(files) != 1 or report["errors"] or counted is None:
        return None
    f = files[0]
    ts = f["transcripts"]
    t = next((x for x in ts if x["id"] == wanted), None) if wanted is not None else \
        next((x for x in ts if x["kind"] == "main"), ts[0])
    if t is None:
        raise UsageError(f"no transcript {wanted!r} in this file", path=f["path"],
                         hint=f"choose one of: {', '.join(x['id'] for x in ts)}")
    c = counted[t["id"]]
    totals = [x.total for x in c.counts]
    layouts = span_layouts(c.messages, totals, [spans] if spans else span_names(), keep_recent)
    return FilePage(f, t, c.messages, c.counts, layouts)


def write_inspect_page(path: Path, report: InspectReport, counted: Mapping[str, Counted] | None,
                       options: InspectOptions, *, wanted: str | None = None) -> Path:
    """Write the page of an inspect report: one transcript in detail, or one row per file. An older page
    is replaced (it is a view), an input never."""
    from .render.html_inspect import inspect_html

    one = file_page(report, counted, spans=options.spans, keep_recent=options.keep_recent, wanted=wanted)
    return write_page(path, inspect_html(report, one), force=True, inputs=tuple(f["path"] for f in report["files"]))


def span_layouts(messages: Sequence[Message], totals: Sequence[int], names: Sequence[str],
                 keep_recent: int | None) -> list[SpanLayout]:
    """The prefix/body/tail of each named compressor's span: message ranges and tokens."""
    spans = [build_span(name, messages, keep_recent=keep_recent) for name in names]
    return [{"compressor": name, "prefix": span_part(s.prefix, totals), "body": span_part(s.body, totals),
             "tail": span_part(s.tail, totals)} for name, s in zip(names, spans)]


@dataclass(frozen=True)
class CompactPage:
    """What the page of a compaction draws beyond its report: per call, the facts and the dump written;
    the outputs written (by label); the memory blocks produced, with their tokens."""

    report: CompactReport
    facts: list[CallFacts]
    dumps: list[Path]
    outputs: dict[str, Path | None]
    blocks: list[MemoryBlock]


def compact_page(run: Any, paths: Any, *, written: Sequence[Path], problems: Sequence[str]) -> CompactPage:
    """The page data of a compaction run (:class:`tcompact.compaction.CompactionRun`) once its outputs
    (``paths``, :class:`tcompact.compaction.OutputPaths`) are written."""
    dumps = [p for p in written if p.parent == paths.dump_dir]
    outputs = {"transcript": paths.output if paths.output in written else None,
               "token report": paths.report if paths.report is not None and paths.report in written else None,
               "dump folder": paths.dump_dir if dumps else None,
               "offload store": paths.store if run.blobs and any(p.parent == paths.store for p in written) else None}
    blocks = memory_blocks_made(run.transcript.messages, run.messages) if run.status == "compacted" else []
    blocks = [{**b, "tokens": run.counter.count(b["text"])} for b in blocks]
    return CompactPage({**run.report, "invariants": list(problems)}, call_facts(run.stages), dumps, outputs, blocks)


def write_compact_page(path: Path, run: Any, paths: Any, *, written: Sequence[Path], problems: Sequence[str],
                       dry_run: bool, force: bool) -> Path:
    """Write the page of a compaction run, after its outputs so that it links them (links are relative
    to the page's folder)."""
    from .render.html_compact import compact_page_html

    page_dir = path.parent if str(path.parent) else Path(".")
    document = compact_page_html(compact_page(run, paths, written=written, problems=problems), page_dir=page_dir,
                                 dry_run=dry_run)
    return write_page(path, document, force=force, inputs=(run.source.path,))


def call_facts(stages: Sequence[Any]) -> list[CallFacts]:
    """Per summariser call, in report order, what the report does not hold: stage, target, usage, retried."""
    out: list[CallFacts] = []
    for stage in stages:
        for c in stage.result.calls:
            usage = dict(c.response.usage) if c.response is not None and c.response.usage else None
            out.append({"stage": c.request.stage, "target_tokens": c.request.target_tokens, "usage": usage,
                        "retried": c.retried})
    return out


def memory_blocks_made(before: Sequence[Message], after: Sequence[Message]) -> list[MemoryBlock]:
    """The memory blocks of the compacted messages that the input did not hold: index, kind, text."""
    from .rounds import memory_blocks

    old = {m.text for m in before}
    return [{"index": b.index, "kind": b.kind, "text": after[b.index].text}
            for b in memory_blocks(after) if b.index is not None and after[b.index].text not in old]
