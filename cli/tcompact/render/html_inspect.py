"""The HTML report of ``tcompact inspect --html``: the page (its chart data: :mod:`.html_inspect_charts`).

One file: header figures, cumulative tokens over the messages with the window, trigger and
minimum-target lines and the compactions found, tokens per round stacked by content kind, the
sortable tool table, the largest messages with expandable text, the span layouts as bars, and
the provider-reported usage next to the count. Several files: one row per file with a small
chart of its tokens per round, and the totals. The page is drawn from the same report dict the
terminal view and ``--json`` use; the per-message figures and the span layouts (which the report
does not hold) are the ones inspection counted, handed over as a :class:`tcompact.pages.FilePage`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..model import Message
from .html_common import chart_div, esc, n, page, pct, table
from .html_inspect_charts import KIND_LABELS, SPAN_PARTS, file_charts, rounds_chart, tool_rows

if TYPE_CHECKING:
    from ..inspection.shapes import FileReport, InspectReport, ProviderUsage, TokenSplit, TopMessage, TranscriptReport
    from ..pages import FilePage, SpanLayout

__all__ = ["file_page", "inspect_html"]

_FULL_TEXT = 20_000  # characters of a largest message shown when it is expanded


# ----------------------------------------------------------------------------------------- the page


def inspect_html(report: InspectReport, one: FilePage | None = None) -> str:
    """The page for an inspect report: one transcript in detail (``one``), else one row per file."""
    return file_page(one) if one is not None else _files_page(report)


def _figures(items: Sequence[tuple[str, str]]) -> str:
    return '<div class="figures">' + "".join(
        f'<div class="figure"><b>{esc(value)}</b><span>{esc(label)}</span></div>' for label, value in items) + "</div>"


def _files_page(report: InspectReport) -> str:
    totals = report["totals"]
    files = report["files"]
    paths = [f["path"] for f in files]
    root = os.path.commonpath([os.path.dirname(p) or "." for p in paths]) if paths else ""
    specs: dict[str, Any] = {}
    rows = []
    for i, f in enumerate(files):
        ts = f["transcripts"]
        main = next((t for t in ts if t["kind"] == "main"), ts[0])
        name = os.path.relpath(f["path"], root) if root not in ("", ".") else f["path"]
        extra = f" (+{len(ts) - 1})" if len(ts) > 1 else ""
        specs[f"rounds-{i}"] = rounds_chart(main["rounds"])
        rows.append([esc(name + extra), f["format"], sum(t["messages"] for t in ts), sum(t["tool_calls"] for t in ts),
                     sum(t["tokens"]["total"] for t in ts), round(100 * main["window"]["utilisation"], 1),
                     len(main["rounds"]), chart_div(f"rounds-{i}", height=48, small=True)])
    body = [f"<h1>tcompact inspect: {totals['files']} files</h1>",
            f'<p class="sub">{esc(root or ".")} · tcompact {esc(report["version"])}</p>',
            _figures([("files", n(totals["files"])), ("transcripts", n(totals["transcripts"])),
                      ("messages", n(totals["messages"])), ("tool calls", n(totals["tool_calls"])),
                      ("tokens", n(totals["tokens"]))]),
            "<h2>Files</h2>",
            table(["file", "format", "messages", "tool calls", "tokens", "window %", "rounds", "tokens per round"],
                  rows, sortable=True, numeric=[False, False, True, True, True, True, True, False],
                  raw=[True, False, False, False, False, False, False, True], table_id="files",
                  foot=[esc(f"{totals['files']} files, {totals['transcripts']} transcripts"), "",
                        totals["messages"], totals["tool_calls"], totals["tokens"], None, None, ""]),
            f'<p class="note">Totals: {n(totals["files"])} files, {n(totals["transcripts"])} transcripts, '
            f'{n(totals["messages"])} messages, {n(totals["tool_calls"])} tool calls, {n(totals["tokens"])} tokens. '
            "(+N): the file holds N more transcripts (sub-agents or episodes), counted in its row; its chart "
            "shows the main transcript.</p>"]
    if report["errors"]:
        body.append("<h2>Files that could not be read</h2>")
        body.append(table(["file", "error"], [[e["path"], e["error"]] for e in report["errors"]]))
    if report["not_transcripts"]:
        body.append("<h2>Passed over (no transcript)</h2>")
        body.append(table(["file", "reason"], [[x["path"], x["reason"]] for x in report["not_transcripts"]]))
    return page(f"tcompact inspect: {totals['files']} files", "\n".join(body), specs)


def file_page(one: FilePage) -> str:
    """The page of one transcript, from its report entries, its per-message counts and its span layouts."""
    specs = file_charts(one)
    f, t, messages, layouts = one.file, one.transcript, one.messages, one.layouts
    tokens = t["tokens"]
    body = _file_header(f, t)
    if t["tools"]:
        body += ["<h2>Tokens by tool</h2>",
                 table(["tool", "calls", "argument tokens", "result tokens", "results", "errors"], tool_rows(t["tools"]),
                       sortable=True, numeric=[False, True, True, True, True, True], table_id="tools")]
    if t["top_messages"]:
        body += ["<h2>Largest messages</h2>", _top_table(t["top_messages"], messages)]
    body += ["<h2>Span layout</h2>", chart_div("spans", height=90 + 50 * len(layouts)), _span_table(layouts, t)]
    body += ["<h2>Provider-reported and counted usage</h2>", _usage_html(t["provider_usage"], tokens["total"])]
    if specs.get("usage") is not None:
        body.append(chart_div("usage", height=260))
    body += _file_details(f, t)
    return page(f"tcompact inspect: {os.path.basename(f['path'])}", "\n".join(body), specs)


def _file_header(f: FileReport, t: TranscriptReport) -> list[str]:
    """The title, the figures, the window's levels and the first two charts of a transcript's page."""
    tokens, w = t["tokens"], t["window"]
    approx = " (approximate)" if t["approximate"] else ""
    return [f"<h1>tcompact inspect: {esc(os.path.basename(f['path']))}</h1>",
            f'<p class="sub">{esc(f["path"])} · {esc(f["format"])} · transcript {esc(t["id"])} ({esc(t["kind"])})'
            + (f" · model {esc(t['model'])}" if t["model"] else "") + "</p>",
            _figures([("messages", n(t["messages"])), ("tool calls", n(t["tool_calls"])),
                      ("tokens", n(tokens["total"])), ("encoding", f"{t['encoding']}{approx}"),
                      ("window use", f"{100 * w['utilisation']:.1f}% of {w['context_window']:,}"),
                      ("state", "over the trigger" if w["over_trigger"] else "below the trigger")]),
            f'<p class="note">Context window {n(w["context_window"])} tokens (size: {esc(w["source"])}); trigger '
            f'{n(w["trigger_tokens"])} ({w["trigger_ratio"]}); minimum target {n(w["min_target_tokens"])} '
            f'({w["min_target_ratio"]})' + (f"; {n(tokens['estimated'])} tokens estimated" if tokens["estimated"]
                                           else "") + ".</p>",
            "<h2>Cumulative tokens</h2>", chart_div("cumulative", height=400),
            "<h2>Tokens per round, by content kind</h2>", chart_div("kinds-by-round"),
            _kinds_table(tokens)]


def _file_details(f: FileReport, t: TranscriptReport) -> list[str]:
    """The compactions found, the file's other transcripts and the notes, each when there are any."""
    body: list[str] = []
    if t["compactions"]:
        body += ["<h2>Compactions found in the file</h2>",
                 table(["line", "kind", "trigger", "tokens before", "at message"],
                       [[c["line"], c["kind"], c["trigger"] or "—", c["pre_tokens"], c["index"]]
                        for c in t["compactions"]], numeric=[True, False, False, True, True])]
    if len(f["transcripts"]) > 1:
        body += ["<h2>Transcripts in this file</h2>",
                 table(["id", "kind", "messages", "tool calls", "tokens", "started by"],
                       [[x["id"], x["kind"], x["messages"], x["tool_calls"], x["tokens"]["total"],
                         x["parent_tool_call"] or ""] for x in f["transcripts"]],
                       sortable=True, numeric=[False, False, True, True, True, False])]
    orphans = t["orphans"]
    notes = list(t["notes"])
    if orphans["tool_results"] or orphans["unanswered_calls"]:
        notes.append(f"Tool pairing: {orphans['tool_results']} result(s) without a call, "
                     f"{orphans['unanswered_calls']} call(s) without a result")
    if notes:
        body += ["<h2>Notes</h2>", "<ul>" + "".join(f"<li>{esc(x)}</li>" for x in notes) + "</ul>"]
    return body


