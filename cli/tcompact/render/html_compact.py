"""The HTML report of ``tcompact compact --html``: chart data (pure, exact numbers) and the page.

Before and after totals, a waterfall of tokens through the chain (round-level's pipeline stages
one bar each), the summariser calls (latency, tokens, attempts, a link to each dump), the memory
blocks the run produced (collapsible), the stages and the invariant checks. Drawn from the
compaction report dict (:mod:`tcompact.compaction.report`) and, for what it does not hold (per call the
stage, the target and the provider's usage; the dumps and outputs written; the memory blocks),
from a :class:`tcompact.pages.CompactPage`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .html_common import chart_div, esc, link, n, page, pct, table

if TYPE_CHECKING:
    from ..pages import CallFacts, CompactPage, MemoryBlock
    from ..compaction.report import CompactReport, StageReport, SummarizerTotals

__all__ = ["waterfall_steps", "waterfall_chart", "calls_rows", "latency_chart", "compact_html", "compact_page_html"]

#: The invariants every compaction is checked against (README, "Invariants").
CHECKS = (
    "each tool result keeps its call and each call its result",
    "system and developer messages are kept",
    "the last real user request is kept verbatim",
    "a stage's preserved prefix is unchanged",
    "an applied stage makes the transcript smaller",
    "the written transcript reads back as the compacted messages",
)
_BLOCK_TEXT = 20_000


# ----------------------------------------------------------------------------------------- chart data


def waterfall_steps(report: CompactReport) -> list[dict[str, Any]]:
    """``{label, measure, value}``: the tokens before, one change per stage (or pipeline stage), the tokens after."""
    steps = [{"label": "before", "measure": "absolute", "value": report["before"]["tokens"]}]
    for i, s in enumerate(report["stages"], start=1):
        name = f"{i}. {s['processor']}"
        pipeline = s.get("pipeline") or []
        for p in pipeline:
            steps.append({"label": f"{name}<br>{p['stage']}", "measure": "relative",
                          "value": p["tokens_after"] - p["tokens_before"]})
        if not pipeline:
            steps.append({"label": name, "measure": "relative", "value": s["tokens_after"] - s["tokens_before"]})
        elif pipeline[-1]["tokens_after"] != s["tokens_after"] or pipeline[0]["tokens_before"] != s["tokens_before"]:
            done = sum(p["tokens_after"] - p["tokens_before"] for p in pipeline)
            steps.append({"label": f"{name}<br>rest", "measure": "relative",
                          "value": s["tokens_after"] - s["tokens_before"] - done})
    steps.append({"label": "after", "measure": "absolute", "value": report["after"]["tokens"]})
    return steps


def waterfall_chart(report: CompactReport) -> dict[str, Any]:
    """A plotly waterfall of :func:`waterfall_steps`."""
    steps = waterfall_steps(report)
    data = [{"type": "waterfall", "orientation": "v", "x": [s["label"] for s in steps],
             "measure": [s["measure"] for s in steps], "y": [s["value"] for s in steps],
             "text": [f"{s['value']:,}" if s["measure"] == "absolute" else f"{s['value']:+,}" for s in steps],
             "textposition": "auto", "connector": {"line": {"color": "#94a3b8"}},
             "decreasing": {"marker": {"color": "#10b981"}}, "increasing": {"marker": {"color": "#b42318"}},
             "totals": {"marker": {"color": "#2563eb"}},
             "hovertemplate": "%{x}: %{text} tokens<extra></extra>"}]
    layout = {"margin": {"l": 70, "r": 20, "t": 30, "b": 60}, "showlegend": False,
              "xaxis": {"type": "category", "tickangle": 0, "automargin": True},
              "yaxis": {"title": {"text": "tokens"}, "rangemode": "tozero"}}
    return {"data": data, "layout": layout}


def calls_rows(report: CompactReport, facts: Sequence[CallFacts] = (),
               dumps: Sequence[Path | str] = ()) -> list[dict[str, Any]]:
    """One row per summariser call: the report's entry merged with its facts and its dump (when known)."""
    rows = []
    for s in report["stages"]:
        for c in s["calls"]:
            rows.append({"processor": s["processor"], "stage": None, "attempt": c["number"], "status": c["status"],
                         "error_kind": c["error_kind"], "reason": c["reason"], "latency_s": c["latency_s"],
                         "target_tokens": None, "prompt_tokens": None, "completion_tokens": None, "dump": None})
    if len(facts) == len(rows):
        for row, fact in zip(rows, facts):
            usage = fact.get("usage") or {}
            row.update(stage=fact.get("stage"), target_tokens=fact.get("target_tokens"),
                       prompt_tokens=usage.get("prompt_tokens"), completion_tokens=usage.get("completion_tokens"))
    if len(dumps) == len(rows):
        for row, dump in zip(rows, dumps):
            row["dump"] = str(dump)
    return rows


