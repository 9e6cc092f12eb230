"""Issue 33, crashes: one timestamp-prefixed line with an impossible zone or a year at the edge must not abort
the whole post-mortem (the line has no usable time; the rest is read). Lines in the documented format of a
log collector's ISO-8601 prefix (hand-written: the format is what the issue attacked)."""
from __future__ import annotations

import pytest

from tests.logs.real_logs import LIVELOCK_031
from triage.logs import analyze_log


@pytest.mark.parametrize("prefix", ["2026-12-01T10:00:00+99:99", "9999-12-31T23:59:59-14:00",
                                    "0001-01-01T00:00:00+14:00"], ids=["zone-99-99", "year-9999", "year-1"])
def test_a_hostile_timestamp_line_does_not_abort_the_post_mortem(prefix: str) -> None:
    text = f"{prefix} (APIServer pid=1) INFO hostile line\n" + LIVELOCK_031.read_text()
    a = analyze_log(text, year=2026)
    plain = analyze_log(LIVELOCK_031, year=2026)
    assert [f.check for f in a.findings] == [f.check for f in plain.findings]


@pytest.mark.parametrize("prefix", ["2026-12-01T10:00:00+99:99", "9999-12-31T23:59:59-14:00"],
                         ids=["zone-99-99", "year-9999"])
def test_logs_command_prints_its_post_mortem(prefix: str, tmp_path, capsys) -> None:
    from triage.cli import main

    log = tmp_path / "server.log"
    log.write_text(f"{prefix} (APIServer pid=1) INFO hostile line\n" + LIVELOCK_031.read_text())
    rc = main(["logs", str(log), "--no-save"])
    err = capsys.readouterr().err
    assert rc in (0, 1) and "could not run" not in err, err
