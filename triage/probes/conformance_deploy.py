"""Pure verdicts on the guide's deployment claims (batch flag, remote code, KV sizing) from server answers."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from triage.findings import Finding, Status
from triage.http import Reply
from triage.probes.conformance_findings import _claim, ev, vectors


def batch_flag(batch: Reply, n: int, server_info: Reply) -> Finding:
    got = len(vectors(batch))
    cfg_text = json.dumps(server_info.body) if server_info.ok else ""
    has_flag = "embedding_batch_size" in cfg_text if cfg_text else None
    ok = batch.ok and got == n and has_flag is not True
    how = ("/server_info has no embedding_batch_size" if has_flag is False
           else "indirect: /server_info is off (needs VLLM_SERVER_DEV_MODE=1)")
    return Finding("conformance-batching-flags", Status.PASS if ok else Status.UNKNOWN,
                   f"{n} inputs in one request were accepted and batched by the engine ({how})" if ok
                   else f"a {n}-input request answered {batch.status}",
                   {**ev(batch, server_info), **_claim("batch_flag", "refuted" if ok else "undecided"),
                    "why": "vLLM batches by tokens (--max-num-batched-tokens) and sequences (--max-num-seqs); "
                           "`vllm serve` has no --embedding-batch-size flag"},
                   "Tune --max-num-batched-tokens / --max-num-seqs instead of --embedding-batch-size.")


def read_model_config(model_root: Optional[str]) -> Optional[dict[str, Any]]:
    """config.json of the served model when its root is a local directory (lab, same-host triage)."""
    if not model_root:
        return None
    p = Path(model_root) / "config.json"
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return None


def remote_code(models: Reply, model_config: Optional[dict[str, Any]], served_ok: bool) -> Finding:
    archs = (model_config or {}).get("architectures")
    if not archs:
        return Finding("conformance-native-architecture", Status.UNKNOWN,
                       "the model's architecture is not visible from here (config.json not readable)",
                       {**ev(models), **_claim("remote_code", "undecided")},
                       "Qwen3-Embedding is Qwen3ForCausalLM, native in vLLM: serve it with --runner pooling "
                       "--convert embed, no --trust-remote-code.")
    qwen = "Qwen3ForCausalLM" in archs
    verdict = "refuted" if qwen and served_ok else "not applicable"
    return Finding("conformance-native-architecture", Status.PASS,
                   f"architecture {archs} is served natively" + (" (embeddings answer 200)" if served_ok else ""),
                   {**ev(models, architectures=archs, config_source="config.json in the model root"),
                    **_claim("remote_code", verdict)})


def kv_sizing(cache_config: dict[str, bool | int | float], max_model_len: int) -> Finding:
    """``cache_config``: the page's typed values (``MetricsPage.cache``)."""
    def num(key: str) -> Optional[float]:
        v = cache_config.get(key)
        return float(v) if v is not None else None
    if not cache_config:
        return Finding("conformance-kv-cache-sizing", Status.UNKNOWN, "vllm:cache_config_info not on /metrics",
                       {"cache_config": cache_config, **_claim("kv", "undecided")})
    tokens = num("kv_cache_size_tokens")
    mem = num("kv_cache_memory_bytes")
    if tokens is None:
        # seen on 0.32.0 BERT (MiniLM): kv_cache_size_tokens="None", num_gpu_blocks="1": encoder-only, no KV pool
        return Finding("conformance-kv-cache-sizing", Status.PASS,
                       "no KV cache pool on this engine (encoder-only model): nothing is reserved per max_model_len",
                       {"cache_config": {k: cache_config.get(k) for k in ("kv_cache_size_tokens", "num_gpu_blocks",
                                                                          "kv_cache_memory_bytes")},
                        "source": "GET /metrics vllm:cache_config_info", **_claim("kv", "not applicable")})
    per_token = mem / tokens if mem and tokens else None
    fits = tokens >= max_model_len
    return Finding("conformance-kv-cache-sizing", Status.PASS if fits else Status.WARN,
                   f"KV pool holds {int(tokens)} tokens ({tokens / max_model_len:.1f} max-length sequences); its size "
                   "comes from " + ("kv_cache_memory_bytes" if mem else "gpu_memory_utilization"),
                   {"cache_config": {k: cache_config.get(k) for k in ("kv_cache_size_tokens", "kv_cache_memory_bytes",
                                                                      "gpu_memory_utilization", "num_gpu_blocks",
                                                                      "block_size", "enable_prefix_caching")},
                    "kv_bytes_per_token": per_token, "max_model_len": max_model_len,
                    "source": "GET /metrics vllm:cache_config_info", **_claim("kv", "refuted"),
                    "why": "the KV pool is sized by gpu_memory_utilization (or kv_cache_memory_bytes); vLLM only "
                           "checks that one max_model_len sequence fits, it reserves nothing per max_model_len"},
                   "" if fits else "Lower --max-model-len or give the KV cache more memory.")
