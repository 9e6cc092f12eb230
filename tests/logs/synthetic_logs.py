"""Logs built by the log tests: every known pattern's text, adversarial lines, repeated access blocks, stats runs.

Their analyses are kept as goldens beside the recorded logs' (tests/logs/golden.py), so a change in what the
chunked scan, the per-line reading or the stall episodes give shows up as a golden diff.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Optional

TEXTS = [
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
    # vLLM 0.33.0's start-up refusals, the release's own words (tests/fixtures/source/0.33.0-refusals/)
    'ValueError: kv_cache_dtype="float16" is incompatible with dtype="bfloat16". Please set `--kv-cache-dtype` to '
    "`auto` or `bfloat16`.",
    "ValueError: Model Runner V2 supports pooling tasks ['classify', 'embed', 'embed&token_classify', "
    "'token_classify', 'token_embed'], but this model selects 'score' from ['score']. Set "
    "VLLM_USE_V2_MODEL_RUNNER=0 to use this model.",
    # issue 29: prefix caching on an encoder (tests/fixtures/real/startup/0.31.0-encoder-prefix-caching/)
    "AssertionError: HybridKVCacheCoordinator requires at least one cacheable group.",
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


def every_pattern_log() -> str:
    out = []
    for i, t in enumerate(TEXTS):
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



def adversarial_log() -> str:
    """Lines the chunked scan must leave to the per-line reading, or read exactly as it does."""
    stats = (
        "Engine 000: Avg prompt throughput: {p} tokens/s, Avg generation throughput: 0.0 tokens/s, Running: {r} reqs, "
        "Waiting: {w} reqs, CPU KV cache usage: 0.2%, Prefix cache hit rate: 0.0%"
    )
    out = [
        "(APIServer pid=1) INFO 12-31 23:59:50 [api_utils.py:286] non-default args: {'model': 'm', "
        "'max_model_len': 256, 'enable_chunked_prefill': True, 'max_num_batched_tokens': 128}",
        "(APIServer pid=1) INFO 12-31 23:59:51 [model.py:1] Using max model len 256",
        "(EngineCore pid=2) INFO 12-31 23:59:52 [core.py:9] Initializing a V1 LLM engine (v0.31.0) with config: "
        "model='m', dtype=torch.float32, max_seq_len=256, device_config=cpu, enable_prefix_caching=False, "
        "enable_chunked_prefill=True, pooler_config=PoolerConfig(seq_pooling_type='LAST')",
        "(APIServer pid=1) INFO 12-31 23:59:53 [entry.py:1] Supported tasks: ['embed']",
        "(APIServer pid=1) INFO 12-31 23:59:54 [launcher.py:1] Starting vLLM server on http://127.0.0.1:1",
    ]
    for i in range(40):  # stats across the new year (the clock rolls), a stall, silence, progress
        mm, ss = divmod(i * 10, 60)
        md, hh = ("12-31", "23") if i < 1 else ("01-01", "00")
        p, r = ("5.0", 1) if i % 9 == 0 else ("0.0", 1 if 10 <= i < 20 else 0)
        out.append(f"(APIServer pid=1) INFO {md} {hh}:{mm % 60:02d}:{ss:02d} [loggers.py:1] "
                   + stats.format(p=p, r=r, w=1 if 25 <= i < 28 else 0))
        out.append(f'INFO:     127.0.0.1:{4000 + i % 3} - "GET /metrics HTTP/1.1" 200 OK')
    out += [
        "(APIServer pid=1) INFO 01-01 00:07:00 [x.py:1] msg after a tab\tand CRLF\r",  # CRLF: one line
        "(APIServer pid=1) INFO 01-01 00:07:01 [x.py:1] \rprogress 10%\rprogress 100%",  # lone CRs: three lines
        "\x1b[1;36m(APIServer pid=1)\x1b[0m INFO 01-01 00:07:02 [x.py:3] coloured",
        "(APIServer pid=1) INFO 01-01 00:07:03 [x.py:1]\u00a0a non-breaking space after the bracket",
        "(APIServer pid=1) INFO 01-01 00:07:04 [x.py:1]\x1cinformation separator (str \\s)",
        "(APIServer pid=1) INFO  01-01 00:07:05 [x.py:1] two spaces after the level",
        "(APIServer pid=1) INFO 01-01 00:07:06 [x.py:1] (EngineCore pid=2) INFO 01-01 00:07:06 [y.py:2] interleaved",
        "(APIServer pid=1) INFO 01-01 00:07:07 [x.py:1] pid=9 starts the message",
        "(APIServer pid=1) INFO 02-30 00:07:08 [x.py:1] an impossible date",
        "(APIServer pid=1) INFO 01-01 25:61:61 [x.py:1] an impossible time",
        "(APIServer pid=1) INFO 01-01 00:07:09 [x.py:1]",
        "(APIServer pid=1) INFO 01-01 00:07:10 [x.py:1] short",
        "2026-01-01T00:07:11.5Z (APIServer pid=1) WARNING 01-01 00:07:11 [x.py:2] docker timestamps",
        "INFO 01-01 00:07:12 [x.py:1] no process prefix",
        "INFO:     127.0.0.1:1 - \"GET /caf\u00e9 HTTP/1.1\" 200 OK",
        "INFO:     127.0.0.1:1 - \"GET /x?y=1 HTTP/1.1\" 404 Not Found\r",
        "(APIServer pid=1) INFO:     127.0.0.1:1 - \"GET /health HTTP/1.1\" 200 OK",
        "INFO: - \"GET /odd HTTP/1.1\" 200 OK",
        "",
        "Traceback (most recent call last):",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1 GiB",
        "(EngineCore pid=2) ERROR 01-01 00:07:13 [core.py:1] EngineCore encountered an issue",
        "(APIServer pid=1) INFO 01-01 00:07:14 [x.py:1] Route: /pooling, Methods: POST",
        "(APIServer pid=1) INFO 01-01 00:07:15 [x.py:1] \u0661\u0662 Arabic-Indic digits and \u2588 a banner block",
    ]
    out += [f'INFO:     10.0.0.{i % 250}:1 - "GET /p{i} HTTP/1.1" 200 OK' for i in range(520)]  # > 500 keys
    out += ["(APIServer pid=1) INFO 01-01 00:08:00 [x.py:1] the last line has no line end"]
    return "\n".join(out)


def write_adversarial(path: Path) -> None:
    """The adversarial log with a truncated UTF-8 sequence and stray bytes at its end."""
    path.write_bytes(adversarial_log().encode() + b"\n\xe2\x80 a truncated UTF-8 sequence\n\xff\xfe bytes")


def write_long_line(path: Path) -> None:
    """The adversarial log with one line of 5,000 characters (read in pieces under a MAX_LINE of 1,000)."""
    path.write_text(adversarial_log().replace("two spaces after the level", "x" * 5000) + "\n")


def write_access_blocks(path: Path) -> None:
    """Access blocks repeated before, across and after the 500-key cap, some of whose keys never get in."""
    rec = "(APIServer pid=1) INFO 01-01 00:{:02d}:{:02d} [x.py:1] a record between access blocks"
    seen = [
        'INFO:     127.0.0.1:1 - "GET /metrics HTTP/1.1" 200 OK',
        'INFO:     127.0.0.1:1 - "GET /h HTTP/1.1" 200 OK',
    ]
    out: list[str] = []
    for i in range(1200):
        out.append(rec.format(i // 60 % 60, i % 60))
        if i % 3 == 0:
            out += seen  # the same block again and again
        else:  # new keys up to past the cap, then blocks repeated whose key came in, or came after the cap (never in)
            key = f"/p{i}" if i < 900 else f"/p{i % 5}" if i % 2 else f"/p{700 + i % 5}"
            out += [seen[0], f'INFO:     127.0.0.1:1 - "GET {key} HTTP/1.1" 200 OK']
    assert len({ln for ln in out if "/p" in ln}) > 520
    path.write_text("\n".join(out) + "\n")


def write_bench(path: Path) -> None:
    """The bench's 100 MB file at 1 MB: 30 restarts, 600 stats lines, 50 episodes."""
    from bench.bench_logs import build

    build(path, 1)


StatsRow = tuple[Optional[float], int, int, int, float, float]  # ts, line, running, waiting, prompt, gen tokens/s


def stats_runs() -> list[tuple[float, list[StatsRow]]]:
    """Random stats sequences per stall threshold (seeded): stalls, shape changes, progress, silence gaps, lines
    without timestamps."""
    rng = random.Random(11)
    runs: list[tuple[float, list[StatsRow]]] = []
    for threshold in (0.0, 5.0, 20.0, 45.0):
        for _ in range(30):
            rows: list[StatsRow] = []
            ts: Optional[float] = 1000.0
            for line in range(1, 120):
                step = rng.choice([10.0, 10.0, 10.0, 20.0, 35.0, 0.0])
                ts = None if rng.random() < 0.03 else (ts or 1000.0) + step
                running, waiting = rng.choice([(0, 0), (1, 0), (1, 0), (0, 1), (4, 2)])
                prompt = rng.choice([0.0, 0.0, 0.0, 3.5])
                gen = rng.choice([0.0, 0.0, 0.0, 0.0, 1.0])
                rows.append((ts, line, running, waiting, prompt, gen))
            runs.append((threshold, rows))
    return runs