def _kinds_table(tokens: TokenSplit) -> str:
    total = tokens["total"]
    rows = [[KIND_LABELS.get(k, k), v, pct(v, total)] for k, v in tokens["by_kind"].items() if v]
    rows += [[f"role {r}", v, pct(v, total)] for r, v in tokens["by_role"].items()]
    return table(["kind", "tokens", "share"], rows, numeric=[False, True, False])


def _top_table(top: Sequence[TopMessage], messages: Sequence[Message]) -> str:
    rows = []
    for m in top:
        msg = messages[m["index"]]
        full = _full_text(msg)
        cut = f"\n… ({len(full) - _FULL_TEXT:,} more characters)" if len(full) > _FULL_TEXT else ""
        preview = (f"<details><summary>{esc(m['preview'])}</summary><pre>{esc(full[:_FULL_TEXT] + cut)}</pre>"
                   "</details>")
        rows.append([m["index"], m["tokens"], esc(m["role"]), esc(m["tool"] or ""), preview])
    return table(["#", "tokens", "role", "tool", "preview (click to expand)"], rows, sortable=True,
                 numeric=[True, True], raw=[False, False, True, True, True], table_id="top")


def _full_text(m: Message) -> str:
    parts = [m.text] if m.text else []
    parts += [f"{c.name}({c.arguments})" for c in m.tool_calls]
    parts += [r.text for r in m.reasoning if r.text]
    if m.images:
        parts.append(f"[{len(m.images)} image(s)]")
    return "\n\n".join(parts)


