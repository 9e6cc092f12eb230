"""Open WebUI's external reranker request: verdicts on answers recorded from a real 0.32.0 server
(tests/fixtures/real/rerank/0.32.0-rerank/openwebui-*.json, capture_openwebui.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from triage.catalogue import get
from triage.findings import Status
from triage.probes import rerank_findings as rc
from triage.probes.openwebui_rerank import RerankerSettings, verdict
from triage.http import Reply

REC = Path(__file__).parent.parent / "fixtures" / "real" / "rerank" / "0.32.0-rerank"
BASE = "http://127.0.0.1:8000"


def plain() -> dict[int, float]:
    d = json.loads((REC / "rerank.json").read_text())
    sc = rc.rerank_scores(Reply("POST", "/rerank", d["request"]["body"], d["status"], d["body"]))
    assert sc is not None
    return sc


@pytest.mark.parametrize("name, status, problem", [
    pytest.param("openwebui-right", Status.PASS, None, id="whole-url"),
    pytest.param("openwebui-base-url", Status.FAIL, "url", id="base-url-only"),
    pytest.param("openwebui-model-name", Status.FAIL, "model", id="model-name"),
])
def test_recorded(name: str, status: Status, problem: str | None) -> None:
    d = json.loads((REC / f"{name}.json").read_text())
    s = RerankerSettings(d["settings"]["RAG_EXTERNAL_RERANKER_URL"], None, d["settings"]["RAG_RERANKING_MODEL"])
    f = verdict(s, d["status"], d["body"], plain(), BASE, ["m"])
    assert f.status == status, f.title
    if problem:
        assert f.fix == get("openwebui-reranker-misconfig").fix({"base": BASE, "problem": problem, "served": "m"})
