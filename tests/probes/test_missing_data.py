"""Issue 33 (deliver 6): no verdict from missing data in the probe sets. A proxy's 502/504 is named as such
(triage.http.proxy_of) and a seed case it cut is "unknown", never "passes" or "does NOT pass"; a conformance
request that got no answer (a time-out on a starved box) is UNKNOWN with the reason, never a FAIL with none.

Seed outcomes: recorded on real servers (tests/fixtures/real/probes). The proxy answers are a test double, on
purpose: nginx's 504 page as nginx/1.24.0 writes it (ngx_http_special_response.c) with its ``Server:`` header, from
a local server, since no nginx runs in the unit tests; the real vLLM answers beside them are the recorded ones.
"""
from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from triage.http import ProbeClient, Reply, proxy_of
from triage.findings import Status
from triage.probes import conformance_findings as cc
from triage.probes.conformance import as_outcome, not_judged
from triage.probes.runner import PROXY_ERROR, SLOW, outcome_of
from triage.probes.seed import matrix_finding, seed_findings, unjudged

from .recorded import DIRS, outcome_from_record, probe_record, reply

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hardening"))
from hostile import Behaviour, HostileServer  # noqa: E402

NGINX_504 = ("<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n<center><h1>504 Gateway "
             "Time-out</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n")
L031 = DIRS[0]


def test_proxy_of_names_the_proxy_and_never_vllm() -> None:
    assert proxy_of(504, "nginx/1.24.0", None, NGINX_504) == "nginx/1.24.0's 504 Gateway Timeout"
    assert proxy_of(502, None, None, "") == "a proxy's 502 Bad Gateway"  # uvicorn never sends 502/504
    assert proxy_of(503, "uvicorn", None, {"error": {"message": "busy"}}) is None  # vLLM's own 503
    assert proxy_of(503, "envoy", None, "upstream connect error") == "envoy's 503 Service Unavailable"
    assert proxy_of(400, "nginx", None, NGINX_504) is None and proxy_of(200, "nginx") is None


class _Nginx(HostileServer):
    """The hostile look-alike (tests/hardening/hostile.py) with nginx's Server header."""

    def _handler(self):  # noqa: ANN202
        h = super()._handler()
        h.server_version, h.sys_version = "nginx/1.24.0", ""
        return h


def test_probe_client_marks_a_proxy_answer() -> None:
    with _Nginx(Behaviour(bodies={"/v1/embeddings": NGINX_504.encode()}, status={"/v1/embeddings": 504})) as s:
        async def go() -> Reply:
            async with ProbeClient(s.url) as pc:
                return await pc.embed({"model": "m", "input": "x"}, timeout_s=5)
        ex = asyncio.run(go())
    assert ex.status == 504 and ex.proxy == "nginx/1.24.0's 504 Gateway Timeout"
    assert "a proxy's answer" in ex.describe() and ex.to_dict()["proxy"] == ex.proxy
    assert outcome_of([ex]) == (PROXY_ERROR, 504)


def _cut(name: str, trunc: int):  # noqa: ANN202
    """A recorded case as a proxy cut it: nginx's 504 instead of the server's answer."""
    o = outcome_from_record(probe_record(name))
    o.extra["truncate_prompt_tokens"] = trunc
    o.outcome, o.http_status = PROXY_ERROR, 504
    o.response = {"status": 504, "body": NGINX_504, "proxy": "nginx/1.24.0's 504 Gateway Timeout"}
    return o


def _rec(name: str, trunc: int):  # noqa: ANN202
    o = outcome_from_record(probe_record(name))
    o.extra["truncate_prompt_tokens"] = trunc
    return o


def test_matrix_says_which_cases_the_proxy_cut_and_never_that_the_workaround_fails() -> None:
    lock = _rec("livelock-031-short-long-t256", 256)
    cut = _cut("ok-032-short-long-t256", 255)  # the workaround case, cut by nginx before it answered
    m = matrix_finding([lock, cut], 256, "0.31.0")
    assert m.evidence["workaround_ok"] is None and "does NOT pass" not in m.title and "passes" not in m.title
    assert "unknown" in m.title and "nginx/1.24.0's 504" in m.title and cut.probe in m.title
    assert m.evidence["cases"][cut.probe]["unknown"].startswith("cut by nginx")
    assert m.status == Status.FAIL  # the livelock it did see stays evidence
    only_cut = matrix_finding([cut], 256, "0.32.0")
    assert only_cut.status == Status.UNKNOWN and only_cut.evidence["workaround_ok"] is None
    live = {f.check: f for f in seed_findings([cut], 256, "0.32.0")}["probe-livelock"]
    assert live.status == Status.UNKNOWN and "1 unknown" in live.title  # never "no livelock" over a cut case
    # a workaround case that hung is a failure whatever the proxy did to the others
    hung = _rec("livelock-031-short-long-t256", 255)
    assert matrix_finding([hung, cut], 256, "0.31.0").evidence["workaround_ok"] is False


