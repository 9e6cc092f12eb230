"""A real server, a hostile target: model name and pasted log carry <script> and an API key.

The checklist runs against the 0.31.0 livelock lab server with the key sent as a Bearer token,
a command line with ``--api-key`` and a log with ``Authorization``/``HF_TOKEN`` lines; vLLM echoes
the unknown model name back in its error bodies, so markup arrives from the server too. No
exported byte may hold the key, and in Chromium the markup shows as text and runs nothing.
"""
from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import export_runs
import pytest
from test_html import browser, open_offline  # noqa: F401  (browser: fixture)

from triage.target import Target
from triage.export import FORMATS, render
from triage.store import Store

checklist = pytest.importorskip("triage.checklist")

pytestmark = pytest.mark.real_server
KEY = export_runs.API_KEY
SCRIPT = export_runs.SCRIPT


@pytest.fixture(scope="module")
def exports(server_031_livelock: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    store = Store(str(tmp_path_factory.mktemp("hostile") / "triage.db"))
    log = (server_031_livelock.log_text() + f"\npasted: {SCRIPT}\nAuthorization: Bearer {KEY}\n"
           f"HF_TOKEN={export_runs.HF_TOKEN}\nexport VLLM_API_KEY={KEY}\n")
    spec = Target(url=server_031_livelock.url, model=f"tiny{SCRIPT}", truncation=256,
                  cmdline=f"vllm serve {server_031_livelock.served_model} --max-model-len 256 "
                          f"--api-key {KEY}", log_text=log, api_key=KEY, label=SCRIPT)
    result = checklist.run_checklist(spec, store)
    record = store.get_run(result.run_id)
    assert record is not None
    return {fmt: render(record, fmt) for fmt in FORMATS}


def test_the_key_is_in_no_exported_byte(exports: dict[str, bytes]) -> None:
    for fmt, data in exports.items():
        members = {fmt: data}
        if fmt == "bundle":
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                members.update({n: zf.read(n) for n in zf.namelist()})
        for name, blob in members.items():
            assert KEY.encode() not in blob, name
            assert export_runs.HF_TOKEN.encode() not in blob, name
    assert SCRIPT.encode() in exports["json"]  # the markup itself is kept, as data


def test_html_shows_the_markup_as_text_and_runs_none(exports: dict[str, bytes], browser: Any,  # noqa: F811
                                                     tmp_path: Path, test_output: Path) -> None:
    path = tmp_path / "hostile.html"
    path.write_bytes(exports["html"])
    page, seen = open_offline(browser, path)
    page.wait_for_load_state("load")
    page.screenshot(path=str(test_output / "real-031-hostile-target.png"), full_page=True)
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert SCRIPT in page.inner_text("body")
    assert seen == {"blocked": [], "errors": [], "csp": []}
