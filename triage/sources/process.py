"""The running server's own command line, read through psutil when the server listens on this host.

When triage runs on the server host (a loopback URL), the process that owns the listening port
states exactly what `vllm serve` was given; that settles which values were left to vLLM's defaults.
psutil finds the listener (``listening_process``: used by the checklist, watch and the throughput
probe) and reads its command line; anything it cannot see (a docker-proxy owning the port, no
permission, a platform without it) makes the source `unavailable`, never an error. Only the
command line is read: never the environment.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
from pathlib import Path

import psutil

from triage.sources import SourceResult, cmdline

SOURCE = "process"


def listening_process(port: int) -> psutil.Process | None:
    """The process listening on TCP ``port`` on this host (IPv4 or IPv6), or None."""
    try:
        conns = psutil.net_connections("tcp")
    except (psutil.Error, OSError):
        return None
    pid = next((c.pid for c in conns if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port
                and c.pid), None)
    try:
        return psutil.Process(pid) if pid else None
    except psutil.Error:
        return None


def listener_pid(port: int) -> int | None:
    """The PID listening on `port` (None when not found)."""
    p = listening_process(port)
    return p.pid if p is not None else None


def _no_gpu_devices() -> bool:
    return not glob.glob("/dev/nvidia[0-9]*") and not os.path.exists("/dev/kfd")


def tree_cpu_seconds(proc: psutil.Process) -> float:
    """User + system CPU seconds of ``proc`` and its children (a vLLM server's API process, engine and workers);
    a child that went away is left out."""
    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            continue
    return round(total, 3)


def is_vllm_argv(argv: list[str]) -> bool:
    """Is this the command line of a vLLM server: the `vllm` console script (run directly or by a Python),
    or `python -m vllm…`? A mention elsewhere (a test path under tests/vllm, an argument) is not."""
    args = [a for a in argv if a]
    if not args:
        return False
    if "-m" in args[:4]:
        i = args.index("-m")
        return i + 1 < len(args) and (args[i + 1] == "vllm" or args[i + 1].startswith("vllm."))
    if re.match(r"python[\d.]*$", Path(args[0]).name):  # a Python running a script: its first non-option
        args = [a for a in args[1:] if not a.startswith("-")][:1]
    return bool(args) and Path(args[0]).name == "vllm"


def collect(port: int, release: object = None) -> SourceResult:
    """Facts from the local vLLM process listening on `port`, parsed like a pasted command line.

    ``release``: the server's own release (its /version), so each spelling means what it means there.
    """
    res = SourceResult(SOURCE)
    proc = listening_process(port)
    if proc is None:
        res.unavailable = f"no local process found listening on port {port}"
        return res
    try:
        argv = proc.cmdline()
    except psutil.Error as e:
        res.unavailable = f"cannot read the command line of pid {proc.pid}: {type(e).__name__}"
        return res
    text = " ".join(shlex.quote(a) for a in argv if a)
    if not is_vllm_argv(argv):
        res.unavailable = f"port {port} belongs to pid {proc.pid} ({argv[0] if argv else '?'}), not vllm"
        return res
    parsed = cmdline.collect(text, release=release)
    for key, fact in parsed.facts.items():
        if key in ("cmdline_unknown_flags", "cmdline_myths", "launcher", "cmdline_removed_flags",
                   "cmdline_checked_against"):
            continue  # the server started, so its flags were valid for its version
        res.add(key, fact.value, f"pid {proc.pid} command line {fact.detail}".strip())
    res.stated_args = parsed.stated_args
    model = parsed.facts.get("model")
    if model is not None and isinstance(model.value, str):
        _model_dir_facts(res, Path(model.value))
    res.add("server_pid", proc.pid, f"listening on port {port}")
    # the line itself: a fix edits it rather than rebuilding one (triage.fixblocks; the store redacts keys)
    res.add("process_cmdline", text, f"pid {proc.pid} command line")
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