def _span_table(layouts: Sequence[SpanLayout], t: TranscriptReport) -> str:
    rows = []
    for s in layouts:
        for part, label in SPAN_PARTS:
            p = s[part]
            rng = f"{p['start']}–{p['end'] - 1}" if p["messages"] else "—"
            rows.append([s["compressor"], label, p["messages"], rng, p["tokens"]])
    extra = ""
    if t["span"] is not None:
        extra = f'<p class="note">{esc(t["span"]["compressor"])} would compact now: ' \
                f'{"yes" if t["span"]["would_compact"] else "no"}.</p>'
    elif len(layouts) > 1:
        extra = '<p class="note">Each compressor with its default keep_recent; <code>--spans NAME</code> shows one.</p>'
    return table(["compressor", "part", "messages", "range", "tokens"], rows,
                 numeric=[False, False, True, False, True]) + extra


def _usage_html(usage: ProviderUsage | None, counted: int) -> str:
    if not usage:
        return f'<p class="note">None recorded in the file; counted by tcompact: {n(counted)} tokens.</p>'
    rows = [[k, v] for k, v in usage.items() if not isinstance(v, dict)]
    for key, value in usage.items():
        if isinstance(value, dict):
            rows += [[f"{key}.{k}", v] for k, v in value.items()]
    rows.append(["counted by tcompact (this transcript)", counted])
    return table(["figure", "value"], [[k, _value(v)] for k, v in rows])


def _value(v: Any) -> str:
    if isinstance(v, bool) or not isinstance(v, int | float | None):
        return str(v)
    return n(v)
