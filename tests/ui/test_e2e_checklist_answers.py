"""End to end in real Chromium: answer the Checklist's GPU question and see the #55427 verdict change.

`streamlit run app.py` runs as a subprocess with its own temp database (the harness of
test_e2e_browser.py: its `dashboard`, `browser`, `page`, `nav` and `shot`). The target is the #55427
report's `docker run` pasted on the Target page, at a 127.0.0.1 port where nothing listens (a
server behind a gateway: the dashboard sees no /proc and no NVML of it), so no vLLM server is needed:
the budget is unknown until the GPU is stated, then vLLM's tier rule gives 2048 = max_model_len: FAIL.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from test_e2e_browser import CHROMIUM, SLOW, browser, commit, dashboard, expect, nav, page, shot  # noqa: F401 - fixtures
from triage.lab.server import free_port

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} missing (apt-get install chromium)")

SEED_CMD = ("docker run --gpus all -p 8094:8000 vllm/vllm-openai:v0.28.0 Qwen/Qwen3-Embedding-4B "
            "--runner pooling --convert embed --max-model-len 2048")
GPU = "NVIDIA GeForce RTX 3080 Ti"


def test_answering_the_gpu_question_turns_unknown_into_fail(page):  # type: ignore[no-untyped-def]  # noqa: F811
    pg = page
    url = f"http://127.0.0.1:{free_port()}"
    commit(pg, pg.get_by_label("Server URL"), url)
    commit(pg, pg.get_by_label("Model (press Fetch models to list them, or type the id)"), "Qwen/Qwen3-Embedding-4B")
    commit(pg, pg.get_by_label("What does your client send as truncate_prompt_tokens?", exact=True), "2048")
    pg.get_by_text("Optional: the").click()
    commit(pg, pg.get_by_label("vllm serve command line"), SEED_CMD, "Control+Enter")
    pg.get_by_role("button", name="Use this target").click()
    expect(pg.get_by_text(re.compile(r"Target: .*" + re.escape(url.split("//")[1]))).first).to_be_visible(timeout=SLOW)

    nav(pg, "Checklist")
    expect(pg.get_by_text(re.compile(r"truncate_prompt_tokens\s*2048")).first).to_be_visible(timeout=SLOW)
    pg.get_by_role("button", name="Run checklist").click()
    card = pg.locator("details summary").filter(has_text="pooling-livelock-risk")  # the finding's card
    expect(card).to_contain_text("Pooling livelock risk unknown: max_num_batched_tokens not known", timeout=SLOW)
    expect(card).to_contain_text("UNKNOWN")
    shot(pg, "answers-1-unknown")

    pg.get_by_role("combobox", name="GPU", exact=True).click()
    pg.keyboard.type("RTX 3080 Ti")  # the list is virtualised: filter it so the card's option is drawn
    pg.get_by_role("option", name=GPU, exact=True).click()
    expect(pg.get_by_role("combobox", name="GPU memory")).to_be_visible(timeout=SLOW)
    pg.wait_for_timeout(1500)  # the picker preselects the card's only size (12 GiB) on its rerun
    pg.get_by_role("button", name="Answer and re-run").first.click()

    fail_title = re.compile(r"Livelock \(vllm#55427\): vLLM 0\.28\.0.*budget 2048 = max_model_len 2048")
    expect(card).to_contain_text(fail_title, timeout=SLOW)
    expect(card).to_contain_text("FAIL")
    expect(pg.get_by_text(re.compile(r"Your answers \(stated by user\)"))).to_be_visible(timeout=SLOW)
    shot(pg, "answers-2-fail")
