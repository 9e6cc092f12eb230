"""The live-server source on recorded real vLLM responses, and on real sockets for transport failures."""

from __future__ import annotations

import socket
import threading

import pytest

from tests.sources import replay
from triage.http import VllmClient
from triage.findings import Status
from triage.sources import server
from triage.lab.server import free_port


def _collect(dirname: str, url: str = "http://vllm.test:8000", **kw):
    seen: list[str] = []
    client = VllmClient(url, transport=replay.transport(dirname, seen=seen, **kw))
    return server.collect(client), seen


def _by_check(res):
    return {f.check: f for f in res.findings}


@pytest.mark.parametrize(
    "dirname,version,prefix_caching",
    [
        pytest.param("0.31.0-tiny-qwen3-livelock", "0.31.0", True, id="qwen3-0.31"),
        pytest.param("0.32.0-tiny-qwen3-livelock", "0.32.0", True, id="qwen3-0.32"),
        pytest.param("0.32.0-minilm-bert-waiting", "0.32.0", False, id="bert-0.32"),
    ],
)
def test_recorded_server_gives_facts(dirname: str, version: str, prefix_caching: bool) -> None:
    res, _ = _collect(dirname)
    facts = {k: f.value for k, f in res.facts.items()}
    assert facts["vllm_version"] == version
    assert facts["max_model_len"] == 256
    assert facts["enable_prefix_caching"] is prefix_caching
    assert facts["runner"] == "pooling"  # the recorded /v1/embeddings answered 200
    assert res.facts["max_model_len"].source == "server"
    checks = _by_check(res)
    assert checks["server-reachable"].status == Status.PASS
    assert checks["server-is-vllm"].status == Status.PASS
    assert checks["metrics-parse"].status == Status.PASS
    assert any(c.kind == "metrics-page" for c in res.captures)


def test_wrong_path_prefix_is_a_finding_and_recovers() -> None:
    res, seen = _collect("0.31.0-tiny-qwen3-livelock", url="http://vllm.test:8000/v1")
    f = _by_check(res)["server-api-prefix"]
    assert f.status == Status.WARN and "http://vllm.test:8000" in f.fix
    assert res.facts["vllm_version"].value == "0.31.0"
    assert "GET /v1/v1/models auth=False" in seen


def test_no_api_key_sent_without_one() -> None:
    _, seen = _collect("0.31.0-tiny-qwen3-livelock")
    assert all(s.endswith("auth=False") for s in seen)


def test_livelock_metrics_page_is_read() -> None:
    res, _ = _collect("0.31.0-tiny-qwen3-livelock", metrics="metrics-livelock-9s.txt")
    assert res.facts["num_requests_running"].value == 1
    assert res.facts["num_requests_waiting"].value == 0


def test_connection_refused_is_a_finding() -> None:
    res = server.collect(VllmClient(f"http://127.0.0.1:{free_port()}", timeout_s=2))
    f = _by_check(res)["server-reachable"]
    assert f.status == Status.ERROR and f.evidence["error_kind"] == "refused"
    assert res.unavailable


def test_silent_listener_times_out() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)  # accepts the TCP handshake, never answers HTTP
    try:
        res = server.collect(VllmClient(f"http://127.0.0.1:{s.getsockname()[1]}", timeout_s=0.5))
    finally:
        s.close()
    assert _by_check(res)["server-reachable"].evidence["error_kind"] == "timeout"


