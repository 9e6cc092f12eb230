"""The recordings named as proof of each record's readers exist, and the test named beside each replays it."""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.catalogue import MODES
from triage.catalogue.coverage import RECORDINGS, Recording

ROOT = Path(__file__).resolve().parents[2]
ALL = [(mode, r) for mode, recs in RECORDINGS.items() for r in recs]


def test_every_entry_is_a_record() -> None:
    assert set(RECORDINGS) <= set(MODES), set(RECORDINGS) - set(MODES)


@pytest.mark.parametrize(("mode", "rec"), ALL, ids=[f"{m}:{r.path.rsplit('/', 2)[-2:]}" for m, r in ALL])
def test_recording_exists_and_its_test_names_it(mode: str, rec: Recording) -> None:
    path, test = ROOT / rec.path, ROOT / rec.test
    assert path.is_file(), rec.path
    assert test.is_file(), rec.test
    if rec.kind == "built":
        assert rec.note and path == test  # the test builds the input; the note says what
        return
    if rec.kind == "edited":
        assert rec.note, "an edited recording says how the test changes it"
    text = test.read_text(encoding="utf-8")
    names = {path.name, path.stem, path.parent.name}
    assert any(f'"{n}' in text for n in names), f"{rec.test} names none of {sorted(names)}"
