"""Which recording proves each record's evidence reader: record id -> the fixtures its readers' tests replay.

One place for the mapping docs/FAILURE-MODES.md shows (``python -m triage catalogue --markdown``). A path is
relative to the repository root; ``test`` is the test file that replays it, so a reader of the table can run it.
``kind`` says how honest the proof is: ``real`` (a real server's output, as recorded), ``edited`` (a real
recording the test changes, ``note`` says how), ``source`` (rendered from a release's source, where a lab server
cannot show it), ``built`` (the test builds the input; no recording). A record with no entry has no recorded
proof yet, and the table says so. tests/catalogue/test_coverage.py checks that every path and test exists and
that the test names the recording.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["real", "edited", "source", "built"]
_REAL = "tests/fixtures/real/"


@dataclass(frozen=True)
class Recording:
    path: str
    test: str
    kind: Kind = "real"
    note: str = ""


def _r(path: str, test: str, kind: Kind = "real", note: str = "") -> Recording:
    return Recording(path if path.startswith("tests/") else _REAL + path, test, kind, note)


_LEAKY = "vectors/0.32.0-tiny-qwen3-st-dense-leaky-st-dense-leaky/"
RECORDINGS: dict[str, tuple[Recording, ...]] = {
    "pooling-livelock": (
        _r("0.31.0-tiny-qwen3-livelock/metrics-livelock-9s.txt", "tests/test_stall.py"),
        _r("probes/livelock-031-short-long-t256.json", "tests/probes/test_seed.py"),
        _r("logs/0.31.0-tiny-qwen3-livelock-livelock-031.log", "tests/logs/real_logs.py"),
        _r("rerank/0.31.0-rerank/probe-rerank-seed.json", "tests/probes/test_rerank_findings.py"),
    ),
    "pooling-livelock-client-timeouts": (
        _r("client-timeouts/0.31.0-tiny-qwen3-livelock/server.log", "tests/logs/test_client_timeouts.py"),
        _r("client-timeouts/0.31.0-tiny-qwen3-livelock/metrics.jsonl", "tests/fleet/test_fleet_tsdb.py"),
    ),
    "stuck-waiting": (
        _r("0.32.0-minilm-bert-waiting/metrics-stuck-waiting-4s.txt", "tests/test_stall.py"),
        _r("logs/0.32.0-minilm-bert-waiting-waiting-bert.log", "tests/logs/real_logs.py"),
    ),
    "slow-step": (_r("slow-steps/0.32.0-big-qwen3/metrics.jsonl", "tests/test_slow_steps.py"),),
    "kv-cache-too-small": (_r("logs/0.32.0-tiny-qwen3-kv-too-small.log", "tests/logs/real_logs.py"),),
    "unsupported-head-dim": (_r("logs/0.32.0-tiny-qwen3-head-dim-16.log", "tests/logs/test_analyze.py"),),
    "engine-dead": (_r("logs/0.32.0-tiny-qwen3-startup-killed.log", "tests/logs/test_analyze.py"),),
    "client-token-ids": (
        _r("vectors/0.32.0-tiny-qwen3-bigvocab-defaults/vectors.json", "tests/probes/test_client_libraries.py"),),
    "pooling-mismatch": (
        _r("vectors/0.32.0-tiny-qwen3-pooling-mean/vectors.json", "tests/probes/test_vectors.py"),),
    "st-dense-not-applied": (  # issue 29: a Dense activation vLLM's loader does not know, the projection dropped
        _r(_LEAKY + "vectors.json", "tests/probes/test_vector_causes.py"),
        _r(_LEAKY + "server.log", "tests/probes/test_vector_causes.py"),
    ),
    "causal-attention-mismatch": (
        _r("vectors/0.32.0-tiny-qwen2-bidir-bidir-causal/vectors.json", "tests/probes/test_vector_causes.py"),
        _r("vectors/0.32.0-tiny-qwen2-bidir-bidir-causal/server.log", "tests/probes/test_vector_causes.py"),
    ),
    "pooler-normalize-off": (
        _r("vectors/0.32.0-tiny-qwen3-normalize-off/vectors.json", "tests/probes/test_vector_causes.py"),
        _r("vectors/0.32.0-tiny-qwen3-normalize-off/server.log", "tests/probes/test_vector_causes.py"),
    ),
    "nan-vectors": (_r("tests/probes/test_vectors.py", "tests/probes/test_vectors.py", "built",
                       "a body with a NaN and vLLM's out-of-range error message, built in the test"),),
    "missing-eos": (_r("vectors/0.32.0-tiny-qwen3-livelock/vectors.json", "tests/probes/test_vectors.py", "edited",
                       "the recorded /tokenize answer with its last (EOS) token cut"),),
    "dimensions-not-matryoshka": (
        _r("vectors/0.32.0-tiny-qwen3-livelock/vectors.json", "tests/probes/test_vectors.py", "edited",
           "the recorded `dimensions` answers judged against another declared dimension"),),
    "base64-truncated": (
        _r("vectors/0.32.0-tiny-qwen3-livelock/vectors.json", "tests/probes/test_client_libraries.py", "edited",
           "the OpenAI SDK's recorded base64 vectors cut to a quarter"),),
    "openwebui-misconfig": (_r("vectors/0.32.0-tiny-qwen3-apikey/openwebui-401.json",
                               "tests/probes/test_client_libraries.py"),),
    "litellm-encoding-format-null": (
        _r("clients/0.32.0-tiny-qwen3-livelock/routes-litellm-1.83.14.json", "tests/probes/test_clients_routes.py"),),
    "llamaindex-openai-model-name": (
        _r("clients/0.32.0-tiny-qwen3-livelock/routes-litellm-1.110.2.json", "tests/probes/test_clients_routes.py"),),
    "removed-flag": (
        _r("startup/0.31.0-task-embed/server.log", "tests/logs/test_startup_modes.py"),
        _r("startup/0.32.0-task-embed/server.log", "tests/logs/test_startup_modes.py"),
        _r("startup/0.31.0-override-pooler-config/server.log", "tests/logs/test_startup_modes.py"),
        _r("startup/0.31.0-pooler-normalize/server.log", "tests/logs/test_startup_modes.py"),
    ),
    "generate-runner": (_r("startup/0.31.0-generate-runner/server.log", "tests/logs/test_startup_modes.py"),),
    "max-model-len-vs-model": (
        _r("startup/0.31.0-max-model-len-too-big/server.log", "tests/logs/test_startup_modes.py"),),
    "gpu-memory-shared": (
        _r("tests/fixtures/nvml/h200-shared-gpu.json", "tests/logs/test_startup_modes.py"),
        _r("startup/0.31.0-max-model-len-too-big/server.log", "tests/logs/test_startup_modes.py", "edited",
           "a real start-up log with vLLM's shared-GPU refusal line (from its source) appended"),
    ),
    "startup-oom": (
        _r("startup/0.31.0-max-model-len-too-big/server.log", "tests/logs/test_startup_modes.py", "edited",
           "a real start-up log with a CUDA out-of-memory line appended"),),
    "pooling-overrides": (
        _r("logs/0.32.0-minilm-bert-waiting-waiting-bert.log", "tests/logs/test_startup_modes.py"),
        _r("startup/0.31.0-mean-pooling-chunked/server.log", "tests/logs/test_startup_modes.py"),
    ),
    "log-stats-disabled": (_r("startup/0.31.0-disable-log-stats/server.log", "tests/logs/test_startup_modes.py"),),
    "throughput-bottleneck": (_r("throughput/0.31.0-tiny-qwen3/probe.json", "tests/probes/test_throughput.py"),),
    "kv-cache-dtype-mismatch": (
        _r("tests/fixtures/source/0.33.0-refusals/kv-dtype.log", "tests/catalogue/test_refusals_033.py", "source"),),
    "mrv2-pooling-task": (
        _r("tests/fixtures/source/0.33.0-refusals/mrv2-pooling.log", "tests/catalogue/test_refusals_033.py",
           "source"),),
    "reranker-overrides-missing": (
        _r("rerank/0.32.0-rerank-no-overrides/probe-rerank.json", "tests/probes/test_rerank_findings.py"),
        _r("rerank/0.32.0-rerank-no-overrides/server.log", "tests/logs/test_rerank_log.py"),
    ),
    "classify-without-score-head": (
        _r("rerank/0.32.0-rerank-convert-classify/classify.json", "tests/probes/test_rerank_findings.py"),
        _r("rerank/0.32.0-rerank-convert-classify/server.log", "tests/logs/test_rerank_log.py"),
    ),
    "rerank-api-contract": (_r("rerank/0.32.0-rerank/rerank-top-n.json", "tests/probes/test_rerank_findings.py"),),
    "rerank-long-document": (_r("rerank/0.32.0-rerank/rerank-long.json", "tests/probes/test_rerank_findings.py"),),
    "reranker-template-missing": (_r("rerank/0.32.0-rerank/server.log", "tests/checks/test_rerank.py"),),
    "openwebui-reranker-misconfig": (
        _r("rerank/0.32.0-rerank/openwebui-base-url.json", "tests/probes/test_openwebui_rerank.py"),),
    "rerank-scores-flat": (  # issue 29: the overrides given, a zero score head
        _r("rerank/0.32.0-rerank-flat/ranking-0-false.json", "tests/probes/test_rerank_semantics.py"),
        _r("rerank/0.32.0-rerank-flat/server.log", "tests/checks/test_rerank.py"),
    ),
    "scores-are-logits": (
        _r("rerank/0.32.0-classify-logits/classify-default.json", "tests/probes/test_classify.py"),
        _r("rerank/0.32.0-classify-logits/probe-classify.json", "tests/probes/test_classify.py"),
    ),
    # issue 29's server features (tests/fixtures/real/startup/README.md)
    "encoder-prefix-caching": (
        _r("startup/0.31.0-encoder-prefix-caching/server.log", "tests/catalogue/test_features.py"),
        _r("startup/0.32.0-encoder-prefix-caching/server.log", "tests/catalogue/test_features.py"),
    ),
    "chunked-processing-limit": (
        _r("startup/0.31.0-chunked-processing/embed-over-max-embed-len.json", "tests/catalogue/test_features.py"),
        _r("startup/0.32.0-chunked-processing/embed-over-max-model-len.json", "tests/catalogue/test_features.py"),
    ),
    "bge-m3-multi-vector": (
        _r("startup/0.32.0-bge-m3-m3/pooling-token_embed.json", "tests/catalogue/test_features.py"),
        _r("startup/0.32.0-bge-m3-m3-task-embed/embed.json", "tests/catalogue/test_features.py"),
    ),
}


def recordings(mode_id: str) -> tuple[Recording, ...]:
    return RECORDINGS.get(mode_id, ())
