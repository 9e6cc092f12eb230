"""The server source's detail collectors: /metrics, /tokenize, one tiny embedding, /server_info.

Split from server.py (reachability, auth, path prefix, identity, models); each collector adds
facts, findings and raw captures to the same SourceResult and never raises.
"""

from __future__ import annotations

import re
from typing import Any

from triage.catalogue import POOLING_LIVELOCK, STUCK_WAITING
from triage.catalogue.stalls import SHAPES, stall_name
from triage.http import Reply, VllmClient, server_message
from triage.findings import Finding, Status
from triage.sources import RawCapture, SourceResult
from triage.vllm.metrics import MetricsParseError, parse_metrics


def finding(
    check: str,
    status: Status,
    title: str,
    evidence: dict[str, Any],
    fix: str = "",
    explanation: str = "",
    refs: list[str] | None = None,
) -> Finding:
    """A Finding with the server source's argument order."""
    return Finding(
        check=check, status=status, title=title, evidence=evidence, fix=fix, refs=refs or [], explanation=explanation
    )


def keep(res: SourceResult, r: Reply) -> None:
    """Keep a reply's raw body with the run (a /metrics page as its own kind)."""
    body = r.text if not r.error_kind else r.error or ""
    res.captures.append(
        RawCapture(
            "metrics-page" if r.path == "/metrics" and r.ok else "server-response",
            f"{r.method} {r.path} -> {r.status or r.error_kind}",
            body[:200_000],
        )
    )


def collect_metrics(client: VllmClient, res: SourceResult) -> None:
    r = client.get("/metrics")
    keep(res, r)
    if r.transport_failed or not r.ok:
        res.findings.append(
            finding(
                "metrics-parse",
                Status.UNKNOWN,
                f"/metrics is not available ({r.summary()})",
                {"GET /metrics": r.status or r.error_kind},
                "vLLM serves /metrics unless a proxy hides it; the stall rule needs it.",
            )
        )
        return
    try:
        page = parse_metrics(r.text)
    except MetricsParseError as e:
        res.findings.append(
            finding(
                "metrics-parse",
                Status.ERROR,
                "/metrics is not a Prometheus page",
                {"error": str(e), "first_bytes": r.text[:200]},
                "Check that the URL is the vLLM server itself, not a proxy or another app.",
            )
        )
        return
    if not page.has_vllm_metrics:
        res.findings.append(
            finding(
                "metrics-parse",
                Status.WARN,
                "/metrics carries no vllm: metrics",
                {"bytes": len(r.text)},
                "This is not a vLLM V1 server's /metrics page.",
            )
        )
        return
    cc = page.cache_config
    res.findings.append(
        finding(
            "metrics-parse",
            Status.PASS,
            "/metrics parsed",
            {"engines": sorted(page.engines), "cache_config_labels": len(cc)},
        )
    )
    for key, value in page.cache.items():
        res.add(key, value, "/metrics vllm:cache_config_info")
    if len(page.engines) > 1:
        res.add("data_parallel_size", len(page.engines), "/metrics engine labels")
    snap = next(iter(page.engines.values()), None)
    if snap is not None:
        res.add("num_requests_running", snap.num_requests_running, "/metrics")
        res.add("num_requests_waiting", snap.num_requests_waiting, "/metrics")


def collect_tokenize(client: VllmClient, res: SourceResult, model: str) -> None:
    r = client.post("/tokenize", {"model": model, "prompt": "vllm-triage"})
    keep(res, r)
    j = r.json() if r.ok else None
    if isinstance(j, dict) and isinstance(j.get("max_model_len"), int) and "max_model_len" not in res.facts:
        res.add("max_model_len", j["max_model_len"], "POST /tokenize max_model_len")


