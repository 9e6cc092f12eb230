"""Live-server evidence: /health, /version, /v1/models, /metrics, /tokenize, /server_info, one tiny embedding.

Every transport or protocol failure becomes a Finding (server-reachable, server-auth,
server-api-prefix, server-is-vllm, metrics-parse, server-model); nothing here raises.
vLLM guards only paths under /v1 with --api-key (entrypoints/serve/middleware/authenticate.py, 0.32.0),
so /health, /version and /metrics answer without a key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from triage.http import Reply, VllmClient, origin_of, path_prefix_of, transport_text
from triage.findings import Status
from triage.sources import SourceResult
from triage.sources.server_details import (
    collect_embedding,
    collect_metrics,
    collect_server_info,
    collect_tokenize,
    finding as _finding,
    keep as _cap,
)

SOURCE = "server"

def _models_list(r: Reply) -> list[dict[str, Any]] | None:
    j = r.json()
    if isinstance(j, dict) and isinstance(j.get("data"), list):
        return [m for m in j["data"] if isinstance(m, dict)]
    return None


def collect(client: VllmClient, *, model: str | None = None, embed_probe: bool = True) -> SourceResult:
    """Ask the server everything it will tell; return facts, findings and raw captures."""
    res = SourceResult(SOURCE)
    url = client.base_url
    health = client.get("/health")
    _cap(res, health)
    if health.transport_failed:
        head, fix = transport_text(health.error_kind, url)
        res.findings.append(
            _finding(
                "server-reachable",
                Status.ERROR,
                head,
                {"url": url, "error_kind": health.error_kind, "error": health.error},
                fix,
            )
        )
        res.unavailable = f"{health.error_kind}: {health.error}"
        return res
    res.findings.append(
        _finding(
            "server-reachable",
            Status.PASS,
            f"{url} answers HTTP",
            {"url": url, "GET /health": health.status, "elapsed_ms": round(health.elapsed_s * 1000)},
        )
    )

    models_r = client.get("/v1/models")
    _cap(res, models_r)
    prefix = path_prefix_of(url)
    if models_r.status == 404 and prefix:
        root = client.with_base(origin_of(url))
        alt = root.get("/v1/models")
        if alt.status in (200, 401):
            res.findings.append(
                _finding(
                    "server-api-prefix",
                    Status.WARN,
                    f"The URL's path '{prefix}' is wrong: the vLLM API lives at the server root",
                    {"given_url": url, f"GET {prefix}/v1/models": 404, "GET /v1/models at root": alt.status},
                    f"Use --url {origin_of(url)} (vLLM serves /v1/embeddings, /health and /metrics at the root; "
                    "clients append /v1 themselves, or set base_url to …/v1 only in OpenAI SDKs).",
                )
            )
            client, models_r, url = root, alt, root.base_url
            health = client.get("/health")
            _cap(res, models_r)
    res.add("server_url", url)

    if models_r.status == 401:
        res.add("api_key_required", True, "GET /v1/models answered 401")
        if client.api_key:
            res.findings.append(
                _finding(
                    "server-auth",
                    Status.ERROR,
                    "The server rejected the API key (HTTP 401)",
                    {"GET /v1/models": 401, "api_key_given": True},
                    "Use the key the server was started with (--api-key or VLLM_API_KEY).",
                )
            )
        else:
            res.findings.append(
                _finding(
                    "server-auth",
                    Status.ERROR,
                    "The server requires an API key (HTTP 401 on /v1/models)",
                    {"GET /v1/models": 401, "api_key_given": False},
                    "Give the key the server was started with (its --api-key or VLLM_API_KEY).",
                )
            )
    elif models_r.ok and client.api_key:
        res.add("api_key_required", True, "the key was sent and accepted")
        res.findings.append(
            _finding(
                "server-auth",
                Status.PASS,
                "The API key is accepted",
                {"GET /v1/models": models_r.status, "api_key_given": True},
            )
        )

    models = _models_list(models_r) if models_r.ok else None
    version_r = client.get("/version")
    _cap(res, version_r)
    vj = version_r.json() if version_r.ok else None
    version = vj.get("version") if isinstance(vj, dict) and isinstance(vj.get("version"), str) else None
    res.add("vllm_version", version, "GET /version")

    is_vllm_evidence = {
        "GET /health": health.status,
        "GET /version": version_r.status,
        "version": version,
        "GET /v1/models": models_r.status,
        "models_json": models is not None,
        "content_type_v1_models": models_r.content_type,
    }
    if version and (models is not None or models_r.status == 401):
        res.findings.append(
            _finding("server-is-vllm", Status.PASS, f"vLLM {version} answers the OpenAI API", is_vllm_evidence)
        )
    elif models_r.status == 401:
        res.findings.append(
            _finding(
                "server-is-vllm",
                Status.UNKNOWN,
                "The server asks for a key; /version did not say it is vLLM",
                is_vllm_evidence,
                "Give the API key to check further.",
            )
        )
    else:
        if models_r.location:
            is_vllm_evidence["redirect_to"] = models_r.location
        why = (
            "GET /v1/models answered 404"
            if models_r.status == 404
            else f"GET /v1/models redirects to {models_r.location}"
            if models_r.location
            else f"GET /v1/models answered HTTP {models_r.status}"
            if not models_r.ok
            else "GET /v1/models did not answer the OpenAI JSON list"
            if models is None
            else f"GET /version did not answer {{\"version\": …}} ({version_r.status or version_r.error_kind})"
        )
        res.findings.append(
            _finding(
                "server-is-vllm",
                Status.FAIL,
                f"{url} does not look like a vLLM server ({why})",
                is_vllm_evidence,
                "Point --url at the vLLM API server (host:port of `vllm serve`, no path); a proxy in front must "
                "forward /v1/*, /health, /version and /metrics unchanged.",
                explanation='vLLM answers GET /version with {"version": …} and GET /v1/models with {"data": […]}.',
            )
        )

    if health.status == 503:
        res.findings.append(
            _finding(
                "server-health",
                Status.FAIL,
                "/health answers 503: the engine is dead",
                {"GET /health": 503},
                "Read the server log for the EngineCore error and restart.",
            )
        )

    served = None
    if models:
        ids = [str(m.get("id")) for m in models]
        chosen = next((m for m in models if m.get("id") == model), None) if model else models[0]
        if model and chosen is None:
            res.findings.append(
                _finding(
                    "server-model",
                    Status.FAIL,
                    f"The server does not serve model '{model}'",
                    {"asked": model, "served": ids},
                    f"Send one of the served names: {', '.join(ids)} (or start vLLM with --served-model-name).",
                )
            )
            chosen = models[0]
        served = str(chosen.get("id"))
        res.add("served_model_name", served, "GET /v1/models data[].id")
        res.add("model", chosen.get("root"), "GET /v1/models data[].root")
        if isinstance(chosen.get("max_model_len"), int):
            res.add("max_model_len", chosen["max_model_len"], "GET /v1/models data[].max_model_len")

    _guard(res, collect_metrics, client, res)
    if served is None and model:  # /tokenize is not under /v1, so it answers even when the key is missing
        _guard(res, collect_tokenize, client, res, model)
    if served and models_r.ok:
        _guard(res, collect_tokenize, client, res, served)
        if embed_probe:
            _guard(res, collect_embedding, client, res, served)
    _guard(res, collect_server_info, client, res)
    return res


def _guard(res: SourceResult, collect: Callable[..., None], *args: Any) -> None:
    """Run one collector; an answer it cannot read becomes an error finding, and the rest goes on."""
    try:
        collect(*args)
    except Exception as e:  # a malformed answer of a hostile or broken server: report it, keep the rest
        res.findings.append(
            _finding(
                "server-answer",
                Status.ERROR,
                f"An answer of the server could not be read ({collect.__name__.removeprefix('collect_')}): "
                f"{type(e).__name__}",
                {"collector": collect.__name__, "error": f"{type(e).__name__}: {str(e)[:300]}"},
                "Check that the URL points at a vLLM server; a proxy or another service may be answering.",
            )
        )
