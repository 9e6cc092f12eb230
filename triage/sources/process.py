"""The running server's own command line, read from /proc when the server listens on this host.

When triage runs on the server host (a loopback URL), the process that owns the listening port
states exactly what `vllm serve` was given; that settles which values were left to vLLM's defaults.
Linux only; anything else (no /proc, a docker-proxy owning the port, no permission) makes the
source `unavailable`, never an error. Only the command line is read: never the environment.
"""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

from triage.sources import SourceResult, cmdline

SOURCE = "process"
_PROC = Path("/proc")


def _listen_inodes(port: int, proc: Path = _PROC) -> set[str]:
    inodes: set[str] = set()
    for table in ("net/tcp", "net/tcp6"):
        try:
            lines = (proc / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for ln in lines:
            parts = ln.split()
            if len(parts) > 9 and parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(parts[9])
    return inodes


def listener_pid(port: int, proc: Path = _PROC) -> int | None:
    """The PID whose open sockets include the one listening on `port` (None when not found)."""
    inodes = _listen_inodes(port, proc)
    if not inodes:
        return None
    wanted = {f"socket:[{i}]" for i in inodes}
    for fd in glob.glob(str(proc / "[0-9]*" / "fd" / "*")):
        try:
            if os.readlink(fd) in wanted:
                return int(fd.split("/")[-3])
        except OSError:
            continue
    return None


def _no_gpu_devices() -> bool:
    return not glob.glob("/dev/nvidia[0-9]*") and not os.path.exists("/dev/kfd")


def collect(port: int, proc: Path = _PROC) -> SourceResult:
    """Facts from the local vLLM process listening on `port`, parsed like a pasted command line."""
    res = SourceResult(SOURCE)
    pid = listener_pid(port, proc)
    if pid is None:
        res.unavailable = f"no local process found listening on port {port}"
        return res
    try:
        argv = (proc / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError as e:
        res.unavailable = f"cannot read /proc/{pid}/cmdline: {e}"
        return res
    text = " ".join(_quote(a.decode(errors="replace")) for a in argv if a)
    if not re.search(r"\bvllm\b|vllm\.entrypoints", text):
        res.unavailable = f"port {port} belongs to pid {pid} ({argv[0].decode(errors='replace')}), not vllm"
        return res
    parsed = cmdline.collect(text)
    for key, fact in parsed.facts.items():
        if key in ("cmdline_unknown_flags", "cmdline_myths", "launcher"):
            continue  # the server started, so its flags were valid for its version
        res.add(key, fact.value, f"/proc/{pid}/cmdline {fact.detail}".strip())
    res.stated_args = parsed.stated_args
    model = parsed.facts.get("model")
    if model is not None and isinstance(model.value, str):
        _model_dir_facts(res, Path(model.value))
    res.add("server_pid", pid, f"listening on port {port}")
    if _no_gpu_devices():
        res.add("device", "cpu", "the server runs on this host, which has no /dev/nvidia* nor /dev/kfd")
    return res


_POOLING_MODES = (
    ("pooling_mode_lasttoken", "LAST"),
    ("pooling_mode_cls_token", "CLS"),
    ("pooling_mode_mean_tokens", "MEAN"),
)


def _model_dir_facts(res: SourceResult, model_dir: Path) -> None:
    """A local model directory tells the architecture and the sentence-transformers pooling mode."""
    import json

    try:
        cfg = json.loads((model_dir / "config.json").read_text())
    except (OSError, ValueError):
        return
    archs = cfg.get("architectures") or []
    if archs:
        res.add("architecture", str(archs[0]), f"{model_dir}/config.json architectures")
    try:
        pool = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
    except (OSError, ValueError):
        return
    for key, kind in _POOLING_MODES:
        if pool.get(key):
            res.add("pooling_type", kind, f"{model_dir}/1_Pooling/config.json {key} (sentence-transformers)")
            break


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)
