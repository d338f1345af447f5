"""The chart data of ``tcompact inspect --html`` (pure, exact numbers): what the page's plotly charts
draw, from the report dict and what inspection counted (:class:`tcompact.pages.FilePage`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..counting.tokens import KINDS, message_kind

if TYPE_CHECKING:
    from ..inspection.shapes import CompactionRow, ProviderUsage, RoundRow, ToolRow, Window
    from ..pages import FilePage, SpanLayout

__all__ = ["KIND_LABELS", "KIND_COLORS", "SPAN_PARTS", "cumulative_chart", "kinds_by_round_chart", "span_chart",
           "usage_chart", "tool_rows", "rounds_chart", "file_charts"]

KIND_LABELS = {"system": "system text", "user": "user text", "injected": "injected context",
               "assistant": "assistant text", "reasoning": "reasoning", "tool_arguments": "tool-call arguments",
               "tool_results": "tool results", "images": "images"}
#: One colour per content kind, the same on every page.
KIND_COLORS = {"system": "#64748b", "user": "#2563eb", "injected": "#93c5fd", "assistant": "#16a34a",
               "reasoning": "#a855f7", "tool_arguments": "#f59e0b", "tool_results": "#dc2626", "images": "#0d9488"}
SPAN_PARTS = (("prefix", "preserved prefix"), ("body", "compressible body"), ("tail", "protected tail"))


# ----------------------------------------------------------------------------------------- chart data


def cumulative_chart(totals: Sequence[int], kinds: Sequence[str], window: Window,
                     compactions: Sequence[CompactionRow]) -> dict[str, Any]:
    """Cumulative tokens by message index, the window/trigger/minimum-target lines, compactions as vertical lines."""
    xs = list(range(len(totals)))
    ys, running = [], 0
    for t in totals:
        running += t
        ys.append(running)
    ends = [0, max(len(totals) - 1, 0)]

    def level(name: str, value: int, dash: str, color: str) -> dict[str, Any]:
        return {"type": "scatter", "mode": "lines", "name": f"{name} {value:,}", "x": ends, "y": [value, value],
                "line": {"dash": dash, "color": color, "width": 1.5}, "hoverinfo": "name"}

    data = [
        {"type": "scatter", "mode": "lines+markers", "name": "tokens so far", "x": xs, "y": ys,
         "customdata": [KIND_LABELS.get(k, k) for k in kinds], "marker": {"size": 4}, "line": {"color": "#2563eb"},
         "hovertemplate": "message %{x} (%{customdata})<br>%{y:,} tokens so far<extra></extra>"},
        level("context window", window["context_window"], "solid", "#b42318"),
        level(f"trigger ({window['trigger_ratio']})", window["trigger_tokens"], "dash", "#d97706"),
        level(f"minimum target ({window['min_target_ratio']})", window["min_target_tokens"], "dot", "#6b7280"),
    ]
    marks = [c["index"] for c in compactions if c.get("index") is not None]
    shapes = [{"type": "line", "xref": "x", "yref": "paper", "x0": i, "x1": i, "y0": 0, "y1": 1,
               "line": {"color": "#7c3aed", "width": 2, "dash": "dashdot"}} for i in marks]
    notes = [{"x": i, "y": 1, "xref": "x", "yref": "paper", "text": "compaction", "showarrow": False,
              "yanchor": "bottom", "font": {"color": "#7c3aed", "size": 11}} for i in marks]
    layout = {"margin": {"l": 70, "r": 20, "t": 30, "b": 50}, "xaxis": {"title": {"text": "message index"}},
              "yaxis": {"title": {"text": "tokens"}, "rangemode": "tozero"}, "shapes": shapes, "annotations": notes,
              "legend": {"orientation": "h", "y": -0.2}, "hovermode": "closest",
              "updatemenus": [{"type": "buttons", "direction": "left", "showactive": True, "x": 1, "xanchor": "right",
                               "y": 1.02, "yanchor": "bottom", "pad": {"r": 0, "t": 0}, "buttons": [
                                   {"label": "whole window", "method": "relayout", "args": [{"yaxis.autorange": True}]},
                                   {"label": "session only", "method": "relayout",
                                    "args": [{"yaxis.range": [0, max(running, 1) * 1.05]}]}]}]}
    return {"data": data, "layout": layout}


def kinds_by_round_chart(rounds: Sequence[RoundRow], by_kind: Sequence[Mapping[str, int]]
                         ) -> dict[str, Any]:
    """One stacked bar per round: one trace per content kind that has tokens, in report order."""
    labels = [str(r["number"]) for r in rounds]
    sums = {k: [sum(m.get(k, 0) for m in by_kind[r["start"]:r["end"]]) for r in rounds] for k in KINDS}
    data = [{"type": "bar", "name": KIND_LABELS[k], "x": labels, "y": ys, "marker": {"color": KIND_COLORS[k]},
             "hovertemplate": f"round %{{x}}<br>{KIND_LABELS[k]}: %{{y:,}} tokens<extra></extra>"}
            for k, ys in sums.items() if any(ys)]
    layout = {"barmode": "stack", "margin": {"l": 70, "r": 20, "t": 20, "b": 50},
              "xaxis": {"title": {"text": "round"}, "type": "category"}, "yaxis": {"title": {"text": "tokens"}},
              "legend": {"orientation": "h", "y": -0.2}}
    return {"data": data, "layout": layout}


def span_chart(layouts: Sequence[SpanLayout]) -> dict[str, Any]:
    """One horizontal bar per span layout, split into prefix, body and tail (widths = tokens)."""
    names = [s["compressor"] for s in layouts]
    colors = {"prefix": "#94a3b8", "body": "#f59e0b", "tail": "#10b981"}
    data = [{"type": "bar", "orientation": "h", "name": label, "y": names, "x": [s[part]["tokens"] for s in layouts],
             "customdata": [s[part]["messages"] for s in layouts], "marker": {"color": colors[part]},
             "hovertemplate": f"%{{y}} {label}: %{{x:,}} tokens, %{{customdata}} messages<extra></extra>"}
            for part, label in SPAN_PARTS]
    layout = {"barmode": "stack", "margin": {"l": 110, "r": 20, "t": 20, "b": 40},
              "xaxis": {"title": {"text": "tokens"}}, "yaxis": {"type": "category", "autorange": "reversed"},
              "legend": {"orientation": "h", "y": -0.35}}
    return {"data": data, "layout": layout}


def usage_chart(usage: ProviderUsage | None, counted: int) -> dict[str, Any] | None:
    """Context at the last request as the provider reported it next to our count (None when not reported)."""
    last = (usage or {}).get("last_context_tokens")
    if not isinstance(last, int):
        return None
    stale = (usage or {}).get("predates_compaction")
    reported = "provider-reported" if stale is None else f"provider-reported, before the compaction at line {stale}"
    data = [{"type": "bar", "x": [reported, "counted by tcompact"], "y": [last, counted],
             "marker": {"color": ["#7c3aed", "#2563eb"]}, "hovertemplate": "%{x}: %{y:,} tokens<extra></extra>"}]
    layout = {"margin": {"l": 70, "r": 20, "t": 20, "b": 40}, "yaxis": {"title": {"text": "tokens"}}}
    return {"data": data, "layout": layout}


def tool_rows(tools: Sequence[ToolRow]) -> list[list[Any]]:
    """The tool table: name, calls, argument tokens, result tokens, results, errors."""
    return [[t["name"], t["calls"], t["argument_tokens"], t["result_tokens"], t["results"], t["errors"]]
            for t in tools]


def rounds_chart(rounds: Sequence[RoundRow]) -> dict[str, Any]:
    """A small bar chart of tokens per round (the many-files table)."""
    data = [{"type": "bar", "x": [r["number"] for r in rounds], "y": [r["tokens"] for r in rounds],
             "marker": {"color": "#2563eb"}, "hovertemplate": "round %{x}: %{y:,} tokens<extra></extra>"}]
    layout = {"margin": {"l": 4, "r": 4, "t": 4, "b": 4}, "showlegend": False, "bargap": 0.1,
              "xaxis": {"visible": False}, "yaxis": {"visible": False}}
    return {"data": data, "layout": layout, "config": {"staticPlot": True, "displaylogo": False}}


def file_charts(one: FilePage) -> dict[str, Any]:
    """The chart specs of one transcript's page, by element id."""
    t, messages, counts = one.transcript, one.messages, one.counts
    totals = [c.total for c in counts]
    specs: dict[str, Any] = {
        "cumulative": cumulative_chart(totals, [message_kind(m) for m in messages], t["window"], t["compactions"]),
        "kinds-by-round": kinds_by_round_chart(t["rounds"], [c.by_kind for c in counts]),
        "spans": span_chart(one.layouts),
    }
    usage = usage_chart(t["provider_usage"], t["tokens"]["total"])
    if usage is not None:
        specs["usage"] = usage
    return specs
