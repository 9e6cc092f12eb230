"""The records of the catalogue: each known failure mode written once, with its sources.

Facts: shared/reference/vllm-embedding-facts.md (§1 mechanism and versions, §2 defaults) and
real-vllm-on-cpu.md (what lab servers showed). Version ranges were read from vLLM release
wheels (vllm/v1/core/sched/scheduler.py at each tag) and the issue threads.

One room on purpose: catalogue data, one record per failure mode; readers compare records side by side, and a record
is read whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Optional

from triage.catalogue import engine_clues as ec
from triage.catalogue import symptoms as sy
from triage.catalogue.check_ids import primary_mode, written_before
from triage.catalogue.clients import CLIENT_MODES
from triage.catalogue.features import FEATURE_MODES
from triage.catalogue.kubernetes import KUBERNETES_MODES
from triage.catalogue.model import ConfigLike, Edit, FailureMode, modes_of
from triage.catalogue.symptoms import Clue
from triage.catalogue.rerank import RERANK_MODES
from triage.catalogue.startup import STARTUP_MODES
from triage.catalogue.vector_causes import PIPELINE_MODES
from triage.catalogue.vectors import VECTOR_MODES
from triage.catalogue.versions import Version, VersionRange, fmt
from triage.stall import LIVELOCK, STUCK_WAITING as STUCK_WAITING_KIND  # the stall rule's kinds



def _livelock_fix(cfg: ConfigLike) -> str:
    mml = cfg.get("max_model_len")
    n = f"{mml - 1}" if isinstance(mml, int) else "max_model_len - 1"
    budget = cfg.get("max_num_batched_tokens")
    if isinstance(mml, int):
        # lazy: the default rules read the per-release knowledge, which reads catalogue.versions
        from triage.vllm.defaults import max_num_batched_tokens_default  # noqa: PLC0415

        tier = max_num_batched_tokens_default(
            device=cfg.get("device"),
            gpu_name=cfg.get("gpu_name"),
            gpu_memory_total_bytes=cfg.get("gpu_memory_total_bytes"),
            release=cfg.get("vllm_version"),
        )
        base = tier.value if tier is not None else "the device default"
        raised = f" = {max(mml, int(tier.value))}" if tier is not None else ""  # type: ignore[call-overload]
        cost = (
            f"with no --max-num-batched-tokens vLLM then uses max(max_model_len {mml}, {base}){raised} "
            "tokens per step: a whole max-length prompt is prefilled in one step, which needs that much "
            "activation memory (24576/65536 OOMed at start on a 12 GiB card)"
        )
        fact = getattr(cfg, "fact", None)
        bf = fact("max_num_batched_tokens") if fact else None
        stated_args = getattr(cfg, "stated_args", None)
        stated = (stated_args is not None and "max_num_batched_tokens" in stated_args) or (
            bf is not None and bf.source != "default-rule"
        )
        if isinstance(budget, int) and budget < mml and stated:
            cost += (
                f"; drop --max-num-batched-tokens {budget} or raise it to >= {mml}: with chunked prefill off "
                "vLLM refuses a budget below max_model_len at start (SchedulerConfig.verify_max_model_len)"
            )
    else:
        cost = "vLLM then raises max_num_batched_tokens to max(max_model_len, default), which costs activation memory"
    t = cfg.get("truncate_prompt_tokens")
    instead = f" instead of {t}" if t not in (None, "unknown") else " instead of max_model_len or -1"
    return (
        f"1) Upgrade to {POOLING_LIVELOCK.fixed_text}. "
        f"2) Until then send truncate_prompt_tokens = {n}{' (max_model_len - 1)' if isinstance(mml, int) else ''}"
        f"{instead}. "
        f"3) Or serve with --no-enable-chunked-prefill: {cost}. "
        "Not a fix: raising --max-num-batched-tokens (OOM risk), nvidia-smi --gpu-reset (the GPU is idle)."
    )


def _livelock_affects(version: object) -> Optional[bool]:
    """The livelock's release test (its clues read it when they run, after the record exists)."""
    return POOLING_LIVELOCK.affects(version)