def latency_chart(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One bar per summariser call: its latency in seconds (0 for a call without a response)."""
    labels = [f"{i}. {r['processor']}" + (f"<br>{r['stage']}" if r["stage"] else "") for i, r in enumerate(rows, 1)]
    data = [{"type": "bar", "x": labels, "y": [r["latency_s"] or 0 for r in rows],
             "marker": {"color": ["#b42318" if r["status"] == "failed" else "#2563eb" for r in rows]},
             "hovertemplate": "%{x}: %{y:.3f} s<extra></extra>"}]
    layout = {"margin": {"l": 60, "r": 20, "t": 20, "b": 60}, "showlegend": False,
              "xaxis": {"type": "category", "tickangle": 0, "automargin": True}, "yaxis": {"title": {"text": "seconds"}, "rangemode": "tozero"}}
    return {"data": data, "layout": layout}


# ----------------------------------------------------------------------------------------- the page


def compact_html(report: CompactReport, *, page_dir: Path, calls: Sequence[Mapping[str, Any]] = (),
                 blocks: Sequence[MemoryBlock] = (), problems: Sequence[str] | None = None,
                 outputs: Mapping[str, Any] | None = None, dry_run: bool = False) -> str:
    """The page of one compaction. ``calls`` come from :func:`calls_rows`; ``blocks`` are the memory
    blocks made (index, kind, text, and their tokens when counted); ``outputs`` names the written
    transcript and report; links are relative to ``page_dir``."""
    before, after = report["before"], report["after"]
    problems = list(report.get("invariants") or []) if problems is None else list(problems)
    status = report["status"]
    specs: dict[str, Any] = {"waterfall": waterfall_chart(report)}
    if calls:
        specs["latency"] = latency_chart(calls)
    src = report["source"]
    approx = " (approximate)" if report["approximate"] else ""
    saved = before["tokens"] - after["tokens"]
    sm = report["summarizer"]
    body = [f"<h1>tcompact compact: {esc(os.path.basename(str(src['path'])))}</h1>",
            f'<p class="sub">{esc(src["path"])} · {esc(src["format"])} → {esc(report["output_format"])} · '
            f'transcript {esc(src.get("transcript"))} · window {n(report["context_window"])} · '
            f'{esc(report["encoding"])}{approx}' + (" · dry run: nothing was written" if dry_run else "") + "</p>",
            '<div class="figures">' + "".join(
                f'<div class="figure"><b>{esc(v)}</b><span>{esc(k)}</span></div>' for k, v in (
                    ("status", status), ("tokens before", n(before["tokens"])), ("tokens after", n(after["tokens"])),
                    ("saved", pct(saved, before["tokens"])),
                    ("messages", f"{before['messages']:,} → {after['messages']:,}"),
                    ("summariser calls", f"{sm['calls']} ({sm['failed_calls']} failed)"))) + "</div>",
            "<h2>Tokens through the chain</h2>", chart_div("waterfall", height=380),
            "<h2>Stages</h2>", _stages_table(report["stages"])]
    body += ["<h2>Summariser calls</h2>", _calls_html(calls, sm, page_dir)]
    if calls:
        body.append(chart_div("latency", height=280))
    body += ["<h2>Memory blocks produced</h2>", _blocks_html(blocks)]
    body += ["<h2>Invariant checks</h2>", _invariants_html(status, problems, dry_run)]
    if outputs:
        items = [f"<li>{esc(k)}: {link(v, page_dir)}</li>" for k, v in outputs.items() if v]
        if items:
            body += ["<h2>Files written</h2>", "<ul>" + "".join(items) + "</ul>"]
    return page(f"tcompact compact: {os.path.basename(str(src['path']))}", "\n".join(body), specs)


def _stages_table(stages: Sequence[StageReport]) -> str:
    rows = []
    for i, s in enumerate(stages, 1):
        rows.append([f"{i}. {s['processor']}", "yes" if s["applied"] else "failed" if s["failed"] else "no",
                     s["tokens_before"], s["tokens_after"], f"{s['messages_before']:,} → {s['messages_after']:,}",
                     len(s["calls"]), s["offloaded"], s["reason"], "; ".join(s["notes"])])
    html = table(["stage", "applied", "tokens before", "tokens after", "messages", "calls", "offloaded", "reason",
                  "notes"], rows, numeric=[False, False, True, True, False, True, True])
    for i, s in enumerate(stages, 1):
        if s.get("pipeline"):
            html += f"<p class=\"note\">{i}. {esc(s['processor'])} pipeline:</p>" + table(
                ["stage", "tokens before", "tokens after", "calls", "replaced", "reason"],
                [[p["stage"], p["tokens_before"], p["tokens_after"], p["calls"], p["replaced"], p["reason"]]
                 for p in s["pipeline"]], numeric=[False, True, True, True, True])
    return html


def _calls_html(calls: Sequence[Mapping[str, Any]], sm: SummarizerTotals, page_dir: Path) -> str:
    if not calls:
        return f'<p class="note">No summariser call (summariser: {esc(sm["name"] or "none")}).</p>'
    usage = sm.get("usage") or {}
    head = (f'<p class="note">Summariser {esc(sm["name"])}: {sm["calls"]} call(s), {sm["failed_calls"]} failed'
            + (f"; usage reported: {n(usage.get('prompt_tokens'))} prompt, {n(usage.get('completion_tokens'))} "
               f"completion, {n(usage.get('total_tokens'))} total tokens" if usage else "; no usage reported")
            + ".</p>")
    rows = []
    for i, c in enumerate(calls, 1):
        dump = link(c["dump"], page_dir, os.path.basename(c["dump"])) if c["dump"] else "—"
        status = esc(c["status"]) + (f" ({esc(c['error_kind'])})" if c["error_kind"] else "")
        rows.append([i, esc(c["processor"]), esc(c["stage"] or "—"), c["attempt"], status,
                     c["latency_s"], c["target_tokens"], c["prompt_tokens"], c["completion_tokens"], esc(c["reason"]),
                     dump])
    return head + table(["#", "compressor", "stage", "attempt", "status", "latency s", "target tokens",
                         "prompt tokens", "completion tokens", "reason", "dump"], rows, sortable=True,
                        numeric=[True, False, False, True, False, True, True, True, True],
                        raw=[False, True, True, False, True, False, False, False, False, True, True], table_id="calls")


def _blocks_html(blocks: Sequence[MemoryBlock]) -> str:
    if not blocks:
        return '<p class="note">None: this run wrote no memory block.</p>'
    out = []
    for b in blocks:
        text = b["text"]
        size = f", {b['tokens']:,} tokens" if b.get("tokens") is not None else ""
        cut = f"\n… ({len(text) - _BLOCK_TEXT:,} more characters)" if len(text) > _BLOCK_TEXT else ""
        out.append(f"<details><summary>message {b['index']}: {esc(b['kind'])} ({len(text):,} characters{size})"
                   f"</summary><pre>{esc(text[:_BLOCK_TEXT] + cut)}</pre></details>")
    return "".join(out)


def _invariants_html(status: str, problems: Sequence[str], dry_run: bool) -> str:
    if status != "compacted" and not problems:
        return '<p class="note">Not checked: nothing was compacted.</p>'
    if not problems:
        checks = CHECKS[:-1] if dry_run else CHECKS  # a dry run writes no transcript to read back
        return '<ul class="ok">' + "".join(f"<li>✓ {esc(c)}</li>" for c in checks) + "</ul>"
    return ('<p class="bad">' + f"{len(problems)} invariant(s) broken:</p><ul class=\"bad\">"
            + "".join(f"<li>✗ {esc(p)}</li>" for p in problems) + "</ul>")


def compact_page_html(data: CompactPage, *, page_dir: Path, dry_run: bool) -> str:
    """The page of a compaction run from its page data (links relative to ``page_dir``)."""
    calls = calls_rows(data.report, data.facts, data.dumps)
    return compact_html(data.report, page_dir=page_dir, calls=calls, blocks=data.blocks,
                        problems=data.report["invariants"], outputs=data.outputs, dry_run=dry_run)
