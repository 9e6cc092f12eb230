"""Open WebUI's embedding settings checked by sending exactly what Open WebUI sends.

Open WebUI's OpenAI embedding engine (backend/open_webui/retrieval/utils.py,
generate_openai_batch_embeddings) POSTs ``{RAG_OPENAI_API_BASE_URL}/embeddings`` with
``{"input": [texts of one batch], "model": RAG_EMBEDDING_MODEL}`` and ``Authorization: Bearer
{RAG_OPENAI_API_KEY}``; batches have RAG_EMBEDDING_BATCH_SIZE texts. The URL is built from the
user's base as Open WebUI builds it (not through triage.http's base URL), because the missing
/v1 is the point. Wording and fixes: the catalogue record OPENWEBUI_MISCONFIG.
"""
from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from triage.catalogue import clients as cf, get
from triage.catalogue.symptoms import CLIENT_ERROR
from triage.http import HTTPError, HttpClient, Reply, capped_client, read_json
from triage.findings import Finding, Status

CHECK = "clients-openwebui"
ENV = {"base_url": "RAG_OPENAI_API_BASE_URL", "api_key": "RAG_OPENAI_API_KEY", "model": "RAG_EMBEDDING_MODEL",
       "batch_size": "RAG_EMBEDDING_BATCH_SIZE"}


@dataclass(frozen=True)
class OpenWebUISettings:
    """Admin Settings → Documents → Embedding (engine OpenAI): Base URL, API key, model, batch size."""

    base_url: str
    api_key: Optional[str] = field(default=None, repr=False)
    model: str = ""
    batch_size: int = 1

    @classmethod
    def from_env(cls, env: Optional[Mapping[str, str]] = None) -> Optional[OpenWebUISettings]:
        e = os.environ if env is None else env
        if not e.get(ENV["base_url"]):
            return None
        try:
            batch = int(e.get(ENV["batch_size"]) or 1)
        except ValueError:
            batch = 1
        return cls(e[ENV["base_url"]], e.get(ENV["api_key"]) or None, e.get(ENV["model"]) or "", batch)

    def public(self) -> dict[str, Any]:
        """The settings without the key (a key is 'set' or 'empty')."""
        return {"base_url": self.base_url, "api_key": "set" if self.api_key else "empty", "model": self.model,
                "batch_size": self.batch_size}

    def env_lines(self) -> str:
        return "\n".join([f"{ENV['base_url']}={self.base_url}", f"{ENV['api_key']}=<the server's --api-key>",
                          f"{ENV['model']}={self.model}", f"{ENV['batch_size']}={self.batch_size}"])


def _send(c: HttpClient, method: str, url: str, body: Optional[dict[str, Any]], headers: dict[str, str]) -> Reply:
    ex = Reply(method, url, body)
    t = time.monotonic()
    try:
        r = c.request(method, url, json=body, headers=headers)
        ex.status = r.status_code
        ex.body = read_json(r, 2000)
    except (HTTPError, ValueError) as e:  # transport, byte cap, deadline; the parsed-size cap
        ex.error = f"{type(e).__name__}: {str(e)[:300]}"
    ex.elapsed_s = round(time.monotonic() - t, 4)
    return ex


def check(s: OpenWebUISettings, server_url: Optional[str] = None, timeout_s: float = 35.0) -> tuple[Finding,
                                                                                                   list[Reply]]:
    """Send Open WebUI's request for these settings; the verdict says what to change (server_url: for /v1/models)."""
    texts = [f"Open WebUI embedding check {i}" for i in range(max(1, s.batch_size))]
    headers = {"Content-Type": "application/json"}
    if s.api_key:  # Open WebUI sends "Bearer <empty>"; httpx refuses that value, and vLLM ignores it without --api-key
        headers["Authorization"] = f"Bearer {s.api_key}"
    base = s.base_url.rstrip("/")
    # the one client's body cap and total deadline under Open WebUI's request (a 400 MB answer is refused unread)
    with capped_client(timeout_s, until=time.monotonic() + timeout_s) as c:
        ex = _send(c, "POST", f"{base}/embeddings", {"input": texts, "model": s.model}, headers)
        root = (server_url or (base[:-3] if base.endswith("/v1") else base)).rstrip("/")
        models = _send(c, "GET", f"{root}/v1/models", None, headers)
    return verdict(s, ex, models), [ex, models]


def verdict(s: OpenWebUISettings, ex: Reply, models: Reply) -> Finding:
    """What Open WebUI's request answered, as a finding that says what to change (pure: recorded answers in)."""
    mode = get("openwebui-misconfig")
    base = s.base_url.rstrip("/")
    texts = (ex.request or {}).get("input") or []
    served = [d.get("id") for d in models.obj().get("data", [])] if models.ok and isinstance(
        models.body, dict) else []
    ev = {"settings": s.public(), "request": {"url": f"{base}/embeddings", "batch": len(texts)},
          "exchanges": [x.to_dict() for x in (ex, models)], "served_models": served, "source": "Open WebUI's request"}
    msg = ex.error_message()
    ev["facts"] = facts = {cf.ROUTE: f"Open WebUI OpenAI engine, Base URL {base}", cf.LIBRARY: "open-webui",
                           cf.STATUS: ex.status, cf.MESSAGE: "" if ex.ok else (msg or ex.error or "")[:500],
                           cf.ENCODING_SENT: "absent", cf.INPUT_KIND: "text", cf.MODEL_SENT: s.model,
                           cf.SERVED: served, cf.PLAIN_STATUS: None}
    problem: Optional[str] = None
    data = ex.body.get("data") if isinstance(ex.body, dict) else None
    n = len(data) if isinstance(data, list) else 0
    if ex.ok and not n:  # 200 with no vectors (empty, not JSON): never a PASS
        return Finding.of(mode, CHECK, Status.ERROR, f"Open WebUI's request ({base}/embeddings) answers 200 with no "
                          f"vectors: {str(ex.body)[:120]!r}", ev)
    if ex.ok:
        return Finding.of(mode, CHECK, Status.PASS, f"Open WebUI's request ({base}/embeddings, batch of {len(texts)}) "
                          f"answers 200 with {n} vectors", {**ev, "env": s.env_lines()})
    if ex.status == 404 and not base.endswith("/v1") and ("not found" in msg.lower() or not msg):
        problem = "missing-v1"
    elif ex.status == 404 and ("does not exist" in msg or "model" in msg.lower()):
        problem = "model-name"
    elif ex.status == 401:
        problem = "api-key"
    elif ex.status == 400 and len(texts) > 1:
        problem = "batch"
    facts[cf.PROBLEM] = problem
    cfg = {"problem": problem, "base_url": base[:-3] if problem == "missing-v1" and base.endswith("/v1") else base,
           "served": served, "model": s.model}
    status = Status.FAIL if problem else Status.ERROR
    what = {"missing-v1": "the Base URL lacks /v1", "model-name": f"model {s.model!r} is not served here",
            "api-key": "the server wants an API key", "batch": "the batch was refused"}.get(problem or "", "")
    ev["symptoms"] = [CLIENT_ERROR]  # Open WebUI's settings, where the plain request works
    return Finding.of(mode, CHECK, status, f"Open WebUI's request answers {ex.status or ex.error}"
                      + (f": {what}" if what else f" {msg[:200]}"), {**ev, "problem": problem, "error": msg[:500]},
                      fix=mode.fix(cfg), explanation=mode.mechanism)  # an ERROR too: the settings' fix stands
