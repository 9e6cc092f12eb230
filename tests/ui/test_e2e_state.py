"""End to end in real Chromium: state that tells the truth (issue 32, Deliver 4 and 5).

The harness of test_e2e_browser.py (`streamlit run app.py` on a free port with a temp database, Debian's
Chromium through Playwright). The target of the first tests is the #55427 report's `docker run` pasted on
the Target page at a 127.0.0.1 port where nothing listens (a server behind a gateway: the checklist reads
the command line only), so no vLLM server is needed; the interrupted probe run needs the lab's real vLLM
0.31.0 livelock server, whose seed probe hangs until it is aborted.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from test_e2e_browser import CHROMIUM, SLOW, browser, commit, dashboard, expect, nav, shot  # noqa: F401 - fixtures
from triage.lab.server import free_port

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} missing (apt-get install chromium)")

SEED_CMD = ("docker run --gpus all -p 8094:8000 vllm/vllm-openai:v0.28.0 Qwen/Qwen3-Embedding-4B "
            "--runner pooling --convert embed --max-model-len 2048")
TPT = "What does your client send as truncate_prompt_tokens?"


def _open(browser, dashboard, path: str = ""):  # type: ignore[no-untyped-def]  # noqa: F811
    """A new browser context (a new Streamlit session, as a new on-call engineer's browser) on ``path``."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    pg.set_default_timeout(SLOW)
    pg.goto(dashboard + path)
    return ctx, pg


def _sidebar(pg):  # type: ignore[no-untyped-def]
    return pg.get_by_test_id("stSidebar")


def _use_offline_target(pg, url: str, tpt: str) -> None:  # type: ignore[no-untyped-def]
    expect(pg.get_by_role("heading", name=re.compile("Target"))).to_be_visible(timeout=SLOW)
    expect(_sidebar(pg).get_by_text(re.compile(r"^Target: "))).to_be_visible(timeout=SLOW)  # the first run is done
    commit(pg, pg.get_by_label("Server URL"), url)
    commit(pg, pg.get_by_label("Model (press Fetch models to list them, or type the id)"), "Qwen/Qwen3-Embedding-4B")
    commit(pg, pg.get_by_label(TPT, exact=True), tpt)
    pg.get_by_text("Optional: the").click()
    commit(pg, pg.get_by_label("vllm serve command line"), SEED_CMD, "Control+Enter")
    pg.get_by_role("button", name="Use this target").click()
    expect(pg.get_by_text(re.compile(r"Target: .*" + re.escape(url.split("//")[1]))).first).to_be_visible(timeout=SLOW)


def _click_until_gone(pg, button) -> None:  # type: ignore[no-untyped-def]
    """Click a button whose callback removes it. On a loaded box (CI, load 10+) a click can land while the page
    switch's run is still going and be dropped with it, and that run's elements sit beside the next run's for a
    while: click again until the button is gone, then the caller waits for one copy of what it reads."""
    for _ in range(3):
        button.click()
        try:
            expect(button).to_have_count(0, timeout=20_000)
            return
        except AssertionError:
            continue
    expect(button).to_have_count(0, timeout=SLOW)


def _confirm_offer(pg, name: str, box, value: str) -> None:  # type: ignore[no-untyped-def]
    """Click the offer button ``name``; the box it fills must then hold ``value``, one copy of it. On a loaded box
    (CI, the full suite) a click can land while the page switch's run is still going and be dropped with it, and that
    run's elements sit beside the next run's (two boxes, both empty, seen for 90 s once): then open the Target page
    again and click the offer again, three times at most. An offer that never fills the box still fails."""
    button = pg.get_by_role("button", name=name)
    for _ in range(3):
        if button.count():
            _click_until_gone(pg, button.first)
        try:
            expect(box).to_have_count(1, timeout=20_000)  # the rerun that drops the offer has finished
            expect(box).to_have_value(value, timeout=20_000)
            return
        except AssertionError:
            nav(pg, "Target")
    expect(box).to_have_count(1, timeout=SLOW)
    expect(box).to_have_value(value, timeout=SLOW)


def _run_checklist(pg) -> int:  # type: ignore[no-untyped-def]
    nav(pg, "Checklist")
    pg.get_by_role("button", name="Run checklist").click()
    saved = pg.get_by_text(re.compile(r"Saved as run #\d+"))
    expect(saved).to_be_visible(timeout=SLOW)
    return int(re.search(r"#(\d+)", saved.inner_text()).group(1))


def test_a_fresh_browser_session_carries_no_answer_and_a_link_opens_its_run(browser, dashboard):  # type: ignore[no-untyped-def]  # noqa: F811
    url = f"http://127.0.0.1:{free_port()}"
    ctx1, pg = _open(browser, dashboard)
    try:
        _use_offline_target(pg, url, "256")
        expect(_sidebar(pg).get_by_text(re.compile(r"truncate_prompt_tokens\s*256"))).to_be_visible(timeout=SLOW)
    finally:
        ctx1.close()

    # a new browser: the last target's server is offered, its truncation is not an answer until confirmed
    ctx2, pg = _open(browser, dashboard)
    try:
        expect(pg.get_by_label("Server URL")).to_have_value(url, timeout=SLOW)
        expect(pg.get_by_label(TPT, exact=True)).to_have_value("")
        confirm = pg.get_by_role("button", name="My client still sends 256")
        expect(confirm).to_be_visible()
        expect(_sidebar(pg).get_by_text(re.compile(r"truncate_prompt_tokens\s*not stated"))).to_be_visible()
        shot(pg, "state-1-new-session-offers-not-carries")

        run_no = _run_checklist(pg)
        card = pg.locator("details summary").filter(has_text="truncate-vs-max-model-len")
        expect(card).to_contain_text("The client's truncate_prompt_tokens is not stated", timeout=SLOW)
        expect(card).to_contain_text("UNKNOWN")
        expect(pg.get_by_text("stated by user")).to_have_count(0)
        # the fix of an UNKNOWN says what to state, in the dashboard's words, not the CLI's
        card.click()
        expect(pg.get_by_text(re.compile(r"State what your client sends as truncate_prompt_tokens")).first
               ).to_be_visible()
        expect(pg.get_by_text("--truncate")).to_have_count(0)
        shot(pg, "state-2-checklist-asks")

        nav(pg, "Target")
        _confirm_offer(pg, "My client still sends 256", pg.get_by_label(TPT, exact=True), "256")
        expect(_sidebar(pg).get_by_text(re.compile(r"truncate_prompt_tokens\s*256"))).to_be_visible(timeout=SLOW)
    finally:
        ctx2.close()

    # a link to the run: /history?run=N opens run N in a browser that never saw it
    ctx3, pg = _open(browser, dashboard, f"/history?run={run_no}")
    try:
        expect(pg.get_by_role("heading", name="History")).to_be_visible(timeout=SLOW)
        banner = pg.get_by_test_id("stAlertContainer").filter(has_text=f"Run #{run_no} · checklist")
        expect(banner).to_be_visible(timeout=SLOW)
        # the run's status and its summary agree (nothing listens at the URL: ERROR, and says why)
        status, summary = re.search(r"([A-Z]+) — .* · (\w+): ", banner.inner_text()).groups()
        assert summary == status.lower(), banner.inner_text()
        expect(pg.get_by_text(f"Link to this run: /history?run={run_no}")).to_be_visible()
        shot(pg, "state-3-history-link")
    finally:
        ctx3.close()


@pytest.mark.real_server
def test_a_probe_run_stopped_by_the_user_is_stored_as_interrupted(browser, dashboard, server_031_livelock):  # type: ignore[no-untyped-def]  # noqa: F811
    """Issue 32: a probe run the user stopped was stored as PASS ("interrupted: StopException"). The seed probe
    on 0.31.0 hangs until aborted; the user leaves the page while it runs; History shows the run INTERRUPTED."""
    srv = server_031_livelock
    ctx, pg = _open(browser, dashboard)
    try:
        expect(pg.get_by_role("heading", name=re.compile("Target"))).to_be_visible(timeout=SLOW)
        commit(pg, pg.get_by_label("Server URL"), srv.url)
        pg.get_by_role("button", name="Fetch models").click()
        expect(pg.get_by_role("combobox", name="Model (from /v1/models)")).to_be_visible(timeout=SLOW)
        commit(pg, pg.get_by_label(TPT, exact=True), "256")
        pg.get_by_role("button", name="Use this target").click()
        expect(pg.get_by_text(re.compile(r"answered /v1/models"))).to_be_visible(timeout=SLOW)

        nav(pg, "Probes")
        for name in ("Conformance", "Throughput", "Vectors"):  # only the seed matrix: keep the shared box calm
            box = pg.get_by_role("checkbox", name=name, exact=True)
            if box.is_checked():
                pg.get_by_text(name, exact=True).click()
                expect(box).not_to_be_checked(timeout=SLOW)
        pg.get_by_text("Seed matrix (livelock reproduction)", exact=True).click()
        pg.get_by_text(re.compile("^I understand: it can hang the server")).click()
        expect(pg.get_by_role("button", name="Run probes")).to_be_enabled(timeout=SLOW)
        pg.get_by_role("button", name="Run probes").click()
        expect(pg.get_by_test_id("stDataFrame").first).to_be_visible(timeout=SLOW)  # the run's progress table
        pg.wait_for_timeout(2500)  # the seed matrix is under way (its probes hang until aborted)
        shot(pg, "state-4-probe-run-before-leaving")
        nav(pg, "History")  # the user gives up and leaves: Streamlit stops the page's script mid-run
        # Streamlit runs the new page at once and stops the old script at its next call: the run is closed then
        banner = pg.get_by_test_id("stAlertContainer").filter(has_text="· probes ·")
        for _ in range(20):
            pg.get_by_role("button", name="Open run", exact=True).click()
            expect(banner).to_be_visible(timeout=SLOW)
            if "RUNNING" not in banner.inner_text():
                break
            pg.wait_for_timeout(2000)
        expect(banner).to_contain_text("INTERRUPTED")
        expect(banner).not_to_contain_text("PASS")
        expect(banner).to_contain_text("interrupted: ")
        shot(pg, "state-5-interrupted-probe-run")
    finally:
        ctx.close()


def test_one_diagnose_click_from_a_url_to_a_verdict(browser, dashboard):  # type: ignore[no-untyped-def]  # noqa: F811
    """Issue 32, Deliver 5: a URL (nothing listens there: a server down) and one click on Diagnose give one stored
    run with its verdict, the reason, and a link to it; Enter in the URL field is that click."""
    url = f"http://127.0.0.1:{free_port()}"
    ctx, pg = _open(browser, dashboard, "/diagnose")
    try:
        expect(pg.get_by_role("heading", name="Diagnose")).to_be_visible(timeout=SLOW)
        box = pg.get_by_label("Server URL")
        box.fill(url)
        box.press("Enter")
        banner = pg.get_by_test_id("stAlertContainer").filter(has_text=re.compile(r"Run #\d+ · diagnose"))
        expect(banner).to_contain_text("ERROR", timeout=SLOW)
        expect(banner).to_contain_text("Nothing is listening")
        expect(pg.get_by_role("link", name=re.compile(r"Run #\d+ in History"))).to_be_visible()
        shot(pg, "state-6-diagnose")
    finally:
        ctx.close()
