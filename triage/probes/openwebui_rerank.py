"""Open WebUI's external reranker, called exactly as Open WebUI calls it (issue 25).

Open WebUI (backend/open_webui/retrieval/models/external.py, engine ``external``): POST to
RAG_EXTERNAL_RERANKER_URL as given, ``Authorization: Bearer RAG_EXTERNAL_RERANKER_API_KEY``, body
``{"model": RAG_RERANKING_MODEL, "query", "documents", "top_n": len(documents)}``; scores are
``results`` sorted by ``index``, ``relevance_score`` each. It swallows errors (no reranking, a log line),
so a wrong URL is silent there. Settings come from those environment variables, else the target's
``/v1/rerank`` and served model. Wording and fixes: triage/catalogue/rerank.py.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Optional

import httpx

from triage.catalogue import get
from triage.findings import Finding, Status
from triage.probes.rerank_checks import CONSISTENT_TOL

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


def call(s: RerankerSettings, query: str, documents: list[str]) -> tuple[Optional[int], Any]:
    """(status, body) of Open WebUI's request; (None, error text) when nothing answered."""
    try:
        r = httpx.post(s.url, json={"model": s.model, "query": query, "documents": documents,
                                    "top_n": len(documents)},
                       # Open WebUI sends "Bearer <key>" even with no key; httpx refuses a bare "Bearer ", and vLLM
                       # without --api-key reads no header: send it only with a key
                       headers={"Authorization": f"Bearer {s.api_key}"} if s.api_key else {}, timeout=60.0,
                       follow_redirects=False)
    except httpx.HTTPError as e:
        return None, f"{type(e).__name__}: {e}"
    try:
        return r.status_code, r.json()
    except ValueError:
        return r.status_code, r.text[:500]


def verdict(s: RerankerSettings, status: Optional[int], body: Any, plain: dict[int, float], base: str,
            served: list[str]) -> Finding:
    """Pure: Open WebUI's answer vs the plain /rerank's scores (unit tests feed recorded answers)."""
    mode = get("openwebui-reranker-misconfig")
    ev = {"settings": s.public(), "status": status, "body": body if status != 200 else None,
          "source": "client: Open WebUI external reranker request"}
    problem = None
    if status == 404:
        detail = str(body)
        problem = "model" if "model" in detail.lower() and "does not exist" in detail.lower() else "url"
    elif status == 401:
        problem = "api-key"
    if problem or status != 200:
        cfg = {"base": base, "problem": problem or "url", "served": ", ".join(served)}
        return Finding(CHECK, Status.FAIL, f"Open WebUI's external reranker gets {status or body}: it would rerank "
                       "nothing, silently", ev, mode.fix(cfg), list(mode.refs), mode.mechanism)
    res = body.get("results") if isinstance(body, dict) else None
    scores = {r["index"]: r["relevance_score"] for r in res or [] if isinstance(r, dict) and "index" in r}
    diff = max((abs(scores.get(i, float("inf")) - v) for i, v in plain.items()), default=0.0)
    if len(scores) == len(plain) and diff <= CONSISTENT_TOL:
        return Finding(CHECK, Status.PASS, "Open WebUI's external reranker request gets the plain /rerank's scores",
                       {**ev, "max_difference": diff}, refs=list(mode.refs))
    return Finding(CHECK, Status.FAIL, f"Open WebUI's external reranker: {len(scores)} scores, max difference "
                   f"{diff:.4g} from /rerank", {**ev, "max_difference": diff}, mode.fix({"base": base}),
                   list(mode.refs), mode.mechanism)
