"""End to end in real Chromium: `streamlit run app.py` on a free port, driven against real lab vLLM servers.

Nothing is faked: the dashboard runs as a subprocess with its own temp database, the browser is
Debian's Chromium through Playwright, and the targets are the lab's real vLLM 0.31.0 and 0.32.0
servers (tiny-qwen3, livelock profile). Screenshots of every page go to test-output/ui/.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from triage.catalogue import POOLING_LIVELOCK
from ui_apptest import ROOT
from triage.lab.server import free_port

playwright_sync = pytest.importorskip("playwright.sync_api")
expect = playwright_sync.expect

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
SHOTS = ROOT / "test-output" / "ui"
SLOW = 90_000  # ms: a shared 2-core box running vLLM servers next to the dashboard

pytestmark = [pytest.mark.real_server,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} missing (apt-get install chromium)")]


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`streamlit run app.py` in its own process group on a free port, with a temp database; stopped by PID."""
    with running_dashboard(tmp_path_factory.mktemp("dashboard")) as url:
        yield url


@contextmanager
def running_dashboard(d: Path) -> Iterator[str]:
    """`streamlit run app.py` on a free port with ``d``/triage.db as its database (what is already in it
    shows in History); its URL while the block runs, then stopped by PID."""
    port = free_port()
    env = {**os.environ, "VLLM_TRIAGE_DB": str(d / "triage.db"), "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    log = open(d / "streamlit.log", "w")  # noqa: SIM115 - closed in finally
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                             "--server.headless", "true", "--server.address", "127.0.0.1"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/_stcore/health", timeout=2).text.strip() == "ok":
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not start: {(d / 'streamlit.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield url
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        log.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright_sync.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser, dashboard):  # type: ignore[no-untyped-def]
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    pg = ctx.new_page()
    pg.set_default_timeout(SLOW)
    pg.goto(dashboard)
    expect(pg.get_by_role("heading", name=re.compile("Target"))).to_be_visible(timeout=SLOW)
    try:
        yield pg
    finally:
        ctx.close()


def shot(pg, name: str) -> None:  # type: ignore[no-untyped-def]
    """Screenshot the whole page: Streamlit scrolls inside its main block, so grow the viewport to fit it."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    pg.wait_for_timeout(700)  # let Streamlit finish painting
    h = pg.evaluate("() => { const m = document.querySelector('[data-testid=stMain]');"
                    " return m ? m.scrollHeight : document.body.scrollHeight; }")
    pg.set_viewport_size({"width": 1400, "height": max(1000, min(int(h) + 40, 12000))})
    pg.wait_for_timeout(1500 if pg.locator(".js-plotly-plot").count() else 300)  # plotly draws late
    pg.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def download(pg, label: str, name: str) -> str:  # type: ignore[no-untyped-def]
    """Press the download button ``label``, keep the file as SHOTS/``name`` and return its text."""
    with pg.expect_download() as dl:
        pg.get_by_role("button", name=label).click()
    out = SHOTS / name
    dl.value.save_as(str(out))
    return out.read_text()
    pg.set_viewport_size({"width": 1400, "height": 1000})


def nav(pg, name: str) -> None:  # type: ignore[no-untyped-def]
    """Client-side navigation through the sidebar (a new URL would start a new session)."""
    pg.get_by_test_id("stSidebarNav").get_by_role("link", name=name, exact=True).click()
    expect(pg.get_by_role("heading", name=re.compile(name))).to_be_visible(timeout=SLOW)


def commit(pg, box, value: str, key: str = "Enter") -> None:  # type: ignore[no-untyped-def]
    """Type a value and commit it (Enter; Control+Enter in a text area). On a loaded machine a rerun
    (the one Fetch models started, say) can land between typing and committing and wipe the box, as
    it would for a fast typist: wait for the rerun and type again until the value stays."""
    for _ in range(4):
        box.fill(value)
        box.press(key)
        pg.wait_for_timeout(1200)
        if box.input_value() == value:
            return
    expect(box).to_have_value(value)


def enter_target(pg, srv, tag: str, paste_cmdline: bool = True) -> None:  # type: ignore[no-untyped-def]
    commit(pg, pg.get_by_label("Server URL"), srv.url)
    pg.get_by_role("button", name="Fetch models").click()
    expect(pg.get_by_role("combobox", name="Model (from /v1/models)")).to_be_visible(timeout=SLOW)
    commit(pg, pg.get_by_label("What does your client send as truncate_prompt_tokens?", exact=True), "256")
    if paste_cmdline:
        pg.get_by_text("Optional: the").click()
        commit(pg, pg.get_by_label("vllm serve command line"), "vllm serve " + " ".join(srv.args), "Control+Enter")
    pg.get_by_role("button", name="Use this target").click()
    # the banner states what the checklist will use: the URL and the truncation typed above
    banner = re.compile(r"Target: .*" + re.escape(srv.url.split("//")[1]) + r".*truncate_prompt_tokens 256")
    expect(pg.get_by_text(banner).first).to_be_visible(timeout=SLOW)
    shot(pg, f"{tag}-1-target")


def walk_checklist(pg, tag: str) -> None:  # type: ignore[no-untyped-def]
    nav(pg, "Checklist")
    pg.get_by_role("button", name="Run checklist").click()
    expect(pg.get_by_role("heading", name=re.compile(r"^7\. max_model_len vs truncate_prompt_tokens"))
           ).to_be_visible(timeout=SLOW)


def test_livelock_on_0310_then_probes_stats_logs_history_report(page, server_031_livelock):  # type: ignore[no-untyped-def]
    pg, srv = page, server_031_livelock
    enter_target(pg, srv, "031")
    walk_checklist(pg, "031")
    summary = pg.get_by_test_id("stAlertContentError").filter(has_text="FAIL").first
    expect(summary).to_contain_text(POOLING_LIVELOCK.title, timeout=SLOW)  # the banner names the root cause
    expect(summary).to_contain_text(POOLING_LIVELOCK.refs[0])
    expect(pg.get_by_role("heading", name=re.compile(r"^7\. max_model_len vs truncate_prompt_tokens — .*FAIL"))
           ).to_be_visible()
    shot(pg, "031-2-checklist")

    nav(pg, "Probes")
    expect(pg.get_by_role("checkbox", name="Conformance")).to_be_checked()
    pg.get_by_text("Throughput", exact=True).click()  # only conformance: keep the shared box calm
    expect(pg.get_by_role("checkbox", name="Throughput")).not_to_be_checked()
    pg.get_by_role("button", name="Run probes").click()
    expect(pg.get_by_text(re.compile(r"\d+ probes, 0 failed"))).to_be_visible(timeout=240_000)
    expect(pg.get_by_text("conformance-normalize-removed").first).to_be_visible()
    shot(pg, "031-3-probes")

    nav(pg, "Engine stats")
    expect(pg.get_by_text(re.compile(r"\d+ samples")).first).to_be_visible(timeout=SLOW)
    pg.wait_for_timeout(4000)  # a few live ticks
    expect(pg.locator(".js-plotly-plot").first).to_be_visible(timeout=SLOW)
    shot(pg, "031-4-stats")
    pg.get_by_text("Live", exact=True).click()  # stop ticking before moving on

    nav(pg, "Logs")
    log_copy = SHOTS / "server-031.log"  # a still copy: Chromium refuses a file that grows while it reads it
    log_copy.write_text(srv.log_text())
    pg.locator("input[type=file]").first.set_input_files(str(log_copy))
    expect(pg.get_by_test_id("stFileChip").first).to_be_visible(timeout=SLOW)
    expect(pg.get_by_role("button", name="Analyze log")).to_be_enabled(timeout=SLOW)
    pg.get_by_role("button", name="Analyze log").click()
    expect(pg.get_by_role("heading", name="Start-up config")).to_be_visible(timeout=SLOW)
    expect(pg.locator("summary").filter(has_text="log-").first).to_be_visible()
    shot(pg, "031-5-logs")

    nav(pg, "History")
    expect(pg.get_by_text(re.compile(r"Page 1 of 1 · 3 runs"))).to_be_visible(timeout=SLOW)
    for box, run, kind in (("Left run", 1, "checklist"), ("Right run", 3, "log analysis")):  # picked by what they are
        pg.get_by_role("combobox", name=box).click()
        pg.keyboard.type(f"#{run} · {kind}")  # the list filters to that run; Enter picks it
        pg.keyboard.press("Enter")
        expect(pg.get_by_role("combobox", name=box)).to_have_value(re.compile(rf"^#{run} · "), timeout=SLOW)
    pg.get_by_role("button", name="Compare").click()
    expect(pg.get_by_role("heading", name="Verdicts")).to_be_visible(timeout=SLOW)
    shot(pg, "031-6-history")
    pg.get_by_label("Run", exact=True).click()  # open the checklist run (#1): the report is about it
    pg.keyboard.type("#1 · checklist")
    pg.keyboard.press("Enter")
    pg.get_by_role("button", name="Open run", exact=True).click()
    expect(pg.get_by_text(re.compile(r"Run #1 · check"))).to_be_visible(timeout=SLOW)

    nav(pg, "Report")
    expect(pg.get_by_role("button", name="Download Markdown")).to_be_visible(timeout=SLOW)
    with pg.expect_download() as dl:
        pg.get_by_role("button", name="Download Markdown").click()
    out = SHOTS / "report-031.md"
    dl.value.save_as(str(out))
    shot(pg, "031-7-report")
    text = out.read_text()
    assert "55427" in text and srv.url.split("//")[1] in text, text[:500]


def test_pass_on_0320(page, server_032_livelock):  # type: ignore[no-untyped-def]
    """The README's newcomer path: URL, Fetch models, truncate 256, Use this target, Run checklist."""
    pg, srv = page, server_032_livelock
    enter_target(pg, srv, "032", paste_cmdline=False)
    walk_checklist(pg, "032")
    expect(pg.get_by_role("heading", name=re.compile(r"^7\. max_model_len vs truncate_prompt_tokens — .*PASS"))
           ).to_be_visible()
    expect(pg.locator("summary").filter(has_text=f"carries the fix for {POOLING_LIVELOCK.refs[0]}").first
           ).to_be_visible()
    shot(pg, "032-2-checklist")


def test_seed_matrix_behind_confirmation_finds_the_livelock_on_0310(page, server_031_livelock):  # type: ignore[no-untyped-def]
    pg, srv = page, server_031_livelock
    enter_target(pg, srv, "031-seed")
    nav(pg, "Probes")
    pg.get_by_text("Conformance", exact=True).click()
    pg.get_by_text("Throughput", exact=True).click()
    pg.get_by_text("Seed matrix (livelock reproduction)", exact=True).click()
    expect(pg.get_by_text(re.compile("hangs the engine for up to 30 seconds"))).to_be_visible(timeout=SLOW)
    expect(pg.get_by_role("button", name="Run probes")).to_be_disabled()
    pg.get_by_text(re.compile("^I understand: it can hang the server")).click()
    expect(pg.get_by_role("button", name="Run probes")).to_be_enabled(timeout=SLOW)
    shot(pg, "031-seed-1-confirm")
    pg.get_by_role("button", name="Run probes").click()
    banner = pg.get_by_test_id("stAlertContentError").filter(has_text=re.compile(r"\d+ probes, \d+ failed"))
    expect(banner).to_be_visible(timeout=400_000)
    expect(pg.locator("summary").filter(has_text=re.compile(r"— livelock$")).first).to_be_visible()
    expect(pg.get_by_role("heading", name="Engine gauges while each probe ran")).to_be_visible()
    expect(pg.locator(".js-plotly-plot .main-svg").first).to_be_attached(timeout=SLOW)
    shot(pg, "031-seed-2-livelock")