def _livelock_edits(cfg: Mapping[str, Any]) -> list[Edit]:
    mml, budget = cfg.get("max_model_len"), cfg.get("max_num_batched_tokens")
    serve: dict[str, Any] = {"enable_chunked_prefill": False}
    if isinstance(mml, int) and isinstance(budget, int) and budget < mml:
        serve["max_num_batched_tokens"] = None  # vLLM refuses a budget below max_model_len with chunking off
    out = [Edit(serve=serve, why="chunked prefill off: a prompt is never split, so it cannot livelock")]
    if isinstance(mml, int):
        out.append(Edit(request={"truncate_prompt_tokens": mml - 1}, why="max_model_len - 1 tokens never livelock"))
    if POOLING_LIVELOCK.fixed_in is not None:
        out.append(Edit(upgrade=fmt(POOLING_LIVELOCK.fixed_in), why=POOLING_LIVELOCK.fixed_text))
    return out


def _stuck_waiting_edits(cfg: Mapping[str, Any]) -> list[Edit]:
    mml, budget = cfg.get("max_model_len"), cfg.get("max_num_batched_tokens")
    out: list[Edit] = []
    if isinstance(mml, int) and isinstance(budget, int) and budget < mml:
        out.append(Edit(serve={"max_num_batched_tokens": mml}, why="every prompt up to max_model_len is admissible"))
        out.append(Edit(request={"truncate_prompt_tokens": budget}, why="inputs no longer than the budget"))
    return out


POOLING_LIVELOCK = FailureMode(
    id="pooling-livelock",
    edits=_livelock_edits,
    title="Pooling request of exactly max_model_len tokens livelocks the scheduler (vllm#55427)",
    mechanism=(
        "The scheduler reserves one sampled-token slot per pooling request although pooling never samples. "
        "A prompt of exactly max_model_len tokens admitted as a partial chunk reaches max_model_len - 1 "
        "computed tokens and is then given 0 tokens every step: running 1, waiting 0, 0.0 tokens/s, "
        "/health 200, GPU idle; every later request queues behind it until the stuck one is aborted."
    ),
    # Read from every release's own scheduler (triage/vllm/knowledge, section "scheduler"): a hard `- 1` clamp
    # in 0.10.2 … 0.23.0 (`max_total_tokens - 1` in 0.11.1/0.11.2), `1 if not is_diffusion else 0` in
    # 0.24.0 … 0.31.0, the pooling exemption from 0.32.0 (tests/vllm/test_knowledge.py holds the range to it).
    # Real servers agree (tests/fixtures/real/matrix/: 0.10.2, 0.20.0, 0.28.0, 0.30.0, 0.31.0 hang on the same
    # 7 of 13 seed cases, 0.32.0 on none).
    affected=(VersionRange.of("0.10.2", "0.32.0"),),
    fixed_in=Version("0.32.0"),
    fix_ref="vllm#48039",
    refs=("vllm#55427", "vllm#48039", "vllm#47971", "vllm#24704", "vllm#29496", "vllm#31206"),
    evidence={
        "checklist": "runner pooling, chunked prefill on, an affected version, truncation to exactly "
        "max_model_len (or -1) and a budget that chunks that prompt",
        "probe": "[SHORT, LONG] with truncate_prompt_tokens = max_model_len never returns; /metrics shows "
        "running >= 1, no progress; max_model_len - 1 returns",
        "watch": "running >= 1 with no progress for the stall window",
        # issue 20, release matrix (tests/fixtures/real/matrix/0.10.2/): the same trigger, another shape
        "dropped": "0.10.2 and 0.11.0 (check_stop caps at max_model_len before it looks at pooling, read from "
        "vllm/v1/core/sched/utils.py): the request is finished as length-capped with no output, the client waits "
        "forever and the engine is idle: running 0, waiting 0, KV 0, no request_success; the stall rule cannot "
        "see it, the probe's deadline and the client's time-out do",
        "log": "'Running: N reqs, Waiting: 0 reqs' at 0.0 tokens/s, then silence (the line drops to DEBUG)",
        "fleet": "a replica's running gauge >= 1 with frozen progress counters for the stall window",
        # issue 25, measured (tests/fixtures/real/rerank/): the livelock is the pooling runner's, not the endpoint's
        "rerank": "/rerank (and /score) pairs truncated to max_model_len hang the same way: 0.31.0, tiny Qwen3 "
        "reranker with its overrides, max_model_len 256, budget 128, chunked prefill: [SHORT, LONG] documents with "
        "truncate_prompt_tokens 256 and -1 livelocked (verdict 2.6 s; abort freed it, next request 200 within "
        "0.4 s), 255 returned; 0.32.0 returned all three at once",
    },
    now="abort the oldest in-flight request (close its client connection): the engine frees at once.",
    fix_for=_livelock_fix,
    symptoms=(sy.HANG_RUNNING,),
    clues=ec.hang_clues(_livelock_affects, stall=False),
    experiment=(
        "the seed matrix: a prompt of exactly max_model_len tokens hangs and max_model_len - 1 returns on an "
        "affected server (it holds the engine until the probe aborts it: allow the hang), or the same on the lab "
        "twin of this release (python -m triage lab)"
    ),
    experiment_probe="seed",
)

