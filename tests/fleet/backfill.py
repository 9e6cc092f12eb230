"""Synthetic fleet history for drills and the fleet bench: replicas' vLLM series generated from
recorded real /metrics pages, with planted livelock and stuck-waiting episodes, written as
OpenMetrics for `promtool tsdb create-blocks-from openmetrics` (the TSDB a real Prometheus serves).

A page gives each series its name and labels (engine, model_name, finished_reason, the cache
config), the starting counter values and the values a stall shows (a 0.31.0 page during the pooling livelock:
running 1, waiting 0, KV usage held; a 0.32.0 BERT page stuck waiting: running 0, waiting 1).
Between episodes a replica is idle or busy, and a busy step always makes progress, so the
episodes planted are the only ones the stall rule can find.
"""
from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from triage.fleet.replicas import METRICS
from triage.stall import LIVELOCK, STUCK_WAITING
from triage.vllm.metrics import CACHE_CONFIG_INFO, REQUEST_SUCCESS

_LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)")
FIELD_OF = {m: f for f, m in METRICS.items()}
SERIES = (*METRICS.values(), CACHE_CONFIG_INFO)
SUCCESS = REQUEST_SUCCESS + "_total"
TOKENS_PER_S = 20_000.0  # the prefill rate busy steps are given (prefill seconds follow tokens)


@dataclass(frozen=True)
class Template:
    """The series of one recorded page this generator uses: name -> [(label text, value)]."""

    lines: dict[str, list[tuple[str, float]]]

    def value(self, name: str) -> float:
        return sum(v for _, v in self.lines.get(name, []))


def read_page(text: str) -> Template:
    lines: dict[str, list[tuple[str, float]]] = {}
    for ln in text.splitlines():
        m = _LINE.match(ln)
        if m and m.group(1) in SERIES:
            lines.setdefault(m.group(1), []).append((m.group(2) or "{}", float(m.group(3))))
    return Template(lines)


@dataclass(frozen=True)
class Planted:
    replica: int
    kind: str  # livelock | stuck-waiting
    first: int  # step index of the first stalled sample
    steps: int  # how many samples it lasts


@dataclass
class Fleet:
    start: float
    step: float
    n_steps: int
    replicas: int
    planted: list[Planted] = field(default_factory=list)

    def instance(self, i: int) -> str:
        return f"10.0.{i // 250}.{i % 250 + 1}:8000"

    def ts(self, k: int) -> float:
        return self.start + k * self.step


SHORT_S = (10.0, 30.0)  # a hang a client's time-out ends (issue 21): seconds


def plan(start: float, hours: float, step: float, replicas: int, livelocks: int, stuck: int,
         seed: int = 0, short: int = 0) -> Fleet:
    """Where the episodes go: on distinct replicas, 2-40 min long, away from the range's edges; ``short``
    more livelocks of 10-30 s (at least two samples: what any sampler needs to see no progress)."""
    rnd = random.Random(seed)
    n = int(hours * 3600 / step)
    fleet = Fleet(start=start, step=step, n_steps=n, replicas=replicas)
    who = rnd.sample(range(replicas), livelocks + stuck + short)
    for j, r in enumerate(who):
        if j < livelocks + stuck:
            steps = rnd.randint(max(2, int(120 / step)), max(3, int(2400 / step)))
        else:
            steps = max(2, round(rnd.uniform(*SHORT_S) / step))
        first = rnd.randint(10, n - steps - 10)
        fleet.planted.append(Planted(r, STUCK_WAITING if livelocks <= j < livelocks + stuck else LIVELOCK,
                                     first, steps))
    return fleet


