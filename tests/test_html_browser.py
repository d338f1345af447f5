"""The HTML reports in a real browser: headless Chromium (Debian's ``chromium``) driven by playwright.

Each page must load offline with no console error and no request leaving the file, draw every
chart with the number of traces and points that the chart-data tests compute, and show hostile
transcript text as text without running it. Screenshots go to the test's temp folder.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import SAMPLES, jsonl
from test_html import CHAT, PWNED, hostile_compactable
from typer.testing import CliRunner

from tcompact.app import app

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    if os.environ.get("TCOMPACT_REQUIRE_BROWSER"):  # set by .ci/run, which installs chromium
        pytest.fail("chromium not found although TCOMPACT_REQUIRE_BROWSER is set: the install in .ci/run failed",
                    pytrace=False)
    pytest.skip("chromium not found (Debian package `chromium`; .ci/run installs it)", allow_module_level=True)
pytest.importorskip("plotly", reason="the html extra (plotly) is not installed: pip install '.[html]'")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install '.[dev]'")

# per chart: the number of points of each trace, as drawn (gd.data)
_DRAWN = """() => Object.fromEntries(Array.from(document.querySelectorAll(".js-plotly-plot")).map(
    d => [d.id, d.data.map(t => (t.x || []).length)]))"""
# per chart: the bars and markers plotly put in the SVG
_MARKS = """() => Object.fromEntries(Array.from(document.querySelectorAll(".js-plotly-plot")).map(
    d => [d.id, d.querySelectorAll(".barlayer .point, .scatterlayer .point, .waterfalllayer .point").length]))"""


@pytest.fixture(scope="module")
def browser():
    """One browser and one context for the module (a page each test): launching is the slow part."""
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        context = b.new_context(viewport={"width": 1280, "height": 900})
        yield context
        context.close()
        b.close()


class Opened:
    """A page loaded from a file, with what it logged and requested."""

    def __init__(self, browser, path: Path):
        self.page = browser.new_page()
        self.problems: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.problems.append(f"console {m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.problems.append(f"pageerror: {e}"))
        self.page.on("request", lambda r: r.url.startswith(("file:", "data:", "blob:", "about:"))
                     or self.requests.append(r.url))
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_selector("body[data-charts-ready]", state="attached", timeout=20_000)

    def screenshot(self, path: Path) -> None:
        self.page.screenshot(path=str(path), full_page=True)
        data = path.read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000

    def close(self) -> None:
        assert self.problems == []
        assert self.requests == []  # offline: nothing but the file itself
        self.page.close()


def cli(*args: str) -> None:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.stderr


def test_inspect_page(browser, tmp_path):
    cli("inspect", str(CHAT), "--html", str(tmp_path / "inspect.html"))
    opened = Opened(browser, tmp_path / "inspect.html")
    page = opened.page
    # the numbers of test_html: 33 messages, 3 rounds × 5 kinds, 4 span layouts × 3 parts
    assert page.evaluate(_DRAWN) == {"cumulative": [33, 2, 2, 2], "kinds-by-round": [3] * 5, "spans": [5, 5, 5]}
    assert page.evaluate(_MARKS) == {"cumulative": 33, "kinds-by-round": 15, "spans": 15}
    assert page.get_by_text("11,796", exact=True).first.is_visible()

    def tool_column(n: int) -> list[str]:
        return page.eval_on_selector_all(f"#tools tbody tr td:nth-child({n})", "tds => tds.map(t => t.textContent)")

    assert tool_column(1) == ["run_tests", "apply_patch", "read_file", "write_file", "grep"]
    page.click("#tools th:nth-child(3)")  # argument tokens, ascending
    assert tool_column(3) == ["45", "75", "87", "577", "3,229"]
    page.click("#tools th:nth-child(3)")
    assert tool_column(1)[0] == "apply_patch"

    first = page.locator("#top details").first
    assert not first.locator("pre").is_visible()
    first.locator("summary").click()
    assert first.locator("pre").is_visible() and "test session starts" in first.locator("pre").inner_text()
    opened.screenshot(tmp_path / "inspect.png")
    opened.close()


def test_many_files_page(browser, tmp_path):
    cli("inspect", str(SAMPLES), "--html", str(tmp_path / "files.html"))
    opened = Opened(browser, tmp_path / "files.html")
    assert opened.page.evaluate(_DRAWN) == {"rounds-0": [3], "rounds-1": [2], "rounds-2": [3]}
    assert opened.page.evaluate(_MARKS) == {"rounds-0": 3, "rounds-1": 2, "rounds-2": 3}
    assert opened.page.locator("#files tbody tr").count() == 3
    opened.close()


def test_compact_page(browser, tmp_path):
    cli("compact", str(CHAT), "-c", "dialogue", "--now", "-o", str(tmp_path / "out.jsonl"),
        "--html", str(tmp_path / "compact.html"))
    opened = Opened(browser, tmp_path / "compact.html")
    page = opened.page
    assert page.evaluate(_DRAWN) == {"waterfall": [3], "latency": [1]}
    assert page.evaluate(_MARKS) == {"waterfall": 3, "latency": 1}
    assert page.evaluate("document.getElementById('waterfall').data[0].y") == [11796, -6832, 4964]
    dump = page.locator("#calls a").first.get_attribute("href")
    assert dump.startswith("out.dumps/") and (tmp_path / dump).is_file()
    block = page.locator("details").first
    block.locator("summary").click()
    assert block.locator("pre").inner_text().startswith("<memory_block_dialogue>")
    opened.screenshot(tmp_path / "compact.png")
    opened.close()


def test_script_in_a_transcript_does_not_run(browser, tmp_path):
    path = jsonl(tmp_path / "evil.jsonl", hostile_compactable())
    cli("inspect", str(path), "--html", str(tmp_path / "evil.html"))
    cli("compact", str(path), "-c", "dialogue", "--now", "-o", str(tmp_path / "o.jsonl"),
        "--html", str(tmp_path / "evil-compact.html"))
    for name in ("evil.html", "evil-compact.html"):
        opened = Opened(browser, tmp_path / name)
        page = opened.page
        page.eval_on_selector_all("details", "ds => ds.forEach(d => { d.open = true; })")
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert page.evaluate("document.querySelectorAll('img').length") == 0
        text = page.inner_text("body")
        assert PWNED[0] in text and PWNED[1] in text  # shown, as text
        if name == "evil.html":
            assert "<b>bold</b>" in text  # a tool name
            opened.screenshot(tmp_path / "evil.png")
        opened.close()
