"""#55427 for a pasted `docker run` plus the user's answers: GPUs x versions x lengths through merge and the check.

The budget is never stated here: it follows from the stated GPU by vLLM's tier rule (triage.vllm.defaults,
facts §2), exactly as it would from an NVML reading; the grade is the catalogue record's.
"""

from __future__ import annotations

import pytest

from checks import livelock
from triage.answers import GiB
from triage.catalogue import POOLING_LIVELOCK
from triage.config import merge
from triage.findings import Status
from triage.sources import SourceResult, cmdline, nvml

SEED = (
    "docker run --gpus all -p 8094:8000 vllm/vllm-openai:v{version} Qwen/Qwen3-Embedding-4B "
    "--runner pooling --convert embed --max-model-len {mml}"
)

GPUS = [
    pytest.param("NVIDIA GeForce RTX 3080 Ti", 12 * GiB, 2048, "(< 70 GiB)", id="3080ti-12g"),
    pytest.param("NVIDIA GeForce RTX 4090", 24 * GiB, 2048, "(< 70 GiB)", id="4090-24g"),
    pytest.param("NVIDIA A100-SXM4-80GB", 80 * GiB, 2048, "A100", id="a100-80g"),
    pytest.param("NVIDIA H100 80GB HBM3", 80 * GiB, 8192, "(>= 70 GiB, not A100", id="h100-80g"),
    pytest.param("NVIDIA H200", 141 * GiB, 8192, "(>= 70 GiB, not A100", id="h200-141g"),
    pytest.param("NVIDIA B200", 180 * GiB, 16384, ">= 160 GiB", id="b200-180g"),
]
VERSIONS = [
    pytest.param("0.10.2", True, id="v0.10.2"),
    pytest.param("0.28.0", True, id="v0.28.0"),
    pytest.param("0.31.0", True, id="v0.31.0"),
    pytest.param("0.32.0", False, id="v0.32.0"),
]
LENGTHS = [pytest.param(n, id=f"len{n}") for n in (512, 2048, 8192, 32768)]


def _config(version: str, mml: int, gpu: str, mem: int, *, nvml_reading: bool = False):  # noqa: ANN202
    results: list[SourceResult] = [cmdline.collect(SEED.format(version=version, mml=mml))]
    answers: dict[str, object] = {}
    if nvml_reading:
        results.append(nvml.collect({"backend": "cuda", "gpus": [{"name": gpu, "memory_total": mem}]}))
    else:
        answers = {"gpu_name": gpu, "gpu_memory_total_bytes": mem}
    return merge(results, {"truncate_prompt_tokens": mml}, answers)


@pytest.mark.parametrize("gpu,mem,budget,tier", GPUS)
@pytest.mark.parametrize("version,affected", VERSIONS)
@pytest.mark.parametrize("mml", LENGTHS)
def test_table(gpu: str, mem: int, budget: int, tier: str, version: str, affected: bool, mml: int) -> None:
    if gpu == "NVIDIA B200" and version == "0.10.2":
        # the >= 160 GiB tier arrived in 0.28.0 (each release's get_batch_defaults: triage/vllm/knowledge)
        budget, tier = 8192, "(>= 70 GiB, not A100)"
    cfg = _config(version, mml, gpu, mem)
    b = cfg.fact("max_num_batched_tokens")
    assert (b.value, b.source) == (budget, "default-rule")
    assert tier in b.detail and "stated by user" in b.detail  # which tier, from whose GPU
    f = livelock.check(cfg)
    if not affected:
        assert f.status == Status.PASS and POOLING_LIVELOCK.fix_ref in f.title
    elif budget <= mml:
        assert f.status == Status.FAIL and POOLING_LIVELOCK.refs[0] in f.title
        assert f.fix == POOLING_LIVELOCK.fix(cfg)
    else:
        assert f.status == Status.WARN and "under load" in f.title
    if affected:
        assert f.evidence["budget_tier"] == b.detail


def test_stated_gpu_is_graded_as_an_nvml_reading() -> None:
    for gpu, mem in (("NVIDIA GeForce RTX 3080 Ti", 12 * GiB), ("NVIDIA H200", 141 * GiB), ("NVIDIA B200", 180 * GiB)):
        stated, read = _config("0.28.0", 4096, gpu, mem), _config("0.28.0", 4096, gpu, mem, nvml_reading=True)
        assert stated.get("max_num_batched_tokens") == read.get("max_num_batched_tokens")
        assert livelock.check(stated).status == livelock.check(read).status


def test_seed_deployment_answered() -> None:
    """The #55427 report: v0.28.0, max_model_len 2048, truncate 2048, RTX 3080 Ti 12 GiB -> FAIL."""
    cfg = _config("0.28.0", 2048, "NVIDIA GeForce RTX 3080 Ti", 12 * GiB)
    f = livelock.check(cfg)
    assert f.status == Status.FAIL
    assert POOLING_LIVELOCK.refs[0] in f.title and f.refs == list(POOLING_LIVELOCK.refs)
    pre = f.evidence["preconditions"]["max_num_batched_tokens"]
    assert pre["value"] == 2048 and pre["source"] == "default-rule" and pre["holds"] is True
    fix = POOLING_LIVELOCK.fix(cfg)
    assert f.fix == fix and all(n in fix for n in ("1) ", "2) ", "3) "))
    assert cfg.fact("gpu_name").source == "user"


def test_seed_deployment_on_the_fixed_release_passes() -> None:
    f = livelock.check(_config("0.32.0", 2048, "NVIDIA GeForce RTX 3080 Ti", 12 * GiB))
    assert f.status == Status.PASS


def test_seed_deployment_without_the_gpu_asks_for_it() -> None:
    cfg = merge([cmdline.collect(SEED.format(version="0.28.0", mml=2048))], {"truncate_prompt_tokens": 2048})
    f = livelock.check(cfg)
    assert f.status == Status.UNKNOWN
    keys = {k for q in f.evidence["questions"] for k in q["keys"]}
    assert {"max_num_batched_tokens", "gpu_name", "gpu_memory_total_bytes"} <= keys
