"""Start-up configuration from a vLLM log (``StartupConfigReader``, streaming), under the canonical config keys
of docs/CONTRACTS.md; its refusals and overrides are ``startup_events``, what a message says ``startup_plan``.

Precedence, weakest first: the `non-default args` dict (what the user asked for), then the
engine's `Initializing a V1 LLM engine … with config:` line (what the engine resolved), then
the specific lines that state an outcome (`Using max model len`, `Chunked prefill is enabled
with max_num_batched_tokens=N.`, `Resolved pooling config`, `… KV cache size: N tokens`), and
last `Disabling chunked prefill for model without KVCache`, which overrides chunked prefill to
False whatever was asked (encoder-only models, seen on 0.32.0 BERT).
"""

from __future__ import annotations

import re
from typing import Any, Optional
from collections.abc import Iterable

from triage.logs.lines import LogLine, LogSource, iter_records
from triage.logs.startup_events import StartupEvents
from triage.logs.startup_plan import MessagePlan, as_int, has_any_marker, message_plan
from triage.vllm import logformats as lf

# non-default-args keys that are canonical config keys as they are
_ARG_KEYS = (
    "model",
    "served_model_name",
    "runner",
    "convert",
    "max_model_len",
    "max_num_batched_tokens",
    "max_num_seqs",
    "enable_chunked_prefill",
    "enable_prefix_caching",
    "dtype",
    "gpu_memory_utilization",
    "kv_cache_memory_bytes",
    "tensor_parallel_size",
    "data_parallel_size",
    "hf_overrides",
    "disable_log_stats",
    "dtype",
    "pooler_config",
    "api_server_count",
    "task",  # releases before 0.13: `'task': 'embed'` in non-default args (the pooling runner, issue 42)
)


def _config_value(cfg: str, key: str) -> Optional[str]:
    m = re.search(r"(?:^|, )" + re.escape(key) + r"=('(?:[^'\\]|\\.)*'|[^,()]+)", cfg)
    if not m:
        return None
    v = m.group(1).strip()
    return v[1:-1] if v.startswith("'") and v.endswith("'") else v


def _bool(v: Any) -> Optional[bool]:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v in ("True", "False"):
        return v == "True"
    return None



class StartupConfigReader:
    """Feed records one by one (streaming); ``config`` / ``provenance`` hold what was read."""

    def __init__(self) -> None:
        # key -> (value, line, what): the provenance entry is built when read (a log of many starts sets keys
        # thousands of times)
        self._prov: dict[str, Any] = {}
        self._built: Optional[dict[str, dict[str, Any]]] = None
        self._chunked_disabled = False
        self.events = StartupEvents()
        self._parsed: dict[Any, Any] = {}  # a repeated start-up line (a log of many starts) is parsed once

    @property
    def provenance(self) -> dict[str, dict[str, Any]]:
        """key -> {"value", "source": "log", "detail": "line N: what"}; one dict, kept (with what a caller writes into
        it) until the next line sets a key."""
        if self._built is None:
            self._built = {
                k: v if isinstance(v, dict) else {"value": v[0], "source": "log", "detail": f"line {v[1]}: {v[2]}"}
                for k, v in self._prov.items()
            }
        return self._built

    @property
    def config(self) -> dict[str, Any]:
        return {k: v["value"] for k, v in self.provenance.items()}

    def _set(self, key: str, value: Any, lineno: int, what: str) -> None:
        if value is None:
            return
        if self._built is not None:  # read (and maybe written) since the last set: it is the state now
            self._prov = dict(self._built)
            self._built = None
        self._prov[key] = (value, lineno, what)

    def reads(self, msg: str) -> bool:
        """Whether feed(line) with this message does more than keep it in the events' tail (substring tests)."""
        return has_any_marker(msg) or (
            self.events.started is None and ("Starting vLLM" in msg or "startup complete" in msg)
        )  # = has_config_marker(msg) or self.events.reads(msg), in one chain

    def feed(self, line: LogLine) -> None:
        if len(line.msg) < 12:
            return
        self.feed_plan(message_plan(line.msg), line.lineno, line.raw, line.ts)

    def feed_plan(self, plan: MessagePlan, lineno: int, raw: str, ts: Optional[float]) -> None:
        """feed() for a record (message of 12 characters or more) given as fields and its message's plan."""
        self.events.feed_plan(plan, lineno, raw, ts)
        if "no module or parameter named" in raw and lf.GENERATOR_LOADS_BASE_RE.search(raw):
            # a base model's weights loaded by the generator: an embedding checkpoint (triage.catalogue.identity)
            self._set("base_weights_no_head", True, lineno, "There is no module or parameter named … in *ForCausalLM")
        if plan.tasks_in and self.events.supported_tasks is not None:
            self._set("supported_tasks", self.events.supported_tasks, lineno, "Supported tasks")
            if "Defaulting to '" in raw:  # the 0.7 … 0.9 task resolution: fixes spell the task --task
                self._set("task_resolution_line", True, lineno, "This model supports multiple tasks … Defaulting to")
            return
        step = plan.config
        if step is None:
            return
        kind = step[0]
        if kind == "downcast":  # the effective config shows it; a finding only for fallbacks/refusals
            self._set("checkpoint_dtype", step[1], lineno, "Downcasting")
            self._set("dtype", step[2], lineno, "Downcasting")
            return
        if kind == "args":
            args = dict(step[1])
            self._set("non_default_args", args, lineno, "non-default args")
            for k in _ARG_KEYS:
                if k in args and args[k] is not None and (k not in self._prov or k in ("runner", "convert")):
                    val = args[k]
                    if k == "served_model_name" and isinstance(val, list) and val:
                        val = val[0]
                    self._set(k, val, lineno, f"non-default args {k}")
            if "model_tag" in args and "model" not in self._prov:
                self._set("model", args["model_tag"], lineno, "non-default args model_tag")
            return
        if kind == "engine":
            if step[1] is not None:  # 0.2 … 0.4.0 print no version on this line
                self._set("vllm_version", step[1], lineno, "Initializing a V1 LLM engine")
            self._engine_config(step[2], lineno)
            return
        _kind, api, banner, rest = step
        if api is not None and "vllm_version" not in self._prov:
            self._set("vllm_version", api, lineno, "vLLM API server version")
            return
        if banner is not None and "vllm_version" not in self._prov:
            self._set("vllm_version", banner, lineno, "start-up banner")
            return
        if rest is None:
            return
        what = rest[0]
        if what == "max_model_len":
            self._set("max_model_len", rest[1], lineno, "Using max model len")
        elif what == "chunked":
            self._set("max_num_batched_tokens", rest[1], lineno, "Chunked prefill is enabled")
            if not self._chunked_disabled:
                self._set("enable_chunked_prefill", True, lineno, "Chunked prefill is enabled")
        elif what == "no-chunked":
            self._chunked_disabled = True
            self._set("enable_chunked_prefill", False, lineno, "Disabling chunked prefill for model without KVCache")
        elif what == "pooling_type":
            self._set("pooling_type", rest[1], lineno, "Resolved pooling config")
        else:
            self._set("kv_cache_size_tokens", rest[1], lineno, f"{rest[2]} KV cache size")

    def _engine_config(self, cfg: str, lineno: int) -> None:
        """Set what the engine config line says; a repeated line (a log of many starts) is parsed once."""
        key = (cfg, self._chunked_disabled)
        sets = self._parsed.get(key)
        if sets is None:
            sets = _engine_config_sets(cfg, self._chunked_disabled)
            if len(cfg) < 65536 and len(self._parsed) < 16:
                self._parsed[key] = sets
        for k, value, what in sets:
            self._set(k, value, lineno, what)


