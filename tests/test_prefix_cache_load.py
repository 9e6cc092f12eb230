"""No false alarm on a healthy 0.32.0 under steady load whose prompts hit the prefix cache
(tests/fixtures/real/prefix-cache-load: recorded on a real lab server, its capture script says how).

vLLM counts a prefix-cache hit's tokens in ``vllm:prompt_tokens`` although it computes none of them: a server that
served cached prompts shows a prefill rate many times its real one (here ~10,000 tokens/s lifetime vs ~500 computed),
so a step of ~4 s was expected to take 0.2 s and `watch`, started while a step ran, said "ENGINE STALLED" on a
healthy 0.32.0 (seen live on this box before the fix). The rate is measured on computed tokens: prompt tokens less
prefix-cache hits."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from triage.cli.watch import _tick_line
from triage.watch import Watcher

REC = Path(__file__).parent / "fixtures" / "real" / "prefix-cache-load" / "0.32.0-slow-qwen3"


def _rows() -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in (REC / "metrics.jsonl").read_text().splitlines()]


def test_recorded_traffic_is_healthy_and_cached() -> None:
    traffic = json.loads((REC / "traffic.json").read_text())
    assert traffic["vllm_version"] == "0.32.0" and traffic["warm_up_requests"] > 100
    assert traffic["requests"] and all(r["status"] == 200 for r in traffic["requests"])
    page = _rows()[0]["page"]
    hits = next(float(ln.split()[-1]) for ln in page.splitlines() if ln.startswith("vllm:prefix_cache_hits_total"))
    prompt = next(float(ln.split()[-1]) for ln in page.splitlines() if ln.startswith("vllm:prompt_tokens_total"))
    assert hits > 0.9 * prompt  # the warm-up's prompts were cache hits


@pytest.mark.parametrize("start", range(0, 12))
def test_watch_started_at_any_sample_raises_no_stall(start: int) -> None:
    """A fresh `watch` started at each of the first 12 samples (mid-step included): no alert, no STALLED."""
    w = Watcher("http://127.0.0.1:1", interval=1.0)
    w.vllm_version, w._version_read = "0.32.0", True
    lines: list[str] = []
    for r in _rows()[start:]:
        t = w.observe(r["page"], r["t"], cpu_s=r["cpu_s"])
        lines += [e.message for e in t.events] + [_tick_line(t, w.vllm_version)]
    w.flush()
    text = "\n".join(lines)
    assert w.summary()["alerts"] == [] and "STALLED" not in text and "livelock" not in text.lower(), text[:3000]
