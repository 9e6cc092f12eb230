"""The post-mortem's fast paths change nothing.

Substring gates before the start-up and error patterns, the fused record and access regexes: every recorded log and
a log of every known pattern's text give the same analysis with them on and forced off (every pattern run on every
line, step-by-step framing). The chunked scan of a file (triage.logs.chunks), the memos and the stats points: the
analysis of a file equals the per-line reading's and the pre-chunk reference's (tests/logs/reference/) on every
recorded log, on the bench's built file and on adversarial lines: findings, episodes, summary and samples.
"""

from __future__ import annotations

import io
import random
import re
from pathlib import Path
from typing import Any, Optional

import pytest

from tests.logs.real_logs import REAL
from tests.logs.reference import analyze as reference
from tests.logs.reference import lines as reference_lines
from tests.logs.reference.episodes import EngineTrack as ReferenceTrack
from triage.logs import analyze, chunks, lines, startup
from triage.logs import analyze_log
from triage.logs.episodes import EngineTrack
from triage.logs.lines import iter_records
from triage.logs.memo import Memo
from triage.logs.stats import BoundedSeries, PointSeries, parse_stats, stats_values
from triage.sample import EngineSample

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
    # fresh memos (what a message says is otherwise remembered from the fast run), every record read by every rule
    monkeypatch.setattr(startup, "_PLANS", Memo())
    monkeypatch.setattr(startup, "_ARGS_CACHE", {})
    monkeypatch.setattr(analyze, "_CLASSES", Memo())
    monkeypatch.setattr(analyze, "_ERRORS", Memo())
    monkeypatch.setattr(analyze, "_has_any_marker", lambda msg: True)
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


# -- the chunked scan against the per-line reading and the pre-chunk reference ------------------------------------


def _view(a: Any) -> dict[str, Any]:
    """Everything an analysis returns, comparable: EngineSample equality leaves out ``extra``, so it is added."""
    return {
        **a.to_dict(),
        "episodes": [e.to_dict() for e in a.episodes],
        "samples": [(p, dict(p.extra)) for p in a.samples],
        "levels_order": list(a.summary["levels"]),
        "config_order": list(a.config),
    }


