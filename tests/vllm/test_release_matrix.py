"""The metrics and log readers on what the lab release matrix recorded (tests/fixtures/real/matrix/<release>/).

0.10.2 publishes the pre-0.12 names (``vllm:gpu_cache_usage_perc``, ``vllm:gpu_prefix_cache_*``) next to the
new ones; a release before 0.9 publishes only the old ones: the same recorded page with the new names'
lines taken out stands for it.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.vllm.metrics import OLD_NAMES, parse_metrics

MATRIX = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "matrix"
RELEASES = sorted(p.name for p in MATRIX.iterdir() if (p / "metrics-after.txt").exists())


def _without_new_names(page: str) -> str:
    new = ("vllm:kv_cache_usage_perc", "vllm:prefix_cache_queries", "vllm:prefix_cache_hits")

    def name(ln: str) -> str:
        return ln.split()[2] if ln.startswith("#") and len(ln.split()) > 2 else ln

    return "\n".join(ln for ln in page.splitlines() if not name(ln).startswith(new)) + "\n"


def test_0_10_2_page_has_both_names_and_the_new_one_is_read() -> None:
    page = (MATRIX / "0.10.2" / "metrics-after.txt").read_text()
    assert "vllm:gpu_cache_usage_perc{" in page and "vllm:kv_cache_usage_perc{" in page
    eng = parse_metrics(page).engines["0"]
    assert eng.kv_cache_usage_perc is not None and eng.prefix_cache_queries_total is not None
    assert eng.num_requests_running is not None and eng.num_requests_waiting is not None


def test_old_names_alone_are_read_as_the_new_ones() -> None:
    page = (MATRIX / "0.10.2" / "metrics-after.txt").read_text()
    old_only = _without_new_names(page)
    assert "\nvllm:kv_cache_usage_perc{" not in old_only and "\nvllm:gpu_cache_usage_perc{" in old_only
    both, old = parse_metrics(page).engines["0"], parse_metrics(old_only).engines["0"]
    for attr in set(OLD_NAMES.values()):
        assert getattr(old, attr) == getattr(both, attr), attr
        assert getattr(old, attr) is not None, attr


@pytest.mark.parametrize("release", RELEASES)
def test_every_recorded_release_reads_the_stall_rule_gauges(release: str) -> None:
    for name in ("metrics-idle.txt", "metrics-after.txt", "metrics-hang.txt"):
        f = MATRIX / release / name
        if not f.exists():
            continue
        eng = next(iter(parse_metrics(f.read_text()).engines.values()))
        assert None not in (eng.num_requests_running, eng.num_requests_waiting, eng.kv_cache_usage_perc), (release,
                                                                                                           name)


@pytest.mark.parametrize("release", sorted(p.name for p in MATRIX.iterdir() if (p / "server.log").exists()))
def test_log_post_mortem_reads_every_recorded_release(release: str) -> None:
    """The start-up config and the stats lines of each release's recorded log (0.10.2: `GPU KV cache usage`)."""
    from triage.logs import analyze_log

    a = analyze_log(MATRIX / release / "server.log", year=2026)
    assert a.config.get("vllm_version") == release
    assert a.config.get("max_model_len") == 256 and a.config.get("max_num_batched_tokens") == 128
    assert a.config.get("enable_chunked_prefill") is True
    assert a.summary["stats"]["lines"] > 0 and a.summary["stats"]["max_kv_cache_usage_perc"] is not None


def test_0_10_2_dropped_request_leaves_the_gauges_idle() -> None:
    """Recorded 12 s into a held [SHORT, LONG] request truncated to 256 that never answered (watch.json): the engine
    holds nothing, so the stall rule (running >= 1) has nothing to see on 0.10.2."""
    import json

    hold = json.loads((MATRIX / "0.10.2" / "watch.json").read_text())["hold"]
    assert hold["status_within_hold"] is None and hold["after_status"] == 200
    eng = next(iter(parse_metrics((MATRIX / "0.10.2" / "metrics-hang.txt").read_text()).engines.values()))
    assert (eng.num_requests_running, eng.num_requests_waiting) == (0.0, 0.0)
