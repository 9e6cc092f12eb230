"""Issue 33: the log post-mortem's held-request rule on a queue being served (see the test's docstring for where the
values and the line format come from)."""
from __future__ import annotations

from pathlib import Path

from triage.logs import analyze_log

LOG = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "client-timeouts" / "0.31.0-tiny-qwen3-livelock" \
    / "server.log"


def test_a_log_of_a_queue_being_served_has_no_stall(tmp_path: Path) -> None:
    """Issue 33: the held-request rule on stats lines (1 s apart) of a healthy engine serving its queue one request at
    a time: running 1, waiting ~35, KV usage one request's blocks, prompts finishing every second. The values are the
    recorded queue-bound server's (tests/fixtures/real/queue-bound: running 1, waiting 26-40, KV 0.1 %, ~300
    requests a second); the lines are the recorded 0.31.0 log's format with those values put in (no log was
    recorded of that run)."""
    stats = next(ln for ln in LOG.read_text().splitlines() if "Running: 1 reqs" in ln)
    head, _, _ = stats.partition("Engine 000:")
    stamp = head.split(" ", 1)[0]  # the collector's timestamp, rewritten per line
    lines = []
    for i in range(30):
        t = f"2026-12-01T12:53:{i:02d}.5Z"
        lines.append(head.replace(stamp, t) + f"Engine 000: Avg prompt throughput: {3000 + 10 * i}.0 tokens/s, Avg "
                     f"generation throughput: 0.0 tokens/s, Running: 1 reqs, Waiting: {30 + i % 9} reqs, CPU KV cache "
                     "usage: 0.1%, Prefix cache hit rate: 0.0%")
    log = tmp_path / "server.log"
    log.write_text("\n".join(lines) + "\n")
    found = {f.check: f for f in analyze_log(log).findings}
    stalls = [f for f in found.values() if f.status.value == "fail"]
    assert not stalls, [(f.check, f.title) for f in stalls]
