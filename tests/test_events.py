"""One event stream: every core yields RunEvents, the Recorder (the only writer) observes any of them, and a run
that an exception interrupts keeps what came before — for the probes, watch, the log post-mortem and the fleet
scan as for the checklist (tests/test_recorder.py). Recorded real inputs only (tests/fixtures/real/)."""
from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from triage import events as ev_
from triage.events import RunEvent, observers
from triage.fleet.record import fleet_events
from triage.fleet.replicas import episodes
from triage.fleet.scan import FleetScan, Replica
from triage.lab.server import free_port
from triage.logs import analyze_log, log_events
from triage.probes import run_probes
from triage.probes.runner import ProbeOutcome
from triage.recorder import Recorder, record, save
from triage.sample import PROMETHEUS, EngineSample
from triage.store import Store
from triage.target import Target
from triage.vllm.metrics import parse_metrics
from triage.watch import Watcher

REAL = Path(__file__).parent / "fixtures" / "real"
D031 = REAL / "0.31.0-tiny-qwen3-livelock"
KEY = "sk-test-abcdefgh-0123456789"


def _page(name: str) -> str:
    return (D031 / f"metrics-{name}.txt").read_text()


def _store(tmp_path: Path) -> Store:
    return Store(str(tmp_path / "t.db"))


# -- the Recorder observes every kind ------------------------------------------------------------------------------

def test_a_probe_event_stores_the_outcome_and_its_samples_read_back_typed(tmp_path: Path) -> None:
    store = _store(tmp_path)
    rec = Recorder(store)
    o = ProbeOutcome.from_dict(json.loads((REAL / "probes" / "livelock-031-short-long-t256.json").read_text()))
    assert o.samples and all(isinstance(s, EngineSample) for s in o.samples)
    started = rec.observe(RunEvent(ev_.STARTED, run_kind="probe", target=Target("http://h:1", "m", api_key=KEY)))
    for ev in (RunEvent(ev_.PROBE_SAMPLE, probe=o.probe, samples=o.samples[:1]),  # progress: not written
               RunEvent(ev_.PROBE, outcome=o), RunEvent(ev_.DONE, summary="1 probe")):
        assert rec.observe(ev).run_id == started.run_id
    assert started.run_id is not None
    [series] = store.probe_series(started.run_id)
    assert series.samples == tuple(EngineSample.from_dict(r) for r in o.sample_dicts()) == tuple(o.samples)
    assert (series.outcome, series.aborted_at_s) == ("livelock", o.recovery["aborted_at_s"])
    assert store.engine_samples(started.run_id) == []  # a probe's scrapes are its own, not the run's series
    got = store.get_run(started.run_id)
    assert got is not None and got.run.finished_at is not None and got.run.summary == "1 probe"


def test_observers_chain_passes_the_stamped_event_on(tmp_path: Path) -> None:
    seen: list[RunEvent] = []
    chain = observers(Recorder(_store(tmp_path)), None, seen.append)
    out = chain(RunEvent(ev_.STARTED, run_kind="watch", target=Target("http://h:1")))
    assert out.run_id is not None and seen[0].run_id == out.run_id


# -- probes ---------------------------------------------------------------------------------------------------------

def test_probes_yield_the_run_to_an_observer_without_a_store() -> None:
    seen: list[RunEvent] = []
    res = run_probes(Target(f"http://127.0.0.1:{free_port()}", "m", 256, timeout_s=2.0), "conformance",
                     on_event=seen.append)
    assert [e.kind for e in seen] == [ev_.STARTED, ev_.FINDING, ev_.DONE] and res.run_id is None
    assert seen[0].run_kind == "probe" and seen[1].finding == res.findings[0]


def test_an_interrupted_probe_run_keeps_what_came_before(tmp_path: Path) -> None:
    store = _store(tmp_path)
    recorder = Recorder(store)

    def progress(ev: RunEvent) -> None:
        if ev.kind == ev_.DONE:
            raise KeyboardInterrupt  # Ctrl-C as the run ends: the finding before it is kept

    with pytest.raises(KeyboardInterrupt), recorder.guard():
        run_probes(Target(f"http://127.0.0.1:{free_port()}", "m", 256, timeout_s=2.0, api_key=KEY), "conformance",
                   on_event=observers(recorder, progress))
    assert recorder.run_id is not None
    got = store.get_run(recorder.run_id)
    assert got is not None and [f.check for f in got.findings] == ["probe-target"]
    assert got.run.summary.startswith("interrupted: KeyboardInterrupt") and got.run.finished_at is not None
    assert got.run.status == "interrupted"  # issue 32: an interrupted probe run is never stored as PASS
    assert KEY not in json.dumps([got.run.meta, got.target.url if got.target else ""])


# -- watch ----------------------------------------------------------------------------------------------------------

