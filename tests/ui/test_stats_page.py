"""Engine stats page: a fragment scrapes once per tick; the stall alert is shown with its time."""
from __future__ import annotations

from ui_apptest import no_exception, with_target
from ui_fakes import URL, FakeServices


def test_alert_and_latest_values(use_services):
    fake = use_services(FakeServices())
    at = with_target("stats").run()
    no_exception(at)
    assert ("stats_tick", URL) in fake.calls
    assert "livelock" in at.error[0].value
    assert [m.label for m in at.metric] == ["num_requests_running", "num_requests_waiting"]


def test_scrape_error_is_a_message(use_services):
    use_services(FakeServices(error="Engine stats: Cannot connect to the server."))
    at = with_target("stats").run()
    no_exception(at)
    assert any("Cannot connect" in e.value for e in at.error)
