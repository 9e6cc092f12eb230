"""A client library release other than the installed one, for the tests that need the release showing a bug.

``pinned(dist, version)`` installs that one distribution, without its dependencies (those of the ``clients``
extra serve it), into the lab cache (``pip install --no-deps --target``, from PyPI, once) and returns the folder
to put first on PYTHONPATH of a child process: the release a user has, run by the real tool. Run as a script it
prints the folder (the capture script's instructions use it).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# LiteLLM 1.83.14: the last release whose openai/ route writes encoding_format: null (1.84.0 sends "float"; the
# extra resolves to a later one, which omits the field): the release a user who pinned LiteLLM in early 2026 runs.
LITELLM_NULL = ("litellm", "1.83.14")


def pinned(dist: str, version: str) -> Path:
    from triage.lab.paths import lab_dir

    target = lab_dir().parent / "clients" / f"{dist}-{version}"
    if not (target / f"{dist}-{version}.dist-info").exists():
        target.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                        f"{dist}=={version}"], check=True, timeout=600)
    return target


if __name__ == "__main__":
    print(pinned(*LITELLM_NULL))
