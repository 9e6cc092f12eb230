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


class _GapServices(FakeServices):
    """The scrapes of a loaded box: one 45 s hole, then (``stale``) none for 30 s up to now."""

    def __init__(self, stale: bool) -> None:
        super().__init__()
        self.stale = stale

    def stats_tick(self, form, session, stall_s=10.0, interval_s=1.0):  # type: ignore[no-untyped-def]
        from ui import values as v

        t0 = 1_795_986_100.0  # 21:01:40 UTC
        gaps = [(t0, t0 + 45.0)] + ([(t0 + 60.0, t0 + 90.0)] if self.stale else [])
        return v.StatsView(None, {"num_requests_running": 1.0}, None, 40, None, 0, last_ts=t0 + 60.0,
                           gaps=tuple(gaps), stale_s=30.0 if self.stale else None)


def test_a_scrape_gap_is_stated_and_a_stale_series_is_not_called_fine(use_services):
    """Issue 32: scrapes stopped for ~45 s and the page said "No stall now", "last scrape" not marked stale."""
    use_services(_GapServices(stale=True))
    at = with_target("stats").run()
    no_exception(at)
    said = at.warning[0].value.replace("\\", "")  # md.text escapes Markdown's specials
    assert said.startswith("**Stale**: no sample for 30 s — cannot judge (last scrape 21:02:40 UTC)"), said
    captions = [c.value.replace("\\", "") for c in at.caption]  # md.text escapes Markdown's specials
    assert not any("No stall now" in c for c in captions)
    assert "Scrape gaps (drawn grey, the lines broken): 21:01:40–21:02:25 UTC: no sample for 45 s — cannot judge" \
        in captions
    use_services(_GapServices(stale=False))
    at = with_target("stats").run()
    assert not at.warning and any(c.startswith("No stall now") and "last scrape 21:02:40 UTC" in c
                                  for c in [c.value.replace("\\", "") for c in at.caption])