def _three(path: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The file by the chunked scan, its lines (an open file: batched into chunks, and one by one), the reference."""
    chunked = _view(analyze_log(path, year=2026))
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        batched = _view(analyze_log(f, year=2026))
    text = path.read_bytes().decode("utf-8", "replace")
    assert _view(analyze_log(io.StringIO(text, newline=""), year=2026)) == batched
    saved = analyze.BATCH_LINES
    analyze.BATCH_LINES = False
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            by_line = _view(analyze_log(f, year=2026))
    finally:
        analyze.BATCH_LINES = saved
    assert batched == by_line
    ref = _view(reference.analyze_log(path, year=2026))
    return chunked, by_line, ref


def test_recorded_logs_chunked_per_line_and_reference_agree() -> None:
    assert len(RECORDED) >= 10
    for path in RECORDED:
        chunked, by_line, ref = _three(path)
        assert chunked == ref, path
        assert by_line == ref, path


def test_the_bench_file_chunked_and_reference_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.bench_logs import build

    path = tmp_path / "bench.log"
    build(path, 1)  # the bench's 100 MB file, at 1 MB: 30 restarts, 600 stats lines, 50 episodes
    ref = _view(reference.analyze_log(path, year=2026))
    assert ref["summary"]["stats"]["lines"] > 500 and ref["episodes"]
    assert _view(analyze_log(path, year=2026)) == ref
    monkeypatch.setattr(chunks, "BLOCK", 997)  # chunk ends everywhere: inside lines, between CR and LF
    assert _view(analyze_log(path, year=2026)) == ref
    ref_small = _view(reference.analyze_log(path, year=2026, max_samples=50))  # the series merges pairwise
    assert _view(analyze_log(path, year=2026, max_samples=50)) == ref_small


def _adversarial_log() -> str:
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


@pytest.mark.parametrize("block", [1 << 19, 61, 4096])
def test_adversarial_lines_chunked_per_line_and_reference_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    path = tmp_path / "odd.log"
    path.write_bytes(_adversarial_log().encode() + b"\n\xe2\x80 a truncated UTF-8 sequence\n\xff\xfe bytes")
    monkeypatch.setattr(chunks, "BLOCK", block)
    chunked, by_line, ref = _three(path)
    assert ref["summary"]["episodes"] and ref["summary"]["access"]["total"] > 500
    assert chunked == ref
    assert by_line == ref


def test_a_line_longer_than_max_line_is_read_in_pieces_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "long.log"
    path.write_text(_adversarial_log().replace("two spaces after the level", "x" * 5000) + "\n")
    for mod in (lines, chunks, reference_lines):
        monkeypatch.setattr(mod, "MAX_LINE", 1000)
    monkeypatch.setattr(chunks, "BLOCK", 300)
    chunked, by_line, ref = _three(path)
    assert ref["summary"]["lines"] > len(_adversarial_log().splitlines()) + 3  # the long line was cut
    assert chunked == ref
    assert by_line == ref


# -- the stats points and the gauge reading of the stall rule ---------------------------------------------------


def test_points_series_keeps_what_bounded_series_keeps() -> None:
    rng = random.Random(7)
    for cap in (2, 3, 8, 64):
        old, new = BoundedSeries(cap), PointSeries(cap)
        for i in range(500):
            v = (
                "000",
                rng.choice([0.0, 0.5, 3.7, 82.1]),
                rng.choice([0.0, 1.1]),
                rng.randint(0, 3),
                rng.randint(0, 2),
                rng.choice([None, 0.002, 0.5]),
                rng.choice([None, 0.0, 0.25]),
                rng.choice([{}, {"kv_device": "CPU"}, {"preemptions": 2}]),
            )
            ts = None if i % 50 == 7 else 1000.0 + 10 * i
            text = _stats_line(v)
            [p] = list(parse_stats(text, i + 1, ts))
            [vals] = stats_values(text)
            old.add(p)
            new.add((ts, i + 1) + vals + (1,))
        a, b = old.finish(), new.finish()
        assert a == b and [dict(p.extra) for p in a] == [dict(p.extra) for p in b]


def _stats_line(v: tuple[Any, ...]) -> str:
    _e, prompt, gen, running, waiting, kv, hit, extra = v
    text = (
        f"Engine 000: Avg prompt throughput: {prompt} tokens/s, Avg generation throughput: {gen} tokens/s, "
        f"Running: {running} reqs, Waiting: {waiting} reqs"
    )
    if "preemptions" in extra:
        text += f", Preemptions: {extra['preemptions']}"
    if kv is not None:
        text += f", {extra.get('kv_device', 'XPU')} KV cache usage: {kv * 100}%"
    if hit is not None:
        text += f", Prefix cache hit rate: {hit * 100}%"
    return text


def test_add_values_gives_the_episodes_add_gives() -> None:
    """EngineTrack.add_values (the gauge reading of the stall rule) against the pre-chunk EngineTrack.add
    (tests/logs/reference: StallDetector.update on EngineSample values), on
    random stats sequences: stalls, shape changes, progress, silence gaps, lines without
    timestamps."""
    rng = random.Random(11)
    for threshold in (0.0, 5.0, 20.0, 45.0):
        for _ in range(30):
            old, new = ReferenceTrack("000", threshold), EngineTrack("000", threshold)
            ts: Optional[float] = 1000.0
            for line in range(1, 120):
                step = rng.choice([10.0, 10.0, 10.0, 20.0, 35.0, 0.0])
                ts = None if rng.random() < 0.03 else (ts or 1000.0) + step
                running, waiting = rng.choice([(0, 0), (1, 0), (1, 0), (0, 1), (4, 2)])
                prompt = rng.choice([0.0, 0.0, 0.0, 3.5])
                gen = rng.choice([0.0, 0.0, 0.0, 0.0, 1.0])
                p = EngineSample(ts=ts, engine="000", source="log", line=line, prompt_throughput=prompt,  # type: ignore[arg-type]
                                 generation_throughput=gen, num_requests_running=running,
                                 num_requests_waiting=waiting)
                old.add(p)
                new.add_values(ts, line, running, waiting, prompt, gen)
                assert (old.open is None) == (new.open is None)
                assert old.det.state.kind == new.det._g_kind or old.det.state.kind is None and new.det._g_kind is None
                assert old.det.state.stalled == new.det._g_confirmed
            old.finish(ts, 200)
            new.finish(ts, 200)
            assert [e.to_dict() for e in old.episodes] == [e.to_dict() for e in new.episodes]
            state = (old.n, old.min_gap, old.last_ts, list(old._busy))
            assert state == (new.n, new.min_gap, new.last_ts, list(new._busy))


def test_repeated_access_blocks_across_the_key_cap_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Repeats of an access block are added at the end (chunks._Scan.flush) only once all its keys are counted: blocks
    repeated before, across and after the 500-key cap, some of whose keys never get in, read as the reference does."""
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
    path = tmp_path / "access.log"
    path.write_text("\n".join(out) + "\n")
    for block in (1 << 19, 997):
        monkeypatch.setattr(chunks, "BLOCK", block)
        monkeypatch.setattr(chunks, "MEMO_ENTRIES", 64)  # the deferred list flushed on the way, the memo emptied
        chunked, by_line, ref = _three(path)
        assert ref["summary"]["access"]["total"] > 1000 and chunked == ref and by_line == ref
