"""The check -> checklist step registry names ids the checklist really emits."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.sources import replay
from triage.checklist import CheckOptions, run_checklist
from triage.steps import CHECK_STEPS, FALLBACK_STEP, STEPS, step_of
from triage.target import Target

LOG_031 = (replay.REAL / "0.31.0-tiny-qwen3-livelock" / "server.log").read_text()
CMD = ("vllm serve /m --runner pooling --convert embed --max-model-len 256 --max-num-batched-tokens 128 "
       "--enable-chunked-prefill --bogus-flag 1")


def test_every_step_is_known():
    assert set(CHECK_STEPS.values()) <= {s.id for s in STEPS} and FALLBACK_STEP in {s.id for s in STEPS}


def test_ids_of_a_real_run_have_their_own_step(tmp_path: Path):
    spec = Target(url="http://vllm.test:8000", cmdline=CMD, log_text=LOG_031, truncation=256)
    res = run_checklist(spec, options=CheckOptions(local_gpu=False),
                        transport=replay.transport("0.31.0-tiny-qwen3-livelock"))
    emitted = {f.check for f in res.findings}
    # every emitted id is declared with its step; none falls through by luck
    assert all(c in CHECK_STEPS for c in emitted), emitted
    assert step_of("truncate-vs-max-model-len") == "truncation" and "truncate-vs-max-model-len" in emitted
    assert step_of("pooling-livelock-risk") == "truncation"
    assert {step_of(c) for c in emitted} >= {"server", "version", "truncation", "chunked-prefill"}


@pytest.mark.parametrize(("check", "step"), [  # declared with each id (triage/catalogue/check_ids.py)
    pytest.param("pooling-livelock-risk", "truncation", id="livelock"),
    pytest.param("budget-below-max-model-len", "chunked-prefill", id="budget"),
    pytest.param("gpu-memory-shared", "gpu-memory", id="gpu-memory-shared"),
    pytest.param("log-oom", "flags", id="not-a-checklist-id"),
    pytest.param("zzz", "flags", id="fallback"),
])
def test_step_of(check, step):
    assert step_of(check) == step