def test_a_slow_case_across_the_observers_gaps_is_unknown() -> None:
    o = _rec("ok-032-short-long-t256", 255)
    o.outcome = SLOW
    assert unjudged(o) is None  # slow on on-time samples: the server's slowness, a warning
    late = _rec("ok-032-short-long-t256", 255)
    late.outcome = SLOW
    late.extra["observer_gaps"] = {"count": 1, "longest_s": 90.5, "scrape_s": 0.5}
    assert "90.5 s late" in (unjudged(late) or "")
    assert matrix_finding([late], 256, "0.31.0").evidence["workaround_ok"] is None


def test_conformance_time_out_is_unknown_with_the_reason() -> None:
    """Was: conformance-array-input FAIL "a list of 2 strings answered None: " (an empty reason)."""
    timed_out = Reply("POST", "/v1/embeddings", {"input": ["a", "b"]}, error="ReadTimeout: no complete answer "
                      "within 30 s (total deadline)", error_kind="timeout")
    raw = cc.array_input(timed_out, 2)
    assert raw.status == Status.FAIL  # what the check alone says: the bug
    f = not_judged(raw, [timed_out])
    assert f.status == Status.UNKNOWN and "no answer (timeout)" in f.title and "30 s" in f.title
    assert f.fix == "" and f.evidence["would_have_said"] == raw.title
    assert as_outcome("conformance-array-input", [timed_out], f).outcome == SLOW
    # the recorded real answer stays judged as it was
    ok = reply(L031, "embed-list")
    assert not_judged(cc.array_input(ok, 2), [ok]) == cc.array_input(ok, 2)
    proxied = Reply("POST", "/v1/embeddings", {}, status=504, body=NGINX_504, proxy="nginx's 504 Gateway Timeout")
    g = not_judged(cc.array_input(proxied, 2), [proxied])
    assert g.status == Status.UNKNOWN and "a proxy's answer" in g.title
    assert as_outcome("conformance-array-input", [proxied], g).outcome == PROXY_ERROR


def test_runner_marks_its_own_late_sample_and_the_case_is_unknown() -> None:
    """The probe runner's observer frozen 4 s (its event loop blocked, as a starved host or SIGSTOP does) while a
    request is in flight: the late sample carries ``observer_gap_s``, the outcome counts the gap, and a case that
    then runs out its deadline is "unknown" in the seed matrix. The server is the hostile look-alike (its /metrics
    the recorded idle page of a real 0.32.0 server; its answer trickles so the probe stays in flight)."""
    import time as time_

    from triage.events import PROBE_SAMPLE
    from triage.probes.runner import MonitorConfig, observe

    frozen: list[float] = []

    def on_event(e) -> None:  # noqa: ANN001
        if e.kind == PROBE_SAMPLE and not frozen:
            frozen.append(4.0)
            time_.sleep(4.0)  # the observer holds the loop: no scrape for 4 s

    cfg = MonitorConfig(stall_s=2.0, deadline_s=8.0, scrape_s=0.5, idle_wait_s=1.0, recovery_timeout_s=1.0)
    with HostileServer(Behaviour(slow=("/v1/embeddings",))) as s:
        async def go():  # noqa: ANN202
            async with ProbeClient(s.url) as pc:
                return await observe(pc, "seed-short-t255", "seed", [{"model": "m", "input": "x"}], cfg,
                                     lambda: {"model": "m", "input": "y"}, on_event)
        out = asyncio.run(go())
    late = [x for x in out.samples if x.observer_gap_s is not None]
    assert late and late[0].observer_gap_s >= 4.0, [x.observer_gap_s for x in out.samples]
    assert out.extra["observer_gaps"]["count"] >= 1 and out.outcome == SLOW
    out.extra["truncate_prompt_tokens"] = 255
    assert unjudged(out) and matrix_finding([out], 256, "0.32.0").evidence["workaround_ok"] is None
