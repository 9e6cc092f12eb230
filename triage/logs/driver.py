"""The log post-mortem's driver: ``analyze_log`` feeds one LogPass (triage.logs.analyze) from any source.

Its own module so that the chunked scan (triage.logs.chunks), which builds on LogPass, and the pass itself import
no module that imports them back (the import-linter contract in pyproject.toml keeps triage.logs acyclic).
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from triage.logs.analyze import LogAnalysis, LogPass
from triage.logs.chunks import scan_file, scan_lines
from triage.logs.episodes import LOG_STALL_S
from triage.logs.lines import LogSource, physical_lines
from triage.logs.model_files import MAX_SCAN as MODEL_FILES_SCAN
from triage.logs.model_files import model_files_finding

_gc_lock = threading.Lock()
_gc_scans = 0  # file scans running now (the dashboard may run several, one per session thread)
_gc_was_on = False


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """No cyclic collection while file scans run: a scan builds many small tuples (points, tail entries) and no
    cycles, and each collection walks the memos (~6 % of the scan). The switch is process-wide, so scans count
    themselves: the first one turns it off and the last one to finish puts back what it found."""
    global _gc_scans, _gc_was_on
    with _gc_lock:
        if _gc_scans == 0:
            _gc_was_on = gc.isenabled()
            gc.disable()
        _gc_scans += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_scans -= 1
            if _gc_scans == 0 and _gc_was_on:
                gc.enable()


def analyze_log(
    source: LogSource, *, stall_s: float = LOG_STALL_S, year: int | None = None, max_samples: int = 20_000
) -> LogAnalysis:
    """Analyse a log (path, text, bytes, file object or iterable of lines) in one streaming pass.

    A path to a regular file is read in byte chunks (triage.logs.chunks: the records cut out by one regex over the
    chunk, the rest line by line); lines from any other source are batched into such chunks where their line ends
    allow it (scan_lines). Every way gives the same analysis.
    """
    run = LogPass(stall_s, year, max_samples)
    if isinstance(source, (str, os.PathLike)) and not (isinstance(source, str) and "\n" in source) and _regular(source):
        with _no_cyclic_gc():
            scan_file(run, source)
            analysis = run.finish()
            # the pass's memos and state go now, by reference count: left for the collector, which runs when the
            # switch goes back on, they were walked once more (~3 % of the scan)
            del run
        return _with_listing(analysis, _head(source))
    elif BATCH_LINES:
        scan_lines(run, physical_lines(source))
    else:
        for lineno, raw in enumerate(physical_lines(source), start=1):
            run.line(raw, lineno)
    return _with_listing(run.finish(), source if isinstance(source, str) else "")


def _head(path: Any) -> str:
    """The start of a log file, for the whole-paste readers (a model directory's listing)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(MODEL_FILES_SCAN)
    except OSError:
        return ""


def _with_listing(analysis: LogAnalysis, text: str) -> LogAnalysis:
    """A pasted listing of a model directory that lacks files vLLM reads (triage.logs.model_files)."""
    found = model_files_finding(text[:MODEL_FILES_SCAN]) if text else None
    if found is not None:
        analysis.findings.insert(0, found)
    return analysis


# lines from a file object or an iterable go through the chunked scan in batches where their ends allow it
# (triage.logs.chunks.scan_lines); off: every line through LogPass.line (tests compare the two)
BATCH_LINES = True


def _regular(source: Any) -> bool:
    try:
        return (not isinstance(source, str) or len(source) < 4096) and os.path.isfile(source)
    except (OSError, ValueError):
        return False
