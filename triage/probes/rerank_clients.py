"""Real reranking clients against the server, each checked against a plain /rerank of the same query and documents.

Clients (requirements.txt): the Cohere SDK ``ClientV2(base_url=<server>).rerank`` (it POSTs /v2/rerank, the
path vLLM serves for it) and LangChain's ``CohereRerank`` document compressor (langchain-cohere, the
Cohere-style reranker LangChain users plug into a retriever; it calls the same SDK). A client passes when it
returns every document sent, no more, with the plain request's scores and order. Like ``--set clients`` for
embeddings (triage/probes/client_libraries.py): the library's own HTTP stack over the one client's capped transport
(byte cap, and one total deadline per client call, its retries included: ``deadline_s``), the request it sent recorded,
a finding per client; lists from the server are capped in titles and evidence ("and N more").
Wording and fixes: triage/catalogue/rerank.py (rerank-api-contract).
"""
from __future__ import annotations

import asyncio
import fnmatch
import json
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any, Optional

from triage.catalogue import get
from triage.catalogue.symptoms import CLIENT_ERROR
from triage.http import HttpClient, HttpRequest, Reply, capped_client
from triage.findings import Finding, Status
from triage.probes import openwebui_rerank
from triage.probes.context import ProbeContext
from triage.probes.rerank_findings import CONSISTENT_TOL, DOCS, QUERY, rerank_scores
from triage.probes.runner import HTTP_ERROR, OK, ProbeOutcome
from triage.textsafe import clipped, listed

SET = "rerank"
SNIPPETS = {
    "rerank-client-cohere": "cohere.ClientV2(api_key=KEY, base_url='{base}').rerank(model='{model}', query=q, "
                            "documents=docs, top_n=len(docs))",
    "rerank-client-langchain": "CohereRerank(client=cohere.ClientV2(api_key=KEY, base_url='{base}'), model='{model}', "
                               "top_n=len(docs)).compress_documents(docs, q)",
    "rerank-client-langchain-max-tokens": "CohereRerank(client=cohere.ClientV2(api_key=KEY, base_url='{base}'), "
                                          "model='{model}', top_n=len(docs)).rerank(docs, q, max_tokens_per_doc=N)",
}
CLIENTS = {"rerank-client-cohere": "Cohere SDK ClientV2.rerank", "rerank-client-langchain": "LangChain CohereRerank",
           "rerank-client-langchain-max-tokens": "LangChain CohereRerank.rerank(max_tokens_per_doc=N)"}


@dataclass
class RerankResult:
    """{input index: score} a client returned, the requests it sent, or its error."""

    scores: dict[int, float] = field(default_factory=dict)
    sent: list[dict[str, Any]] = field(default_factory=list)
    error: Optional[str] = None
    status: Optional[int] = None


CALL_DEADLINE_S = 35.0  # one client call's total deadline when the caller gives none (a probe's 30 s + 5 s)


def _http(res: RerankResult, deadline_s: float) -> HttpClient:
    def hook(req: HttpRequest) -> None:
        try:
            body = json.loads(req.content or b"{}")
        except ValueError:
            body = {}
        if len(res.sent) < 10:  # a library's retries: the first few are the evidence
            res.sent.append({"url": str(req.url), "fields": sorted(body) if isinstance(body, dict) else None})
    return capped_client(deadline_s, until=time.monotonic() + deadline_s, event_hooks={"request": [hook]})


def call(check: str, base: str, model: str, key: str, query: str, documents: list[str],
         max_tokens_per_doc: int = 0, deadline_s: float = CALL_DEADLINE_S) -> RerankResult:
    """Run one client synchronously with its own library and collect {index: score} or the error, all of it (the
    library's retries too) within ``deadline_s`` and the one client's byte cap."""
    res = RerankResult()
    http = _http(res, deadline_s)
    try:
        import cohere
        client = cohere.ClientV2(api_key=key, base_url=base, httpx_client=http)
        if check == "rerank-client-cohere":
            r = client.rerank(model=model, query=query, documents=documents, top_n=len(documents))
            res.scores = {int(x.index): float(x.relevance_score) for x in r.results}
        else:
            from langchain_cohere import CohereRerank
            from langchain_core.documents import Document
            rr = CohereRerank(client=client, model=model, top_n=len(documents), cohere_api_key=key)
            if check == "rerank-client-langchain":
                out = rr.compress_documents([Document(page_content=d, metadata={"i": i})
                                             for i, d in enumerate(documents)], query)
                res.scores = {int(d.metadata["i"]): float(d.metadata["relevance_score"]) for d in out}
            else:
                got = rr.rerank(documents, query, max_tokens_per_doc=max_tokens_per_doc)
                res.scores = {int(r["index"]): float(r["relevance_score"]) for r in got}
    except ImportError as e:
        res.error = f"not installed: {e}"
    except Exception as e:  # a client's own exception types: the message is the evidence
        res.status = getattr(e, "status_code", None)
        res.error = f"{type(e).__name__}: {str(e)[:400]}"
    finally:
        http.close()
    return res


