"""HTML: one self-contained page, plotly.js inlined once, charts drawn offline, no injected script runs."""
from __future__ import annotations

import base64
import hashlib
import html
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import export_runs
import pytest

from triage.export import render
from triage.export.html import safe_json
from triage.store import RunRecord

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
# Both charts exist and every one has drawn its traces.
CHARTS_DRAWN = ("(() => { const c = document.querySelectorAll('.js-plotly-plot'); return c.length === 2 &&"
                " Array.from(c).every(d => d.querySelectorAll('.scatterlayer .trace').length > 0); })()")


def _scripts(page: str) -> list[tuple[str, str]]:
    return re.findall(r"<script([^>]*)>(.*?)</script>", page, flags=re.S)


def test_page_is_self_contained_with_plotly_inlined_once(record: RunRecord) -> None:
    page = render(record, "html").decode()
    assert page.count("plotly.js v") == 1
    scripts = _scripts(page)
    executable = [body for attrs, body in scripts if "type=" not in attrs]
    data = [attrs for attrs, _ in scripts if 'type="application/json"' in attrs]
    assert len(executable) == 2 and len(data) == 2  # plotly.js + bootstrap; engine stats + probe timeline
    body = page.split("<body>", 1)[1].split("<script")[0]
    assert not re.search(r"\bsrc\s*=", body)  # nothing to fetch; links (vLLM issue refs, issue 23) are only followed
    assert all(h.startswith("https://github.com/vllm-project/vllm/issues/")
               for h in re.findall(r'<a href="([^"]*)"', body)) and not re.search(r"<(?!a )[^>]*\bhref\s*=", body)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert csp and "default-src 'none'" in csp.group(1) and "connect-src 'none'" in csp.group(1)
    hashes = set(re.findall(r"'sha256-([^']+)'", csp.group(1)))
    assert hashes == {base64.b64encode(hashlib.sha256(b.encode()).digest()).decode() for b in executable}


def test_every_foreign_string_is_escaped(hostile_record: RunRecord) -> None:
    page = render(hostile_record, "html").decode()
    assert export_runs.SCRIPT not in page
    assert html.escape(export_runs.SCRIPT) in page  # model name, label, summary, pasted log
    assert page.count("<script") == 4  # plotly.js, two chart data blocks, bootstrap


@pytest.mark.parametrize("value", [
    pytest.param("</script><script>alert(1)</script>", id="close-script"),
    pytest.param("<!-- <script>", id="comment-open"),
    pytest.param("a\u2028b&c>d", id="line-separator-amp-gt"),
])
def test_safe_json_cannot_leave_its_element(value: str) -> None:
    import json
    out = safe_json({"name": value})
    assert "<" not in out and ">" not in out and "&" not in out and "\u2028" not in out
    assert json.loads(out) == {"name": value}


# -- in a real browser, offline --------------------------------------------------------------

@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


def wait_until(page: Any, expression: str, timeout_s: float = 60.0) -> None:
    """Poll with page.evaluate: wait_for_function evals a string in the page, which our CSP forbids."""
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, (f"timed out waiting for {expression}: " + page.evaluate(
            "JSON.stringify([typeof Plotly, Array.from(document.querySelectorAll('.js-plotly-plot'))"
            ".map(d => d.querySelectorAll('.scatterlayer .trace').length), window.__csp])"))
        page.wait_for_timeout(200)


def open_offline(browser: Any, path: Path) -> tuple[Any, dict[str, list[str]]]:
    """Open a file:// page with every non-file request aborted; returns (page, what happened)."""
    seen: dict[str, list[str]] = {"blocked": [], "errors": [], "csp": []}
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})

    def route(r: Any) -> None:
        if r.request.url.startswith("file:"):
            r.continue_()
        else:
            seen["blocked"].append(r.request.url)
            r.abort()

    ctx.route("**/*", route)
    ctx.add_init_script("document.addEventListener('securitypolicyviolation',"
                        " e => (window.__csp = (window.__csp || []).concat([e.violatedDirective])))")
    page = ctx.new_page()
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    page.on("console", lambda m: m.type == "error" and seen["errors"].append(m.text))
    page.goto(path.as_uri())
    return page, seen


def test_html_renders_charts_offline_and_runs_no_injected_script(
        browser: Any, hostile_record: RunRecord, tmp_path: Path, test_output: Path) -> None:
    path = tmp_path / "report.html"
    path.write_bytes(render(hostile_record, "html"))
    page, seen = open_offline(browser, path)
    wait_until(page, CHARTS_DRAWN)
    page.screenshot(path=str(test_output / "report-031-livelock-hostile.png"), full_page=True)
    traces = page.evaluate("Array.from(document.querySelectorAll('.js-plotly-plot'))"
                           ".map(d => d.querySelectorAll('.scatterlayer .trace').length)")
    assert traces[0] >= 3 and traces[1] >= 2  # running, waiting, kv cache; probe running, waiting
    assert page.evaluate("typeof window.__pwned") == "undefined"
    body_text = page.inner_text("body")
    assert export_runs.SCRIPT in body_text  # shown as text
    assert seen == {"blocked": [], "errors": [], "csp": []}
    assert page.evaluate("window.__csp || []") == []


def test_csp_stops_a_script_that_escaped_escaping(browser: Any, record: RunRecord, tmp_path: Path) -> None:
    page_html = render(record, "html").decode()
    tampered = page_html.replace("<h2>Findings</h2>", "<h2>Findings</h2><script>window.__pwned = 2</script>"
                                 "<img src=\"x\" onerror=\"window.__pwned = 3\">", 1)
    path = tmp_path / "tampered.html"
    path.write_text(tampered)
    page, seen = open_offline(browser, path)
    wait_until(page, CHARTS_DRAWN)  # the allowed scripts still run
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert "script-src-elem" in page.evaluate("window.__csp || []") or seen["errors"]
