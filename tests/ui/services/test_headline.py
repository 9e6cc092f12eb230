"""ui.services.headline: the banner names the worst root cause, its tally and its step (pure, no store)."""
from __future__ import annotations

from triage.findings import Finding, Status
from ui.services.headline import HeadlineService


def test_no_findings_is_unknown():
    h = HeadlineService().headline([])
    assert (h.status, h.cause) == ("unknown", "No findings")


def test_the_worst_finding_leads_and_the_tally_counts_each_status():
    fs = [Finding("server-reachable", Status.PASS, "answers"), Finding("vllm-version", Status.WARN, "old release"),
          Finding("server-reachable", Status.PASS, "again")]
    h = HeadlineService().headline(fs)
    assert h.status == "warn" and h.check == "vllm-version"
    assert h.tally == "1 warn · 2 pass"


def test_scope_reads_the_config_sources():
    assert isinstance(HeadlineService().scope({"sources": {}}, ()), list)
