"""Issue 33 (deliver 4): the rerank client checks and Open WebUI's reranker request under the run's deadline and byte
cap, lists from the server capped, counts checked against the documents sent.

The servers are the hostile look-alike of tests/hardening/hostile.py — a test double on purpose: no real vLLM answers
100,000 results for 3 documents or trickles its answer one byte a second. Its /rerank answers start from the one
recorded on a real 0.32.0 reranker (tests/fixtures/real/rerank/0.32.0-rerank/rerank.json).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile import Behaviour, HostileServer, assert_clean, measured  # noqa: E402

from triage.findings import Status  # noqa: E402
from triage.probes import openwebui_rerank, rerank_clients  # noqa: E402
from triage.probes.rerank_findings import DOCS, QUERY  # noqa: E402

REC = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "rerank" / "0.32.0-rerank"
RERANK = json.loads((REC / "rerank.json").read_text())["body"]
MANY = 100_000
LIMIT_MB = 600


def _many(n: int = MANY) -> bytes:
    """The recorded answer with ``n`` results (indices 0..n-1) instead of its 3."""
    results = [{"index": i, "document": {"text": "x"}, "relevance_score": 0.5 - i * 1e-9} for i in range(n)]
    return json.dumps({**RERANK, "results": results}).encode()


PLAIN = {r["index"]: r["relevance_score"] for r in RERANK["results"]}


def test_cohere_never_passes_more_results_than_documents_sent() -> None:
    """Was: PASS "same 100000 scores" when the plain /rerank said the same 100,000 for 3 documents."""
    many = {i: 0.5 for i in range(MANY)}
    f = rerank_clients.verdict("rerank-client-cohere", rerank_clients.RerankResult(scores=dict(many)), dict(many),
                               "http://h:1", "m", sent=3)
    assert f.status == Status.ERROR and "100,000 results for the 3 documents sent" in f.title
    assert len(f.title) < 300
    g = rerank_clients.verdict("rerank-client-cohere", rerank_clients.RerankResult(scores=dict(many)), dict(PLAIN),
                               "http://h:1", "m", sent=3)
    assert g.status == Status.FAIL and "100,000 results for the 3 documents sent" in g.title
    assert len(json.dumps(g.evidence, default=str)) < 20_000  # scores and orders clipped ("and N more")
    assert "and 99,900 more" in json.dumps(g.evidence, default=str)


def test_cohere_out_of_range_index_fails_naming_it() -> None:
    f = rerank_clients.verdict("rerank-client-cohere", rerank_clients.RerankResult(scores={0: 0.2, 1: 0.6, 7: 0.1}),
                               dict(PLAIN), "http://h:1", "m", sent=3)
    assert f.status == Status.FAIL and "indices 7" in f.title


def test_openwebui_counts_results_against_documents_sent() -> None:
    s = openwebui_rerank.RerankerSettings("http://h:1/v1/rerank", None, "m")
    body = json.loads(_many(1000))
    f = openwebui_rerank.verdict(s, 200, body, dict(PLAIN), "http://h:1", ["m"], sent=3)
    assert f.status == Status.FAIL and "1,000 results for the 3 documents sent" in f.title
    assert "and 990 more" in f.title


def test_openwebui_slow_answer_ends_at_the_deadline() -> None:
    """Was a 60 s per-read time-out and no total deadline: a server sending one byte a second held it for ever."""
    with HostileServer(Behaviour(bodies={"/v1/rerank": RERANK}, slow=("/v1/rerank",))) as srv:
        t0 = time.monotonic()
        status, body = openwebui_rerank.call(openwebui_rerank.RerankerSettings(srv.url + "/v1/rerank", None, "m"),
                                             QUERY, list(DOCS), deadline_s=3.0)
        took = time.monotonic() - t0
    assert status is None and "deadline" in str(body), body
    assert took < 30, took  # bounded by the deadline (3 s), not by the answer's 1,000+ seconds


def test_openwebui_huge_answer_is_refused_unread() -> None:
    with HostileServer(Behaviour(huge={"/v1/rerank": 400 << 20})) as srv:
        status, body = openwebui_rerank.call(openwebui_rerank.RerankerSettings(srv.url + "/v1/rerank", None, "m"),
                                             QUERY, list(DOCS), deadline_s=30.0)
    assert status is None and "cap" in str(body), body


@pytest.mark.timeout(240)
def test_rerank_set_with_100000_results_is_bounded(tmp_path: Path) -> None:
    """Was 175 s, 1.2 GB and 48 MB of stdout (titles listing every index) and a Cohere PASS."""
    many = _many()
    with HostileServer(Behaviour(bodies={p: many for p in ("/rerank", "/v1/rerank", "/v2/rerank")})) as s:
        r = measured("probe", "--url", s.url, "--set", "rerank", "--only", "rerank-shape", "score-shape",
                     "rerank-top-n", "rerank-client-*", "--deadline", "5", "--format", "json", "--db",
                     str(tmp_path / "t.db"), timeout=200)
    assert_clean(r)
    assert r.peak_mb < LIMIT_MB, r.peak_mb
    assert len(r.out) < 2_000_000, len(r.out)
    found = {f["check"]: f for f in json.loads(r.out)["findings"]}
    for check in ("rerank-client-cohere", "rerank-client-openwebui", "rerank-shape"):
        assert found[check]["status"] != "pass", found[check]
        assert len(found[check]["title"]) < 400, found[check]["title"]


@pytest.mark.timeout(240)
def test_rerank_clients_end_within_the_deadline(tmp_path: Path) -> None:
    """Every client's answer trickles one byte a second: each call ends by --deadline + 5 s, retries included
    (was: --deadline 10 ran past 240 s)."""
    plain = json.dumps(RERANK).encode()
    with HostileServer(Behaviour(bodies={"/rerank": plain, "/v1/rerank": plain, "/v2/rerank": plain},
                                 slow=("/v1/rerank", "/v2/rerank"))) as s:
        r = measured("probe", "--url", s.url, "--set", "rerank", "--only", "rerank-client-*", "--deadline", "3",
                     "--format", "json", "--db", str(tmp_path / "t.db"), timeout=200)
    assert_clean(r)
    found = {f["check"]: f for f in json.loads(r.out)["findings"]}
    assert {"rerank-client-cohere", "rerank-client-openwebui"} <= set(found), sorted(found)
    assert not any(f["status"] == "pass" for c, f in found.items() if c.startswith("rerank-client")), found
    # 4 client calls, each bounded by 3 + 5 s: the bound has room for a loaded box, not for one 60 s read
    assert r.elapsed_s < 120, r.elapsed_s
