"""Local GPUs through NVML (nvidia-ml-py), ROCm through amdsmi when importable; a recorded dict replays.

Recorded shape (tests/fixtures/nvml/*.json): {"driver_version", "cuda_driver_version",
"gpus": [{"name", "memory_total", "memory_free", "memory_used"}]} with memory in bytes.
No driver or no library gives `unavailable = "no GPU visible …"`, never an exception.
"""

from __future__ import annotations

from typing import Any

from triage.sources import SourceResult

SOURCE = "nvml"


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def read_nvml() -> dict[str, Any]:
    """Ask the NVIDIA driver; raises when there is no driver (the caller turns that into a value)."""
    import pynvml

    pynvml.nvmlInit()
    try:
        cuda = pynvml.nvmlSystemGetCudaDriverVersion()  # e.g. 12080 -> "12.8"
        out: dict[str, Any] = {
            "backend": "cuda",
            "driver_version": _s(pynvml.nvmlSystemGetDriverVersion()),
            "cuda_driver_version": f"{cuda // 1000}.{(cuda % 1000) // 10}",
            "gpus": [],
        }
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            out["gpus"].append(
                {
                    "name": _s(pynvml.nvmlDeviceGetName(h)),
                    "memory_total": int(mem.total),
                    "memory_free": int(mem.free),
                    "memory_used": int(mem.used),
                }
            )
        return out
    finally:
        pynvml.nvmlShutdown()


def read_amdsmi() -> dict[str, Any]:
    """ROCm GPUs through amdsmi (only when the library is importable)."""
    import amdsmi  # type: ignore[import-not-found]

    amdsmi.amdsmi_init()
    try:
        out: dict[str, Any] = {"backend": "rocm", "driver_version": "", "cuda_driver_version": None, "gpus": []}
        for h in amdsmi.amdsmi_get_processor_handles():
            info = amdsmi.amdsmi_get_gpu_asic_info(h)
            total = int(amdsmi.amdsmi_get_gpu_memory_total(h, amdsmi.AmdSmiMemoryType.VRAM))
            used = int(amdsmi.amdsmi_get_gpu_memory_usage(h, amdsmi.AmdSmiMemoryType.VRAM))
            out["gpus"].append(
                {
                    "name": str(info.get("market_name", "AMD GPU")),
                    "memory_total": total,
                    "memory_free": total - used,
                    "memory_used": used,
                }
            )
            try:
                out["driver_version"] = str(amdsmi.amdsmi_get_gpu_driver_info(h).get("driver_version", ""))
            except Exception:
                pass
        return out
    finally:
        amdsmi.amdsmi_shut_down()


def collect(recorded: dict[str, Any] | None = None) -> SourceResult:
    """GPU facts from a recorded dict, else NVML, else amdsmi; 'no GPU visible' when none answers."""
    res = SourceResult(SOURCE)
    data = recorded
    errors: list[str] = []
    if data is None:
        for reader in (read_nvml, read_amdsmi):
            try:
                data = reader()
                if data.get("gpus"):
                    break
            except Exception as e:  # ImportError, NVMLError_LibraryNotFound, driver not loaded …
                errors.append(f"{reader.__name__}: {type(e).__name__}: {e}")
                data = None
    if not data or not data.get("gpus"):
        res.unavailable = "no GPU visible on this machine" + (f" ({'; '.join(errors)})" if errors else "")
        return res
    gpus = data["gpus"]
    first = gpus[0]
    detail = "recorded NVML data" if recorded is not None else f"{data.get('backend', 'cuda')} on this machine"
    res.add("gpus", gpus, detail)
    res.add("gpu_count", len(gpus), detail)
    res.add("gpu_name", first.get("name"), detail + " (GPU 0)")
    res.add("gpu_memory_total_bytes", int(first["memory_total"]) if first.get("memory_total") else None, detail)
    res.add(
        "gpu_memory_free_bytes", int(first["memory_free"]) if first.get("memory_free") is not None else None, detail
    )
    res.add("driver_version", data.get("driver_version") or None, detail)
    res.add("cuda_version", data.get("cuda_driver_version") or None, detail + " (CUDA driver API version)")
    res.add("local_gpu_backend", data.get("backend", "cuda"), detail)
    return res