POOLING_LIVELOCK_CLIENT_TIMEOUTS = FailureMode(
    id="pooling-livelock-client-timeouts",
    title="#55427 with client time-outs: short hangs that clients end and retries start again",
    mechanism=(
        "The vllm#55427 livelock, ended each time by the client instead of lasting: the client's time-out (the "
        "OpenAI SDK's, LangChain's, a proxy's idle cut) closes the connection, vLLM aborts the request and the "
        "engine is free again; the SDK's default retries (max_retries=2) resend the same exactly-max_model_len "
        "input, which hangs the engine again, and so does the next long document. /health stays green; "
        "other requests keep succeeding; the team sees sporadic time-outs, retries in the client logs and a "
        "p99 that jumps, not a hung server."
    ),
    affected=POOLING_LIVELOCK.affected,
    fixed_in=POOLING_LIVELOCK.fixed_in,
    fix_ref=POOLING_LIVELOCK.fix_ref,
    refs=POOLING_LIVELOCK.refs,
    evidence={
        "watch": "stall alerts that clear within seconds, again and again: each ended by a client abort, the next "
                 "one starting within the client's retry back-off",
        "log": "'Running: N reqs' lines with the KV cache usage held between bursts of normal traffic",
        "fleet": "short livelock episodes on one replica, each ended by the held request leaving (no request "
                 "finished for it), recurring",
        "client": "APITimeoutError after max_retries + 1 attempts; 'Retrying request to /embeddings' lines",
    },
    now=(
        "meanwhile, on the client: truncate to max_model_len - 1 tokens (truncate_prompt_tokens = max_model_len "
        "- 1, never -1 or max_model_len: that exact length is the trigger); set max_retries=0 for embedding "
        "calls (each retry of the same input hangs the engine again); keep the time-out short (seconds above "
        "your longest healthy request) so a hang frees the engine fast, and log the inputs that time out."
    ),
    fix_for=_livelock_fix,
    symptoms=(sy.HANG_RUNNING,),
    clues=(
        Clue("release", partial(ec.release, _livelock_affects, "#55427", shared=True)),
        Clue("recurring", partial(ec.recurring, for_=True)),
        Clue("prompt-below-max-model-len", partial(ec.prompt_below, for_=False)),
        Clue("chunked-prefill-off", ec.chunking_off),
    ),
    experiment=(
        "watch the server through its clients' traffic (python -m triage watch --url …): stall alerts that clear "
        "within seconds, each ended by a client abort, again and again"
    ),
)


