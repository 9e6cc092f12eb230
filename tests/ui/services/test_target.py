"""ui.services.target against the real client and Store: URL checks, model listing messages, saved targets."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.stored import stored_bytes
from ui import adapters
from triage.target import Target
from ui.services import ServiceError, Services
from triage.lab.server import free_port

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "real"


def test_list_models_unreachable_is_a_plain_message(temp_db):
    with pytest.raises(ServiceError) as e:
        Services(temp_db).list_models(f"http://127.0.0.1:{free_port()}")
    assert "Cannot connect" in str(e.value) and "Traceback" not in str(e.value)


def test_a_url_is_checked_before_use(temp_db):
    svc = Services(temp_db)
    assert svc.check_url("127.0.0.1:8000") == ("http://127.0.0.1:8000", "No scheme given: using http://127.0.0.1:8000.")
    assert svc.check_url("http://h:8000/v1/")[0] == "http://h:8000"
    for bad, why in (("ftp://h:21", "not a web address"), ("http://h:99999", "not a number"), ("", "Give the server"),
                     ("http://a b", "spaces")):
        with pytest.raises(ServiceError, match=why):
            svc.check_url(bad)
        with pytest.raises(ServiceError, match=why):
            svc.list_models(bad)


@pytest.mark.parametrize(("code", "words"), [
    pytest.param(401, "API key", id="401"),
    pytest.param(404, "vllm serve", id="404"),
    pytest.param(500, "HTTP 500", id="500"),
])
def test_http_status_messages(code, words):
    assert words in adapters.http_status_message(code, "body")


def test_list_models_401_names_the_api_key(temp_db):
    """A real HTTP 401 on loopback (vLLM's body shape) becomes the API-key message: a missing key is asked for,
    a refused one is said to be refused (issue 32), not asked for again."""
    import http.server
    import threading

    class Deny(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"error": "Unauthorized"}')

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Deny)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}"
        with pytest.raises(ServiceError, match="401 Unauthorized: the server refused the API key given") as e:
            Services(temp_db).list_models(url, api_key="wrong")
        assert "wants an API key" not in str(e.value)
        with pytest.raises(ServiceError, match="401 Unauthorized: the server wants an API key"):
            Services(temp_db).list_models(url)
    finally:
        srv.shutdown()
        srv.server_close()


def test_saved_target_never_holds_the_api_key(temp_db):
    svc = Services(temp_db)
    form = svc.save_target(Target("http://h:1/", "m", 256, cmdline="vllm serve m --api-key sk-abcdefgh12345678",
                                      api_key="sk-abcdefgh12345678"))
    assert form.target_id is not None and form.api_key == "sk-abcdefgh12345678"  # kept in the session only
    assert b"sk-abcdefgh12345678" not in stored_bytes(temp_db)
    assert [t.url for t in svc.saved_targets()] == ["http://h:1"]