def _engine_config_sets(cfg: str, chunked_disabled: bool) -> list[tuple[str, Any, str]]:
    """(key, value, what) for each config key the engine config line states, in the order they are set."""
    what = "engine config"
    dtype = _config_value(cfg, "dtype")
    out: list[tuple[str, Any, str]] = [
        ("model", _config_value(cfg, "model"), what + " model"),
        ("served_model_name", _config_value(cfg, "served_model_name"), what + " served_model_name"),
        ("dtype", dtype.replace("torch.", "") if dtype else None, what + " dtype"),
        ("max_model_len", as_int(_config_value(cfg, "max_seq_len")), what + " max_seq_len"),
        ("tensor_parallel_size", as_int(_config_value(cfg, "tensor_parallel_size")), what + " tensor_parallel_size"),
        ("data_parallel_size", as_int(_config_value(cfg, "data_parallel_size")), what + " data_parallel_size"),
    ]
    dev = _config_value(cfg, "device_config")
    if dev:
        dev = dev.strip().lower()
        out.append(("device", dev if dev in ("cpu", "cuda", "rocm", "xpu", "tpu") else dev, what + " device_config"))
    out.append(
        ("enable_prefix_caching", _bool(_config_value(cfg, "enable_prefix_caching")), what + " enable_prefix_caching")
    )
    if not chunked_disabled:
        out.append(
            (
                "enable_chunked_prefill",
                _bool(_config_value(cfg, "enable_chunked_prefill")),
                what + " enable_chunked_prefill",
            )
        )
    pm = lf.POOLER_TYPE_RE.search(cfg)
    if pm:
        out.append(("pooling_type", pm["t"], what + " pooler_config"))
    cp = lf.CHUNKED_PROCESSING_RE.search(cfg)
    if cp:  # what an over-long input gets (issue 29): the pooler config's chunked processing and its limit
        limit = None if cp["n"] == "None" else int(cp["n"])
        out.append(("pooler_config", {"enable_chunked_processing": True, "max_embed_len": limit},
                    what + " pooler_config"))
    return out


def extract_startup_config(
    text_or_lines: LogSource | Iterable[LogLine], *, with_provenance: bool = False
) -> dict[str, Any]:
    """Canonical config keys read from a start-up log (text, path, file or lines).

    Plain ``{key: value}`` by default; ``with_provenance=True`` gives
    ``{key: {"value", "source": "log", "detail": "line N: …"}}`` as the engine's effective config wants.
    """
    reader = StartupConfigReader()
    items: Iterable[Any] = text_or_lines
    if isinstance(text_or_lines, list) and text_or_lines and isinstance(text_or_lines[0], LogLine):
        items = text_or_lines
    else:
        items = iter_records(text_or_lines)  # type: ignore[arg-type]
    for rec in items:
        reader.feed(rec)
    return reader.provenance if with_provenance else reader.config
