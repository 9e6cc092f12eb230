"""Start-up, configuration and throughput failure modes of embedding servers (issue 14), one record each.

Facts: vLLM 0.31.0/0.32.0 wheels (paths in each record's refs), lab servers (recordings under
tests/fixtures/real/startup/ and tests/fixtures/nvml/), and the vLLM issue threads in `refs`.
Where a verdict needs a value from the config, the fix is a function of it (`fix_for`); every
finding that reports one of these modes reads title, refs and fix from here.

One room on purpose: catalogue data (each start-up record beside its fix function), not logic.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Optional

from triage.catalogue.model import ConfigLike, Edit, FailureMode, modes_of
from triage.catalogue.refusal_clues import (
    REJECT_CONTEXT_LENGTH,
    SERVER_MAX_MODEL_LEN,
    config_is,
    context_length_of,
    rejected_with,
    startup_error_says,
)
from triage.catalogue.symptoms import (
    REJECTED,
    SLOW_PROGRESSING,
    STARTUP_REFUSAL,
    WRONG_DIRECTION,
    WRONG_NORM,
    Case,
    Clue,
    Weight,
)
from triage.catalogue.vectors import DIMENSIONS_NOT_MATRYOSHKA


def _removed_flag_fix(cfg: ConfigLike) -> str:
    """One line per removed or renamed option seen (cfg["removed"]: [{"option", "use"}])."""
    seen = cfg.get("removed") or []
    if not seen:
        return (
            "Replace removed options: --task embed -> --runner pooling (plus --convert embed for a causal LM); "
            "--override-pooler-config -> --pooler-config; the pooler/request field normalize -> use_activation."
        )
    return "; ".join(f"{r['option']} -> {r['use']}" for r in seen) + "."


def _removed_edits(cfg: Mapping[str, Any]) -> list[Edit]:
    """Each removed option dropped by its name, and what replaces it, spelled by the deployment's release."""
    from triage.vllm import knowledge  # noqa: PLC0415 - lazy: the per-release knowledge reads the catalogue's versions

    rel = knowledge.release(knowledge.for_version(cfg.get("vllm_version")).release)
    serve: dict[str, Any] = {}
    for r in cfg.get("cmdline_removed_flags") or cfg.get("removed") or []:
        if isinstance(r, dict) and str(r.get("option", "")).startswith("--"):
            serve[f"!{r['option']}"] = None  # an option vLLM no longer has: dropped by its name
            use = str(r.get("use") or "")
            for opt, val in re.findall(r"(--[a-z][\w-]*)(?:[ =]([^\s,;()]+))?", use):
                spec = rel.lookup(opt)
                if spec is not None:
                    serve[spec.dest] = rel.sets(opt) if spec.kind != "value" else (val or True)
    return [Edit(serve=serve, why="options this vLLM has")] if serve else []


REMOVED_FLAG = FailureMode(
    id="removed-flag",
    edits=_removed_edits,
    title="A flag or field vLLM no longer has (removed or renamed)",
    mechanism=(
        "vllm serve parses its options strictly: an option it no longer has ends the start at once with "
        "'unrecognized arguments' (exit code 2, before any model is loaded); a removed PoolerConfig field "
        "(normalize) fails config validation; a removed request field answers 400. Guides written for older "
        "releases keep --task embed and --override-pooler-config alive."
    ),
    # Not a bug with an `affected` range (the version check reads those as bugs to upgrade past): which
    # releases lack each option is data read from each release's parser (triage/vllm/knowledge).
    refs=("vllm#21470", "vllm#25181", "vllm#32243", "vllm#35603", "vllm#53467"),
    evidence={
        "cmdline": "an option the deployment's release's parser lacks while an earlier release had it "
        "(triage/vllm/knowledge; what replaces it: triage/vllm/flags.py REPLACEMENTS), or a pooler-config "
        "field that release's PoolerConfig refuses",
        "log": "'error: unrecognized arguments: --task embed' (0.31+ adds 'Hint: --task is not a vllm serve "
        "option…'); 'Parameter `normalize` was removed; use `use_activation` instead.'",
        "api": "400 'Parameter `normalize` was removed…' for a request that sends normalize",
    },
    fix_for=_removed_flag_fix,
    symptoms=(STARTUP_REFUSAL, REJECTED),
    clues=(
        startup_error_says("log-removed-flag", ("UNRECOGNIZED_ARGS_RE", "REMOVED_PARAMETER_RE"),
                           "an option or field this release no longer has"),
        rejected_with("api-normalize-removed", (400,), ("REMOVED_PARAMETER_RE",), "a removed request field"),
    ),
    experiment="`python -m triage knowledge options --vllm X --option OPT`: the option's history across releases "
    "(the release's own parser)",
)

