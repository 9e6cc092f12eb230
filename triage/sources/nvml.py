"""Local GPUs through NVML (nvidia-ml-py), ROCm through amdsmi when importable; a recorded dict replays.

Recorded shape (tests/fixtures/nvml/*.json): {"driver_version", "cuda_driver_version",
"gpus": [{"name", "memory_total", "memory_free", "memory_used", "utilization_gpu"?, "compute_capability"?,
"processes"?: [{"pid", "used_memory"}]}]} with memory in bytes. The optional keys judge the shared-GPU
start-up refusal (other processes' memory), dtype (bf16 needs compute capability >= 8.0) and the
throughput bottleneck (GPU utilization during a load test); older recordings without them still replay.
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
            gpu: dict[str, Any] = {
                "name": _s(pynvml.nvmlDeviceGetName(h)),
                "memory_total": int(mem.total),
                "memory_free": int(mem.free),
                "memory_used": int(mem.used),
            }
            gpu.update(_optional(pynvml, h))
            out["gpus"].append(gpu)
        return out
    finally:
        pynvml.nvmlShutdown()


def _optional(pynvml: Any, h: Any) -> dict[str, Any]:
    """Utilization, compute capability and the processes holding memory; each may be unsupported."""
    out: dict[str, Any] = {}
    try:
        out["utilization_gpu"] = int(pynvml.nvmlDeviceGetUtilizationRates(h).gpu)
    except Exception:  # NVMLError_NotSupported on some vGPU/MIG setups
        pass
    try:
        out["compute_capability"] = list(pynvml.nvmlDeviceGetCudaComputeCapability(h))
    except Exception:
        pass
    try:
        procs = list(pynvml.nvmlDeviceGetComputeRunningProcesses(h))
        procs += list(pynvml.nvmlDeviceGetGraphicsRunningProcesses(h))
        out["processes"] = [
            {"pid": int(p.pid), "used_memory": int(p.usedGpuMemory) if p.usedGpuMemory is not None else None}
            for p in procs
        ]
    except Exception:  # in a container NVML may not see other namespaces' processes
        pass
    return out


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
    res.add("gpu_utilization_percent", first.get("utilization_gpu"), detail + " (GPU 0, NVML utilization rates)")
    cc = first.get("compute_capability")
    res.add("gpu_compute_capability", ".".join(str(x) for x in cc) if cc else None, detail + " (GPU 0)")
    if first.get("processes") is not None:
        res.add("gpu_processes", first["processes"], detail + " (GPU 0, compute + graphics processes)")
    return res
