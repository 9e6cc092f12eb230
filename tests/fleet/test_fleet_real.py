"""Done-when of issue 15 on real parts: a real Prometheus scraping a 0.31.0 and a 0.32.0 livelock lab
server; the 0.31.0 one is hung by a #55427 request (aborted within ~15 s). `fleet` names that
replica, the episode's window and #55427, and nothing for the other; the generated alert fires in
that Prometheus for that replica only (the rule text is the generated one, unchanged)."""
from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from triage.catalogue import POOLING_LIVELOCK
from triage.cli import main
from triage.fleet.rules import ALERTS
from triage.lab import LabServer, prometheus
from triage.stall import DEFAULT_STALL_S, LIVELOCK

pytestmark = pytest.mark.real_server

LONG = " ".join(["alpha beta gamma delta"] * 200)  # ~800 tokens, truncated to max_model_len 256
SCRAPE_S = 2.0
HANG_MAX_S = 15.0


def _instance(srv: LabServer) -> str:
    return srv.url.split("://", 1)[1]


def _firing(p: prometheus.LabPrometheus) -> list[dict[str, Any]]:
    alerts = httpx.get(f"{p.url}/api/v1/alerts", timeout=10).json()["data"]["alerts"]
    return [a for a in alerts if a["state"] == "firing"]


def _scraped(p: prometheus.LabPrometheus, n: int) -> bool:
    r = httpx.get(f"{p.url}/api/v1/query", params={"query": "up == 1"}, timeout=10).json()["data"]["result"]
    return len(r) == n


async def _hang_until_alert(srv: LabServer, p: prometheus.LabPrometheus) -> dict[str, Any]:
    """Hang ``srv`` with the #55427 request, wait (bounded) for the livelock alert, then abort."""
    body = {"model": srv.served_model, "input": [f"short {uuid.uuid4().hex}", f"{uuid.uuid4().hex} {LONG}"],
            "truncate_prompt_tokens": 256}
    out: dict[str, Any] = {"start": time.time(), "firing": []}
    async with httpx.AsyncClient(base_url=srv.url, timeout=HANG_MAX_S + 30) as client:
        task = asyncio.create_task(client.post("/v1/embeddings", json=body))
        try:
            while time.time() - out["start"] < HANG_MAX_S and not task.done():
                await asyncio.sleep(1.0)
                firing = await asyncio.to_thread(_firing, p)
                if any(a["labels"].get("alertname") == ALERTS[LIVELOCK] for a in firing):
                    await asyncio.sleep(SCRAPE_S)  # one more evaluation: would the other replica fire too?
                    out["firing"] = await asyncio.to_thread(_firing, p)
                    break
            out["returned"] = task.done()
        finally:
            out["abort"] = time.time()
            task.cancel()  # closes the connection: vLLM aborts the request
            try:
                await task
            except (asyncio.CancelledError, httpx.HTTPError):
                pass
    return out


@pytest.fixture(scope="module")
def hung(server_031_livelock: LabServer, server_032_livelock: LabServer,
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    rules = tmp_path_factory.mktemp("rules") / "vllm-triage.rules.yml"
    assert main(["fleet", "rules", "--stall-seconds", str(DEFAULT_STALL_S), "--scrape-interval", "2s",
                 "-o", str(rules)]) == 0
    p = prometheus.up([server_031_livelock.url, server_032_livelock.url], interval_s=SCRAPE_S,
                      rule_files=[str(rules)])
    try:
        t0 = time.monotonic()
        while not _scraped(p, 2) and time.monotonic() - t0 < 20:
            time.sleep(0.5)
        time.sleep(3 * SCRAPE_S)  # some healthy history before the hang
        out = asyncio.run(_hang_until_alert(server_031_livelock, p))
        time.sleep(2 * SCRAPE_S)  # the scrapes that show the engine free again
        out["prometheus"] = p
        out["rules"] = rules
        yield out
    finally:
        prometheus.down(p.pid)


def test_generated_alert_fires_for_the_hung_replica_only(hung: dict[str, Any], server_031_livelock: LabServer,
                                                         server_032_livelock: LabServer) -> None:
    assert not hung["returned"], "the 0.31.0 request returned: no livelock reproduced"
    assert hung["abort"] - hung["start"] <= HANG_MAX_S + 2
    firing = hung["firing"]
    assert firing, "the generated livelock alert did not fire within the hang"
    assert {a["labels"]["instance"] for a in firing} == {_instance(server_031_livelock)}
    assert {a["labels"]["alertname"] for a in firing} == {ALERTS[LIVELOCK]}
    assert firing[0]["labels"]["failure_mode"] == POOLING_LIVELOCK.id


def test_fleet_names_the_replica_window_and_55427(hung: dict[str, Any], server_031_livelock: LabServer,
                                                  server_032_livelock: LabServer, tmp_path: Any,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    p = hung["prometheus"]
    start, end = hung["start"] - 20, time.time()
    code = main(["fleet", "--prometheus", p.url, "--match", '{job="vllm"}', "--from", f"{start:.3f}",
                 "--to", f"{end:.3f}", "--step", "2s", "--format", "json", "--db", str(tmp_path / "t.db")])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1, doc
    stalled = [f for f in doc["findings"] if f["check"] == "fleet-replica-stalled"]
    assert len(stalled) == 1, doc["findings"]
    f = stalled[0]
    assert f["evidence"]["labels"]["instance"] == _instance(server_031_livelock)
    assert f["failure_mode"] == POOLING_LIVELOCK.id and POOLING_LIVELOCK.refs[0] in f["refs"]
    assert f["evidence"]["version"] == "0.31.0"
    assert f["fix"] == POOLING_LIVELOCK.fix(now=True)
    # the episode of our hang (a shared lab server may show other tests' short hangs beside it)
    ours = [e for e in f["evidence"]["episodes"] if e["start"] <= hung["abort"] and e["end"] >= hung["start"]]
    assert len(ours) == 1, f["evidence"]["episodes"]
    ep = ours[0]
    assert ep["kind"] == LIVELOCK
    assert hung["start"] - SCRAPE_S * 2 <= ep["start"] <= hung["abort"]
    assert ep["start"] < ep["end"] <= hung["abort"] + 2 * SCRAPE_S
    clean = [x for x in doc["findings"] if x["check"] == "fleet-replicas-clean"]
    assert clean and any(_instance(server_032_livelock) in r for r in clean[0]["evidence"]["replicas"])
    assert not any(_instance(server_032_livelock) in json.dumps(x["evidence"].get("labels", {}))
                   for x in stalled)
    # the text face names the same
    main(["fleet", "--prometheus", p.url, "--from", f"{start:.3f}", "--to", f"{end:.3f}", "--step", "2s",
          "--db", str(tmp_path / "t.db")])
    text = capsys.readouterr().out
    assert _instance(server_031_livelock) in text and POOLING_LIVELOCK.refs[0] in text
