"""ui.services.fleet: a URL that is no Prometheus is a problem stored nowhere; a replica's instance is a target."""
from __future__ import annotations

import time

import pytest

from triage.lab.server import free_port
from ui.errors import ServiceError
from ui.services import Services


def test_no_prometheus_is_a_problem_and_no_run(temp_db):
    svc = Services(temp_db)
    end = time.time()
    view = svc.scan_fleet(f"127.0.0.1:{free_port()}", end - 900, end)
    assert view.problem and view.prometheus.startswith("http://127.0.0.1:") and view.run_id is None
    assert svc.count_runs() == 0


def test_a_bad_url_is_a_service_error(temp_db):
    with pytest.raises(ServiceError, match="not a web address"):
        Services(temp_db).scan_fleet("ftp://h:21", 0.0, 1.0)


@pytest.mark.parametrize(("instance", "url"), [
    pytest.param("10.0.0.5:8000", "http://10.0.0.5:8000", id="host-port"),
    pytest.param("https://vllm.example:443", "https://vllm.example:443", id="url"),
])
def test_replica_target(temp_db, instance, url):
    assert Services(temp_db).replica_target(instance).url == url


def test_an_empty_scan_still_draws(temp_db):
    assert Services(temp_db).figure({"replicas": []}) is not None