def _tasks_weight(tasks: Any) -> Optional[Weight]:
    """The server's supported tasks: a generator lists no pooling task."""
    if not isinstance(tasks, (list, tuple)):
        return None
    if "embed" in tasks or "classify" in tasks:
        return Weight("against", f"the server supports {list(tasks)}", "log", decisive=True)
    return Weight("for", f"the server supports only {list(tasks)}", "log", decisive=True)


def _context_is_max_model_len(case: Case, m: object = None) -> Optional[Weight]:
    """The 400's N against max_model_len: N == max_model_len is this record; a larger N is a max_embed_len."""
    n = case.fact(REJECT_CONTEXT_LENGTH) or context_length_of(case.fact("reject.message"))
    mml = case.fact(SERVER_MAX_MODEL_LEN) or case.get("max_model_len")
    if n is None or not isinstance(mml, int):
        return None
    if n == mml:
        return Weight("for", f"refused above max_model_len {mml}", "api", decisive=True)
    return Weight("against", f"refused above {n} tokens, not max_model_len {mml}", "api", decisive=True)


def _kv_dtype_weight(kv: Any, dtype: Any) -> Optional[Weight]:
    dtype = str(dtype).removeprefix("torch.") if dtype else None
    if kv is None or dtype is None:
        return None
    if kv in ("float16", "bfloat16") and dtype in ("float16", "bfloat16") and kv != dtype:
        return Weight("for", f"kv_cache_dtype {kv} with a {dtype} model", "config")
    return Weight("against", f"kv_cache_dtype {kv} with a {dtype} model", "config", decisive=kv in ("auto", dtype))


def _supported_tasks(case: Case) -> Optional[Weight]:
    return _tasks_weight(case.get("supported_tasks"))


def _kv_dtype_differs(case: Case) -> Optional[Weight]:
    return _kv_dtype_weight(case.get("kv_cache_dtype"), case.get("dtype"))


def _generate_edits(cfg: Mapping[str, Any]) -> list[Edit]:
    return [Edit(serve={"runner": "pooling", "convert": "embed"}, why="the embed task")]


def _log_stats_edits(cfg: Mapping[str, Any]) -> list[Edit]:
    return [Edit(serve={"disable_log_stats": None}, why="engine stats back in the log")]


GENERATE_RUNNER = FailureMode(
    id="generate-runner",
    edits=_generate_edits,
    title="An embedding checkpoint served as a text generator (no --runner pooling --convert embed)",
    mechanism=(
        "A *ForCausalLM architecture (Qwen3-Embedding is Qwen3ForCausalLM) defaults to the generate runner: "
        "the server starts, answers /health and /v1/models, but has no embed task, so /v1/embeddings is "
        "refused and /v1/completions answers instead."
    ),
    refs=("vllm#19250", "vllm#21614", "vllm#21704", "vllm#43061"),
    evidence={
        "cmdline": "no --runner pooling for a causal-LM checkpoint (or --runner generate)",
        "log": "'Supported tasks: [...]' without 'embed' (e.g. ['generate']); engine config runner_type generate",
        "api": "/v1/embeddings answers 4xx (no embed task) while /v1/completions answers 200",
    },
    fix_text="Serve it with --runner pooling --convert embed (vllm serve MODEL --runner pooling --convert embed).",
    symptoms=(REJECTED,),
    clues=(
        Clue("supported-tasks", _supported_tasks),
        rejected_with("api-embeddings-404", (404,), ("NOT_FOUND_RE",), "no embeddings route on a generator"),
    ),
    experiment="POST /v1/completions with max_tokens 1: 200 on a server whose /v1/embeddings is 404 is a generator",
)


def _max_len_fix(cfg: ConfigLike) -> str:
    derived = cfg.get("derived_max_model_len")
    asked = cfg.get("asked_max_model_len")
    cap = f" (at most {derived}, the model's {cfg.get('derived_key') or 'max_position_embeddings'})" if derived else ""
    head = f"Lower --max-model-len {asked}" if asked else "Lower --max-model-len"
    return (
        f"{head} to what the model supports{cap}; VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 only for models whose "
        "position encoding really extends (RoPE scaling), never to silence the check. Clients without truncation "
        "get 400 'maximum context length' for longer inputs: send truncate_prompt_tokens (<= max_model_len - 1 "
        "on vLLM < 0.32.0, vllm#55427) or split documents."
    )


