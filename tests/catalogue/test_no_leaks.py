"""Knowledge about a vLLM bug lives in its catalogue record: no issue or PR number of the pooling livelock, its fix
or the KV-capacity hang is written anywhere else in the engine, the checks or the dashboard (comments included)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFS = re.compile(r"55427|39734|48039")


def test_refs_are_read_from_their_record() -> None:
    paths = [*ROOT.joinpath("triage").rglob("*.py"), *ROOT.joinpath("checks").rglob("*.py"),
             *ROOT.joinpath("ui").rglob("*.py"), ROOT / "app.py"]
    catalogue = ROOT / "triage" / "catalogue"
    hits = [f"{p.relative_to(ROOT)}:{n}" for p in paths if catalogue not in p.parents
            for n, line in enumerate(p.read_text().splitlines(), 1) if REFS.search(line)]
    assert hits == []
