"""A fake of ui.services.Services for page tests: the engine is faked at the service seam, nowhere deeper.

Values it returns are the real value types of ui.values and triage.findings, shaped like what
the real engine produced against the lab's 0.31.0 livelock server (tiny-qwen3, max_model_len
256, budget 128, chunked prefill). Every call is recorded in ``calls`` so tests can assert
which service a page used and with what.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Callable, Iterator

from triage.findings import Finding, Status
from ui import services
from triage.export import EXPORT_FORMATS
from triage.probes import PROBE_SETS
from triage.steps import STEPS
from triage.target import Target
from ui import values as v  # the page value types, as the real services return them

URL = "http://127.0.0.1:55975"
MODEL = "/root/.cache/vllm-triage/lab/models/tiny-qwen3"

LIVELOCK = Finding(
    "pooling-livelock-risk", Status.FAIL, "Pooling livelock at max_model_len (vllm #55427) will hang requests",
    {"vllm_version": {"value": "0.31.0", "source": "server", "detail": "GET /version"},
     "max_model_len": {"value": 256, "source": "server", "detail": "GET /v1/models"},
     "truncate_prompt_tokens": {"value": 256, "source": "user", "detail": "Target page"},
     "enable_chunked_prefill": {"value": True, "source": "cmdline", "detail": "--enable-chunked-prefill"}},
    fix="Send truncate_prompt_tokens 255 (max_model_len - 1), or upgrade to vLLM >= 0.32.0.",
    refs=["vllm#55427", "vllm#48039"], explanation="A prompt of exactly max_model_len tokens never finishes.")
VERSION = Finding("vllm-version", Status.WARN, "vLLM 0.31.0 carries the pooling livelock bug",
                  {"vllm_version": {"value": "0.31.0", "source": "server", "detail": "GET /version"}},
                  fix="Upgrade to 0.32.0 or later.", refs=["vllm#48039"])
GPU = Finding("gpu-memory", Status.UNKNOWN, "GPU memory could not be read", {}, fix="")
FLAGS = Finding("flags-known", Status.PASS, "All serve flags are known to 0.31.0",
                {"cmdline": {"value": "--max-num-batched-tokens 128", "source": "cmdline"}})


class FakeServices:
    """Implements the pages' view of ui.services.Services with canned values (engine faked at the seam)."""

    def __init__(self, *, findings: list[Finding] | None = None, error: str | None = None,
                 models_error: str | None = None, n_runs: int = 3) -> None:
        self.findings = findings if findings is not None else [VERSION, GPU, FLAGS, LIVELOCK]
        self.error = error
        self.models_error = models_error
        self.n_runs = n_runs
        self.config: dict[str, Any] | None = None  # the stored config the checklist's "done" carries
        self.live = v.LiveState("not stalled", "7 /metrics samples over 3.5 s: running 0, waiting 0", 7, 3.5)
        self.calls: list[tuple[str, Any]] = []
        self.saved: list[v.SavedTarget] = [
            v.SavedTarget(1, URL, MODEL, 256, "vllm serve … --max-model-len 256", "lab 0.31")]

    # the same surface as ui.services.Services -----------------------------------------------
    def list_models(self, url: str, api_key: str | None = None, timeout_s: float = 5.0) -> list[v.ModelInfo]:
        self.calls.append(("list_models", (url, api_key)))
        if self.models_error:
            raise services.ServiceError(self.models_error)
        return [v.ModelInfo(MODEL, MODEL, 256)]

    def saved_targets(self) -> list[v.SavedTarget]:
        return list(self.saved)

    def save_target(self, form: Target) -> Target:
        self.calls.append(("save_target", form))
        return form.with_(target_id=7)

    def steps(self) -> tuple[Any, ...]:
        return STEPS

    def answer_form(self) -> tuple[dict[str, Any], tuple[Any, ...], tuple[int, ...]]:
        return services.Services.answer_form(self)  # type: ignore[arg-type]  # pure: the engine's key list

    def with_answers(self, form: Target, answers: dict[str, Any]) -> Target:
        self.calls.append(("with_answers", answers))
        return services.Services.with_answers(self, form, answers)  # type: ignore[arg-type]

    def iter_checklist(self, form: Target) -> Iterator[v.ChecklistEvent]:
        self.calls.append(("iter_checklist", form))
        for i, f in enumerate(self.findings, 1):
            step = services.step_of(f.check)
            yield v.ChecklistEvent("step", step, None, 11, "", i, len(STEPS))
            yield v.ChecklistEvent("finding", step, f, 11)
        if self.error:
            yield v.ChecklistEvent("error", None, None, None, self.error)
            return
        if ((self.config or {}).get("sources") or {}).get("server") == "ok":  # the engine is looked at in the run
            self.calls.append(("live_state", form.url))
            yield v.ChecklistEvent("live", None, None, 11, self.live.message, live=self.live)
        yield v.ChecklistEvent("done", None, None, 11, "fail", config=self.config)

    # pure computations of the real service (no engine I/O): the fake shares them
    def headline(self, findings: list[Finding], config: Any = None, form: Target | None = None,
                 where: str = "") -> v.Headline:
        return services.Services.headline(self, findings, config, form, where)  # type: ignore[arg-type]

    def live_state(self, form: Target, **_: Any) -> v.LiveState:
        self.calls.append(("live_state", form.url))
        return self.live

    def scope(self, config: Any, probe_sets_run: Any = ()) -> list[Any]:
        return services.Services.scope(self, config, probe_sets_run)  # type: ignore[arg-type]

    def twin_plan(self, run_id: int) -> tuple[Any, str]:
        """No lab here: the box says why (the real plan is tests/twin; the button end to end is test_e2e_rerank_fix)."""
        return None, "no vLLM release is installed in the lab"

    def reproduce_run(self, run_id: int, progress: Any) -> dict[str, Any]:
        self.calls.append(("reproduce_run", run_id))
        return {"reproduced": False, "fixes": []}

    def cosine_rows(self, findings: list[Finding]) -> list[dict[str, Any]]:
        return services.Services.cosine_rows(self, findings)  # type: ignore[arg-type]  # pure

    def openwebui_check(self, base: str, api_key: str | None, model: str, batch: int,
                        server_url: str | None) -> tuple[Finding, str]:
        self.calls.append(("openwebui_check", (base, model, batch)))
        return services.Services.openwebui_check(self, base, api_key, model, batch, server_url)  # type: ignore[arg-type]

    def throughput_figure(self, findings: list[Finding]) -> Any:
        return services.Services.throughput_figure(self, findings)  # type: ignore[arg-type]

    def check_url(self, text: str) -> tuple[str, str]:
        return services.Services.check_url(self, text)  # type: ignore[arg-type]

    def last_target(self) -> Target | None:
        return None

    def probe_sets(self) -> tuple[Any, ...]:
        return PROBE_SETS

    def experiments_asked(self, findings: list[Finding]) -> list[str]:
        return services.Services.experiments_asked(self, findings)  # type: ignore[arg-type]

    def run_probes(self, form: Target, sets: list[str], *, allow_hang: bool, stall_s: float = 5.0,
                   deadline_s: float = 30.0, on_event: Callable[[v.ProbeProgress], None] | None = None,
                   run_experiments: bool = False) -> v.ProbeRunView:
        self.calls.append(("run_probes", {"sets": sets, "allow_hang": allow_hang, "deadline_s": deadline_s,
                                          **({"run_experiments": True} if run_experiments else {})}))
        if self.error:
            raise services.ServiceError(self.error)
        probes = [v.ProbeView("conformance/list-input", "ok", 0.2, 0.2, 200, {"request": {"input": ["a", "b"]}}),
                  v.ProbeView("conformance/normalize", "http-error", 0.1, 0.1, 400,
                            {"response": {"error": "Parameter `normalize` was removed"}})]
        if "seed" in sets:
            probes.append(v.ProbeView("seed/short-long", "livelock", 8.1, 6.0, None,
                                    {"samples": [{"t": 1.0, "running": 1, "waiting": 0}],
                                     "recovery": {"aborted_at_s": 6.1, "recovered_s": 7.0}}))
        for p in probes:
            if on_event:
                on_event(v.ProbeProgress(p.probe, "running", "", 0.0))
                on_event(v.ProbeProgress(p.probe, p.outcome, "", p.duration_s))
        return v.ProbeRunView(12, probes, [LIVELOCK] if "seed" in sets else [])

    def stats_tick(self, form: Target, session: dict[str, Any], stall_s: float = 10.0,
                   interval_s: float = 1.0) -> v.StatsView:
        self.calls.append(("stats_tick", form.url))
        if self.error:
            raise services.ServiceError(self.error)
        session["n"] = session.get("n", 0) + 1
        alert = {"kind": "livelock", "since": 1_795_986_100.0, "confirmed_at": 1_795_986_110.0}
        return v.StatsView(None, {"num_requests_running": 1.0, "num_requests_waiting": 0.0}, alert, session["n"])

    def analyze_log(self, text: str, target_id: int | None = None, save: bool = True,
                    secrets: tuple[str, ...] = (), session_target: Target | None = None) -> v.LogView:
        self.calls.append(("analyze_log", len(text)))
        if "not a log" in text:
            raise services.ServiceError("This does not look like a vLLM log (no vLLM lines found).")
        stalled = Finding("log-livelock-suspect", Status.FAIL, "Engine stalled: Running 1, Waiting 0, 0 tokens/s")
        return v.LogView([stalled],
                       {"max_model_len": {"value": 256, "source": "log", "detail": "non-default args"}},
                       [{"time": None, "running": 1, "waiting": 0, "prompt_throughput": 0.0}],
                       {"lines": 120}, 13)

    def count_runs(self, *, target_id: int | None = None, status: str | None = None) -> int:
        return self.n_runs

    def list_runs(self, *, target_id: int | None = None, status: str | None = None, limit: int = 25,
                  offset: int = 0) -> v.RunPage:
        self.calls.append(("list_runs", {"target_id": target_id, "status": status, "limit": limit, "offset": offset}))
        ids = range(self.n_runs - offset, max(self.n_runs - offset - limit, 0), -1)
        rows = [v.RunRow(i, "check", "fail" if i % 2 else "pass", "2026-11-29 21:00:00", None, URL, MODEL, "")
                for i in ids]
        return v.RunPage(rows, self.n_runs, limit, offset)

    def get_run(self, run_id: int) -> v.RunDetail | None:
        self.calls.append(("get_run", run_id))
        if run_id > max(self.n_runs, 13):
            return None
        fail = run_id % 2 == 1
        cfg = {"vllm_version": {"value": "0.31.0" if fail else "0.32.0", "source": "server"},
               "max_model_len": {"value": 256, "source": "server"}}
        return v.RunDetail(run_id, "check", "fail" if fail else "pass", "2026-11-29 21:00:00", URL, MODEL, "",
                         cfg, {}, [LIVELOCK if fail else Finding("pooling-livelock-risk", Status.PASS, "Fixed")],
                         [], 0)

    def compare_runs(self, left_id: int, right_id: int) -> Any:
        a, b = self.get_run(left_id), self.get_run(right_id)
        if a is None or b is None:
            raise services.ServiceError(f"Run {left_id if a is None else right_id} does not exist.")
        return services.diff_runs(a, b)

    def latest_run_id(self) -> int | None:
        return self.n_runs or None

    def export_formats(self) -> tuple[Any, ...]:
        return EXPORT_FORMATS

    def export_name(self, run_id: int, fmt: str) -> tuple[str, str]:
        f = next(x for x in EXPORT_FORMATS if x.id == fmt)
        return f"triage-run-{run_id}.{f.ext}", f.mime

    def export(self, run_id: int, fmt: str, secrets: tuple[str, ...] = ()) -> tuple[bytes, str, str]:
        self.calls.append(("export", (run_id, fmt, secrets)))
        if self.error:
            raise services.ServiceError(self.error)
        f = next(x for x in EXPORT_FORMATS if x.id == fmt)
        return f"run {run_id} as {fmt}".encode(), f"triage-run-{run_id}.{f.ext}", f.mime