def test_watch_yields_its_run_and_an_interrupted_watch_keeps_its_samples_and_alert(tmp_path: Path) -> None:
    store = _store(tmp_path)
    recorder = Recorder(store)
    kinds: list[str] = []
    w = Watcher("http://127.0.0.1:9", observers(recorder, lambda e: kinds.append(e.kind)), interval=1.0,
                stall_s=5.0, api_key=KEY, batch_size=1, client=httpx.Client())
    seq = ["after-requests"] + ["livelock-3s"] * 3 + ["livelock-9s"] * 4
    with pytest.raises(RuntimeError), recorder.guard():
        w.start()
        for i, p in enumerate(seq):
            w.observe(_page(p), 1000.0 + i)
        raise RuntimeError("the store went away")
    assert kinds[0] == ev_.STARTED and ev_.ALERT in kinds and set(kinds) <= {ev_.STARTED, ev_.SAMPLES, ev_.ALERT}
    assert recorder.run_id is not None
    samples = store.engine_samples(recorder.run_id)
    assert [s.ts for s in samples] == [1000.0 + i for i in range(len(seq))]  # each written as it was taken
    got = store.get_run(recorder.run_id)
    assert got is not None and got.run.kind == "watch" and got.run.summary.startswith("interrupted: RuntimeError")
    w.close()  # the alert still open when the watch ends becomes its finding
    got = store.get_run(recorder.run_id)
    assert got is not None and [f.check for f in got.findings] == ["watch-engine-stalled"]
    assert KEY not in json.dumps(got.run.meta)


def test_a_finished_watch_stores_its_summary(tmp_path: Path) -> None:
    store = _store(tmp_path)
    recorder = Recorder(store)
    w = Watcher("http://127.0.0.1:9", recorder, interval=1.0, stall_s=5.0, client=httpx.Client())
    w.start(10.0)
    for i, p in enumerate(["idle", "after-requests"]):
        w.observe(_page(p), 2000.0 + i)
    w.close()
    summary = w.finish()
    got = store.get_run(recorder.run_id or 0)
    assert got is not None and got.run.meta["summary"]["ticks"] == summary["ticks"] == 2
    assert got.run.summary == "0 stall alert(s), 2 samples" and got.run.status == "pass"  # no finding: nothing wrong


# -- the log post-mortem --------------------------------------------------------------------------------------------

def test_log_events_write_a_logs_run(tmp_path: Path) -> None:
    store = _store(tmp_path)
    text = (D031 / "server.log").read_text()
    a = analyze_log(text)
    run_id = save(log_events(a, log_text=text, name="server.log"), Recorder(store))
    got = store.get_run(run_id or 0)
    assert got is not None and got.run.kind == "logs"
    assert [f.check for f in got.findings] == [f.check for f in a.findings]
    assert [c.kind for c in got.captures] == ["log"] and got.config == a.config_provenance
    assert len(store.engine_samples(got.run.id)) == len([s for s in a.samples if s.ts is not None])


def test_an_interrupted_log_run_keeps_its_findings(tmp_path: Path) -> None:
    store = _store(tmp_path)
    a = analyze_log((D031 / "server.log").read_text())
    assert a.findings

    def broken():  # a store write or the process fails after the findings
        for ev in log_events(a):
            if ev.kind == ev_.SAMPLES or ev.kind == ev_.DONE:
                raise OSError("disk full")
            yield ev

    recorder = Recorder(store)
    with pytest.raises(OSError):
        for _ in record(broken(), recorder):
            pass
    got = store.get_run(recorder.run_id or 0)
    assert got is not None and len(got.findings) == len(a.findings)
    assert got.run.summary.startswith("interrupted: OSError")


# -- the fleet scan -------------------------------------------------------------------------------------------------

def test_fleet_events_write_a_fleet_run(tmp_path: Path) -> None:
    d = REAL / "client-timeouts" / "0.31.0-tiny-qwen3-livelock"
    rows = [json.loads(ln) for ln in (d / "metrics.jsonl").read_text().splitlines()]
    samples = [next(iter(parse_metrics(r["page"], r["t"]).engines.values())).with_(source=PROMETHEUS) for r in rows]
    rep = Replica(name="instance=replica", labels={"instance": "replica"}, samples=samples,
                  episodes=episodes(samples, 2.0), version="0.31.0")
    res = FleetScan(prometheus="http://prom:9090", match="", start=samples[0].ts, end=samples[-1].ts, step=1.0,
                    threshold_s=2.0, replicas=[rep])
    kinds = [e.kind for e in fleet_events(res)]
    assert kinds[0] == ev_.STARTED and kinds[-2:] == [ev_.META, ev_.DONE]
    store = _store(tmp_path)
    got = store.get_run(save(fleet_events(res), Recorder(store)) or 0)
    assert got is not None and got.run.kind == "fleet" and got.run.status == "fail"
    assert got.meta["fleet"]["replicas"][0]["name"] == "instance=replica"
