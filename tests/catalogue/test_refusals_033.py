"""vLLM 0.33's new start-up refusals through the catalogue: kv-cache dtype vs model dtype, Model Runner V2 pooling.

Log lines: rendered from the 0.33.0 wheel's source (tests/fixtures/source/0.33.0-refusals/README.md says
how; no 0.33 server can run on these CPU machines). Which releases refuse is read from each release's
own source (triage/vllm/knowledge), never a version number in the check.
"""

from __future__ import annotations

from pathlib import Path

import checks.flags as flags_check
from triage.catalogue.startup import KV_DTYPE_MISMATCH, MRV2_POOLING
from triage.config import merge
from triage.logs.driver import analyze_log
from triage.sources import cmdline
from triage.vllm import knowledge

HERE = Path(__file__).parents[1] / "fixtures" / "source" / "0.33.0-refusals"


def _log(name: str) -> dict:
    result = analyze_log(HERE / name)
    return {f.check: f for f in result.findings}


def test_kv_dtype_refusal_line_is_read() -> None:
    f = _log("kv-dtype.log")["log-kv-cache-dtype"]
    assert f.status.value == "fail"
    assert "float16" in f.title and "bfloat16" in f.title
    assert f.fix == KV_DTYPE_MISMATCH.fix({"dtype": "bfloat16"})
    assert f.refs == list(KV_DTYPE_MISMATCH.refs)


def test_mrv2_refusal_line_is_read() -> None:
    f = _log("mrv2-pooling.log")["log-mrv2-pooling"]
    assert f.status.value == "fail" and "'score'" in f.title
    assert "VLLM_USE_V2_MODEL_RUNNER=0" in f.fix
    assert f.fix == MRV2_POOLING.fix({"supported": f.evidence.get("supported")})


def test_the_releases_that_refuse_come_from_their_source() -> None:
    refuses = [r for r in knowledge.releases() if flags_check._refuses_kv_dtype_mismatch(r)]
    assert refuses == ["0.33.0"]
    mrv2 = [r for r in knowledge.releases()
            if any("Model Runner V2 supports pooling tasks" in t for t in knowledge.release(r).refusals)]
    assert mrv2[0] == "0.27.0" and mrv2[-1] == "0.33.0"  # in the source from 0.27.0: not new in 0.33


def _kv(line: str) -> dict:
    cfg = merge([cmdline.collect(line)])
    return {f.check: f for f in flags_check.check(cfg)}


def test_cmdline_kv_dtype_on_033_refuses_to_start() -> None:
    f = _kv("docker run vllm/vllm-openai:v0.33.0 m --runner pooling --dtype bfloat16 --kv-cache-dtype float16")
    assert f["flags-kv-cache-dtype"].status.value == "fail"
    assert "refuses to start" in f["flags-kv-cache-dtype"].title


def test_cmdline_kv_dtype_before_033_is_silent_garbage() -> None:
    f = _kv("docker run vllm/vllm-openai:v0.31.0 m --runner pooling --dtype bfloat16 --kv-cache-dtype float16")
    assert f["flags-kv-cache-dtype"].status.value == "fail"
    assert "wrong vectors" in f["flags-kv-cache-dtype"].title


def test_cmdline_kv_dtype_matching_or_auto_is_fine() -> None:
    for line in ("vllm serve m --dtype bfloat16 --kv-cache-dtype bfloat16", "vllm serve m --kv-cache-dtype auto"):
        assert "flags-kv-cache-dtype" not in _kv(line)
