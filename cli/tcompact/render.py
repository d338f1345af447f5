"""All terminal output: rich tables, bars and progress. No logic beyond layout.

Human output goes to stdout through rich; warnings to stderr; ``--json`` documents are printed
here too so that every command writes its output the same way.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = ["print_json", "inspect_report", "file_progress", "warn", "warn_skipped", "console"]

_KIND_LABELS = {
    "system": "system text",
    "user": "user text",
    "injected": "injected context",
    "assistant": "assistant text",
    "reasoning": "reasoning",
    "tool_arguments": "tool-call arguments",
    "tool_results": "tool results",
    "images": "images",
}
_BAR = 40
_MAX_ROUNDS = 40


def console() -> Console:
    """The stdout console (plain text when stdout is not a terminal)."""
    return Console(highlight=False, soft_wrap=True)


def _err() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(document: Any) -> None:
    """Write one JSON document to stdout."""
    import orjson

    sys.stdout.write(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n")


def warn(message: str) -> None:
    """One warning line on stderr."""
    _err().print(Text(f"Warning: {message}"))


def warn_skipped(report: Mapping[str, Any]) -> None:
    """Say how many bad lines were skipped, and which files could not be read."""
    for f in report["files"]:
        if f["skipped_lines"]:
            lines = ", ".join(str(s["line"]) for s in f["skipped_lines"][:10])
            more = " …" if len(f["skipped_lines"]) > 10 else ""
            first = f["skipped_lines"][0]["reason"]
            warn(f"{f['path']}: skipped {len(f['skipped_lines'])} bad line(s) ({lines}{more}); "
                 f"line {f['skipped_lines'][0]['line']}: {first}")
    for e in report["errors"]:
        _err().print(Text(f"Error: {e['error']}"))


@contextlib.contextmanager
def file_progress(*, enabled: bool) -> Iterator[Callable[[int, int, Path], None] | None]:
    """A progress bar over files, shown on a terminal when there are several files."""
    err = _err()
    if not enabled or not err.is_terminal:
        yield None
        return
    from rich.progress import Progress

    with Progress(console=err, transient=True) as progress:
        task = None

        def on_file(done: int, total: int, path: Path) -> None:
            nonlocal task
            if total < 2:
                return
            if task is None:
                task = progress.add_task("inspecting", total=total)
            progress.update(task, completed=done, description=path.name[:40])

        yield on_file


def _n(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "—"


def inspect_report(report: Mapping[str, Any], *, transcript: str | None = None) -> None:
    """The terminal view of an inspect report."""
    out = console()
    files = report["files"]
    if len(files) == 1 and not report["errors"]:
        _file_detail(out, files[0], transcript)
    elif transcript is not None:
        from .errors import UsageError

        raise UsageError("--transcript needs a single file", hint="pass the one file that holds that transcript")
    else:
        _files_table(out, files, report["totals"])
    skipped = report["not_transcripts"]
    if skipped:
        listed = "; ".join(f"{x['path']} ({x['reason']})" for x in skipped[:5]) + (" …" if len(skipped) > 5 else "")
        out.print(Text(f"Passed over {len(skipped)} file(s) that hold no transcript: {listed}"))


def _files_table(out: Console, files: Sequence[Mapping[str, Any]], totals: Mapping[str, Any]) -> None:
    paths = [f["path"] for f in files]
    root = os.path.commonpath([os.path.dirname(p) or "." for p in paths]) if paths else ""
    title = f"Transcripts in {root}/" if root not in ("", ".") else "Transcripts"
    table = Table(title=title, title_justify="left")
    table.add_column("file", overflow="fold", ratio=1)
    table.add_column("format", no_wrap=True)
    for col in ("msgs", "calls", "tokens", "window"):
        table.add_column(col, justify="right", no_wrap=True)
    for f in files:
        ts = f["transcripts"]
        main = next((t for t in ts if t["kind"] == "main"), ts[0])
        name = os.path.relpath(f["path"], root) if root not in ("", ".") else f["path"]
        if len(ts) > 1:
            name += f" (+{len(ts) - 1})"
        table.add_row(name, f["format"], _n(sum(t["messages"] for t in ts)), _n(sum(t["tool_calls"] for t in ts)),
                      _n(sum(t["tokens"]["total"] for t in ts)), f"{100 * main['window']['utilisation']:.1f}%")
    table.add_section()
    table.add_row(f"{totals['files']} files, {totals['transcripts']} transcripts", "", _n(totals["messages"]),
                  _n(totals["tool_calls"]), _n(totals["tokens"]), "")
    out.print(table)
    if any(len(f["transcripts"]) > 1 for f in files):
        out.print(Text("(+N): the file holds N more transcripts (sub-agents or episodes), counted in its row"))


def _file_detail(out: Console, f: Mapping[str, Any], wanted: str | None) -> None:
    ts = f["transcripts"]
    if wanted is not None:
        chosen = [t for t in ts if t["id"] == wanted]
        if not chosen:
            from .errors import UsageError

            raise UsageError(f"no transcript {wanted!r} in this file", path=f["path"],
                             hint=f"choose one of: {', '.join(t['id'] for t in ts)}")
        t = chosen[0]
    else:
        t = next((x for x in ts if x["kind"] == "main"), ts[0])
    _transcript_detail(out, f, t)
    if len(ts) > 1:
        _transcripts_table(out, ts)
    if f["unknown_records"]:
        kinds = ", ".join(f"{k} ×{n}" for k, n in f["unknown_records"].items())
        out.print(Text(f"Kept {sum(f['unknown_records'].values())} record(s) of unknown type: {kinds}"))


def _transcript_detail(out: Console, f: Mapping[str, Any], t: Mapping[str, Any]) -> None:
    tokens = t["tokens"]
    approx = ", approximate" if t["approximate"] else ""
    est = f", {tokens['estimated']:,} estimated" if tokens["estimated"] else ""
    out.print(Text(f"{f['path']} · {f['format']} · {t['id']} ({t['kind']})", style="bold"))
    out.print(Text(f"{_count(t['messages'], 'message')} · {_count(t['tool_calls'], 'tool call')} · "
                   f"{_count(tokens['total'], 'token')} "
                   f"({t['encoding']}{approx}{est})" + (f" · model {t['model']}" if t["model"] else "")))
    out.print()
    _window_lines(out, t["window"])
    _kinds_table(out, tokens)
    if t["tools"]:
        _tools_table(out, t["tools"])
    _rounds_table(out, t["rounds"])
    if t["top_messages"]:
        _top_table(out, t["top_messages"])
    if t["compactions"]:
        _compactions_table(out, t["compactions"])
    _usage_lines(out, t["provider_usage"], tokens["total"])
    if t["span"]:
        _span_table(out, t["span"])
    orphans = t["orphans"]
    if orphans["tool_results"] or orphans["unanswered_calls"]:
        out.print(Text(f"Tool pairing: {orphans['tool_results']} result(s) without a call, "
                       f"{orphans['unanswered_calls']} call(s) without a result"))
    for note in t["notes"]:
        out.print(Text(f"Note: {note}"))


def window_bar(utilisation: float, width: int = _BAR) -> str:
    """A bar of ``width`` cells: '█' used, '·' free, '┆' at the 0.1 and '│' at the 0.8 mark."""
    used = min(width, round(utilisation * width))
    cells = ["█" if i < used else "·" for i in range(width)]
    for ratio, mark in ((0.1, "┆"), (0.8, "│")):
        i = min(width - 1, int(ratio * width))
        if i >= used:
            cells[i] = mark
    return "".join(cells)


def _window_lines(out: Console, w: Mapping[str, Any]) -> None:
    out.print(Text(f"Context window: {w['tokens']:,} of {w['context_window']:,} tokens "
                   f"({100 * w['utilisation']:.1f}%; size: {w['source']})"))
    state = "over the trigger" if w["over_trigger"] else "below the trigger"
    out.print(Text(f"  [{window_bar(w['utilisation'])}] {state}"))
    out.print(Text(f"  trigger {w['trigger_tokens']:,} ({w['trigger_ratio']}) · "
                   f"minimum target {w['min_target_tokens']:,} ({w['min_target_ratio']})"))
    out.print()


def _kinds_table(out: Console, tokens: Mapping[str, Any]) -> None:
    total = tokens["total"]
    table = Table(title="Tokens by content kind", title_justify="left")
    table.add_column("kind")
    table.add_column("tokens", justify="right")
    table.add_column("share", justify="right")
    for kind, n in tokens["by_kind"].items():
        if n:
            table.add_row(_KIND_LABELS.get(kind, kind), _n(n), _pct(n, total))
    table.add_section()
    for role, n in tokens["by_role"].items():
        table.add_row(f"role {role}", _n(n), _pct(n, total))
    out.print(table)


def _tools_table(out: Console, tools: Sequence[Mapping[str, Any]]) -> None:
    table = Table(title="Tokens by tool", title_justify="left")
    for col in ("tool", "calls", "argument tokens", "result tokens", "errors"):
        table.add_column(col, justify="left" if col == "tool" else "right")
    for r in tools:
        table.add_row(r["name"], _n(r["calls"]), _n(r["argument_tokens"]), _n(r["result_tokens"]), _n(r["errors"]))
    out.print(table)


def _rounds_table(out: Console, rounds: Sequence[Mapping[str, Any]]) -> None:
    table = Table(title="Rounds", title_justify="left")
    for col in ("#", "messages", "calls", "tokens"):
        table.add_column(col, justify="right", no_wrap=True, min_width=len(col))
    table.add_column("request", overflow="ellipsis", no_wrap=True, max_width=max(20, out.width - 40))
    shown = rounds if len(rounds) <= _MAX_ROUNDS else [*rounds[:10], *rounds[-(_MAX_ROUNDS - 10):]]
    for r in shown:
        if len(rounds) > _MAX_ROUNDS and r is rounds[-(_MAX_ROUNDS - 10)]:
            table.add_row("…", "", "", "", f"{len(rounds) - _MAX_ROUNDS} more rounds")
        request = r["request"] if r["request"] is not None else "(before the first request)"
        table.add_row(str(r["number"]), f"{r['start']}–{r['end'] - 1}", _n(r["tool_calls"]), _n(r["tokens"]), request)
    out.print(table)


def _top_table(out: Console, top: Sequence[Mapping[str, Any]]) -> None:
    table = Table(title="Largest messages", title_justify="left")
    for col, width in (("#", 3), ("tokens", 6), ("role", 9), ("tool", 12)):
        table.add_column(col, justify="right" if col in ("#", "tokens") else "left", no_wrap=True,
                         overflow="ellipsis", min_width=width, max_width=16 if col == "tool" else None)
    table.add_column("preview", overflow="ellipsis", no_wrap=True, max_width=max(20, out.width - 52))
    for m in top:
        table.add_row(str(m["index"]), _n(m["tokens"]), m["role"], m["tool"] or "", m["preview"])
    out.print(table)


def _compactions_table(out: Console, compactions: Sequence[Mapping[str, Any]]) -> None:
    table = Table(title="Compactions found in the file", title_justify="left")
    for col in ("line", "kind", "trigger", "tokens before", "at message"):
        table.add_column(col)
    for c in compactions:
        table.add_row(_n(c["line"]), c["kind"], c["trigger"] or "—", _n(c["pre_tokens"]),
                      "—" if c["index"] is None else str(c["index"]))
    out.print(table)


def _usage_lines(out: Console, usage: Mapping[str, Any] | None, counted: int) -> None:
    if not usage:
        out.print(Text("Provider usage: none recorded in the file"))
        return
    src = usage["source"]
    if src == "codex":
        total, last = usage.get("total") or {}, usage.get("last") or {}
        out.print(Text(f"Provider usage (codex, {usage['events']} token_count events): total input "
                       f"{_n(total.get('input_tokens'))} (cached {_n(total.get('cached_input_tokens'))}), output "
                       f"{_n(total.get('output_tokens'))}; last request input {_n(last.get('input_tokens'))}"))
    elif src == "claude-code":
        out.print(Text(f"Provider usage (claude-code, {usage['requests']} requests from {usage['lines']} lines): "
                       f"input {_n(usage['input_tokens'])}, cache read {_n(usage['cache_read_input_tokens'])}, "
                       f"cache creation {_n(usage['cache_creation_input_tokens'])}, output {_n(usage['output_tokens'])}"))
    else:
        out.print(Text(f"Provider usage ({src}, {_n(usage.get('requests'))} requests): input "
                       f"{_n(usage.get('input_tokens'))}, output {_n(usage.get('output_tokens'))}"))
    last = usage.get("last_context_tokens")
    if last is not None:
        out.print(Text(f"  context at the last request: {last:,} reported vs {counted:,} counted by tcompact "
                       "(the provider also counts the system prompt and tool definitions)"))


def _span_table(out: Console, span: Mapping[str, Any]) -> None:
    keep = "" if span["keep_recent"] is None else f", keep_recent {span['keep_recent']}"
    table = Table(title=f"Span layout of {span['compressor']}{keep}", title_justify="left")
    for col in ("part", "messages", "range", "tokens"):
        table.add_column(col, justify="left" if col == "part" else "right")
    for name, label in (("prefix", "preserved prefix"), ("body", "compressible body"), ("tail", "protected tail")):
        p = span[name]
        rng = f"{p['start']}–{p['end'] - 1}" if p["messages"] else "—"
        table.add_row(label, _n(p["messages"]), rng, _n(p["tokens"]))
    out.print(table)
    out.print(Text(f"  would compact now: {'yes' if span['would_compact'] else 'no'}"))


def _transcripts_table(out: Console, ts: Sequence[Mapping[str, Any]]) -> None:
    table = Table(title="Transcripts in this file", title_justify="left")
    for col in ("id", "kind", "messages", "tool calls", "tokens", "started by"):
        table.add_column(col, justify="right" if col in ("messages", "tool calls", "tokens") else "left")
    for t in ts:
        table.add_row(t["id"], t["kind"], _n(t["messages"]), _n(t["tool_calls"]), _n(t["tokens"]["total"]),
                      t["parent_tool_call"] or "")
    out.print(table)


def write_stdout(data: bytes) -> None:
    """Raw bytes to stdout (converted transcripts)."""
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def compact_report(report: Mapping[str, Any], *, written: Sequence[Path], output: Path, dry_run: bool) -> None:
    """The terminal view of a compaction report."""
    out = console()
    before, after = report["before"], report["after"]
    saved = before["tokens"] - after["tokens"]
    head = {"compacted": f"Compacted: {before['tokens']:,} → {after['tokens']:,} tokens "
                         f"({_pct(saved, before['tokens'])} saved), {before['messages']:,} → {after['messages']:,} "
                         "messages",
            "nothing to do": f"Nothing to do: {before['tokens']:,} tokens, {before['messages']:,} messages; "
                             "the transcript stays as it is (--force compacts anyway)",
            "failed": "Compaction failed; the input is untouched"}[report["status"]]
    approx = ", approximate" if report["approximate"] else ""
    out.print(Text(f"{report['source']['path']} · {report['source']['format']} · window "
                   f"{report['context_window']:,} · {report['encoding']}{approx}"))
    out.print(Text(head))
    table = Table(title="Stages", title_justify="left")
    for col, justify in (("compressor", "left"), ("tokens", "right"), ("messages", "right"), ("calls", "right"),
                         ("outcome", "left")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for s in report["stages"]:
        calls = s["calls"]
        failed = sum(1 for c in calls if c["status"] == "failed")
        table.add_row(s["processor"], f"{s['tokens_before']:,} → {s['tokens_after']:,}",
                      f"{s['messages_before']:,} → {s['messages_after']:,}",
                      f"{len(calls)}" + (f" ({failed} failed)" if failed else ""), s["reason"])
    out.print(table)
    sm = report["summarizer"]
    if sm["calls"]:
        usage = sm["usage"] or {}
        extra = f", {usage.get('total_tokens', 0):,} tokens used" if usage else ""
        out.print(Text(f"Summariser {sm['name']}: {sm['calls']} call(s), {sm['failed_calls']} failed{extra}"))
    if dry_run:
        out.print(Text("Dry run: nothing was written."))
    elif written:
        out.print(Text(f"Wrote {len(written)} file(s)" + (f"; transcript: {output}" if report["status"] ==
                                                            "compacted" else "")))


def compressors_table(rows: Sequence[Mapping[str, Any]]) -> None:
    """The terminal view of ``tcompact compressors``."""
    out = console()
    for row in rows:
        uses = " (uses a summariser)" if row["uses_summarizer"] else ""
        out.print(Text(f"{row['name']}: {row['description']}{uses}", style="bold"))
        table = Table(show_header=True, box=None, padding=(0, 2))
        for col in ("setting", "default", "description"):
            table.add_column(col, overflow="fold")
        for f in row["settings"]:
            table.add_row(f["name"], _default(f["default"]), f["description"])
        out.print(table)
        out.print()


def _default(value: Any) -> str:
    import orjson

    return orjson.dumps(value).decode()