MAX_MODEL_LEN = FailureMode(
    id="max-model-len-vs-model",
    title="max_model_len against the model: above its maximum the server refuses; below the card clients get 400",
    mechanism=(
        "vLLM derives max_model_len from the config (max_position_embeddings, capped by the tokenizer's "
        "model_max_length, or sentence_bert_config max_seq_length). A larger --max-model-len refuses to start "
        "('User-specified max_model_len (N) is greater than the derived max_model_len …'); a derived value "
        "smaller than the model card ('Changing max_model_len from … to …') makes longer inputs from clients "
        "without truncation fail with 400 'This model's maximum context length is N tokens'."
    ),
    refs=("vllm#19798", "vllm#25865", "vllm/config/model.py _get_and_verify_max_len (0.31/0.32)"),
    evidence={
        "cmdline": "--max-model-len above the model's max_position_embeddings (when known)",
        "log": "'User-specified max_model_len (N) is greater than the derived max_model_len (…=M …)'; "
        "'Changing max_model_len from A to B'",
        "api": "400 'This model's maximum context length is N tokens. However, your prompt contains …'",
    },
    fix_for=_max_len_fix,
    symptoms=(STARTUP_REFUSAL, REJECTED),
    clues=(
        startup_error_says("log-max-model-len", ("MAX_LEN_ABOVE_DERIVED_RE",), "max_model_len above the model's"),
        rejected_with("api-max-context", (400,), ("MAX_CONTEXT_RE",), "an input above max_model_len",
                      refine=_context_is_max_model_len),
    ),
    experiment="POST /tokenize the refused input: its count above /v1/models max_model_len, and the 400's N equal "
    "to max_model_len (a larger N is chunked processing's max_embed_len)",
    experiment_probe="conformance",
)

# Mode 4 (`dimensions` refused without Matryoshka, vllm#16331) is the record the vectors catalogue already
# has (issue 13): one record per failure, so the start-up log's verdict reads that one.
MATRYOSHKA = DIMENSIONS_NOT_MATRYOSHKA


def _shared_gpu_fix(cfg: ConfigLike) -> str:
    free, total = cfg.get("free_gib"), cfg.get("total_gib")
    try:
        share = max(0.05, float(free) / float(total) - 0.02)  # leave a little for the CUDA context
        fits = f" ({float(free):.1f} of {float(total):.1f} GiB free: at most about {share:.2f})"
    except (TypeError, ValueError, ZeroDivisionError):
        fits = ""
    return (
        f"Lower --gpu-memory-utilization to the share of TOTAL memory this server may take{fits}, or free the "
        "memory other processes hold (nvidia-smi lists them), or give the server its own GPU "
        "(CUDA_VISIBLE_DEVICES). The value is a share of the whole card, not of what is free."
    )


SHARED_GPU_MEMORY = FailureMode(
    id="gpu-memory-shared",
    title="Start-up refused on a shared GPU: free memory below the --gpu-memory-utilization share",
    mechanism=(
        "gpu_memory_utilization is a share of the card's TOTAL memory; at start vLLM requires that much to be "
        "free. Beside another model (or a leftover process) the server stops with 'Free memory on device … "
        "is less than desired GPU memory utilization'."
    ),
    refs=("vllm#20305", "vllm/v1/worker/utils.py request_memory (0.31/0.32)"),
    evidence={
        "nvml": "free memory < total x gpu_memory_utilization, and the other processes holding memory",
        "cmdline": "--gpu-memory-utilization (default 0.9)",
        "log": "'Free memory on device cuda:0 (F/T GiB) on startup is less than desired GPU memory "
        "utilization (U, R GiB)'",
    },
    fix_for=_shared_gpu_fix,
    symptoms=(STARTUP_REFUSAL,),
    clues=(startup_error_says("log-gpu-memory-shared", ("FREE_MEMORY_RE",), "free GPU memory below the share"),),
    experiment="nvidia-smi --query-gpu=memory.free,memory.total and the processes holding memory, before the start",
)

