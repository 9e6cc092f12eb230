"""Test runs for the exporters, built from material recorded on a real vLLM 0.31.0 livelock server.

Server output (/metrics pages, /v1/models, the start-up and livelock log, the request that hung
and the request after the abort) comes from tests/fixtures/real/0.31.0-tiny-qwen3-livelock/,
recorded by tests/fixtures/capture.py --hang. The findings are our own vocabulary with evidence
read from those recordings. The hostile run adds user-side input (model name, command line,
pasted log lines) carrying markup and secrets.
"""
from __future__ import annotations

import ast
import json
import re
from datetime import UTC, datetime
from pathlib import Path

from triage.findings import Finding, Status
from triage.sample import EngineSample
from triage.store import (
    CaptureInfo,
    ProbeInfo,
    RunInfo,
    RunRecord,
    Store,
    TargetInfo,
)
from triage.vllm.metrics import parse_metrics

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "0.31.0-tiny-qwen3-livelock"

# The page recorded at each offset (s) from sending the [SHORT, LONG] request; the abort was at 12 s.
PAGES = {0.0: "metrics-after-requests.txt", 3.0: "metrics-livelock-3s.txt", 9.0: "metrics-livelock-9s.txt",
         14.0: "metrics-after-abort.txt"}
T0 = datetime(2026, 11, 29, 21, 2, 40, tzinfo=UTC).timestamp()

SCRIPT = "<script>window.__pwned = 1</script>"
API_KEY = "tk-9f8e7d6c5b4a39281706"  # no sk- prefix: only context (or the exact string) can catch it
HF_TOKEN = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345"


def raw(name: str) -> str:
    """A recorded file exactly as captured (read_text would turn the log's progress-bar \\r into \\n)."""
    return (REAL / name).read_bytes().decode("utf-8")


def recorded(name: str) -> dict:
    return json.loads((REAL / name).read_text())


def served_model() -> str:
    return recorded("models.json")["body"]["data"][0]["id"]


def log_text() -> str:
    return raw("server.log")


def non_default_args() -> dict:
    m = re.search(r"non-default args: (\{.*\})", log_text())
    assert m, "the recorded log has no non-default args line"
    return ast.literal_eval(m.group(1))


def effective_config() -> dict:
    """Canonical keys with provenance, from the recorded log and /v1/models and /version."""
    args = non_default_args()
    detail = "non-default args (start-up log)"
    cfg = {k: {"value": args[k], "source": "log", "detail": detail}
           for k in ("max_model_len", "max_num_batched_tokens", "enable_chunked_prefill", "runner", "convert")}
    cfg["max_model_len"] = {"value": recorded("models.json")["body"]["data"][0]["max_model_len"],
                            "source": "server", "detail": "GET /v1/models"}
    cfg["vllm_version"] = {"value": recorded("version.json")["body"]["version"], "source": "server",
                           "detail": "GET /version"}
    cfg["model"] = {"value": served_model(), "source": "server", "detail": "GET /v1/models"}
    cfg["device"] = {"value": "cpu", "source": "log", "detail": "device_config=cpu"}
    cfg["pooling_type"] = {"value": "LAST", "source": "log", "detail": "seq_pooling_type='LAST'"}
    cfg["truncate_prompt_tokens"] = {"value": 256, "source": "user", "detail": "client setting"}
    return cfg


def samples() -> list[EngineSample]:
    out = []
    for t, name in PAGES.items():
        for eng in parse_metrics(raw(name)).engines.values():
            out.append(EngineSample(engine=eng.engine, ts=T0 + t, source="scrape",
                                    num_requests_running=eng.num_requests_running,
                                    num_requests_waiting=eng.num_requests_waiting,
                                    kv_cache_usage_perc=eng.kv_cache_usage_perc,
                                    prompt_tokens_total=eng.prompt_tokens_total,
                                    request_success_total=eng.request_success_total,
                                    num_preemptions_total=eng.num_preemptions_total))
    return out


def probe_detail() -> dict:
    after = recorded("embed-after-abort.json")
    long_text = " ".join(["alpha beta gamma delta"] * 200)
    return {"request": {"model": served_model(), "input": ["short …", "… " + long_text[:80] + " …"],
                        "truncate_prompt_tokens": 256},
            "response": None,
            "samples": [{"t": s.ts - T0, "running": s.num_requests_running, "waiting": s.num_requests_waiting,
                         "prompt_tokens_total": s.prompt_tokens_total,
                         "request_success_total": s.request_success_total,
                         "kv_cache_usage_perc": s.kv_cache_usage_perc} for s in samples()],
            "recovery": {"aborted_at_s": 12.0, "gauges_zero_at_s": 14.0,
                         "short_request_ok": after["status"] == 200, "recovered_s": 2.0}}


