"""Report page: the open run as downloads in every format; the session's API key is passed as a secret."""
from __future__ import annotations

from ui.components import session
from ui.values import TargetForm
from ui_apptest import no_exception, page
from ui_fakes import URL, FakeServices


def test_downloads_for_open_run(use_services):
    fake = use_services(FakeServices())
    at = page("report")
    at.session_state[session.OPEN_RUN_KEY] = 3
    at.session_state[session.TARGET_KEY] = TargetForm(URL, api_key="sk-secret-123")
    at.run()
    no_exception(at)
    exports = [c[1] for c in fake.calls if c[0] == "export"]
    assert [e[1] for e in exports] == ["md", "html", "json", "bundle"]
    assert all(e[0] == 3 and e[2] == ("sk-secret-123",) for e in exports)
    assert any("triage-run-3.zip" in c.value for c in at.caption)


def test_no_run_yet(use_services):
    use_services(FakeServices(n_runs=0))
    at = page("report").run()
    no_exception(at)
    assert any("No run yet" in i.value for i in at.info)
