"""End to end in real Chromium: drop the seed's Deployment manifest on the Target page, see its verdict (issue 31).

The harness of test_e2e_browser.py (`streamlit run app.py` with its own temp database, Debian's Chromium). The
file is tests/fixtures/deploy/seed-deployment.yaml, dropped on the Target page's uploader (a real file input); the
URL is a 127.0.0.1 port where nothing listens, so the checklist reads the manifest alone: vLLM 0.28.0 from the image
tag, the runner read as pooling from the args list, budget 2048 = max_model_len 2048: #55427 FAIL, and the manifest's
httpGet /health liveness probe is said to be blind to it.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from test_e2e_browser import CHROMIUM, SLOW, browser, commit, dashboard, expect, nav, page, shot  # noqa: F401 - fixtures
from triage.catalogue import POOLING_LIVELOCK
from triage.lab.server import free_port

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} missing (apt-get install chromium)")

SEED = Path(__file__).resolve().parents[1] / "fixtures" / "deploy" / "seed-deployment.yaml"


def test_dropped_manifest_gives_the_seed_verdict(page):  # type: ignore[no-untyped-def]  # noqa: F811
    pg = page
    url = f"http://127.0.0.1:{free_port()}"
    commit(pg, pg.get_by_label("Server URL"), url)
    commit(pg, pg.get_by_label("What does your client send as truncate_prompt_tokens?", exact=True), "2048")
    pg.get_by_text("Optional: the").click()
    pg.get_by_text("Optional: drop a deployment file").click()  # the drop sits outside the form (it fills the field)
    pg.locator("input[type=file]").first.set_input_files(str(SEED))
    # the reader's choice is said, and the field holds the manifest as dropped
    expect(pg.get_by_text(re.compile(r"seed-deployment\.yaml: kubernetes file, judged as "
                                     r"Deployment/qwen3-embedding container vllm"))).to_be_visible(timeout=SLOW)
    expect(pg.get_by_label("vllm serve command line")).to_have_value(re.compile(r"image: vllm/vllm-openai:v0\.28\.0"))
    pg.wait_for_timeout(1500)  # the drop's rerun renamed the section ("— command line given"): it stays open
    expect(pg.get_by_label("vllm serve command line")).to_be_visible()
    shot(pg, "deploy-1-dropped")
    pg.get_by_role("button", name="Use this target").click()
    expect(pg.get_by_text(re.compile(r"Target: .*" + re.escape(url.split("//")[1]))).first).to_be_visible(timeout=SLOW)

    nav(pg, "Checklist")
    pg.get_by_role("button", name="Run checklist").click()
    card = pg.locator("details summary").filter(has_text="pooling-livelock-risk")
    fail_title = re.compile(r"Livelock \(vllm#55427\): vLLM 0\.28\.0.*budget 2048 = max_model_len 2048")
    expect(card).to_contain_text(fail_title, timeout=SLOW)
    expect(card).to_contain_text("FAIL")
    summary = pg.get_by_test_id("stAlertContentError").filter(has_text="FAIL").first
    expect(summary).to_contain_text(POOLING_LIVELOCK.title, timeout=SLOW)
    live = pg.locator("details summary").filter(has_text="kube-liveness-blind")
    expect(live).to_contain_text("cannot see the vllm#55427 hang of vLLM 0.28.0")
    shot(pg, "deploy-2-checklist")