def findings() -> list[Finding]:
    stalled = [s for s in samples() if s.num_requests_running == 1 and s.num_requests_waiting == 0]
    return [
        Finding("probe-livelock", Status.FAIL, "An embedding request of exactly max_model_len tokens never finished",
                evidence={"running": 1, "waiting": 0, "prompt_tokens_total": [s.prompt_tokens_total for s in stalled],
                          "source": "/metrics at 3 s and 9 s"},
                fix="Upgrade to vLLM >= 0.32.0, or truncate to max_model_len - 1 (255).",
                refs=["vllm#55427", "vllm#48039"], explanation="The pooling scheduler reserves a slot it never uses."),
        Finding("pooling-livelock-risk", Status.FAIL,
                "truncate_prompt_tokens equals max_model_len with chunked prefill",
                evidence={"truncate_prompt_tokens": 256, "max_model_len": 256, "max_num_batched_tokens": 128,
                          "vllm_version": "0.31.0"}, fix="Set truncate_prompt_tokens to 255.", refs=["vllm#55427"]),
        Finding("health-during-livelock", Status.WARN, "/health answered 200 during the livelock",
                evidence={"status": recorded("health-during-livelock.json")["status"]},
                fix="Do not rely on /health to detect a stuck engine; watch running/waiting and counters."),
        Finding("server-reachable", Status.PASS, "Server answers /v1/models",
                evidence={"model": served_model()}),
    ]


def build(store: Store, *, hostile: bool = False) -> int:
    """Store a run like a probe run against the recorded server; returns its id."""
    model = (served_model() + SCRIPT) if hostile else served_model()
    port = non_default_args()["port"]
    cmdline = (f"vllm serve {served_model()} --runner pooling --convert embed --max-model-len 256 "
               f"--max-num-batched-tokens 128 --enable-chunked-prefill --port {port}")
    log = log_text()
    if hostile:
        cmdline += f" --api-key {API_KEY}"
        log += (f"pasted by user: model={SCRIPT}\nAuthorization: Bearer {API_KEY}\n"
                f"HF_TOKEN={HF_TOKEN}\nVLLM_API_KEY={API_KEY}\n")
    t = store.add_target(f"http://127.0.0.1:{port}", model, 256, cmdline=cmdline, label=SCRIPT if hostile else None)
    run = store.start_run(t.id, "probe", {"versions": {"vllm": "0.31.0"}, "args": {"sets": ["order"]}})
    assert run.id is not None
    store.set_config(run.id, effective_config())
    for f in findings():
        store.add_finding(run.id, f)
    store.add_probe_result(run.id, "short-long", "livelock", duration_s=12.0, time_to_verdict_s=9.0,
                           detail=probe_detail(), started_at=datetime.fromtimestamp(T0, UTC))
    store.add_samples(samples(), run_id=run.id, target_id=t.id)
    for name in PAGES.values():
        store.add_capture(run.id, "metrics-page", raw(name), name=name)
    store.add_capture(run.id, "log", log, name="server.log", secrets=(API_KEY,) if hostile else ())
    store.add_capture(run.id, "cmdline", cmdline, name="vllm serve")
    store.finish_run(run.id, "" if not hostile else f"model {SCRIPT}")
    return run.id


def unredacted_record() -> RunRecord:
    """A hostile run as another writer (or an older database) might hold it: secrets NOT redacted."""
    cmdline = f"vllm serve m --api-key {API_KEY}"
    run = RunInfo(id=7, target_id=1, kind="check", status="fail", summary=f"bare key {API_KEY} {SCRIPT}",
                  config={"model": {"value": SCRIPT, "source": "user", "detail": API_KEY}},
                  meta={"api_key": API_KEY}, started_at=datetime.fromtimestamp(T0, UTC))
    return RunRecord(
        run=run, target=TargetInfo(id=1, url="http://127.0.0.1:8000", model=SCRIPT, cmdline=cmdline),
        findings=[Finding("auth", Status.WARN, f"title {SCRIPT}", evidence={"header": f"Bearer {API_KEY}"},
                          fix=f"key {API_KEY}")],
        probes=[ProbeInfo(id=1, run_id=7, probe="p", outcome="ok",
                          detail={"request": {"headers": {"Authorization": f"Bearer {API_KEY}"}}})],
        captures=[CaptureInfo(id=1, run_id=7, kind="log", name="pasted",
                          content=f"{log_text()[:2000]}\nAuthorization: Bearer {API_KEY}\nHF_TOKEN={HF_TOKEN}\n"
                                  f"raw {API_KEY}\n")],
    )