@dataclass(frozen=True)
class LivelockGrade:
    """How bad #55427 is for a deployment where every other precondition holds (see pooling_livelock_grade)."""

    status: str  # a triage.findings.Status value: 'fail' | 'warn' (the catalogue sits below the findings)
    chunked_when: str  # when the exactly-max_model_len prompt gets chunked: "always" | "behind another" | "load"
    reason: str


def pooling_livelock_grade(budget: int, max_model_len: int) -> LivelockGrade:
    """The grading rule of POOLING_LIVELOCK, given runner pooling, chunked prefill on, an affected version and
    prompts of exactly max_model_len tokens: budget <= max_model_len is FAIL, budget > max_model_len is WARN.

    budget < max_model_len chunks the prompt on its own (0.31.0 lab: 128/256 of 256, and the CPU default
    2048 of 4096, hung every time). budget == max_model_len is the reported deployment (2048 = 2048 on a
    12 GiB card): any request ahead of the long one leaves it less than max_model_len, and under concurrent
    [SHORT, LONG] load it hung 2 of 2 (1 of 4 sequentially), so it is FAIL, not "timing-dependent".
    A larger budget chunks it only when in-flight tokens fill the budget: WARN.
    """
    if budget < max_model_len:
        return LivelockGrade(
            "fail", "always", f"budget {budget} < {max_model_len}: every such prompt is chunked and hangs"
        )
    if budget == max_model_len:
        return LivelockGrade(
            "fail",
            "behind another",
            f"budget {budget} = max_model_len {max_model_len}: any request scheduled with it leaves it a partial "
            "chunk, and under concurrent load it hangs every time",
        )
    return LivelockGrade(
        "warn",
        "load",
        f"budget {budget} > max_model_len {max_model_len}: it hangs only when in-flight tokens leave less than "
        f"{max_model_len} of the budget (under load)",
    )


def _stuck_waiting_fix(cfg: ConfigLike) -> str:
    return (
        "Make every prompt admissible: raise --max-num-batched-tokens to "
        + (f"at least {cfg.get('max_model_len')}" if isinstance(cfg.get("max_model_len"), int) else ">= max_model_len")
        + " (or drop the budget override: vLLM then uses max(max_model_len, default)), or lower --max-model-len to "
        "the budget, or truncate inputs below the budget; for encoder-only models (BERT) vLLM turns chunked prefill "
        "off, so --enable-chunked-prefill does not help. A prompt larger than the KV cache (vllm#39734) needs a "
        "bigger KV cache or a smaller max_model_len."
    )


STUCK_WAITING = FailureMode(
    id="stuck-waiting",
    edits=_stuck_waiting_edits,
    title="A request the scheduler can never admit waits forever",
    mechanism=(
        "Requests wait, none runs, nothing is computed: the head request can never be scheduled. With chunked "
        "prefill off (encoder-only models: 'Disabling chunked prefill for model without KVCache') a prompt "
        "longer than max_num_batched_tokens is never admitted; a prompt larger than the KV cache (vllm#39734) "
        "neither. Not #55427 (that one shows Running >= 1, Waiting 0); seen on 0.32.0 too."
    ),
    refs=("vllm#39734",),
    evidence={
        "checklist": "chunked prefill off and max_num_batched_tokens < max_model_len",
        "probe": "a prompt longer than the budget never returns; /metrics shows running 0, waiting >= 1",
        "watch": "waiting >= 1, running 0, no progress for the stall window",
        "log": "'Running: 0 reqs, Waiting: N reqs' at 0.0 tokens/s",
        "fleet": "a replica's waiting gauge >= 1, running 0, frozen progress counters",
    },
    now="abort the waiting request (close its client connection).",
    symptoms=(sy.WAITING_FOREVER,),
    clues=(Clue("budget-below-prompt", ec.budget_below_prompt),),
    experiment=(
        "read the engine's chunked prefill and budget (the start-up log's 'Disabling chunked prefill' and "
        "max_num_batched_tokens, or the checklist): off with a budget below the prompt is this"
    ),
    fix_for=_stuck_waiting_fix,
)

