"""End to end in real Chromium (issue 30, done-when): under the livelock verdict of a real vLLM 0.31.0 server, the
"Reproduce on a lab twin and verify the fixes" button starts a lab twin of the deployment (same release, the tiny
model of the same shape, the user's options), reproduces the hang and ends with each fix marked verified. The twin
servers are started and stopped by the engine (triage.twin); the lab lists none of them afterwards.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from test_e2e_browser import CHROMIUM, SLOW, browser, dashboard, expect, nav, shot  # noqa: F401 - fixtures
from lab_servers import left_running
from triage.lab import status

pytestmark = [pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} missing (apt-get install chromium)"),
              pytest.mark.real_server]
TWIN = 420_000  # ms: three twin servers start on a CPU box, each fix is probed


def test_twin_button_on_the_livelock_verdict_verifies_the_fixes(browser, dashboard, server_031_livelock):  # type: ignore[no-untyped-def]  # noqa: F811
    srv = server_031_livelock
    before = {s.pid for s in status()}
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        pg = ctx.new_page()
        pg.set_default_timeout(SLOW)
        pg.goto(dashboard)
        expect(pg.get_by_role("heading", name=re.compile("Target"))).to_be_visible(timeout=SLOW)
        pg.get_by_label("Server URL").fill(srv.url)
        pg.get_by_label("What does your client send as truncate_prompt_tokens?", exact=True).fill("256")
        pg.get_by_text("Optional: the").click()
        pg.get_by_label("vllm serve command line").fill("vllm serve " + shlex.join(srv.args))
        pg.get_by_role("button", name="Use this target").click()
        expect(pg.get_by_text(re.compile(r"Target: .*truncate_prompt_tokens 256")).first).to_be_visible(timeout=SLOW)

        nav(pg, "Checklist")
        pg.get_by_role("button", name="Run checklist").click()
        expect(pg.get_by_test_id("stAlertContentError").filter(has_text="FAIL").first).to_contain_text(
            "#55427", timeout=SLOW)
        box = pg.get_by_text("Prove it on a lab twin")
        expect(box).to_be_visible(timeout=SLOW)
        expect(pg.get_by_text(re.compile(r"vLLM 0\.31\.0 · tiny-qwen3"))).to_be_visible()
        pg.get_by_role("button", name="Reproduce on a lab twin and verify the fixes").click()
        expect(pg.get_by_text("Reproduced on the twin")).to_be_visible(timeout=TWIN)
        marks = pg.get_by_text(re.compile(r"verified on the twin:"))
        expect(marks.first).to_be_visible()
        texts = [marks.nth(i).inner_text() for i in range(marks.count())]
        assert len(texts) == 3 and not any("not verified" in t for t in texts), texts
        shot(pg, "twin-1-fixes-verified")
    finally:
        ctx.close()
    assert left_running(before) == set()  # released: stopped, or kept by this session (tests/lab_servers.py)
