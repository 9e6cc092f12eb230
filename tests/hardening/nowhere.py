"""The search the round-4 issue asks for after each attack: no secret in the database, in any export of any run
(Markdown, HTML, JSON, every member of the support bundle), or in what the commands printed.

The exports are rendered in a child process (``EXPORT_ALL``), so no secret registered by the attack's own run in this
process can redact an export that would otherwise leak it: only what the database holds reaches them.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hostile import ROOT, db_bytes

EXPORT_ALL = (
    "import io, sys, zipfile\n"
    "from pathlib import Path\n"
    "from triage.export import FORMATS, render\n"
    "from triage.store import Store\n"
    "store, out = Store(sys.argv[1]), Path(sys.argv[2])\n"
    "ids = [r.id for r, _t in store.list_runs(limit=10_000)]\n"
    "assert ids, 'no run stored: the search would prove nothing'\n"
    "for i in ids:\n"
    "    for fmt in FORMATS:\n"
    "        data = render(store.get_run(i), fmt)\n"
    "        if fmt == 'bundle':\n"
    "            with zipfile.ZipFile(io.BytesIO(data)) as zf:\n"
    "                for n, name in enumerate(zf.namelist()):\n"
    "                    (out / f'{i}-bundle-{n}').write_bytes(zf.read(name))\n"
    "        else:\n"
    "            (out / f'{i}.{fmt}').write_bytes(data)\n"
    "print(len(ids))\n"
)


def exports(db: Path, tmp: Path) -> dict[str, bytes]:
    """Every export of every run in ``db``, by file name (bundle members one by one)."""
    out = tmp / f"exports-{len(list(tmp.glob('exports-*')))}"
    out.mkdir()
    path = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(ROOT)]))
    p = subprocess.run([sys.executable, "-c", EXPORT_ALL, str(db), str(out)], capture_output=True, text=True,
                       timeout=300, env={**os.environ, "PYTHONPATH": path}, cwd=str(ROOT))
    assert p.returncode == 0, p.stderr[-3000:]
    return {f.name: f.read_bytes() for f in sorted(out.iterdir())}


def assert_nowhere(secrets: list[str] | tuple[str, ...], db: Path, tmp: Path, *printed: str) -> None:
    """No ``secrets`` in ``printed``, the database's bytes, or any export of any of its runs."""
    stored = db_bytes(db)
    every = exports(db, tmp)
    for s in secrets:
        for text in printed:
            assert s not in text, f"{s!r} printed"
        assert s.encode() not in stored, f"{s!r} stored in the database"
        for name, data in every.items():
            assert s.encode() not in data, f"{s!r} in the export {name}"
