"""triage.logs.startup_events: refusals counted with their first lines, the 'server is up' mark, the log's tail."""
from __future__ import annotations

from triage.logs.lines import iter_records
from triage.logs.startup_events import EVENT_TAIL, StartupEvents

LOG = "\n".join([
    "INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version 0.31.0",
    "vllm: error: unrecognized arguments: --task embed",
    "vllm: error: unrecognized arguments: --task embed",
    *[f"INFO 01-01 00:00:0{i} [x.py:1] line {i}" for i in range(EVENT_TAIL + 2)],
])


def test_events_hits_and_tail():
    ev = StartupEvents()
    for rec in iter_records(LOG, year=2026):
        ev.feed(rec)
    hit = ev.hits["log-removed-flag"]
    assert hit.count == 2 and len(hit.lines) == 2
    assert ev.started is None  # the log never said it listens
    assert len(ev.last_lines) == EVENT_TAIL and ev.last_lines[-1][1].endswith(f"line {EVENT_TAIL + 1}")