def test_tls_to_plain_http_is_a_tls_finding() -> None:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class H(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()

        def log_message(self, *a: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        res = server.collect(VllmClient(f"https://127.0.0.1:{httpd.server_address[1]}", timeout_s=2))
    finally:
        httpd.shutdown()
    f = _by_check(res)["server-reachable"]
    assert f.status == Status.ERROR and f.evidence["error_kind"] in ("tls", "protocol")


APIKEY_DIR = replay.ENGINE / "0.32.0-tiny-qwen3-livelock-apikey"


def _apikey_transport():
    """Route by the Authorization header to the recording made with no / a wrong / the right key."""
    import json

    import httpx

    recs = {}
    for f in APIKEY_DIR.glob("*.json"):
        r = json.loads(f.read_text())
        recs[(r["method"], r["path"], r.get("auth", "none"))] = (f, r)

    def handler(req: httpx.Request) -> httpx.Response:
        auth = req.headers.get("authorization", "")
        kind = "none" if not auth else ("right" if auth == "Bearer test-key-123" else "wrong")
        f, r = recs.get((req.method, req.url.path, kind)) or recs.get((req.method, req.url.path, "none"), (None, None))
        if r is None:
            return replay.not_found()
        if req.url.path == "/metrics":
            return httpx.Response(r["status"], text=(APIKEY_DIR / "metrics-nokey.txt").read_text())
        return replay._response(r)

    return httpx.MockTransport(handler)


@pytest.mark.parametrize(
    "key,status,words",
    [
        pytest.param(None, Status.ERROR, "requires an API key", id="no-key"),
        pytest.param("wrong-key-000", Status.ERROR, "rejected", id="wrong-key"),
        pytest.param("test-key-123", Status.PASS, "accepted", id="right-key"),
    ],
)
def test_recorded_api_key_server(key, status, words) -> None:
    res = server.collect(VllmClient("http://vllm.test:8000", api_key=key, transport=_apikey_transport()))
    f = _by_check(res)["server-auth"]
    assert f.status == status and words in f.title
    assert res.facts["api_key_required"].value is True
    assert res.facts["vllm_version"].value == "0.32.0"  # /version is not guarded
    if key != "test-key-123":
        assert "max_model_len" not in res.facts  # /v1/models is guarded and no model name was given


def test_api_key_server_tokenize_gives_max_model_len_when_model_is_known() -> None:
    model = "/root/.cache/vllm-triage/lab/models/tiny-qwen3"
    res = server.collect(VllmClient("http://vllm.test:8000", transport=_apikey_transport()), model=model)
    assert res.facts["max_model_len"].value == 256
    assert res.facts["max_model_len"].detail == "POST /tokenize max_model_len"


def test_embedding_timeout_while_health_answers_is_a_warning() -> None:
    """Recorded 0.31.0 livelock pages; the embedding call times out in the transport (what a stuck engine does)."""
    import httpx

    inner = replay.transport("0.31.0-tiny-qwen3-livelock", metrics="metrics-livelock-9s.txt")

    def handler(req: httpx.Request) -> httpx.Response:
        if req.url.path == "/v1/embeddings":
            raise httpx.ReadTimeout("timed out", request=req)
        return inner.handle_request(req)

    res = server.collect(VllmClient("http://vllm.test:8000", transport=httpx.MockTransport(handler)))
    f = _by_check(res)["server-embeddings"]
    assert f.status == Status.WARN and f.evidence["num_requests_running"] == 1


def test_redirect_is_named() -> None:
    import httpx

    inner = replay.transport("0.31.0-tiny-qwen3-livelock")

    def handler(req: httpx.Request) -> httpx.Response:
        if req.url.path == "/v1/models":
            return httpx.Response(308, headers={"location": "https://vllm.test/v1/models"})
        return inner.handle_request(req)

    res = server.collect(VllmClient("http://vllm.test:8000", transport=httpx.MockTransport(handler)))
    f = _by_check(res)["server-is-vllm"]
    assert f.status == Status.FAIL and "https://vllm.test/v1/models" in f.title


def test_model_not_served_is_a_finding() -> None:
    client = VllmClient("http://vllm.test:8000", transport=replay.transport("0.32.0-tiny-qwen3-livelock"))
    res = server.collect(client, model="Qwen/Qwen3-Embedding-4B")
    f = _by_check(res)["server-model"]
    assert f.status == Status.FAIL and "/root/.cache/vllm-triage/lab/models/tiny-qwen3" in f.evidence["served"]


def test_recorded_server_info_in_dev_mode() -> None:
    """0.31.0 defaults profile with VLLM_SERVER_DEV_MODE=1: /server_info states the resolved config."""
    res, _ = _collect(str(replay.ENGINE / "0.31.0-tiny-qwen3-defaults-devmode"))
    facts = {k: (f.value, f.detail) for k, f in res.facts.items()}
    assert facts["enable_chunked_prefill"] == (True, "GET /server_info vllm_config")
    assert facts["device"] == ("cpu", "GET /server_info vllm_config")
    assert facts["pooling_type"][0] == "LAST"
    assert facts["max_model_len"][0] == 4096
    assert "max_num_batched_tokens" not in facts  # the scheduler config is not in /server_info