POOLING_OVERRIDES = FailureMode(
    id="pooling-overrides",
    title="The engine changed pooling-related settings on its own",
    mechanism=(
        "For pooling models vLLM turns features off or changes them without an error: chunked prefill and "
        "prefix caching are off for encoder-only models and MEAN/CLS pooling ('Disabling chunked prefill for "
        "model without KVCache'; older releases: 'Only 'last' pooling supports chunked prefill and prefix "
        "caching; disabling both'), full CUDA graphs become PIECEWISE ('Pooling models do not support full "
        "cudagraphs'), and a user budget can be overwritten (vllm#23004). The settings asked for are not the "
        "ones running."
    ),
    refs=("vllm#23004", "vllm/config/model.py is_chunked_prefill_supported (0.31/0.32)", "vllm/v1/engine/core.py"),
    evidence={
        "log": "the override lines above, and the engine config line's enable_chunked_prefill / "
        "enable_prefix_caching against the non-default args",
        "cmdline": "--enable-chunked-prefill / --enable-prefix-caching / a budget on a model that cannot use them",
        "effective config": "the value the engine runs with, beside what was asked",
    },
    fix_text=(
        "Plan with the values the engine runs with (the effective config): for an encoder-only or MEAN/CLS model "
        "drop --enable-chunked-prefill and keep --max-num-batched-tokens >= max_model_len (a longer prompt can "
        "never be scheduled otherwise); for full CUDA graphs nothing to do (PIECEWISE is what pooling gets)."
    ),
    clues=(config_is("chunked-prefill-asked-but-off", "chunked_prefill_overridden", True,
                     "the engine turned chunked prefill off although it was asked for"),),
    experiment="compare the log's non-default args with the engine config line (enable_chunked_prefill, "
    "enable_prefix_caching): `python -m triage logs` shows both",
)

DTYPE = FailureMode(
    id="dtype-fallback",
    title="The weights run in another dtype than the checkpoint (fp32 downcast, fp16 fallback)",
    mechanism=(
        "dtype auto downcasts an fp32 checkpoint to bf16/fp16; on GPUs without bf16 (compute capability < 8.0: "
        "T4, V100) vLLM falls back to float16 ('Falling back to torch.float16') or refuses bf16, and fp16 "
        "overflows in some embedding models give NaN vectors."
    ),
    refs=("vllm#18342", "vllm#48231", "vllm/platforms/cuda.py (0.31/0.32)", "vllm/config/model.py (dtype)"),
    evidence={
        "log": "'Falling back to torch.float16', 'Downcasting torch.float32 to torch.float16', 'Bfloat16 is only "
        "supported on GPUs with compute capability of at least 8.0'",
        "nvml": "compute capability < 8.0 (no bf16)",
        "api": "an embedding with NaN/null values",
    },
    fix_text=(
        "Pin the dtype: --dtype bfloat16 where the GPU has it (compute capability >= 8.0); on older GPUs "
        "--dtype float32 for models that overflow in fp16 (check a canary vector for NaN), --dtype float16 only "
        "after such a check."
    ),
    symptoms=(STARTUP_REFUSAL, WRONG_NORM, WRONG_DIRECTION),
    # the config's float16 is no clue: the CPU lab downcasts every fp32 checkpoint to it, and it would speak for this
    # record beside every other start-up refusal
    clues=(startup_error_says("log-dtype", ("BF16_REFUSED_RE",), "a dtype this device does not have"),),
    experiment="restart with --dtype float32 and embed a canary text: finite vectors at cosine >= 0.99 to the "
    "float16 ones mean the dtype is not the cause",
)


def _throughput_fix(cfg: ConfigLike) -> str:
    cause = cfg.get("cause")
    if cause == "client":
        return (
            "Nothing to change on the server yet: the measuring client ran out of CPU before the server did, so this "
            "mode is neither shown nor ruled out. Measure again with the client on a host (or cores) of its own, "
            "or beside `vllm bench serve --backend openai-embeddings` run from there."
        )
    if cause == "budget":
        return (
            "Raise --max-num-seqs / --max-num-batched-tokens to cover the batch sizes clients send (the engine is "
            "saturated while requests queue), or add replicas."
        )
    return (
        "The API server process (tokenization, JSON) saturates one core before the engine: start more API "
        "server processes with --api-server-count N (vLLM >= 0.31 has it), send lists of inputs per request "
        "instead of one input per request, and use encoding_format base64 to shrink responses."
    )


