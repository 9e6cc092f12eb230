"""Open WebUI's external reranker, called exactly as Open WebUI calls it (issue 25).

Open WebUI (backend/open_webui/retrieval/models/external.py, engine ``external``): POST to
RAG_EXTERNAL_RERANKER_URL as given, ``Authorization: Bearer RAG_EXTERNAL_RERANKER_API_KEY``, body
``{"model": RAG_RERANKING_MODEL, "query", "documents", "top_n": len(documents)}``; scores are
``results`` sorted by ``index``, ``relevance_score`` each. It swallows errors (no reranking, a log line),
so a wrong URL is silent there. Settings come from those environment variables, else the target's
``/v1/rerank`` and served model. Sent through the one client's capped transport (triage.http.capped_client:
byte cap, parsed-size caps, one total deadline); the answer's results are counted against the documents sent.
Wording and fixes: triage/catalogue/rerank.py.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Optional

from triage.catalogue import get
from triage.http import HTTPError, capped_client, read_json
from triage.findings import Finding, Status
from triage.probes.rerank_findings import CONSISTENT_TOL
from triage.textsafe import clipped, listed

CHECK = "rerank-client-openwebui"


@dataclass(frozen=True)
class RerankerSettings:
    url: str
    api_key: Optional[str]
    model: str

    @classmethod
    def from_env(cls) -> Optional[RerankerSettings]:
        url = os.environ.get("RAG_EXTERNAL_RERANKER_URL")
        if not url:
            return None
        return cls(url, os.environ.get("RAG_EXTERNAL_RERANKER_API_KEY"), os.environ.get("RAG_RERANKING_MODEL", ""))

    def public(self) -> dict[str, Any]:
        return {"RAG_RERANKING_ENGINE": "external", "RAG_EXTERNAL_RERANKER_URL": self.url,
                "RAG_RERANKING_MODEL": self.model, "RAG_EXTERNAL_RERANKER_API_KEY": "set" if self.api_key else ""}


def call(s: RerankerSettings, query: str, documents: list[str], deadline_s: float = 35.0) -> tuple[Optional[int],
                                                                                                    Any]:
    """(status, body) of Open WebUI's request within ``deadline_s`` and the byte cap; (None, error text) when
    nothing (whole) answered."""
    try:
        with capped_client(deadline_s, until=time.monotonic() + deadline_s) as c:
            r = c.post(s.url, json={"model": s.model, "query": query, "documents": documents,
                                    "top_n": len(documents)},
                       # Open WebUI sends "Bearer <key>" even with no key; httpx refuses a bare "Bearer ", and vLLM
                       # without --api-key reads no header: send it only with a key
                       headers={"Authorization": f"Bearer {s.api_key}"} if s.api_key else {})
            return r.status_code, read_json(r, 500)
    except (HTTPError, ValueError) as e:  # transport, the byte cap, the deadline; the parsed-size cap
        return None, f"{type(e).__name__}: {str(e)[:300]}"


def verdict(s: RerankerSettings, status: Optional[int], body: Any, plain: dict[int, float], base: str,
            served: list[str], sent: Optional[int] = None) -> Finding:
    """Pure: Open WebUI's answer vs the plain /rerank's scores, counted against the ``sent`` documents (default: as
    many as the plain /rerank scored) (unit tests feed recorded answers)."""
    mode = get("openwebui-reranker-misconfig")
    ev = {"settings": s.public(), "status": status, "body": clipped(body) if status != 200 else None,
          "source": "client: Open WebUI external reranker request"}
    if status is None:  # nothing (whole) came back: the transport's words, not a verdict on the settings
        return Finding.of(mode, CHECK, Status.ERROR,
                          f"Open WebUI's external reranker request got no answer: {str(body)[:200]}", ev)
    problem = None
    if status == 404:
        detail = str(body)
        problem = "model" if "model" in detail.lower() and "does not exist" in detail.lower() else "url"
    elif status == 401:
        problem = "api-key"
    if problem or status != 200:
        cfg = {"base": base, "problem": problem or "url", "served": ", ".join(served)}
        return Finding.of(mode, CHECK, Status.FAIL, f"Open WebUI's external reranker gets {status or body}: it would "
                          "rerank nothing, silently", ev, cfg=cfg)
    n = len(plain) if sent is None else sent
    res = body.get("results") if isinstance(body, dict) else None
    scores = {r["index"]: r.get("relevance_score") for r in res or [] if isinstance(r, dict)
              and isinstance(r.get("index"), int) and not isinstance(r.get("index"), bool)}
    diff = max((abs(_num(scores.get(i)) - v) for i, v in plain.items()), default=0.0)
    ev["results"] = len(res) if isinstance(res, list) else None
    if len(plain) != n:  # the reference is not an answer for what was sent: nothing to compare with
        return Finding.of(mode, CHECK, Status.ERROR, f"Open WebUI's external reranker not judged: the plain /rerank "
                          f"holds {len(plain):,} results for the {n} documents sent", ev)
    if isinstance(res, list) and len(res) == len(scores) == n and diff <= CONSISTENT_TOL:
        return Finding.of(mode, CHECK, Status.PASS,
                          "Open WebUI's external reranker request gets the plain /rerank's scores",
                          {**ev, "max_difference": diff})
    got = len(res) if isinstance(res, list) else 0
    what = (f"{got:,} results for the {n} documents sent (indices {listed(sorted(map(str, scores)))})" if got != n
            else f"{len(scores)} scores, max difference {diff:.4g} from /rerank")
    return Finding.of(mode, CHECK, Status.FAIL, f"Open WebUI's external reranker: {what}",
                      {**ev, "max_difference": diff}, cfg={"base": base})


def _num(v: Any) -> float:
    """A score as a number (a missing or non-numeric one: infinitely far from any)."""
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else float("inf")
