"""Which recording proves each record's evidence reader: record id -> the fixtures its readers' tests replay.

The mapping is data, ``coverage.toml`` beside this module: one place for what docs/FAILURE-MODES.md shows
(``python -m triage catalogue --markdown``). A path is relative to the repository root (the file gives it relative
to tests/fixtures/real/ unless it starts with tests/); ``test`` is the test file that replays it, so a reader of the
table can run it. ``kind`` says how honest the proof is: ``real`` (a real server's output, as recorded), ``edited``
(a real recording the test changes, ``note`` says how), ``source`` (rendered from a release's source, where a lab
server cannot show it), ``built`` (the test builds the input; no recording). A record with no entry has no recorded
proof yet, and the table says so. tests/catalogue/test_coverage.py checks that every path and test exists and
that the test names the recording.
"""
from __future__ import annotations

import pathlib
import tomllib
from dataclasses import dataclass
from typing import Literal, get_args

Kind = Literal["real", "edited", "source", "built"]
_REAL = "tests/fixtures/real/"


@dataclass(frozen=True)
class Recording:
    path: str
    test: str
    kind: Kind = "real"
    note: str = ""


def _r(path: str, test: str, kind: Kind = "real", note: str = "") -> Recording:
    if kind not in get_args(Kind):
        raise ValueError(f"coverage.toml: {path}: kind {kind!r} is not one of {get_args(Kind)}")
    return Recording(path if path.startswith("tests/") else _REAL + path, test, kind, note)


def _load() -> dict[str, tuple[Recording, ...]]:
    data = tomllib.loads(pathlib.Path(__file__).with_name("coverage.toml").read_text(encoding="utf-8"))
    return {mode: tuple(_r(**rec) for rec in recs) for mode, recs in data.items()}


RECORDINGS: dict[str, tuple[Recording, ...]] = _load()


def recordings(mode_id: str) -> tuple[Recording, ...]:
    return RECORDINGS.get(mode_id, ())
