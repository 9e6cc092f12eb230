"""The server's start-up log (pasted text or a file) as an evidence source.

Parsing belongs to issue 5 (`triage.logs.extract_startup_config`); this adapter turns its
canonical keys into facts with source 'log', and keeps a small fallback for the handful of
lines the checks need in case that parser is unavailable.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from triage.sources import RawCapture, SourceResult

SOURCE = "log"

_NON_DEFAULT = re.compile(r"non-default args: (\{.*\})")
_ENGINE = re.compile(r"Initializing a V1 LLM engine \(v(?P<v>[\w.+]+)\) with config: (?P<cfg>.*)")
_MAX_LEN = re.compile(r"Using max model len (\d+)")
_CHUNKED = re.compile(r"Chunked prefill is enabled with max_num_batched_tokens=(\d+)")
_NO_KV = re.compile(r"Disabling chunked prefill for model without KVCache")
_KV_SIZE = re.compile(r"(?:GPU|CPU|XPU|TPU) KV cache size: ([\d,]+) tokens")


def _fallback(text: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}

    def put(k: str, v: Any, what: str) -> None:
        if v is not None:
            out[k] = {"value": v, "source": SOURCE, "detail": what}

    for line in text.splitlines():
        if m := _NON_DEFAULT.search(line):
            try:
                args = ast.literal_eval(m.group(1))
            except (ValueError, SyntaxError):
                args = {}
            args = {k: v for k, v in args.items() if "key" not in k.lower() and "token" not in k.lower()}
            put("non_default_args", args, "non-default args")
            for k in (
                "model",
                "runner",
                "convert",
                "max_model_len",
                "max_num_batched_tokens",
                "enable_chunked_prefill",
                "enable_prefix_caching",
                "gpu_memory_utilization",
            ):
                put(k, args.get(k), f"non-default args {k}")
        elif m := _ENGINE.search(line):
            cfg = m.group("cfg")
            put("vllm_version", m.group("v"), "Initializing a V1 LLM engine")
            for key, rx in (
                ("device", r"device_config=(\w+)"),
                ("dtype", r"dtype=(?:torch\.)?(\w+)"),
                ("max_model_len", r"max_seq_len=(\d+)"),
                ("enable_prefix_caching", r"enable_prefix_caching=(True|False)"),
                ("enable_chunked_prefill", r"enable_chunked_prefill=(True|False)"),
                ("pooling_type", r"seq_pooling_type='(\w+)'"),
            ):
                mm = re.search(rx, cfg)
                if mm:
                    raw = mm.group(1)
                    val: Any = int(raw) if raw.isdigit() else (raw == "True" if raw in ("True", "False") else raw)
                    put(key, val, f"engine config {key}")
        elif m := _MAX_LEN.search(line):
            put("max_model_len", int(m.group(1)), "Using max model len")
        elif m := _CHUNKED.search(line):
            put("max_num_batched_tokens", int(m.group(1)), "Chunked prefill is enabled")
        elif m := _KV_SIZE.search(line):
            put("kv_cache_size_tokens", int(m.group(1).replace(",", "")), "KV cache size")
        elif _NO_KV.search(line):
            put("enable_chunked_prefill", False, "Disabling chunked prefill for model without KVCache")
    return out


def _extract(text: str) -> dict[str, dict[str, Any]]:
    try:
        from triage.logs import extract_startup_config
    except ImportError:
        return _fallback(text)
    return extract_startup_config(text, with_provenance=True)


def collect(text: str) -> SourceResult:
    """Facts from a start-up log; `stated_args` = the keys of its `non-default args` dict."""
    res = SourceResult(SOURCE)
    res.captures.append(RawCapture("log", "start-up log", text[:2_000_000]))
    try:
        prov = _extract(text)
    except Exception as e:  # a parser bug must not sink the run: the log becomes 'unavailable'
        res.unavailable = f"log parser failed: {type(e).__name__}: {e}"
        return res
    if not prov:
        res.unavailable = "no vLLM start-up lines found in the log"
        return res
    for key, p in prov.items():
        res.add(key, p.get("value"), str(p.get("detail", "")))
    nda = prov.get("non_default_args", {}).get("value")
    if isinstance(nda, dict):
        stated = {("model" if k == "model_tag" else k) for k in nda}
        res.stated_args = stated
        if "api_key" in nda or any("api_key" in str(k) for k in nda):
            res.add("api_key_required", True, "non-default args api_key")
    return res