THROUGHPUT_BOTTLENECK = FailureMode(
    id="throughput-bottleneck",
    title="Throughput capped by the API server process or by a too-small batch budget",
    mechanism=(
        "For small encoders the front-end (one API server process: HTTP, tokenization, JSON) is slower than the "
        "engine: requests/s stops growing with concurrency while that process sits at ~100 % of one core and "
        "the GPU is mostly idle. With a budget (max_num_seqs, max_num_batched_tokens) smaller than what clients "
        "send, requests queue in the engine instead (waiting > 0, engine busy)."
    ),
    refs=("vllm#26641", "vllm#31678"),
    evidence={
        "probe": "the concurrency sweep: requests/s flat between the last two steps while p95 latency grows",
        "process": "the API server process near 100 % of one core (psutil, local server)",
        "nvml": "GPU utilization low during the sweep",
        "cmdline": "no --api-server-count; small --max-num-seqs / --max-num-batched-tokens",
        "metrics": "num_requests_waiting > 0 during the sweep (budget-bound)",
        "probe-client": "not this mode: the probe's own client (its process) near one core during the "
        "sweep, whatever the server's processes did: the flat rate is the client's ceiling (client CPU per "
        "request in each row)",
    },
    fix_for=_throughput_fix,
    symptoms=(SLOW_PROGRESSING,),
    clues=(config_is("throughput-cause", "throughput.cause", "api-server",
                     "requests/s flat with the API server process near one core",
                     "the sweep says the cause is {v}"),),
    experiment="the concurrency sweep (probe --set throughput) with the API server's CPU beside it",
    experiment_probe="throughput",
)


def _startup_oom_fix(cfg: ConfigLike) -> str:
    budget, mml = cfg.get("max_num_batched_tokens"), cfg.get("max_model_len")
    b = f" {budget}" if budget else ""
    m = f" {mml}" if mml else ""
    return (
        f"The start-up profile runs one step of max_num_batched_tokens{b} tokens (max_model_len{m}): lower "
        "--max-num-batched-tokens (the default for the card is enough; 24576/65536 OOMed a 12 GiB card in "
        "vllm#55427) or --max-model-len, or lower --gpu-memory-utilization so activations fit beside the KV "
        "cache. Raising the budget is not a fix for vllm#55427: truncate to max_model_len - 1 or upgrade."
    )


STARTUP_OOM = FailureMode(
    id="startup-oom",
    title="Out of memory at start-up: one profiling step of max_num_batched_tokens does not fit",
    mechanism=(
        "At start vLLM profiles one forward pass of max_num_batched_tokens tokens (with chunked prefill off: "
        "max(max_model_len, default)); activations scale with that budget, so a large budget or a large "
        "max_model_len without chunked prefill OOMs before the server ever listens."
    ),
    refs=("vllm#55427", "vllm/v1/worker/gpu_worker.py determine_available_memory (0.31/0.32)"),
    evidence={
        "log": "'CUDA out of memory' / OutOfMemoryError before 'Starting vLLM API server', with the budget in "
        "non-default args",
        "cmdline": "--max-num-batched-tokens >= 24576 on a card < 24 GiB, or --no-enable-chunked-prefill with a "
        "large max_model_len",
        "nvml": "the card's total memory",
    },
    fix_for=_startup_oom_fix,
    symptoms=(STARTUP_REFUSAL,),
    clues=(startup_error_says("log-startup-oom", ("OOM_RES",), "out of memory before the server listened"),),
    experiment="start again with half the --max-num-batched-tokens: a start that then succeeds was the profile "
    "step's activations",
)

LOG_STATS_DISABLED = FailureMode(
    id="log-stats-disabled",
    edits=_log_stats_edits,
    title="--disable-log-stats: the log has no engine stats lines for a post-mortem",
    mechanism=(
        "--disable-log-stats turns off the V1 engine's stat loggers: no periodic 'Engine 000: Avg prompt "
        "throughput …' line in the log AND no vllm:* series on /metrics (0.31.0 lab: 0 series instead of 345), "
        "so neither a log post-mortem nor `watch` can see a stall, a queue or throughput; a quiet log is then no "
        "evidence of health."
    ),
    refs=("vllm/engine/arg_utils.py disable_log_stats (0.31/0.32)",),
    evidence={
        "cmdline": "--disable-log-stats",
        "log": "non-default args {'disable_log_stats': True} and no stats line",
        "metrics": "/metrics answers 200 with no vllm:* series",
    },
    fix_text=(
        "Drop --disable-log-stats (the stats line costs one log line per VLLM_LOG_STATS_INTERVAL s), or watch the "
        "live server instead (`python -m triage watch`) and scrape /metrics."
    ),
    clues=(config_is("log-stats-off", "disable_log_stats", True, "--disable-log-stats is set"),),
    experiment="GET /metrics: no vllm:* series confirms the stat loggers are off",
)

