"""The post-mortem's fast paths (substring gates before the start-up and error patterns, the fused record and
access regexes) change nothing: every recorded log and a log of every known pattern's text give the same
analysis with the fast paths on and with them forced off (every pattern run on every line, step-by-step framing).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.logs.real_logs import REAL
from triage.logs import analyze, lines, startup
from triage.logs import analyze_log
from triage.logs.lines import iter_records

NEVER = re.compile(r"(?!)")
RECORDED = sorted(REAL.rglob("*.log"))

_TEXTS = [
    "To serve at least one request with the model's max seq len (256), (0.5 GiB KV cache is needed, which is "
    "larger than the available KV cache memory (0.1 GiB). Based on the available memory, the estimated maximum "
    "model length is 96",
    "Unsupported CPU attention configuration: head_dim=80",
    "Unexpected head dim size",
    "invalid head_size",
    "expect head_dim to be multiples of 32",
    "Head size 80 is not supported",
    "head_size not supported",
    "torch.OutOfMemoryError: boom",
    "OutOfMemoryError",
    "CUDA out of memory. Tried to allocate",
    "HIP out of memory",
    "RuntimeError: Out Of Memory",
    "Cannot allocate memory",
    "Available memory 1 GiB is less than desired CPU memory utilization",
    "oom-kill event",
    "Out of memory: Killed process 12",
    "EngineCore encountered an issue",
    "EngineCore encountered a fatal error",
    "Engine core proc EngineCore_0 died unexpectedly",
    "vllm.v1.engine.exceptions.EngineDeadError: x",
    "EngineCore failed to start.",
    "Engine core initialization failed. See root cause above.",
    "[shutdown] EngineCore: trigger received signal=SIGTERM",
    "vllm: error: unrecognized arguments: --task embed",
    "vllm: error: argument --max-model-len: invalid int value: 'x'",
    "Hint: --task is not a vllm serve option",
    "Parameter `normalize` was removed; use `use_activation` instead",
    "User-specified max_model_len (9000) is greater than the derived max_model_len (max_position_embeddings=512",
    "Changing max_model_len from 8192 to 512",
    "This model's maximum context length is 512 tokens",
    "Model does not support matryoshka representation",
    "Free memory on device cuda:0 (1.0/24.0 GiB) on startup is less than desired GPU memory utilization "
    "(0.9, 21.6 GiB)",
    "Only 'last' pooling supports chunked prefill and prefix caching; disabling both.",
    "Pooling models do not support full cudagraphs. Overriding cudagraph_mode to PIECEWISE",
    "Disabling prefix caching: model has non-causal attention layers",
    "This model does not officially support chunked prefill",
    "Disabling chunked prefill for model without KVCache",
    "Falling back to torch.float16",
    "Bfloat16 is only supported on GPUs with compute capability of at least 8.0",
    "Downcasting torch.float32 to torch.bfloat16.",
    "non-default args: {'model': 'm', 'max_model_len': 512, 'api_key': 'x'}",
    "Initializing a V1 LLM engine (v0.31.0) with config: model='m', dtype=torch.float32, max_seq_len=512, "
    "device_config=cpu, enable_prefix_caching=False, enable_chunked_prefill=True",
    "vLLM API server version 0.8.5",
    "  \u2588\u2584\u2588\u2580 \u2588     \u2588  version 0.31.0",
    "Using max model len 512",
    "Chunked prefill is enabled with max_num_batched_tokens=128.",
    "Resolved pooling config: pooling_type=MEAN",
    "CPU KV cache size: 1,024 tokens",
    "Supported tasks: ['embed', 'token_embed']",
    "Starting vLLM server on http://127.0.0.1:1234",
    "Application startup complete.",
    'Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 1 reqs, '
    "Waiting: 0 reqs, CPU KV cache usage: 0.2%, Prefix cache hit rate: 0.0%",
]


def _every_pattern_log() -> str:
    out = []
    for i, t in enumerate(_TEXTS):
        s = i % 60
        out += [
            f"(APIServer pid=1) ERROR 11-29 21:00:{s:02d} [x.py:1] {t}",
            f"(EngineCore pid=2) INFO 11-29 21:01:{s:02d} [core.py:9] {t}",
            t,
            f"2026-11-29T21:02:{s:02d}.123Z (APIServer pid=1) WARNING 11-29 21:02:{s:02d} [x.py:2] {t}",
            f"\x1b[1;36m(APIServer pid=1)\x1b[0m INFO 11-29 21:03:{s:02d} [x.py:3] {t}",
            f"INFO:     127.0.0.1:{1000 + i} - \"POST /v1/embeddings?x={i} HTTP/1.1\" 200 OK",
            f"(APIServer pid=1) INFO:     127.0.0.1:{1000 + i} - \"GET /health HTTP/1.1\" 200 OK",
            f"INFO: - \"GET /x{i} HTTP/1.1\" 404 Not Found",
            f"INFO:  - - \"GET /y{i} HTTP/1.1\" 200 OK",
        ]
    return "\n".join(out) + "\n"


def _slow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(startup, "_has_config_marker", lambda msg: True)
    monkeypatch.setattr(startup, "_has_event_hint", lambda msg: True)
    monkeypatch.setattr(lines, "FAST_RECORD_RE", NEVER)
    monkeypatch.setattr(analyze, "FAST_RECORD_RE", NEVER)
    monkeypatch.setattr(startup.StartupConfigReader, "reads", lambda self, msg: True)
    monkeypatch.setattr(
        startup,
        "_EVENT_RULES_MARKED",
        tuple((c, tuple((None, rx) for rx in rxs)) for c, rxs in startup._EVENT_RULES),
    )
    # the access prefilter itself (_FAST_ACCESS_RE: what `ACCESS_RE.search` after `INFO:` finds) stays: it counts
    # `INFO: - "GET …"` with the client `INFO:`, as it did before these shortcuts; framing would not count it
    monkeypatch.setattr(analyze, "_ACCESS_INFO_RE", NEVER)
    monkeypatch.setattr(
        analyze,
        "_ERROR_RULES_MARKED",
        tuple((c, tuple((None, rx) for rx in rxs)) for c, rxs in analyze._ERROR_RULES),
    )


def _both(source: str | Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict, dict]:
    fast = analyze_log(source, year=2026).to_dict()
    with monkeypatch.context() as m:
        _slow(m)
        slow = analyze_log(source, year=2026).to_dict()
    return fast, slow


def test_recorded_logs_are_read_the_same_with_and_without_the_fast_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(RECORDED) >= 10
    for path in RECORDED:
        fast, slow = _both(path, monkeypatch)
        assert fast == slow, path


def test_every_known_pattern_is_read_the_same_with_and_without_the_fast_paths(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fast, slow = _both(_every_pattern_log(), monkeypatch)
    assert fast == slow
    checks = {f["check"] for f in fast["findings"]}
    assert {"log-oom", "log-engine-dead", "log-removed-flag"} <= checks  # the log does exercise the rules


def test_the_pattern_log_exercises_every_start_up_event_rule() -> None:
    reader = startup.StartupConfigReader()
    for rec in iter_records(_every_pattern_log(), year=2026):
        reader.feed(rec)
    assert set(reader.events.hits) == {check for check, _rxs in startup._EVENT_RULES}


def test_the_access_prefilter_reads_what_access_re_finds_after_info() -> None:
    from triage.vllm import logformats as lf

    for raw in _every_pattern_log().splitlines():
        if not raw.startswith("INFO:"):
            continue
        want = lf.ACCESS_RE.search(raw)
        for rx in (analyze._FAST_ACCESS_RE, analyze._ACCESS_INFO_RE):
            got = rx.match(raw)
            if got is not None or rx is analyze._FAST_ACCESS_RE:
                assert (got and got.group("client", "method", "path", "status")) == (
                    want and want.group("client", "method", "path", "status")
                ), raw
