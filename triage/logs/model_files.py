"""A pasted listing of a model directory (`ls -l`, `ls -lh`): the files vLLM needs that the copy lacks (issue 42).

A sentence-transformers checkpoint names its modules in modules.json (0_Transformer at the top, 1_Pooling/,
2_Normalize/, 2_Dense/ as folders); vLLM reads the pooling from 1_Pooling/config.json (vllm/transformers_utils/
config.py get_pooling_config, 0.6 … 0.32). A copy made of the top-level files alone (a download that skipped the
folders) has modules.json without them: the model fails to load its pooling config or pools by another default
(record pooling-mismatch). Users paste such a listing when asked what the directory holds.
"""

from __future__ import annotations

import re
from typing import Optional

from triage.catalogue import get
from triage.findings import Finding, Status

CHECK = "log-model-files"
MAX_SCAN = 262_144  # characters of a paste read for a listing
# one row of `ls -l` / `ls -lh` (coreutils): type and mode, links, owner, group, size, date, name
LS_ROW_RE = re.compile(
    r"^\s*(?P<type>[-dl])[rwxsStT-]{9}[.@+]?\s+\d+\s+\S+\s+\S+\s+(?P<size>[\d.,]+[KMGTP]?)\s+"
    r"\w{3}\s+\d{1,2}\s+(?:\d{1,2}:\d{2}|\d{4})\s+(?P<name>\S.*?)\s*$")
ST_MODULE_DIR_RE = re.compile(r"^\d+_(?:Pooling|Normalize|Dense)\b")
TOTAL_RE = re.compile(r"(?m)^\s*total \d+(?:[.,]\d+)?[KMGTP]?\s*$")


def listing(text: str) -> list[tuple[str, str, int]]:
    """(type, name, line) of each `ls -l` row in the paste."""
    if "-r" not in text and "dr" not in text:
        return []
    out = []
    for n, line in enumerate(text[:MAX_SCAN].splitlines(), start=1):
        m = LS_ROW_RE.match(line)
        if m:
            out.append((m["type"], m["name"].rstrip("/"), n))
    return out


def model_files_finding(text: str) -> Optional[Finding]:
    """WARN when a model directory's listing has modules.json but none of the module folders it names."""
    if "modules.json" not in text:
        return None
    rows = listing(text)
    names = {name for _t, name, _n in rows}
    if len(rows) < 3 or "config.json" not in names or "modules.json" not in names:
        return None
    if not TOTAL_RE.search(text[:MAX_SCAN]):  # `ls -l DIR` prints 'total N' first; a glob's listing shows no folders
        return None
    if any(ST_MODULE_DIR_RE.match(name) for name in names):
        return None
    rec = get("pooling-mismatch")
    dirs = [name for t, name, _n in rows if t == "d"]
    ev = {"listing": [{"line": n, "name": name, "type": t} for t, name, n in rows[:60]], "directories": dirs,
          "source": "log", "symptoms": []}
    title = ("The model directory has modules.json (a sentence-transformers checkpoint) but no 1_Pooling/ folder"
             + ("" if dirs else " (no folder at all)") + ": the copy lacks the module folders modules.json names, an "
             "incomplete download — vLLM reads the pooling from 1_Pooling/config.json, so the model fails to load "
             "its pooling config or pools by another default")
    fix = ("Download the whole repository, the sentence-transformers subdirectories included (1_Pooling/, and "
           "2_Normalize/ or 2_Dense/ where modules.json lists them): `huggingface-cli download REPO --local-dir DIR` "
           "(or `git clone` with git-lfs), not the top-level files alone; then start vLLM on that directory again.")
    return Finding.of(rec, CHECK, Status.WARN, title, ev, fix=fix)
