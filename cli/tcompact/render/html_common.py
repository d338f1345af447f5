"""What the HTML reports share: escaping, safe JSON in a page, the page shell and tables (the pages are
written by :mod:`tcompact.artifacts`, like every output).

A report page is one self-contained file: the CSS, the plotly.js bundle (once per page), the
chart specs and a few lines of JS for sortable tables are all inline, so it opens offline. Every
text that comes from a transcript is escaped with :func:`esc`; chart specs carry numbers and our
own labels only and go into the page through :func:`script_json`, which cannot close the
``<script>`` element that holds it. plotly is imported only here, and only when a page is built
(the ``html`` extra: ``pip install 'tcompact[html]'``).
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

__all__ = ["esc", "script_json", "plotly_js", "require_plotly", "page", "table", "figures", "chart_div", "link",
           "CHART_CONFIG", "n", "pct"]

#: plotly config of every chart: no logo, no link to plotly's cloud, resizes with the window.
CHART_CONFIG: dict[str, Any] = {"displaylogo": False, "responsive": True, "showLink": False}

_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def esc(value: Any) -> str:
    """Text made safe for HTML content and quoted attributes."""
    return html.escape("" if value is None else str(value), quote=True)


def script_json(value: Any) -> str:
    """JSON that can sit inside a ``<script>`` element: ``<``, ``>``, ``&``, U+2028/9 as ``\\uXXXX``."""
    import orjson

    text = orjson.dumps(value).decode()
    for raw, escaped in _JSON_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


def require_plotly() -> None:
    """Fail with one clear error when the ``html`` extra (plotly) is not installed."""
    try:
        import plotly.offline  # noqa: F401
    except ImportError:
        from ..errors import UsageError

        raise UsageError("--html needs plotly, which is not installed",
                         hint="install tcompact[html] (pip install 'tcompact[html]')") from None


def plotly_js() -> str:
    """The plotly.js bundle shipped in the plotly package (the ``html`` extra)."""
    require_plotly()
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def n(value: int | float | None) -> str:
    """A number with thousands separators, or '—'."""
    if value is None:
        return "—"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.3f}".rstrip("0").rstrip(".")


def pct(part: float, whole: float) -> str:
    """``part`` as a share of ``whole``, or '—'."""
    return f"{100 * part / whole:.1f}%" if whole else "—"


def chart_div(chart_id: str, *, height: int = 360, small: bool = False) -> str:
    """The element a chart is drawn in."""
    cls = "chart small" if small else "chart"
    return f'<div class="{cls}" id="{esc(chart_id)}" style="height:{height}px"></div>'


def link(target: Path | str, page_dir: Path, label: str | None = None) -> str:
    """An ``<a>`` to a file, relative to the page's folder."""
    rel = os.path.relpath(Path(target).resolve(), page_dir.resolve())
    href = "/".join(quote(part) for part in Path(rel).parts)
    return f'<a href="{esc(href)}">{esc(label if label is not None else rel)}</a>'


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], *, sortable: bool = False,
          numeric: Sequence[bool] = (), table_id: str | None = None, raw: Sequence[bool] = (),
          foot: Sequence[Any] | None = None) -> str:
    """A table; cells are escaped unless ``raw`` says a column holds HTML built here.

    ``numeric`` columns are right-aligned and sort by number (the cell's ``data-v``)."""
    attrs = ' class="sortable"' if sortable else ""
    attrs += f' id="{esc(table_id)}"' if table_id else ""
    head = "".join(f'<th{" class=num" if _at(numeric, i) else ""}>{esc(h)}</th>' for i, h in enumerate(headers))
    body = [_row(row, numeric, raw) for row in rows]
    tail = f"<tfoot>{_row(foot, numeric, raw)}</tfoot>" if foot is not None else ""
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody>{tail}</table>"


def _row(row: Sequence[Any], numeric: Sequence[bool], raw: Sequence[bool]) -> str:
    cells = []
    for i, value in enumerate(row):
        if _at(raw, i):
            cells.append(f"<td>{value}</td>")
        elif _at(numeric, i):
            v = "" if value is None else value
            cells.append(f'<td class="num" data-v="{esc(v)}">{esc(n(value))}</td>')
        else:
            cells.append(f"<td>{esc(value)}</td>")
    return "<tr>" + "".join(cells) + "</tr>"


def _at(flags: Sequence[bool], i: int) -> bool:
    return i < len(flags) and bool(flags[i])


def figures(specs: Mapping[str, Mapping[str, Any]]) -> str:
    """The chart specs of a page: ``{div id: {"data": [...], "layout": {...}}}`` as safe JSON."""
    return f'<script type="application/json" id="tc-charts">{script_json(specs)}</script>'


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1200px;padding:16px 24px;
color:#1d2330;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #dde2ea;padding-bottom:4px}
.sub{color:#5b6576;margin:0 0 12px;overflow-wrap:anywhere}
.figures{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}
.figure{border:1px solid #dde2ea;border-radius:6px;padding:8px 12px;min-width:120px}
.figure b{display:block;font-size:18px}.figure span{color:#5b6576;font-size:12px}
table{border-collapse:collapse;margin:6px 0;width:100%}
th,td{border-bottom:1px solid #e6e9ef;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f6f9;font-weight:600}tfoot td{font-weight:600;border-top:2px solid #dde2ea}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
table.sortable th{cursor:pointer;user-select:none}table.sortable th:after{content:" \\2195";color:#a0a8b5}
.chart{width:100%}.chart.small{width:260px}
details summary{cursor:pointer;overflow-wrap:anywhere}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f7f8fa;border:1px solid #e6e9ef;padding:8px;max-height:420px;
overflow:auto;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}
.ok{color:#17803d}.bad{color:#b42318}.note{color:#5b6576}
"""

# Sort a table.sortable by the clicked column: numbers by data-v, text otherwise; a second click reverses.
_SORT_JS = """
document.querySelectorAll("table.sortable").forEach(function(t){
  t.querySelectorAll("th").forEach(function(th,col){
    th.addEventListener("click",function(){
      var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows),asc=th.getAttribute("data-dir")!=="asc";
      t.querySelectorAll("th").forEach(function(h){h.removeAttribute("data-dir");});
      th.setAttribute("data-dir",asc?"asc":"desc");
      rows.sort(function(a,b){
        var x=a.cells[col],y=b.cells[col],u=x.getAttribute("data-v"),v=y.getAttribute("data-v"),r;
        if(u!==null&&v!==null){r=(parseFloat(u)||0)-(parseFloat(v)||0);}
        else{r=x.textContent.localeCompare(y.textContent);}
        return asc?r:-r;
      });
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
});
"""

_CHARTS_JS = """
(function(){
  var specs=JSON.parse(document.getElementById("tc-charts").textContent),done=[];
  Object.keys(specs).forEach(function(id){
    var s=specs[id];
    done.push(Plotly.newPlot(document.getElementById(id),s.data,s.layout,s.config));
  });
  Promise.all(done).then(function(){document.body.setAttribute("data-charts-ready",String(done.length));});
})();
"""


def page(title: str, body: str, specs: Mapping[str, Mapping[str, Any]]) -> str:
    """The whole document: head, CSS, the body, the chart specs, plotly.js and the page's scripts."""
    charts = {k: {"data": v["data"], "layout": v["layout"], "config": v.get("config", CHART_CONFIG)}
              for k, v in specs.items()}
    bundle = plotly_js().replace("</script", "<\\/script")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>\n"
        f"{body}\n{figures(charts)}\n<script>{bundle}</script>\n<script>{_SORT_JS}{_CHARTS_JS}</script>\n"
        "</body></html>\n"
    )