def _timeline(fleet: Fleet, i: int, busy: Template, hung: Template, waiting: Template,
              rnd: random.Random) -> dict[str, list[float]]:
    """One replica's values per step (field name -> values)."""
    n = fleet.n_steps
    eps = {k: p for p in fleet.planted if p.replica == i for k in range(p.first - 1, p.first + p.steps + 1)}
    v = {f: [0.0] * n for f in METRICS}
    pt, rs, pq, pf = (busy.value(METRICS[f]) for f in
                      ("prompt_tokens_total", "request_success_total", "prefix_cache_queries_total",
                       "prefill_seconds_total"))
    load = rnd.uniform(0.1, 0.6)
    for k in range(n):
        p = eps.get(k)
        running = waiting_n = kv = 0.0
        if p is not None and p.first <= k < p.first + p.steps:
            tpl = hung if p.kind == LIVELOCK else waiting
            running, waiting_n = tpl.value(METRICS["num_requests_running"]), tpl.value(METRICS["num_requests_waiting"])
            kv = tpl.value(METRICS["kv_cache_usage_perc"])
            if k == p.first:
                pq += 256  # the stuck request was scheduled once: its prompt queried the prefix cache
        elif p is None and rnd.random() < load:  # busy: a step that computes (idle around episodes)
            running, waiting_n = float(rnd.randint(1, 4)), float(rnd.choice((0, 0, 0, 1, 2)))
            tokens = float(rnd.randint(64, 4096))
            pt += tokens
            pq += tokens
            pf += tokens / TOKENS_PER_S
            rs += float(rnd.randint(1, 16))
            kv = rnd.uniform(0.001, 0.2)
        for f, x in (("num_requests_running", running), ("num_requests_waiting", waiting_n),
                     ("kv_cache_usage_perc", kv), ("prompt_tokens_total", pt), ("request_success_total", rs),
                     ("prefix_cache_queries_total", pq), ("prefill_seconds_total", pf)):
            v[f][k] = x
    return v


def _labels(label_text: str, extra: str) -> str:
    inner = label_text.strip()[1:-1]
    return "{" + extra + ("," + inner if inner else "") + "}"


def write_openmetrics(fleet: Fleet, busy: Template, hung: Template, waiting: Template, out: TextIO,
                      seed: int = 0) -> int:
    """Write every series of every replica (grouped by family, as OpenMetrics wants); returns lines written."""
    rnd = random.Random(seed + 1)
    lines_out = 0
    timelines = [_timeline(fleet, i, busy, hung, waiting, rnd) for i in range(fleet.replicas)]
    stamps = [f"{fleet.ts(k):.3f}" for k in range(fleet.n_steps)]
    for name in SERIES:
        out.write(f"# TYPE {name} unknown\n")
        for i in range(fleet.replicas):
            extra = f'job="vllm",instance="{fleet.instance(i)}"'
            tpl_lines = busy.lines.get(name, [])
            if name == CACHE_CONFIG_INFO:
                lab = _labels(tpl_lines[0][0], extra)
                out.writelines(f"{name}{lab} 1 {t}\n" for t in stamps)
                lines_out += len(stamps)
                continue
            vals = timelines[i][FIELD_OF[name]]
            for j, (label_text, _) in enumerate(tpl_lines):
                lab = _labels(label_text, extra)
                if name == SUCCESS and j > 0:  # other finished reasons stay where the page had them
                    const = f"{tpl_lines[j][1]:g}"
                    out.writelines(f"{name}{lab} {const} {t}\n" for t in stamps)
                else:
                    # 9 digits: at 6 two random KV values came out equal, which reads as a held request
                    out.writelines(f"{name}{lab} {x:.9g} {t}\n" for x, t in zip(vals, stamps, strict=True))
                lines_out += len(stamps)
    out.write("# EOF\n")
    return lines_out


def expected(fleet: Fleet) -> Iterator[tuple[str, str, float, float]]:
    """(instance, kind, start, end) of every planted episode, as the stall rule should report it."""
    for p in fleet.planted:
        yield fleet.instance(p.replica), p.kind, fleet.ts(p.first), fleet.ts(p.first + p.steps - 1)


def templates(fixtures: Path) -> tuple[Template, Template, Template]:
    """(busy, hung by the pooling livelock, stuck waiting) from the recorded real pages under tests/fixtures/real."""
    busy = read_page((fixtures / "0.31.0-tiny-qwen3-livelock" / "metrics-after-requests.txt").read_text())
    hung = read_page((fixtures / "0.31.0-tiny-qwen3-livelock" / "metrics-livelock-9s.txt").read_text())
    waiting = read_page((fixtures / "0.32.0-minilm-bert-waiting" / "metrics-stuck-waiting-4s.txt").read_text())
    return busy, hung, waiting