ENGINE_STALL = FailureMode(
    id="engine-stall",
    title="The engine made no progress with requests in flight, on a version without a known stall bug",
    mechanism=(
        "Running or waiting requests and no progress for the stall window, on a server whose version carries "
        "the fix for vllm#55427. A single very long step (a budget as large as the prompt on a slow device) "
        "looks the same to /metrics; a real hang needs its own report."
    ),
    evidence={
        "watch": "no progress for the stall window with requests in flight",
        "probe": "a request outlived the stall window",
        "log": "stats lines with requests in flight at 0.0 tokens/s",
    },
    now="look at the server's process CPU and GPU utilization: a busy engine is computing one long step.",
    symptoms=(sy.HANG_RUNNING,),
    experiment_probe="conformance",  # it reads GET /version and /v1/models: the release and max_model_len
    experiment=(
        "read the server's release and max_model_len: on a release with the fix of #55427, or for a prompt below "
        "max_model_len, it is not that bug; then look at the server process's CPU (busy: one long step; idle: "
        "report it to vLLM)"
    ),
    clues=ec.hang_clues(_livelock_affects, stall=True),
    fix_text=(
        "Compare the stall with the expected step time (prompt length / measured prefill rate); if the engine is "
        "idle, capture the request and the server log and report it to vLLM."
    ),
)

SLOW_STEP = FailureMode(
    id="slow-step",
    title="One long step in progress: the engine is computing a large prefill, not hung",
    mechanism=(
        "/metrics and the stats lines move only when a step ends: a step of tens of seconds (a large model, a "
        "budget as large as the prompt on a slow device) shows running >= 1 and no progress until it returns, "
        "then the tokens jump (issue 21: 30 s steps of a 1.1B model on this CPU box, never a stall)."
    ),
    evidence={
        "log": "'No available shared memory broadcast block found in N seconds' from vLLM's workers",
        "watch": "a step in progress: the running requests' KV hold without a finished chunk",
    },
    fix_text=(
        "Nothing hangs: give requests a time-out above the longest step (prompt tokens / prefill rate), or shorten "
        "steps with a smaller --max-num-batched-tokens (chunked prefill) or a faster device."
    ),
    symptoms=(sy.HANG_RUNNING, sy.SLOW_PROGRESSING),
    clues=(Clue("step-in-progress", partial(ec.step_in_progress, for_=True)),),
    experiment=(
        "watch the server at a 1 s interval through the stall (python -m triage watch --interval 1): a step in "
        "progress ends with the tokens jumping; or read the server log for vLLM's long-step lines"
    ),
)

def _kv_too_small_fix(g: ConfigLike) -> str:
    return (
        (f"Lower --max-model-len (vLLM estimates {g.get('est')} fits)" if g.get("est") else "Lower --max-model-len")
        + ", or give the KV cache more memory (--gpu-memory-utilization; on CPU --kv-cache-memory-bytes or "
        "VLLM_CPU_KVCACHE_SPACE), or shard the model (--tensor-parallel-size)."
    )


KV_CACHE_TOO_SMALL = FailureMode(
    id="kv-cache-too-small",
    title="Start-up refused: one max_model_len sequence does not fit the KV cache",
    mechanism="vLLM checks at start-up that one sequence of max_model_len tokens fits the KV cache.",
    refs=("vllm/v1/core/kv_cache_utils.py (0.8–0.32)",),
    evidence={"log": "'To serve at least one request with the model's max seq len (…) … KV cache is needed'"},
    fix_for=_kv_too_small_fix,
    symptoms=(sy.STARTUP_REFUSAL, sy.WAITING_FOREVER),
    clues=(
        Clue("logged", partial(ec.logged, "log-kv-cache-too-small", "the KV cache cannot hold max_model_len")),
        Clue("kv-below-prompt", ec.kv_below_prompt),
    ),
    experiment=(
        "read the start-up log's 'KV cache size: N tokens' beside max_model_len (and the waiting prompt's tokens): "
        "a prompt larger than the KV cache is never admitted"
    ),
)

