"""Every check id, declared once: which checklist step shows it, which failure mode it reports, its sources.

The step table (``triage.steps``), each record's finding list (``FailureMode.findings``), a finding's default
failure mode (``Finding.failure_mode``) and the reports' grouping all derive from ``CHECKS``. An id built
anywhere but not declared here fails the test session (tests/declared_checks.py). Plain data: this module
imports nothing but the symptom names (plain data too), so ``triage.findings`` can read it.

``modes`` lists the records an id can report ('' among them: some of its findings report none); an id with
exactly one reports it unless its builder says otherwise. An id with several (a stall: the pooling livelock,
a stall on a fixed version, a request that waits forever) is given its mode by its builder (a stall's through
``triage.catalogue.word_stall``, version-gated), never guessed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from triage.catalogue.symptoms import SYMPTOMS  # plain data too (it imports only typing)

CHECKLIST, PROBE, WATCH, LOG, FLEET = "checklist", "probe", "watch", "log", "fleet"
STALL_MODES = ("pooling-livelock", "engine-stall", "stuck-waiting")  # explain_stall's answers


@dataclass(frozen=True)
class CheckDecl:
    """One check id: its checklist step (None outside the checklist), the records it reports, where it is built."""

    id: str
    step: Optional[str]
    modes: tuple[str, ...]
    sources: tuple[str, ...]

    @property
    def mode(self) -> str:
        """The record a finding of this id reports when its builder names none ('' for none or several)."""
        return self.modes[0] if len(self.modes) == 1 else ""


def _ids(step: Optional[str], modes: tuple[str, ...] | str, sources: tuple[str, ...] | str,
         *ids: str) -> list[CheckDecl]:
    """Declare ``ids`` alike: ``modes`` one record id ('' for none) or several, ``sources`` one or several."""
    m = modes if isinstance(modes, tuple) else ((modes,) if modes else ())
    s = sources if isinstance(sources, tuple) else (sources,)
    return [CheckDecl(i, step, m, s) for i in ids]


_DECLS: list[CheckDecl] = [
    # the checklist (triage/checklist.py, triage/sources/server*.py, checks/*.py)
    *_ids("server", "", CHECKLIST, "server-reachable", "server-auth", "server-api-prefix", "server-is-vllm",
          "server-health", "server-model", "server-embeddings", "server-answer", "server-response",
          "metrics-parse", "metrics-page"),
    *_ids("version", "", CHECKLIST, "vllm-version"),
    *_ids("backend", "", CHECKLIST, "backend"),
    # a KV cache below max_model_len (stuck-waiting), a plan that does not fit one max-length sequence
    *_ids("gpu-memory", ("", "stuck-waiting", "kv-cache-too-small"), CHECKLIST, "gpu-memory"),
    *_ids("gpu-memory", "gpu-memory-shared", CHECKLIST, "gpu-memory-shared"),
    *_ids("flags", "remote-code-not-needed", CHECKLIST, "flags-trust-remote-code"),
    *_ids("flags", "", CHECKLIST, "flags", "flags-unknown", "flags-unknown-command",
          "config-conflict", "evidence", "checklist"),  # checklist: a run that did not finish (triage/cli/check.py)
    *_ids("flags", "removed-flag", CHECKLIST, "flags-removed"),
    *_ids("flags", ("generate-runner", "architecture-unsupported"), CHECKLIST, "flags-runner"),
    *_ids("flags", ("startup-oom", "gpu-memory-shared"), CHECKLIST, "flags-oom-risk"),
    *_ids("flags", "log-stats-disabled", CHECKLIST, "flags-log-stats"),
    *_ids("flags", "kv-cache-dtype-mismatch", CHECKLIST, "flags-kv-cache-dtype"),
    *_ids("flags", "encoder-prefix-caching", CHECKLIST, "flags-encoder-prefix-caching"),
    *_ids("flags", "chunked-processing-limit", CHECKLIST, "flags-chunked-processing"),
    *_ids("flags", "bge-m3-multi-vector", CHECKLIST, "flags-bge-m3-task"),
    *_ids("chunked-prefill", "", CHECKLIST, "chunked-prefill"),
    *_ids("chunked-prefill", "stuck-waiting", CHECKLIST, "budget-below-max-model-len"),
    # the client's truncation: exactly max_model_len is the livelock's risk, above it (or none) a 400 (issue 44)
    *_ids("truncation", ("pooling-livelock", "truncation-rejected"), CHECKLIST, "truncate-vs-max-model-len"),
    *_ids("truncation", "pooling-livelock", CHECKLIST, "pooling-livelock-risk"),
    *_ids("flags", "reranker-overrides-missing", CHECKLIST, "rerank-deployment"),
    *_ids("flags", "classify-without-score-head", CHECKLIST, "rerank-convert-classify"),
    *_ids("flags", "scores-are-logits", CHECKLIST, "scores-activation"),
    # issue 42: a reranker family served as something else (checks/rerank.py; the log post-mortem asks the same rule
    # over a log's start-up config): read from the config, so a risk that shows no symptom (differential._predicted)
    *_ids("flags", "reranker-overrides-partial", CHECKLIST, "rerank-overrides-partial"),
    *_ids("flags", "reranker-label-tokens", CHECKLIST, "rerank-label-tokens"),
    *_ids("flags", "cross-encoder-served-as-embedder", CHECKLIST, "rerank-served-as-embedder"),
    *_ids("flags", "reranker-family-conflict", CHECKLIST, "rerank-family-conflict"),
    *_ids("flags", "reranker-remote-code", CHECKLIST, "rerank-remote-code"),
    *_ids("flags", "mxbai-rerank-calibration", CHECKLIST, "rerank-logit-bias"),
    # Kubernetes (issue 31): the liveness probe (checks/liveness.py), the pod's view (triage/sources/kube.py)
    *_ids("flags", "liveness-probe-blind", CHECKLIST, "kube-liveness-blind"),
    *_ids("gpu-memory", "oom", CHECKLIST, "kube-oomkilled"),
    *_ids("server", "probe-kills", CHECKLIST, "kube-probe-failures"),
    # probes (triage/probes/)
    *_ids(None, ("", "no-recovery-after-abort"), PROBE, "probe-recovery"),  # a pass reports none
    *_ids(None, ("", "embeddings-route-refused"), PROBE, "conformance-v1-prefix"),
    *_ids(None, "", PROBE, "probe-target", "probe-setup", "clients-plain", "clients-routes",
          "conformance-openai-server", "conformance-array-input", "conformance-token-ids",
          "conformance-index-order", "conformance-base64", "conformance-dimension-norm", "conformance-determinism",
          "conformance-usage-tokens", "conformance-overlong-400", "conformance-truncate-too-big-400",
          "conformance-dimensions", "conformance-normalize-removed", "conformance-query-instruction",
          "conformance-chunked-prefill-shapes", "conformance-batching-flags", "conformance-native-architecture",
          "conformance-kv-cache-sizing"),
    *_ids(None, STALL_MODES, PROBE, "probe-livelock"),
    *_ids(None, STALL_MODES, PROBE, "probe-matrix"),  # the stall its hangs are, else the livelock it looked for
    *_ids(None, "stuck-waiting", PROBE, "probe-stuck-waiting"),
    *_ids(None, "throughput-bottleneck", PROBE, "throughput", "throughput-bottleneck"),
    *_ids(None, "pooling-mismatch", PROBE, "vectors-model-pooling"),
    *_ids(None, ("pooling-mismatch", "st-dense-not-applied", "causal-attention-mismatch"), PROBE, "vectors-reference"),
    *_ids(None, ("pooling-mismatch", "pooler-normalize-off"), PROBE, "vectors-norm"),
    *_ids(None, "nan-vectors", PROBE, "vectors-finite"),
    *_ids(None, "missing-eos", PROBE, "vectors-eos"),
    *_ids(None, ("dimensions-not-matryoshka", "st-dense-not-applied"), PROBE, "vectors-dimension"),
    *_ids(None, "unstable-vectors", PROBE, "vectors-repeat", "vectors-batch-invariance", "vectors-long-repeat",
          "vectors-ranking"),
    *_ids(None, "client-token-ids", PROBE, "clients-langchain-defaults", "clients-langchain-no-ctx-check",
          "clients-langchain-query"),
    *_ids(None, "base64-truncated", PROBE, "clients-openai-base64", "clients-openai-float", "clients-openai-default"),
    # LiteLLM's and LlamaIndex's routes: the builder names the record the call's facts single out (its clues)
    *_ids(None, ("litellm-encoding-format-null", "base64-truncated", ""), PROBE, "clients-litellm",
          "clients-litellm-openai", "clients-litellm-openai-float"),
    *_ids(None, ("llamaindex-openai-model-name", "base64-truncated", ""), PROBE, "clients-llamaindex-default",
          "clients-llamaindex-model", "clients-llamaindex-model-name", "clients-llamaindex-openai-like",
          "clients-llamaindex-query"),
    *_ids(None, "openwebui-misconfig", PROBE, "clients-openwebui"),
    *_ids(None, ("rerank-api-contract", "classify-without-score-head", ""), PROBE, "rerank-paths"),  # "": a classifier
    *_ids(None, "rerank-api-contract", PROBE, "rerank-shape", "rerank-top-n", "score-shape", "rerank-client-cohere",
          "rerank-client-langchain", "rerank-client-langchain-max-tokens"),
    *_ids(None, ("reranker-overrides-missing", "cross-encoder-served-as-embedder"), PROBE, "rerank-served-task"),
    *_ids(None, ("reranker-overrides-missing", "rerank-scores-flat", "reranker-template-missing", ""), PROBE,
          "rerank-ranking"),  # the record the evidence singles out (triage/probes/rerank_findings.ranking_cause)
    *_ids(None, "scores-are-logits", PROBE, "rerank-activation"),
    *_ids(None, ("scores-are-logits", ""), PROBE, "classify-semantics"),  # "": not a classifier (no /classify)
    *_ids(None, "rerank-long-document", PROBE, "rerank-long-document"),
    *_ids("flags", "reranker-template-missing", (PROBE, CHECKLIST, LOG), "rerank-template"),
    *_ids(None, "openwebui-reranker-misconfig", PROBE, "rerank-client-openwebui"),
    # the lab twin (triage/twin/reproduce.py): the builder names the record it reproduced or verified
    *_ids(None, (*STALL_MODES, "pooling-mismatch", "encoder-prefix-caching", "reranker-overrides-missing"), PROBE,
          "twin-fix"),
    # "": the twin could not run (an option it refuses, a start that failed) — an ERROR naming no record
    *_ids(None, (*STALL_MODES, "pooling-mismatch", "encoder-prefix-caching", "reranker-overrides-missing", ""), PROBE,
          "twin-reproduce"),
    *_ids(None, "", PROBE, "verify-fix"),  # verify --run N (triage/twin/verify.py): the before/after pair
    # watch (triage/watch.py)
    *_ids(None, STALL_MODES, WATCH, "watch-engine-stalled"),
    *_ids(None, "pooling-livelock-client-timeouts", WATCH, "watch-episodes-recurring"),
    # the log post-mortem (triage/logs/)
    *_ids(None, "", LOG, "log-engine-stats", "log-server-start", "log-long-step", "log-livelock-prone-config"),
    *_ids(None, "server-errors", LOG, "log-http-5xx"),
    *_ids(None, "request-refused", LOG, "log-http-4xx"),
    *_ids(None, "bad-arguments", LOG, "log-bad-arguments"),
    *_ids(None, STALL_MODES, LOG, "log-livelock-suspect"),
    *_ids(None, "stuck-waiting", LOG, "log-stuck-waiting"),
    *_ids(None, "pooling-livelock-client-timeouts", LOG, "log-episodes-recurring"),
    *_ids(None, "kv-cache-too-small", LOG, "log-kv-cache-too-small"),
    *_ids(None, "unsupported-head-dim", LOG, "log-unsupported-head-dim"),
    *_ids(None, "oom", LOG, "log-oom"),
    *_ids(None, "engine-dead", LOG, "log-engine-dead"),
    *_ids(None, "architecture-unsupported", LOG, "log-architecture-unsupported", "log-task-unsupported"),
    # tracebacks and pasted client errors (issue 42; triage/logs/crash_findings.py names the record it matched)
    *_ids(None, ("", "engine-dead", "pooling-chunked-prefill-keyerror", "pooling-chunked-prefill-race",
                 "transformers-fallback-cannot-pool", "generate-runner", "v0-engine-forced", "gpu-memory-shared",
                 "architecture-unsupported"), LOG,
          "log-traceback"),
    *_ids(None, ("", "rerank-api-unsupported", "rerank-model-field-required", "wrapper-vllm-method-removed",
                 "model-name-not-served", "litellm-encoding-format-null", "embeddings-api-unsupported",
                 "reranker-overrides-missing", "route-not-found", "client-result-none",
                 "vector-store-dimension-mismatch", "removed-flag", "rerank-api-contract",
                 "http-upgrade-unsupported", "base64-old-release", "vllm-request-field-missing",
                 "client-token-ids", "generate-runner", "architecture-unsupported", "gateway-own-error",
                 "rerank-usage-total-only", "unstable-vectors"), LOG, "log-client-error"),
    *_ids(None, "removed-flag", LOG, "log-removed-flag"),
    *_ids(None, "pooling-mismatch", LOG, "log-model-files"),
    *_ids(None, "generate-runner", LOG, "log-generate-runner", "log-embedding-mode-off",
          "log-pooling-call-on-generator"),
    *_ids(None, "max-model-len-vs-model", LOG, "log-max-model-len"),
    *_ids(None, ("max-model-len-vs-model", "chunked-processing-limit", "rerank-long-document"), LOG,
          "log-max-context-length"),
    *_ids(None, "gpu-memory-shared", LOG, "log-gpu-memory-shared"),
    *_ids(None, "pooling-overrides", LOG, "log-pooling-overrides"),
    *_ids(None, "dtype-fallback", LOG, "log-dtype"),
    *_ids(None, "startup-oom", LOG, "log-startup-oom"),
    *_ids(None, "log-stats-disabled", LOG, "log-stats-disabled"),
    *_ids(None, "kv-cache-dtype-mismatch", LOG, "log-kv-cache-dtype"),
    *_ids(None, "mrv2-pooling-task", LOG, "log-mrv2-pooling"),
    *_ids(None, "dimensions-not-matryoshka", LOG, "log-matryoshka"),
    *_ids(None, "encoder-prefix-caching", LOG, "log-encoder-prefix-caching"),
    # the fleet scan (triage/fleet/scan.py)
    *_ids(None, "fleet-unjudged", FLEET, "fleet-prometheus", "fleet-metric-missing", "fleet-replica-unscraped",
          "fleet-step-coarse"),
    *_ids(None, "pooling-livelock", FLEET, "fleet-replicas-clean"),  # no stall: the record it looked for
    *_ids(None, STALL_MODES, FLEET, "fleet-replica-stalled"),
    *_ids(None, "pooling-livelock-client-timeouts", FLEET, "fleet-episodes-recurring"),
    # the differential (triage/differential.py): one per symptom; the record it names is its builder's ('' for
    # "one of"), so no mode is declared here
    *_ids(None, "", (PROBE, CHECKLIST, LOG), *(f"diagnosis-{s}" for s in SYMPTOMS)),
]

# CrashLoopBackOff reports what the crashed container's log post-mortem names (triage/sources/kube.py): any record
# a log finding reports, or none (the log was not given, or names no cause)
_DECLS += _ids("server", ("", *dict.fromkeys(m for d in _DECLS if LOG in d.sources for m in d.modes if m)), CHECKLIST,
               "kube-crashloop")

CHECKS: dict[str, CheckDecl] = {d.id: d for d in _DECLS}
assert len(CHECKS) == len(_DECLS), "a check id declared twice"


def declared(check_id: str) -> Optional[CheckDecl]:
    return CHECKS.get(check_id)


def default_mode(check_id: str) -> str:
    """The record a finding of ``check_id`` reports when its builder names none ('' when none or undecided)."""
    d = CHECKS.get(check_id)
    return d.mode if d is not None else ""


def primary_mode(check_id: str) -> str:
    """The first record an id reports (a record's finding list; '' for none)."""
    d = CHECKS.get(check_id)
    return d.modes[0] if d is not None and d.modes else ""


def written_before(check_id: str, evidence: object) -> str:
    """The record of a finding stored or exported before findings carried one: what its evidence named
    (``failure_mode``, or ``mode`` as watch and fleet wrote it), else the first its id is declared with."""
    named = (evidence.get("failure_mode") or evidence.get("mode")) if isinstance(evidence, dict) else None
    return named if isinstance(named, str) and named else primary_mode(check_id)


def findings_of(mode_id: str) -> tuple[str, ...]:
    """The ids whose first record is ``mode_id``, in declaration order."""
    return tuple(d.id for d in _DECLS if d.modes and d.modes[0] == mode_id)


def step_table() -> dict[str, str]:
    """check id -> checklist step, for the ids the checklist shows."""
    return {d.id: d.step for d in _DECLS if d.step}
