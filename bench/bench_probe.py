"""Probe figures on real servers: send-to-verdict time (median of runs), cost of one /metrics scrape + parse.

Also, with --watch-runs N: send -> alert time of ``watch`` (a Watcher at its defaults) on the same hang.

Usage (lab servers up, see ``python -m triage lab status``):
    PYTHONPATH=. python bench/bench_probe.py [--runs 3] [--scrapes 30] [--watch-runs 0] \\
        [--vllm 0.31.0 | --hang-url URL] [--idle-url URL]
--hang-url defaults to the lab's livelock server of --vllm (0.31.0), --idle-url to the 0.32.0 one.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import os
import time
from pathlib import Path
from typing import Any

from triage.http import ProbeClient
from triage.probes.context import ProbeContext
from triage.probes.runner import MonitorConfig
from triage.vllm.metrics import parse_metrics

RECORDED = (Path(__file__).resolve().parents[1]
            / "tests/fixtures/real/0.31.0-tiny-qwen3-livelock/metrics-livelock-9s.txt")


def _lab_url(version: str, profile: str) -> tuple[str, str] | None:
    from triage.lab import status
    for s in status():
        if s.version == version and s.profile == profile:
            return s.url, s.served_model
    return None


async def scrape_cost(url: str, n: int) -> dict[str, float]:
    fetch, parse, both = [], [], []
    async with ProbeClient(url) as pc:
        for _ in range(n):
            t0 = time.perf_counter()
            text = await pc.metrics_text()
            t1 = time.perf_counter()
            parse_metrics(text)
            t2 = time.perf_counter()
            fetch.append(t1 - t0)
            parse.append(t2 - t1)
            both.append(t2 - t0)
    size = len(text)
    return {"scrapes": n, "page_bytes": size, "fetch_ms_median": 1000 * statistics.median(fetch),
            "parse_ms_median": 1000 * statistics.median(parse),
            "scrape_parse_ms_median": 1000 * statistics.median(both),
            "scrape_parse_ms_max": 1000 * max(both)}


def parse_cost_recorded(n: int = 200) -> dict[str, float]:
    text = RECORDED.read_text()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        parse_metrics(text)
        ts.append(time.perf_counter() - t0)
    return {"recorded_page": RECORDED.name, "parse_ms_median": 1000 * statistics.median(ts)}


async def time_to_verdict(url: str, model: str, runs: int, cfg: MonitorConfig) -> dict[str, object]:
    verdicts, recoveries, outcomes = [], [], []
    async with ProbeClient(url) as pc:
        mml = next(d["max_model_len"] for d in (await pc.models()).body["data"] if d["id"] == model)
        version = await pc.version()
        ctx = ProbeContext(pc, model, mml, version, cfg)
        for i in range(runs):
            texts, _ = await ctx.texts(("SHORT", "LONG"))
            out = await ctx.monitored(f"bench-{i}", "seed", [ctx.body(texts, truncate_prompt_tokens=mml)],
                                      "[SHORT, LONG] truncate_prompt_tokens=max_model_len")
            outcomes.append(out.outcome)
            if out.time_to_verdict_s is not None:
                verdicts.append(out.time_to_verdict_s)
            if out.recovery and out.recovery.get("recovered_after_abort_s") is not None:
                recoveries.append(out.recovery["recovered_after_abort_s"])
    return {"runs": runs, "version": version, "outcomes": outcomes, "stall_s": cfg.stall_s, "scrape_s": cfg.scrape_s,
            "send_to_verdict_s_median": statistics.median(verdicts) if verdicts else None,
            "send_to_verdict_s_all": verdicts,
            "send_to_verdict_s_max": max(verdicts) if verdicts else None,
            "load_average_1m": round(os.getloadavg()[0], 2),
            "abort_to_recovered_s_median": statistics.median(recoveries) if recoveries else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scrapes", type=int, default=30)
    ap.add_argument("--watch-runs", type=int, default=0)
    ap.add_argument("--vllm", default="0.31.0", help="the lab livelock server of this version hangs (default 0.31.0)")
    ap.add_argument("--hang-url")
    ap.add_argument("--idle-url")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    hang = (a.hang_url, None) if a.hang_url else _lab_url(a.vllm, "livelock")
    idle = a.idle_url or ((_lab_url("0.32.0", "livelock") or (None, None))[0])
    figures: dict[str, Any] = {"parse_recorded": parse_cost_recorded()}
    if idle:
        figures["scrape_live"] = asyncio.run(scrape_cost(idle, a.scrapes))
    if hang:
        url, model = hang
        if model is None:
            model = asyncio.run(_first_model(url))
        figures["verdict"] = asyncio.run(time_to_verdict(url, model, a.runs, MonitorConfig()))
        if a.watch_runs:
            figures["watch"] = asyncio.run(watch_alert_time(url, model, a.watch_runs))
    if a.json:
        print(json.dumps(figures, indent=1))
        return
    report(figures)


def report(figures: dict[str, Any]) -> None:
    p = figures["parse_recorded"]
    print(f"parse of a recorded livelock /metrics page ({p['recorded_page']}): {p['parse_ms_median']:.2f} ms median")
    if "scrape_live" in figures:
        s = figures["scrape_live"]
        print(f"one /metrics scrape + parse on a live 0.32.0 page ({s['page_bytes']} bytes, {s['scrapes']} runs): "
              f"{s['scrape_parse_ms_median']:.2f} ms median (fetch {s['fetch_ms_median']:.2f}, "
              f"parse {s['parse_ms_median']:.2f}), max {s['scrape_parse_ms_max']:.2f} ms")
    if "verdict" in figures:
        v = figures["verdict"]
        print(f"send -> livelock verdict on {v['version']} (stall {v['stall_s']} s, scrape {v['scrape_s']} s, "
              f"{v['runs']} runs): {v['send_to_verdict_s_median']} s median, {v['send_to_verdict_s_max']} s max "
              f"{v['send_to_verdict_s_all']} at load {v['load_average_1m']}; "
              f"abort -> recovered {v['abort_to_recovered_s_median']} s median; outcomes {v['outcomes']}")
    if "watch" in figures:
        w = figures["watch"]
        print(f"send -> watch alert on {figures['verdict']['version']} (watch defaults, {w['runs']} runs): "
              f"{w['send_to_alert_s_median']} s median, "
              f"{w['send_to_alert_s_max']} s max {w['send_to_alert_s_all']} at load {w['load_average_1m']}; "
              f"alerts {w['outcomes']}")


async def watch_alert_time(url: str, model: str, runs: int) -> dict[str, object]:
    """Send the seed hang with no probe watching; a Watcher at its defaults (in a thread) raises the alert; then
    the request is cancelled as a probe aborts it (its connection closes) and the next run waits 3 s."""
    from triage.probes.inputs import long_text, new_salt, short_text
    from triage.watch import Watcher

    alerts, outcomes = [], []
    async with ProbeClient(url) as pc:
        mml = next(d["max_model_len"] for d in (await pc.models()).body["data"] if d["id"] == model)
        for _ in range(runs):
            lt = await long_text(lambda t: pc.token_count(model, t), mml, salt=new_salt())
            body = {"model": model, "input": [short_text(), lt.text], "truncate_prompt_tokens": mml}
            w = Watcher(url)
            await asyncio.to_thread(w.sample_once)  # a baseline, as a running watch has
            sent = time.time()
            task = asyncio.create_task(pc.embed_isolated(body, 30.0))
            await asyncio.to_thread(w.run, 15.0, None, lambda w=w: bool(w.alerts))
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            at = next((a.get("confirmed_at") for a in w.alerts), None)
            outcomes.append(w.alerts[0].get("kind") if w.alerts else "none")
            if at is not None:
                alerts.append(round(at - sent, 3))
            await asyncio.sleep(3.0)
    return {"runs": runs, "outcomes": outcomes, "send_to_alert_s_all": alerts,
            "send_to_alert_s_median": statistics.median(alerts) if alerts else None,
            "send_to_alert_s_max": max(alerts) if alerts else None, "load_average_1m": round(os.getloadavg()[0], 2)}


async def _first_model(url: str) -> str:
    async with ProbeClient(url) as pc:
        return (await pc.models()).body["data"][0]["id"]


if __name__ == "__main__":
    main()
