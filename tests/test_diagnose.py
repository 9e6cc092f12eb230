"""One Diagnose = one run: the checklist (on recorded real responses) and the log post-mortem of the same server's
recorded log, folded into one run with one verdict; nothing reported twice, one started and one done."""
from __future__ import annotations

from pathlib import Path

from tests.sources import replay
from triage import events as ev_
from triage.diagnose import diagnose_events
from triage.checklist import CheckOptions
from triage.recorder import Recorder, save
from triage.store import Store
from triage.target import Target

LOG = (replay.REAL / "logs" / "0.31.0-tiny-qwen3-livelock-livelock-031.log").read_text()


def test_checklist_and_post_mortem_are_one_run(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "t.db"))
    target = Target(url="http://vllm.test:8000", log_text=LOG, truncation=256)
    events = list(diagnose_events(target, options=CheckOptions(local_gpu=False),
                                  transport=replay.transport("0.31.0-tiny-qwen3-livelock")))
    kinds = [e.kind for e in events]
    assert kinds.count(ev_.STARTED) == 1 and kinds[0] == ev_.STARTED and kinds[-1] == ev_.DONE
    assert kinds.count(ev_.DONE) == 1 and events[0].run_kind == "diagnose"
    checks = [(e.finding.check, e.finding.title) for e in events if e.finding is not None]
    assert len(checks) == len(set(checks))  # nothing twice
    names = {c for c, _ in checks}
    assert "pooling-livelock-risk" in names  # the checklist's
    assert any(c.startswith("log-") for c in names)  # the post-mortem's
    assert any(e.kind == ev_.SAMPLES for e in events)  # the log's stats series

    run_id = save(iter(events), Recorder(store))
    rec = store.get_run(run_id or 0)
    assert rec is not None and rec.run.kind == "diagnose" and rec.run.status == "fail"
    assert rec.run.summary.startswith("fail: ")
    assert len(rec.findings) == len(checks)
