"""End to end in real Chromium: a Qwen3 reranker served without --hf-overrides gets the overrides fix and nothing of
the livelock, on the page and in its Markdown and HTML exports (issue 32, "Done when").

The harness of test_e2e_browser.py (`streamlit run app.py` on a free port with a temp database, Debian's Chromium
through Playwright) and a real lab vLLM 0.32.0 serving the lab's tiny Qwen3 reranker as its checkpoint says
(`lab up --vllm 0.32.0 --model tiny-qwen3-reranker --profile rerank-no-overrides`: --runner pooling, no overrides;
one shared server of that configuration, reused when up). Nothing is pasted: the checklist reads the server and, on
this host, its process's own command line and model directory. Screenshots: test-output/ui/rerank-*.png.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab_servers import left_running, serve
from test_e2e_browser import CHROMIUM, SHOTS, SLOW, browser, dashboard, download, expect, nav, shot  # noqa: F401 - fixtures
from test_e2e_trust import _open, _use_target, ctx  # noqa: F401 - a fixture
from test_e2e_live_gap import fix_blocks_shown
from test_export_parity import markdown, plain, report_html
from triage.catalogue import get
from triage.lab import LabServer, status

pytestmark = [pytest.mark.real_server,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} missing (apt-get install chromium)")]

LIVELOCK_WORDS = ("chunked-prefill", "truncate_prompt_tokens", "Upgrade", "pip install", "max-num-batched-tokens")


@pytest.fixture(scope="module")
def reranker_032_no_overrides() -> Iterator[LabServer]:
    yield from serve("0.32.0", "tiny-qwen3-reranker", "rerank-no-overrides")


def test_the_fix_box_holds_the_overrides_and_nothing_of_the_livelock(ctx, dashboard,  # noqa: F811
                                                                     reranker_032_no_overrides):  # type: ignore[no-untyped-def]
    srv = reranker_032_no_overrides
    record = get("reranker-overrides-missing")
    pg = _open(ctx, dashboard)
    _use_target(pg, srv)
    nav(pg, "Checklist")
    pg.get_by_role("button", name="Run checklist").click()
    banner = pg.get_by_test_id("stAlertContentError").filter(has_text=record.title).first
    expect(banner).to_be_visible(timeout=SLOW)
    blocks = fix_blocks_shown(pg)
    box = pg.locator(".st-key-fix-blocks").first
    assert blocks and "--hf-overrides" in blocks[0] and "Qwen3ForSequenceClassification" in blocks[0], blocks
    fix_text = box.inner_text()
    assert not [w for w in LIVELOCK_WORDS if w in fix_text], fix_text
    shot(pg, "rerank-1-checklist-fix")

    nav(pg, "Report")
    md = markdown(download(pg, "Download Markdown", "rerank-report.md"))
    htm = report_html(download(pg, "Download HTML", "rerank-report.html"))
    shot(pg, "rerank-2-report")
    assert md.status == htm.status == "fail" and md.cause == htm.cause == plain(record.title), md
    assert md.blocks == htm.blocks == tuple(blocks), (blocks, md.blocks, htm.blocks)
    assert not [w for w in LIVELOCK_WORDS if w in "\n".join(md.blocks)]


TWIN = 300_000  # ms: the base twin is this test's own server (reused); the fix twin (the overrides) starts once


def test_the_twin_button_under_the_overrides_verdict_reproduces_and_verifies_the_overrides(  # type: ignore[no-untyped-def]
        ctx, dashboard, reranker_032_no_overrides):  # noqa: F811
    """Issue 30's button, end to end: under the verdict, "Reproduce on a lab twin and verify the fixes" reproduces
    the missing overrides on a twin of the deployment (this server's configuration, reused) and marks the overrides
    fix verified on a twin started with them; every twin it started is stopped or kept by this session. (The
    livelock's twin — three fixes, two twin starts — is proved by the engine in tests/twin/test_reproduce_real.py;
    the button is the same for every record.)"""
    srv = reranker_032_no_overrides
    before = {s.pid for s in status()}
    pg = _open(ctx, dashboard)
    _use_target(pg, srv)
    nav(pg, "Checklist")
    pg.get_by_role("button", name="Run checklist").click()
    expect(pg.get_by_test_id("stAlertContentError").filter(
        has_text=get("reranker-overrides-missing").title).first).to_be_visible(timeout=SLOW)
    expect(pg.get_by_text("Prove it on a lab twin")).to_be_visible(timeout=SLOW)
    pg.get_by_role("button", name="Reproduce on a lab twin and verify the fixes").click()
    expect(pg.get_by_text("Reproduced on the twin")).to_be_visible(timeout=TWIN)
    marks = pg.get_by_text(re.compile(r"verified on the twin:"))
    expect(marks.first).to_be_visible()
    texts = [marks.nth(i).inner_text() for i in range(marks.count())]
    assert len(texts) == 1 and "not verified" not in texts[0] and "overrides" in texts[0], texts
    shot(pg, "rerank-3-twin-verified")
    assert left_running(before) == set()  # released: stopped, or kept by this session (tests/lab_servers.py)
