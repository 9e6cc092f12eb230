"""ui.services against the real engine and Store (no fakes): error messages, paging, diffs, exports, logs."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.stored import stored_bytes
from triage.findings import Finding, Status
from triage.store import Store
from ui import adapters, services
from triage.target import Target
from ui.services import RunDetail, ServiceError, Services
from triage.lab.server import free_port

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "real"


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


def test_checklist_unreachable_is_a_finding_not_a_crash(temp_db):
    evs = list(Services(temp_db).iter_checklist(Target(f"http://127.0.0.1:{free_port()}", "m", 256)))
    assert evs[-1].kind == "done"
    first = next(e.finding for e in evs if e.kind == "finding")
    assert services.step_of(first.check) == "server" and first.status in (Status.ERROR, Status.FAIL)


def test_an_engine_failure_is_an_error_event(temp_db, monkeypatch):
    def broken(*a, **kw):
        raise RuntimeError("engine bug")

    monkeypatch.setattr(services.engine, "checklist_events", broken)
    evs = list(Services(temp_db).iter_checklist(Target("http://x", "m", 256)))
    assert [e.kind for e in evs] == ["error"] and "engine bug" in evs[0].message


def test_list_runs_pages_in_sql_and_counts(temp_db):
    st = Store(temp_db)
    t = st.add_target("http://h:1", "m", 256)
    for i in range(30):
        r = st.start_run(t.id, "check")
        st.add_finding(r.id, Finding("x", Status.FAIL if i % 3 == 0 else Status.PASS, "t"))
        st.finish_run(r.id)
    svc = Services(temp_db)
    page = svc.list_runs(limit=25, offset=25)
    assert page.total == 30 and [r.id for r in page.rows] == [5, 4, 3, 2, 1]
    assert svc.count_runs(status="fail") == 10
    assert svc.list_runs(status="fail", limit=3).rows[0].status == "fail"


def _detail(run_id: int, version: str, status: str, nested: bool) -> RunDetail:
    cfg = {"vllm_version": {"value": version, "source": "server"}, "max_model_len": {"value": 256, "source": "server"}}
    stored = {"values": cfg, "conflicts": []} if nested else cfg
    return RunDetail(run_id, "check", status, "", "u", "m", "", services.effective_config(stored), {},
                     [Finding("pooling-livelock-risk", Status(status), "t")], [], 0)


def test_diff_runs_shows_what_changed():
    d = services.diff_runs(_detail(1, "0.31.0", "fail", True), _detail(2, "0.32.0", "pass", False))
    assert [(r.key, r.left, r.right) for r in d.config if r.changed] == [("vllm_version", "0.31.0", "0.32.0")]
    assert [(r.key, r.left, r.right) for r in d.verdicts] == [("pooling-livelock-risk", "fail", "pass")]


def test_analyze_log_stores_a_run_and_never_reads_a_path(temp_db, tmp_path):
    svc = Services(temp_db)
    log = (FIXTURES / "0.31.0-tiny-qwen3-livelock" / "server.log").read_text()
    on_disk = tmp_path / "server.log"
    on_disk.write_text(log)
    with pytest.raises(ServiceError, match="does not look like a vLLM log"):
        svc.analyze_log(str(on_disk))  # a pasted one-liner that happens to be a path: text, never opened
    view = svc.analyze_log(log)
    assert view.config.get("max_model_len", {}).get("value") == 256
    assert svc.get_run(view.run_id).kind == "logs"


def test_analyze_empty_log_is_a_message(temp_db):
    with pytest.raises(ServiceError, match="empty"):
        Services(temp_db).analyze_log("  \n")


def test_export_real_formats_and_secret(temp_db):
    st = Store(temp_db)
    t = st.add_target("http://h:1", "m", 256)
    r = st.start_run(t.id, "check")
    st.add_finding(r.id, Finding("x", Status.WARN, "key sk-live-abcdefgh123 seen", {"note": "tok-777-secret"}))
    st.finish_run(r.id)
    svc = Services(temp_db)
    for fmt in ("md", "html", "json", "bundle"):
        data, name, mime = svc.export(r.id, fmt, secrets=("tok-777-secret",))
        assert data and name.startswith(f"triage-run-{r.id}.") and mime
        if fmt != "bundle":
            assert b"tok-777-secret" not in data and b"sk-live-abcdefgh123" not in data
    with pytest.raises(ServiceError, match="does not exist"):
        svc.export(999, "md")


def test_override_is_restored():
    fake = object()
    with services.override(fake):
        assert services.get() is fake
    assert isinstance(services.get(), Services)


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


@pytest.mark.real_server
def test_stats_tick_on_a_real_server(temp_db, server_032_livelock):
    svc, session = Services(temp_db), {}
    form = Target(server_032_livelock.url, server_032_livelock.served_model, 256)
    first = svc.stats_tick(form, session)
    second = svc.stats_tick(form, session)
    assert first.error is None and second.n_samples == 2 and second.figure is not None
    assert set(second.latest) == {"running", "waiting", "prompt tokens/s", "KV cache %"}
    session["watcher"].close()


@pytest.mark.real_server
def test_stats_alert_on_a_real_livelock(temp_db, server_031_livelock):
    """[SHORT, LONG] at truncate_prompt_tokens = max_model_len livelocks 0.31.0 (vllm #55427): the page's
    tick must raise the livelock alert and mark it on the chart; the client timeout then aborts the request."""
    import threading
    import time
    import uuid

    import httpx

    srv = server_031_livelock
    salt = uuid.uuid4().hex  # no prefix-cache hit: a cached prompt would not hang
    body = {"model": srv.served_model, "truncate_prompt_tokens": 256,
            "input": [f"short {salt}", " ".join(f"word{i} {salt}" for i in range(300))]}
    hold_s = 14.0

    def send() -> None:
        try:
            httpx.post(f"{srv.url}/v1/embeddings", json=body, timeout=hold_s)
        except httpx.HTTPError:
            pass  # the timeout closes the connection: vLLM aborts the request

    svc, session = Services(temp_db), {}
    form = Target(srv.url, srv.served_model, 256)
    svc.stats_tick(form, session, stall_s=3.0)
    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    view = None
    try:
        deadline = time.monotonic() + hold_s - 1
        while time.monotonic() < deadline:
            time.sleep(1.0)
            view = svc.stats_tick(form, session, stall_s=3.0)
            if view.alert:
                break
    finally:
        sender.join(hold_s + 5)
        session["watcher"].close()
    assert view is not None and view.alert, "no stall alert while a [SHORT, LONG] request hung"
    assert view.alert["kind"] == "livelock" and "STALLED" in (view.alert["message"] or "")
    assert view.figure.layout.shapes, "the stall is not marked on the time axis"


def test_not_a_vllm_log_is_a_message(temp_db):
    svc = Services(temp_db)
    with pytest.raises(ServiceError, match="does not look like a vLLM log"):
        svc.analyze_log("hello world\nthis is a shopping list\n")
    assert svc.count_runs() == 0


def test_run_detail_groups_findings_by_root_cause(temp_db):
    from triage.catalogue import POOLING_LIVELOCK

    st = Store(temp_db)
    run = st.start_run(st.add_target("http://h:1", "m", 256).id, "probe")
    for i in range(3):
        st.add_finding(run.id, Finding("probe-livelock", Status.FAIL, f"case {i}", {}, "the one fix",
                                       failure_mode=POOLING_LIVELOCK.id))
    st.add_finding(run.id, Finding("server-reachable", Status.PASS, "answers"))
    st.finish_run(run.id)
    d = Services(temp_db).get_run(run.id)
    assert [(g.mode.id, g.count, g.fix) for g in d.groups] == [(POOLING_LIVELOCK.id, 3, "the one fix")]
    assert d.ungrouped == (3,)


def test_a_probe_run_is_recorded_as_it_goes_and_progress_is_relayed(temp_db):
    """The page's probe run: the engine's events through a Recorder (the run stored) and on to the page's lines."""
    lines = []
    view = Services(temp_db).run_probes(Target(f"http://127.0.0.1:{free_port()}", "m", 256, timeout_s=2.0),
                                        ["conformance"], allow_hang=False, on_event=lines.append)
    assert view.run_id is not None and [f.check for f in view.findings] == ["probe-target"]
    assert [(e.probe, e.state) for e in lines if e.probe == "run"] == [("run", "run-started"), ("run", "run-finished")]
    assert any(e.probe == "finding probe-target" for e in lines)
    rec = Services(temp_db).store.get_run(view.run_id, with_samples=False)
    assert rec.run.kind == "probe" and rec.run.finished_at is not None and rec.run.status == "error"