def collect_embedding(client: VllmClient, res: SourceResult, model: str) -> None:
    """One 2-token embedding: proves the pooling runner and gives the vector size; cannot trigger the pooling
    livelock (far below max_model_len)."""
    r = client.post("/v1/embeddings", {"model": model, "input": "vllm-triage"})
    keep(res, r)
    j = r.json() if r.ok else None
    if isinstance(j, dict) and isinstance(j.get("data"), list) and j["data"] and isinstance(j["data"][0], dict):
        emb = j["data"][0].get("embedding")
        res.add("runner", "pooling", "POST /v1/embeddings answered 200")
        if isinstance(emb, list):
            res.add("embedding_dim", len(emb), "POST /v1/embeddings")
    elif r.error_kind == "timeout":
        res.findings.append(
            finding(
                "server-embeddings",
                Status.WARN,
                f"A 2-token /v1/embeddings request got no answer within {r.elapsed_s:.0f} s while /health answers",
                {
                    "POST /v1/embeddings": "timeout",
                    "elapsed_s": round(r.elapsed_s, 1),
                    "num_requests_running": res.facts["num_requests_running"].value
                    if "num_requests_running" in res.facts
                    else None,
                    "num_requests_waiting": res.facts["num_requests_waiting"].value
                    if "num_requests_waiting" in res.facts
                    else None,
                },
                f"The engine may be stuck: {stall_name(POOLING_LIVELOCK)} ({SHAPES['livelock']}) or "
                f"{stall_name(STUCK_WAITING)} ({SHAPES['stuck-waiting']}). Watch /metrics with `python -m triage "
                f"watch`; meanwhile {POOLING_LIVELOCK.now}",
                refs=[POOLING_LIVELOCK.refs[0]],  # by name: the 6th positional is the explanation
            )
        )
    elif r.status in (400, 404):
        msg = server_message(r.json(), 300)
        res.add("embeddings_error", msg or r.text[:300], f"POST /v1/embeddings -> {r.status}")


# Fields of /server_info's "vllm_config" string (the same repr as the log's engine config line; read
# from a real 0.31.0 server with VLLM_SERVER_DEV_MODE=1). It does not carry the scheduler config, so
# max_num_batched_tokens is not among them.
_SERVER_INFO_FIELDS: dict[str, tuple[str, str]] = {
    "enable_chunked_prefill": (r"enable_chunked_prefill=(True|False)", "bool"),
    "enable_prefix_caching": (r"enable_prefix_caching=(True|False)", "bool"),
    "max_model_len": (r"max_seq_len=(\d+)", "int"),
    "device": (r"device_config=(cuda|rocm|cpu|xpu|tpu)", "str"),
    "dtype": (r"dtype=(?:torch\.)?(\w+)", "str"),
    "tensor_parallel_size": (r"tensor_parallel_size=(\d+)", "int"),
    "data_parallel_size": (r"data_parallel_size=(\d+)", "int"),
    "pooling_type": (r"seq_pooling_type='(\w+)'", "str"),
}


def collect_server_info(client: VllmClient, res: SourceResult) -> None:
    """/server_info exists only with VLLM_SERVER_DEV_MODE=1: the resolved config and the host's GPUs."""
    r = client.get("/server_info")
    if not r.ok:
        return
    keep(res, r)
    body = r.json()
    if not isinstance(body, dict):
        return
    cfg = body.get("vllm_config")
    if isinstance(cfg, str):
        for key, (rx, kind) in _SERVER_INFO_FIELDS.items():
            m = re.search(rx, cfg)
            if m:
                raw = m.group(1)
                val: Any = raw == "True" if kind == "bool" else int(raw) if kind == "int" else raw
                res.add(key, val, "GET /server_info vllm_config")
    env = body.get("system_env")
    if isinstance(env, dict):
        if env.get("nvidia_driver_version"):
            res.add("driver_version", str(env["nvidia_driver_version"]), "GET /server_info system_env")
        if env.get("nvidia_gpu_models"):
            first = str(env["nvidia_gpu_models"]).splitlines()[0]
            res.add("gpu_name", first.split(":", 1)[-1].strip(), "GET /server_info system_env nvidia_gpu_models")
