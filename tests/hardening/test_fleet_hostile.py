"""Issue 22, fleet: a hostile Prometheus (tests/hardening/hostile_prom.py, a test double on purpose) cannot hold a
scan past its deadline, fill memory, end the scan with one bad chunk, or forge a line in the text output; a
replica's /version is read within a deadline and a byte cap. Each command runs in a child process whose peak RSS
is measured (bound 600 MB) and whose operation (timed inside the child, after its imports: not the
interpreter's start-up) is bounded by its stated deadline + 5 s."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile import assert_clean, measured  # noqa: E402
from hostile_prom import HostileProm  # noqa: E402

LIMIT_MB = 600


def fleet(url: str, tmp: Path, *extra: str, timeout: float = 8) -> object:
    return measured("fleet", "--prometheus", url, "--since", "30m", "--db", str(tmp / "f.db"), "--timeout",
                    str(timeout), "--no-version", *extra, timeout=timeout + 60)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode,cap", [("trickle", "deadline"), ("huge", "byte cap"), ("many-series", "series cap")])
def test_prometheus_answers_are_bounded(mode: str, cap: str, tmp_path: Path) -> None:
    with HostileProm(mode) as p:
        r = fleet(p.url, tmp_path, "--format", "json")
    assert_clean(r)
    assert r.elapsed_s < 8 + 5, f"{mode}: {r.elapsed_s:.1f} s"  # the scan itself, not the interpreter's start
    assert r.peak_mb < LIMIT_MB, f"{mode}: {r.peak_mb:.0f} MB"
    doc = json.loads(r.out)
    errors = [e for e in doc["fleet"]["errors"]]
    text = json.dumps(errors)
    want = {"deadline": "deadline", "byte cap": "byte cap", "series cap": "series cap"}[cap]
    assert want in text, text[:600]


@pytest.mark.timeout(60)
def test_a_huge_range_is_a_usage_error_naming_the_cap(tmp_path: Path) -> None:
    r = measured("fleet", "--prometheus", "http://127.0.0.1:1", "--since", "99999999999999w", timeout=30)
    assert_clean(r)
    assert r.rc == 2 and r.peak_mb < 200 and "at most" in r.err
    r = measured("fleet", "--prometheus", "http://127.0.0.1:1", "--since", "520w", "--step", "1s", timeout=30)
    assert r.rc == 2 and "steps cap" in r.err and r.peak_mb < 200


@pytest.mark.timeout(60)
def test_one_malformed_chunk_is_a_finding_not_the_end_of_the_scan(tmp_path: Path) -> None:
    with HostileProm("one-bad-chunk") as p:
        r = fleet(p.url, tmp_path, "--format", "json")
    assert_clean(r)
    doc = json.loads(r.out)
    checks = {f["check"] for f in doc["findings"]}
    assert "fleet-prometheus" in checks, checks  # the bad chunks, said
    assert doc["fleet"]["replicas"], "the good chunks still gave the replica"


@pytest.mark.timeout(60)
def test_a_newline_in_a_label_cannot_forge_a_line(tmp_path: Path) -> None:
    with HostileProm("label-newline") as p:
        r = fleet(p.url, tmp_path)
    assert_clean(r)
    assert "forged" in r.out, r.out[-1500:]  # shown, on the replica's own line
    assert not any(ln.lstrip().startswith("[PASS] forged") for ln in r.out.splitlines()), r.out


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["version-trickle", "version-huge"])
def test_a_replica_version_is_read_within_a_deadline_and_a_cap(mode: str) -> None:
    with HostileProm(mode) as p:
        code = ("import sys, time; import triage.http; from triage.fleet.scan import _version; "  # imports before
                "t = time.monotonic(); "  # the clock: the read is timed, not the import of httpx
                f"v = _version({p.url!r}, 2.0); print(v, round(time.monotonic() - t, 1))")
        r = measured("-c", code, python=True, timeout=30)
    assert r.rc == 0, r.err
    version, secs = r.out.split()
    assert version == "None" and float(secs) < 2 + 1, r.out
    assert r.peak_mb < 200, r.peak_mb


@pytest.mark.timeout(120)
def test_fleet_timeout_covers_interval_discovery(tmp_path: Path) -> None:
    """Issue 33: interval discovery took a fixed 10 s per request (up to 6 of them) past --timeout; now the scan's
    --timeout bounds discovery and range queries together (discovery falls back to the default interval)."""
    with HostileProm("discovery-trickle") as p:
        r = fleet(p.url, tmp_path, "--format", "json", timeout=6)
    assert_clean(r)
    assert r.elapsed_s < 6 + 5, f"{r.elapsed_s:.1f} s"  # was ~60 s: six discovery requests of 10 s each
    doc = json.loads(r.out)
    assert doc["fleet"]["scrape_interval"]["source"] == "default", doc["fleet"]["scrape_interval"]
