"""Report page: the open run as downloads in every format; the session's API key is passed as a secret."""
from __future__ import annotations

from ui.components import report_file, session
from triage.target import Target
from ui_apptest import no_exception, page, with_target
from ui_fakes import URL, FakeServices


def test_downloads_for_open_run(use_services):
    fake = use_services(FakeServices())
    at = with_target("report", Target(URL, api_key="sk-secret-123"))
    at.session_state[session.OPEN_RUN_KEY] = 3
    at.run()
    no_exception(at)
    assert not [c for c in fake.calls if c[0] == "export"], "files are rendered on click, not on every rerun"
    assert [c.value for c in at.caption if c.value.startswith("triage-run-3")] == [
        "triage-run-3.md", "triage-run-3.html", "triage-run-3.json", "triage-run-3.zip"]


def test_deferred_file_carries_the_export_and_the_secret():
    fake = FakeServices()
    assert report_file.maker(fake, 3, "md", "sk-secret-123")() == b"run 3 as md"
    assert fake.calls[-1] == ("export", (3, "md", ("sk-secret-123",)))


def test_deferred_file_failure_is_readable():
    fake = FakeServices(error="boom")
    assert report_file.maker(fake, 3, "html", None)().startswith(b"Export of run 3 as html failed: boom")


def test_no_run_yet(use_services):
    use_services(FakeServices(n_runs=0))
    at = page("report").run()
    no_exception(at)
    assert any("No run yet" in i.value for i in at.info)
