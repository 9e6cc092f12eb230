"""Issue 21's done-when, live and opt-in (VLLM_TRIAGE_SLOW_STEPS=1; marker real_server): a real 0.32.0 serving the
lab's big-qwen3 (~1.1B parameters; steps of 2048 tokens take 30 s or more on a 2-core box), `watch` while a
max_model_len - 1 request runs, then `probe --set conformance`: no stall, never "livelock". Several minutes, so
not in CI: tests/test_slow_steps.py replays the recording (tests/fixtures/real/slow-steps) on every run."""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab_servers import serve as lab_server, watch_one_request
from triage.cli import main
from triage.lab import LabServer
from triage.watch import STEP_IN_PROGRESS

pytestmark = [pytest.mark.real_server,
              pytest.mark.skipif(os.environ.get("VLLM_TRIAGE_SLOW_STEPS") != "1",
                                 reason="several minutes: set VLLM_TRIAGE_SLOW_STEPS=1")]

KV_BYTES = "268435456"  # 24 layers x 2 KV heads x 128: 4096 tokens need ~100 MB


@pytest.fixture(scope="module")
def big_032() -> Iterator[LabServer]:
    yield from lab_server("0.32.0", "big-qwen3", "defaults", ["--kv-cache-memory-bytes", KV_BYTES])


def test_032_steps_of_30s_never_stall_nor_say_livelock(big_032: LabServer, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    text, longest, done = watch_one_request(big_032, 2048, 900)
    assert done["version"] == "0.32.0" and done.get("status") == 200, done
    assert done["alerts"] == [] and "livelock" not in text.lower() and "STALLED" not in text, text[-3000:]
    assert longest["no_progress_s"] >= 25 and f"[{STEP_IN_PROGRESS} since" in text, (longest, text[-2000:])

    # what the probe prints (its text output; the JSON document also carries the checks' static explanations,
    # one of which names #55427 as the chunked-prefill failure to tell apart)
    rc = main(["probe", "--url", big_032.url, "--set", "conformance", "--deadline", "400",
               "--db", str(tmp_path / "p.db")])
    out = capsys.readouterr().out
    assert "livelock" not in out.lower() and "stuck-waiting" not in out and "STALL" not in out, out[-3000:]
    assert "conformance-chunked-prefill-shapes" in out and rc in (0, 1)