def _count_problem(what: str, scores: dict[int, float], sent: int) -> Optional[str]:
    """Why ``scores`` cannot be the answer for ``sent`` documents (more results than documents, an index that is
    not one of theirs), else None."""
    if len(scores) > sent:
        return f"{what} holds {len(scores):,} results for the {sent} documents sent"
    bad = [i for i in scores if not 0 <= i < sent]
    if bad:
        return f"{what} names indices {listed(sorted(bad))}, not one of the {sent} documents sent"
    return None


def verdict(check: str, res: RerankResult, plain: dict[int, float], base: str, model: str,
            sent: Optional[int] = None) -> Finding:
    """The client's scores and order vs the plain /rerank's, both counted against the ``sent`` documents (default:
    as many as the plain /rerank scored) (pure: unit tests feed recorded values)."""
    mode = get("rerank-api-contract")
    sent = len(plain) if sent is None else sent
    client = CLIENTS[check]
    ev: dict[str, Any] = {"client": client, "sent": res.sent[:3], "settings_to_copy": SNIPPETS[check].format(
        base=base, model=model), "source": "client library", "plain_scores": clipped(plain),
        "client_scores": clipped(res.scores), "documents_sent": sent}
    if res.error and res.error.startswith("not installed"):
        return Finding.of(mode, check, Status.UNKNOWN, f"{client}: {res.error}", ev,
                          fix="pip install -r requirements.txt")
    if res.error:
        problem = "null-max-tokens-per-doc" if "max_tokens_per_doc" in res.error and "valid integer" in res.error \
            else None
        said = " (it sent max_tokens_per_doc null)" if problem else ""
        return Finding.of(mode, check, Status.FAIL, f"{client} against {base}: request failed{said}: "
                          f"{res.error[-200:]}", {**ev, "error": res.error, "status": res.status,
                                                  "symptoms": [CLIENT_ERROR]},
                          cfg={"base": base, "problem": problem})
    plain_bad = _count_problem("the plain /rerank", plain, sent)
    if plain_bad:  # the reference itself is not an answer for what was sent: nothing to compare the client with
        return Finding.of(mode, check, Status.ERROR, f"{client} not judged: {plain_bad}", {**ev, "problem": plain_bad})
    diff = max((abs(res.scores.get(i, float("inf")) - s) for i, s in plain.items()), default=0.0)
    order = sorted(res.scores, key=lambda i: -res.scores[i])
    want = sorted(plain, key=lambda i: -plain[i])
    ev.update(max_difference=diff, client_order=clipped(order), plain_order=clipped(want))
    bad = _count_problem(client, res.scores, sent)
    if bad is None and len(res.scores) == len(plain) == sent and diff <= CONSISTENT_TOL and order == want:
        return Finding.of(mode, check, Status.PASS, f"{client}: same {len(plain)} scores and order as a plain /rerank",
                          ev)
    what = bad or (f"{len(res.scores):,} results, order {listed(order)} vs {listed(want)}, max score difference "
                   f"{diff:.4g}")
    return Finding.of(mode, check, Status.FAIL, f"{client}: {what}", {**ev, "symptoms": [CLIENT_ERROR]},  # the client's
                      cfg={"base": base})  # the plain call works


async def run(ctx: ProbeContext, only: Iterable[str] | None,
              plain_ex: Reply) -> AsyncIterator[ProbeOutcome | Finding]:
    pats = list(only or [])
    plain = rerank_scores(plain_ex)
    if plain is None:
        return
    deadline_s = ctx.cfg.deadline_s + 5  # the probe's promise (--deadline): every request ends by this + 5 s
    for check in SNIPPETS:
        if pats and not any(fnmatch.fnmatch(check, p) for p in pats):
            continue
        t0 = time.monotonic()
        res = await asyncio.to_thread(call, check, ctx.pc.url, ctx.model, ctx.pc.api_key or "EMPTY", QUERY,
                                      list(DOCS), ctx.max_model_len // 2,  # vLLM: must be < max_model_len
                                      deadline_s)
        f = verdict(check, res, plain, ctx.pc.url, ctx.model, len(DOCS))
        yield ProbeOutcome(probe=check, set=SET, outcome=OK if f.status != Status.FAIL or not res.error else HTTP_ERROR,
                           description=f.title, duration_s=round(time.monotonic() - t0, 3), http_status=res.status,
                           request={"client": f.evidence["client"], "sent": res.sent[:3]},
                           response={"error": res.error, "scores": clipped(res.scores)})
        yield f
    if not pats or any(fnmatch.fnmatch(openwebui_rerank.CHECK, p) for p in pats):
        settings = openwebui_rerank.RerankerSettings.from_env() or openwebui_rerank.RerankerSettings(
            ctx.pc.url + "/v1/rerank", ctx.pc.api_key, ctx.model)
        t0 = time.monotonic()
        status, body = await asyncio.to_thread(openwebui_rerank.call, settings, QUERY, list(DOCS), deadline_s)
        f = openwebui_rerank.verdict(settings, status, body, plain, ctx.pc.url, [ctx.model], len(DOCS))
        yield ProbeOutcome(probe=openwebui_rerank.CHECK, set=SET, outcome=OK, description=f.title,
                           duration_s=round(time.monotonic() - t0, 3), http_status=status,
                           request={"settings": settings.public()}, response={"status": status})
        yield f
