"""Issue 33 (deliver 4): request ids kept from a log are capped in length (a log of 1 MiB ids held every one of them:
a 360 MB log -> 506 MB RSS and 50 MB of JSON). The lines are the recorded real 0.31.0 log's
(tests/fixtures/real/client-timeouts/0.31.0-tiny-qwen3-livelock/server.log) with the ids made long: no real vLLM
writes such an id, a hostile or broken log can."""
from __future__ import annotations

import json
from pathlib import Path

from triage.logs import analyze_log
from triage.logs.episode_endings import MAX_ID_CHARS, MAX_IDS_PER_LINE, RequestNotes, request_id

LOG = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "client-timeouts" / "0.31.0-tiny-qwen3-livelock" \
    / "server.log"
ADDED = next(line for line in LOG.read_text().splitlines() if "Added request" in line)


def test_a_long_id_is_kept_short_and_still_matches_its_abort() -> None:
    notes = RequestNotes()
    long_id = "embd-" + "a" * (1 << 20)
    notes.add(long_id, 10.0)
    notes.aborted_line(long_id, 15.0, 7)
    assert notes.aborts[0]["held_s"] == 5.0  # the abort found its start through the capped key
    assert len(notes.aborts[0]["id"]) < MAX_ID_CHARS * 2
    assert request_id("embd-x-0-1a2b3c4d") == "embd-x-0-1a2b3c4d"  # a real id as written
    assert request_id("x" * 500) != request_id("x" * 501)  # the digest tells long ids apart


def test_an_abort_line_of_a_million_ids_is_counted_not_kept() -> None:
    notes = RequestNotes()
    notes.aborted_line(",".join(f"embd-{i}" for i in range(1_000_000)), 1.0, 3)
    assert notes.n_aborted == 1_000_000
    assert len(notes.aborts) <= MAX_IDS_PER_LINE


def test_log_of_megabyte_ids_gives_a_small_analysis(tmp_path: Path) -> None:
    prefix, _, rest = ADDED.partition("Added request ")
    lines = []
    for i in range(8):
        rid = f"embd-{i}-" + "b" * (1 << 19)  # lines are read whole up to 1 MiB (triage.logs.lines.MAX_LINE)
        lines.append(f"{prefix}Added request {rid}.")
        lines.append(f"{prefix}Aborted request(s) {rid}.")
    log = tmp_path / "server.log"
    log.write_text("\n".join(lines) + "\n")
    a = analyze_log(log)
    text = json.dumps(a.summary, default=str)
    assert len(text) < 100_000, len(text)  # was every 1 MiB id, in full
    assert a.summary["requests"]["added"] == 8 and a.summary["requests"]["aborted"] == 8

