"""Rerankers page and its ranking chart: the rerank set runs, the ranking check is drawn as scores per document.

The findings are the engine's, as recorded from a real 0.32.0 server (tests/fixtures/real/rerank/0.32.0-rerank-
no-overrides/: cosines that do not separate; the verdict computed by triage.probes.rerank_findings on them).
"""
from __future__ import annotations

import json
from pathlib import Path

from triage.findings import Finding, Status
from triage.probes import rerank_findings as rc
from ui.components import rerank_chart, session
from ui.values import ProbeRunView
from ui_apptest import no_exception, with_target
from ui_fakes import FakeServices

REC = Path(__file__).parent.parent / "fixtures" / "real" / "rerank" / "0.32.0-rerank-no-overrides"


def recorded_ranking() -> Finding:
    d = json.loads((REC / "rerank.json").read_text())
    sc = {r["index"]: r["relevance_score"] for r in d["body"]["results"]}
    docs = d["request"]["body"]["documents"]
    order = [1, 0, 2]  # capture.py's relevant document is its index 1
    case = {"query": d["request"]["body"]["query"], "documents": [docs[i] for i in order],
            "scores": [sc[i] for i in order]}
    return rc.check_ranking([case], None, False)


class RerankServices(FakeServices):
    def run_probes(self, form, sets, *, allow_hang, stall_s=5.0, deadline_s=30.0, on_event=None):  # type: ignore[override]
        self.calls.append(("run_probes", {"sets": sets, "allow_hang": allow_hang}))
        return ProbeRunView(31, [], [
            recorded_ranking(),
            Finding("rerank-client-cohere", Status.PASS, "Cohere SDK: same scores",
                    {"settings_to_copy": "cohere.ClientV2(base_url='http://h:1').rerank(...)"})])


def test_figure_marks_expected_and_served_ranks() -> None:
    case = recorded_ranking().evidence["cases"][0]
    fig = rerank_chart.figure(case)
    bar = fig.data[0]
    assert list(bar.x) == case["scores"] and bar.marker.color[0] == rerank_chart.EXPECTED_COLOUR
    assert bar.y[0].startswith("#1 expected · #1 served")
    rows = rerank_chart.order_rows(case)
    assert [r["rank"] for r in rows] == [1, 2, 3] and rows[0]["same"]


def test_page_runs_rerank_and_draws_the_ranking(use_services):
    fake = use_services(RerankServices())
    at = with_target("rerank").run()
    no_exception(at)
    at.button(key="rerank.run").click().run()
    no_exception(at)
    assert fake.calls[-1] == ("run_probes", {"sets": ["rerank"], "allow_hang": False})
    assert at.session_state[session.OPEN_RUN_KEY] == 31
    assert any("scores do not rank" in c.value for c in at.caption)
    assert any("ClientV2" in c.value for c in at.code)


def test_a_failed_ranking_is_not_drawn_green_and_flat_scores_are_said() -> None:
    """Issue 32: green "#1 expected · #1 served" bars at 0.97–0.99 stood beside "scores do not rank". On the
    recorded no-overrides server the expected document is red, and the chart says the scores do not separate."""
    f = recorded_ranking()
    assert f.status == Status.FAIL
    case = f.evidence["cases"][0]
    fig = rerank_chart.figure(case, f.status.value, f.evidence["flat_spread"])
    assert fig.data[0].marker.color[0] == rerank_chart.FAILED_COLOUR
    assert rerank_chart.EXPECTED_COLOUR not in fig.data[0].marker.color
    assert "they do not separate the documents" in fig.layout.title.text


def test_the_banner_names_the_cause_not_only_a_count(use_services):
    use_services(RerankServices())
    at = with_target("rerank").run()
    at.button(key="rerank.run").click().run()
    no_exception(at)
    banner = at.error[0].value
    assert banner.startswith("**FAIL** — ") and "2 findings, 1 failing" in banner
    assert banner.split("**FAIL** — ")[1].split(" · ")[0] not in ("2 findings", ""), banner