UNSUPPORTED_HEAD_DIM = FailureMode(
    id="unsupported-head-dim",
    title="The attention backend does not support this model's head_dim",
    mechanism="The server may start and then fail on the first request with HTTP 500.",
    refs=("vllm/v1/attention/backends/cpu_attn.py get_supported_head_sizes (0.31/0.32)",),
    evidence={"log": "'Head size N is not supported' from the attention backend"},
    fix_text=(
        "Serve a model whose head_dim the backend supports (CPU: 32, 64, 80, 96, 112, 128, 160, 192, 224, "
        "256, 512), or pick another attention backend (VLLM_ATTENTION_BACKEND) on GPU."
    ),
    symptoms=(sy.STARTUP_REFUSAL, sy.REJECTED),
    clues=(Clue("logged", partial(ec.logged, "log-unsupported-head-dim", "the backend refuses the head size")),),
    experiment="read the server log for 'Head size N is not supported' and the model's head_dim (config.json)",
)

def _oom_fix(cfg: ConfigLike) -> str:
    limit = cfg.get("memory_limit")
    container = (
        f"The kernel killed the container at its memory limit ({limit}): host memory, not the GPU's. Raise the "
        "container's resources.limits.memory above what the server holds in host RAM (the weights while they "
        "load, on CPU the KV cache as well), or lower that. " if limit else "")
    return container + (
        "Lower --gpu-memory-utilization headroom use, --max-num-batched-tokens, --max-num-seqs or "
        "--max-model-len; on CPU set --kv-cache-memory-bytes / VLLM_CPU_KVCACHE_SPACE to what the host has. "
        "Raising max_num_batched_tokens to dodge #55427 OOMs small cards: prefer truncating to "
        "max_model_len − 1 or upgrading."
    )


OOM = FailureMode(
    id="oom",
    title="Out of memory",
    mechanism="An allocation failed: weights, KV cache and one step's activations must fit together.",
    refs=("vllm#55427 (report: 24576/65536 OOMed on 12 GiB)",),
    evidence={
        "log": "'CUDA out of memory' / 'OutOfMemoryError'",
        # issue 31: the kernel's OOM killer at the container's cgroup limit (host memory, not the GPU's)
        "kube": "a container terminated with reason OOMKilled, exit code 137 (`kubectl describe pod`'s Last State, "
        "or status.containerStatuses[].lastState.terminated of `kubectl get pod -o yaml`), beside its "
        "resources.limits.memory",
    },
    fix_for=_oom_fix,
    symptoms=(sy.STARTUP_REFUSAL, sy.REJECTED),
    clues=(Clue("logged", partial(ec.logged, "log-oom", "an allocation failed (out of memory)")),),
    experiment="read the server log for 'out of memory' / OutOfMemoryError above the first EngineCore error",
)

ENGINE_DEAD = FailureMode(
    id="engine-dead",
    title="EngineCore failed or died: every later request fails until a restart",
    mechanism="An EngineCore that failed or died does not recover: every later request fails.",
    refs=("vllm/v1/engine/exceptions.py EngineDeadError, core.py (0.8–0.32)",),
    evidence={"log": "'EngineCore failed to start' / 'EngineCore encountered an issue'", "probe": "HTTP 500/503"},
    fix_text=(
        "Read the stack trace above the first EngineCore error line for the root cause (often OOM or an "
        "unsupported head_dim), fix it, restart the server. /health answers 503 once the engine is dead."
    ),
    symptoms=(sy.STARTUP_REFUSAL, sy.REJECTED),
    clues=(
        Clue("dead", ec.dead_engine_logged),
        Clue("root-cause", ec.root_cause_logged),
        Clue("status", partial(ec.rejected_status, statuses=(500, 503))),
    ),
    experiment="read the server log above the first EngineCore error line for what made it fail; GET /health",
)

