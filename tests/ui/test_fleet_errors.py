"""Fleet page: a URL that is no Prometheus is a message saying how to get one, and no ERROR run is stored."""
from __future__ import annotations

from ui import services
from ui_apptest import no_exception, page
from triage.lab.server import free_port


def test_no_prometheus_says_how_to_get_one_and_stores_nothing(use_services, temp_db):  # type: ignore[no-untyped-def]
    svc = use_services(services.Services(temp_db))
    at = page("fleet", timeout=60).run()
    at.text_input(key="fleet.prometheus").set_value(f"127.0.0.1:{free_port()}").run()  # no scheme, nothing there
    at.button(key="fleet.scan").click().run()
    no_exception(at)
    err = " ".join(e.value for e in at.error)
    assert "did not answer as a Prometheus" in err and "lab prometheus up" in err and "Nothing was saved" in err
    assert svc.count_runs() == 0
    assert not at.metric  # no "0 of 0" under the error
