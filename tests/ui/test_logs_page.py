"""Logs page: paste, analyze, see findings, config and series; a bad log is a message."""
from __future__ import annotations

from ui.components import session
from ui_apptest import no_exception, page
from ui_fakes import FakeServices


def test_paste_and_analyze(use_services):
    fake = use_services(FakeServices())
    at = page("logs").run()
    at.button(key="logs.analyze").click().run()  # enabled from the start: the first click counts
    assert any("Nothing to analyze yet" in e.value for e in at.error) and not fake.calls
    at.text_area(key="logs.input.paste").set_value("INFO Engine 000: Avg prompt throughput: 0.0 tokens/s").run()
    at.button(key="logs.analyze").click().run()
    no_exception(at)
    assert fake.calls[-1][0] == "analyze_log"
    assert any("Engine stalled" in e.label for e in at.expander)
    assert [s.value for s in at.subheader] == ["Findings", "Start-up config", "Stats series"]
    assert at.session_state[session.OPEN_RUN_KEY] == 13


def test_bad_log_is_a_message(use_services):
    use_services(FakeServices())
    at = page("logs").run()
    at.text_area(key="logs.input.paste").set_value("this is not a log").run()
    at.button(key="logs.analyze").click().run()
    no_exception(at)
    assert any("does not look like a vLLM log" in e.value for e in at.error)