FLEET_UNJUDGED = FailureMode(
    id="fleet-unjudged",
    title="The fleet scan could not judge every replica",
    mechanism=(
        "The stall rule needs each replica's vLLM gauges and counters at every scrape: a Prometheus query that "
        "failed, a metric no replica carries, a replica Prometheus could not scrape, or a step coarser than the "
        "scrape interval leaves replicas (or stalls shorter than two steps) unjudged: no stall found there is "
        "not a clean bill."
    ),
    evidence={"fleet": "query errors, missing vLLM series, up == 0, a --step above the scrape interval"},
    fix_text=(
        "Check the Prometheus URL and the --match selector, that Prometheus scrapes every server's /metrics "
        "(`python -m triage check --url` on one), and leave --step out so it follows the scrape interval."
    ),
)

# Reported on one release each; their full range is not known, so the version check mentions them as
# related when the server is older than the livelock fix: (ref, seen on, what).
RELATED_REPORTS: tuple[tuple[str, str, str], ...] = (
    ("vllm#42381", "0.20.1", "deadlock after a validation error at max_model_len+1"),
    ("vllm#39734", "", "request larger than the KV cache but within max_model_len waits forever"),
    ("vllm#16334", "", "hangs with data parallel > 1"),
    ("vllm#25568", "", "crash with ~6000 inputs in one request"),
)

# every record: this module's, then triage/catalogue/vectors.py, vector_causes.py, startup.py (issue 14), rerank.py
# (issue 25), the client libraries' and features.py (issue 29), kubernetes.py (issue 31)
MODES: dict[str, FailureMode] = {m.id: m for m in (*modes_of(globals()), *VECTOR_MODES, *PIPELINE_MODES,
                                                    *STARTUP_MODES, *RERANK_MODES, *CLIENT_MODES, *FEATURE_MODES,
                                                    *KUBERNETES_MODES)}


def get(mode_id: str) -> FailureMode:
    return MODES[mode_id]


def mode_for_check(check_id: str) -> Optional[FailureMode]:
    """The failure mode a finding's check id reports, when it reports one (the first its declaration names)."""
    mid = primary_mode(check_id)
    return MODES[mid] if mid else None


def mode_of(finding: Any) -> Optional[FailureMode]:
    """The record a finding reports: a ``Finding``'s ``failure_mode``; for a finding's dict (a document written
    before the field existed) its own, else the one its check id is declared with."""
    if isinstance(finding, Mapping):
        named = finding["failure_mode"] if "failure_mode" in finding else written_before(
            str(finding.get("check")), finding.get("evidence"))
    else:
        named = finding.failure_mode
    return MODES.get(named) if named else None


def explain_stall(kind: Optional[str], version: Any = None) -> FailureMode:
    """Which mode a measured stall is: #55427 only where the version can have it.

    A livelock-shaped stall on a version that carries the fix is `ENGINE_STALL`, never #55427; an
    unknown version keeps #55427 as the suspect (the verdict says the version is unknown).
    """
    if kind == STUCK_WAITING_KIND:
        return STUCK_WAITING
    if kind == LIVELOCK and POOLING_LIVELOCK.affects(version) is not False:
        return POOLING_LIVELOCK
    return ENGINE_STALL


def explain_episodes(kind: Optional[str], version: Any, recurring: bool) -> FailureMode:
    """A series of stall episodes: #55427 *with client time-outs* when they recur, each ended by a client
    abort, on a version that can have #55427; else what one of them is (`explain_stall`)."""
    mode = explain_stall(kind, version)
    return POOLING_LIVELOCK_CLIENT_TIMEOUTS if recurring and mode is POOLING_LIVELOCK else mode