def _kv_dtype_fix(cfg: ConfigLike) -> str:
    dtype = cfg.get("dtype")
    keep = f" or --kv-cache-dtype {dtype}" if dtype in ("float16", "bfloat16") else ""
    return (f"Use --kv-cache-dtype auto{keep} (the model's own dtype), or drop the option; a float KV cache in "
            "another dtype than the weights gives wrong vectors before vLLM 0.33 and a refused start from 0.33.")


KV_DTYPE_MISMATCH = FailureMode(
    id="kv-cache-dtype-mismatch",
    title="A float KV cache dtype different from the model's dtype",
    mechanism=(
        "--kv-cache-dtype float16 on a bfloat16 model (or the reverse) stores keys and values in the other float "
        "format: before vLLM 0.33 the server starts and answers 200 with wrong vectors (vllm#54338); from 0.33 "
        "VllmConfig._reject_mismatched_float_kv_cache refuses the start with 'kv_cache_dtype=\"X\" is incompatible "
        "with dtype=\"Y\"' (read from vllm/config/vllm.py of 0.33.0; which releases refuse is data in "
        "triage/vllm/knowledge, the release's start-up refusals)."
    ),
    refs=("vllm#54338",),
    evidence={
        "cmdline": "--kv-cache-dtype float16|bfloat16 with --dtype the other one",
        "log": "'kv_cache_dtype=\"float16\" is incompatible with dtype=\"bfloat16\". Please set `--kv-cache-dtype` "
        "to …' (0.33+); the engine config line's dtype and kv_cache_dtype before",
    },
    fix_for=_kv_dtype_fix,
    symptoms=(STARTUP_REFUSAL, WRONG_DIRECTION),
    clues=(
        startup_error_says("log-kv-cache-dtype", ("KV_DTYPE_REFUSED_RE",), "a float KV cache dtype other than the "
                           "model's"),
        Clue("kv-dtype-differs", _kv_dtype_differs),
    ),
    experiment="restart with --kv-cache-dtype auto and embed the same text: cosine below 0.99 to the old vectors "
    "means the KV dtype changed them",
)


def _mrv2_fix(cfg: ConfigLike) -> str:
    supported = cfg.get("supported")
    also = f"; or serve a task the V2 runner supports ({supported})" if supported else ""
    return ("Start the server with VLLM_USE_V2_MODEL_RUNNER=0 (docker run --env VLLM_USE_V2_MODEL_RUNNER=0 …, or "
            f"`export VLLM_USE_V2_MODEL_RUNNER=0` before vllm serve) to use the V1 model runner{also}.")


MRV2_POOLING = FailureMode(
    id="mrv2-pooling-task",
    title="Model Runner V2 refuses the pooling task this model selects",
    mechanism=(
        "Model Runner V2 is the GPU worker's default when Triton is present and VLLM_USE_V2_MODEL_RUNNER is unset "
        "(VllmConfig.use_v2_model_runner, read in 0.32.0 and 0.33.0); its PoolingRunner supports only some "
        "pooling tasks (embed, classify, token_embed, token_classify in 0.33.0) and refuses the start of a model "
        "that selects another one ('Model Runner V2 supports pooling tasks …, but this model selects …', "
        "vllm/v1/worker/gpu/pool/pooling_runner.py). The refusal is in every release's source from 0.27.0 "
        "(triage/vllm/knowledge), not new in 0.33."
    ),
    refs=("vllm#50661",),
    evidence={
        "log": "'Model Runner V2 supports pooling tasks [...], but this model selects '…' from [...]. Set "
        "VLLM_USE_V2_MODEL_RUNNER=0 …'",
        "cmdline": "docker -e VLLM_USE_V2_MODEL_RUNNER=1 forces it; =0 is the way out",
    },
    fix_for=_mrv2_fix,
    symptoms=(STARTUP_REFUSAL,),
    clues=(startup_error_says("log-mrv2-pooling", ("MRV2_POOLING_RE",), "Model Runner V2 refusing the task"),),
    experiment="start with VLLM_USE_V2_MODEL_RUNNER=0: it starts with the V1 runner",
)

# Modes 1-3 and 5-10 of issue 14; mode 4 is MATRYOSHKA above (registered by the vectors catalogue).
STARTUP_MODES = modes_of(globals(), but=(DIMENSIONS_NOT_MATRYOSHKA,))
