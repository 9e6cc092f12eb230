"""``lab matrix``: the checklist, the seed matrix, ``watch`` and the log post-mortem on real servers of each release.
The lab imports no probe: the held request (the probes' SHORT and LONG inputs) is the caller's ``hold``
(the CLI gives triage.probes.hold.hold_hang); everything else runs the product's commands as a user would.

For each release, one server at a time: install it if needed, start the ``livelock`` profile (tiny Qwen3,
max_model_len 256, budget 128, chunked prefill), then run the product's own commands against it as a user
would (``check --url``, ``probe --set seed --allow-hang``, ``watch`` while a held ``[SHORT, LONG]``
request truncated to max_model_len runs, ``logs`` on the server's log), record ``/metrics`` before and
after, stop the server by name. Recordings go to ``<out>/<release>/`` (trimmed: vLLM families of
/metrics, the log without /metrics and /health access lines); the table of all releases is printed
and written to ``<out>/matrix.json`` and ``<out>/table.md`` (every release recorded there so far, this run's
rows replacing older ones). tests/fixtures/real/matrix/README.md holds the committed table.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from triage.display import head_and_tail
from triage.http import VllmClient
from triage.lab.errors import LabError
from triage.lab.install import install
from triage.lab.server import LabServer, down, up
from triage.vllm.metrics import KV_CACHE_USAGE, RUNNING, WAITING, parse_metrics, prefilter

Progress = Callable[[str], None]
Hold = Callable[[str, float, float], dict[str, Any]]  # (url, hold_s, page_at_s) -> hold_hang's record
PROFILE = "livelock"
MODEL = "tiny-qwen3"
# The gauges and counters the stall rule and the charts read, and the older name of the KV gauge.
GAUGES = (RUNNING, WAITING, KV_CACHE_USAGE, "vllm:gpu_cache_usage_perc", "vllm:num_requests_waiting_by_reason",
          "vllm:prompt_tokens_total", "vllm:request_success_total", "vllm:cache_config_info")
HANG_PAGE_AT_S = 12.0  # /metrics recorded this long into the held request (metrics-hang.txt)
HOLD_S = 30.0  # the watched hang: longer than the watch's stall window and two 10 s stats-log intervals
WATCH_S = HOLD_S + 8.0
LOG_KEEP_CHARS = 60_000


@dataclass
class ReleaseRow:
    release: str
    served: bool = False
    note: str = ""
    ready_s: float | None = None
    cases: int = 0
    hung: list[str] = field(default_factory=list)  # no answer within the probe's deadline (any outcome)
    livelock: list[str] = field(default_factory=list)  # of those, the stall rule's livelock verdict
    returned: list[str] = field(default_factory=list)
    recovered: bool | None = None
    max_recovery_s: float | None = None
    gauges: list[str] = field(default_factory=list)
    check_status: str | None = None
    check_version: str | None = None
    watch_alerts: list[str] = field(default_factory=list)
    watch_errors: int | None = None
    log_version: str | None = None
    log_stats_lines: int | None = None
    log_findings: dict[str, str] = field(default_factory=dict)
    metrics_read: bool = False
    after_hold_ok: bool | None = None
    readers: dict[str, bool] = field(default_factory=dict)


def _triage(args: list[str], timeout: float) -> tuple[int, Any, str]:
    """``python -m triage …`` as a user runs it: (exit code, its JSON output or None, stderr tail)."""
    try:
        p = subprocess.run([sys.executable, "-m", "triage", *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, None, f"timed out after {timeout:.0f} s"
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = None
    return p.returncode, doc, p.stderr[-2000:]


def vllm_families(page: str) -> str:
    """What the recordings keep of a /metrics page: the families the readers parse (samples, HELP, TYPE: the
    metrics prefilter, old names included) and the TYPE line of every other vllm: family (which names exist)."""
    kept = prefilter(page)
    others = [ln for ln in page.splitlines() if ln.startswith("# TYPE vllm:") and ln not in kept.splitlines()]
    return kept + ("\n".join(others) + "\n" if others else "")


def gauges_present(page: str) -> list[str]:
    names = {ln.split("{")[0].split(" ")[0] for ln in page.splitlines() if ln.startswith("vllm:")}
    names |= {ln.split()[2] + ("_total" if ln.split()[3] == "counter" else "") for ln in page.splitlines()
              if ln.startswith("# TYPE vllm:") and len(ln.split()) > 3}
    return [g for g in GAUGES if g in names]


def trim_log(text: str, keep: int = LOG_KEEP_CHARS) -> str:
    """The server log without the /metrics and /health access lines (the probes scrape every 0.5 s), capped
    at ``keep`` characters: the head (start-up) and the tail (stats lines of the watched hang, shutdown)."""
    lines = [ln for ln in text.splitlines(keepends=True)
             if not ('"GET /metrics' in ln or '"GET /health' in ln or '"GET /load' in ln)]
    return head_and_tail("".join(lines), keep, whole_lines=True, by="lab matrix")


def _metrics_page(url: str) -> str:
    """The server's /metrics page (a lab server on loopback: no answer is the lab's error, not a finding)."""
    with VllmClient(url, timeout_s=10.0) as c:
        r = c.get("/metrics")
    if r.transport_failed:
        raise LabError(r.describe())
    return r.text


def run_release(release: str, out_root: Path, progress: Progress, db: str, hold: Hold) -> ReleaseRow:
    """One release, recorded into a hidden ``.<release>.partial`` folder moved into ``<release>/`` at the end (a run
    stopped half-way leaves the release's earlier recordings whole)."""
    row = ReleaseRow(release)
    out = out_root / f".{release}.partial"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    try:
        install(release, progress=progress)
        srv = up(release, MODEL, PROFILE, timeout_s=420.0, progress=progress, name=f"matrix-{release}")
    except LabError as e:
        row.note = _why_not_served(str(e), release)
        progress(f"{release}: not served: {e}")
        (out / "not-served.txt").write_text(str(e) + "\n")
        _publish(out, out_root / release)
        return row
    row.served, row.ready_s = True, srv.ready_s
    try:
        _exercise(srv, row, out, progress, db, hold)
    finally:
        down(srv.name)
        (out / "server.log").write_text(trim_log(srv.log_text()))
    _post_mortem(row, out, db)
    row.readers = {
        "metrics": row.metrics_read,
        "check": row.check_version == release,
        "seed": row.cases > 0 and row.recovered is not False,
        "watch": row.watch_errors == 0 and (bool(row.watch_alerts) == bool(row.livelock)),
        "logs": row.log_version == release and bool(row.log_stats_lines),
    }
    (out / "row.json").write_text(json.dumps(asdict(row), indent=1) + "\n")
    (out_root / release / "not-served.txt").unlink(missing_ok=True)
    _publish(out, out_root / release)
    return row


def _why_not_served(error: str, release: str) -> str:
    """The first line of the lab's error, and the loader's complaint when the server's log has one."""
    from triage.lab.paths import logs_dir

    note = error.splitlines()[0][:200]
    try:
        log = (logs_dir() / f"matrix-{release}.log").read_text(errors="replace")
    except OSError:
        return note
    m = re.search(r"Failed to import from vllm\._C[^\n]*?(version `[^']+' not found)", log)
    return f"{note} vllm._C: {m.group(1)}" if m else note


def _publish(partial: Path, final: Path) -> None:
    """Move this run's files over the release's folder (files it did not write this time, e.g. the wheel's
    METADATA, stay)."""
    final.mkdir(parents=True, exist_ok=True)
    for f in partial.iterdir():
        f.replace(final / f.name)
    partial.rmdir()


def _exercise(srv: LabServer, row: ReleaseRow, out: Path, progress: Progress, db: str, hold_hang: Hold) -> None:
    idle = _metrics_page(srv.url)
    (out / "metrics-idle.txt").write_text(vllm_families(idle))
    row.gauges = gauges_present(idle)
    eng = next(iter(parse_metrics(idle).engines.values()), None)
    row.metrics_read = eng is not None and None not in (eng.num_requests_running, eng.num_requests_waiting,
                                                        eng.kv_cache_usage_perc)
    progress(f"{row.release}: check --url")
    # srv.args is the command after `vllm serve` (MODEL …); --truncate 256: the seed matrix's own setting
    rc, doc, err = _triage(["check", "--url", srv.url, "--log-file", srv.log_path, "--cmdline",
                            " ".join(["vllm", "serve", *srv.args]), "--truncate", "256", "--format", "json",
                            "--db", db], 120)
    if doc:
        row.check_status = doc.get("status")
        row.check_version = _config_value(doc, "vllm_version") or _find_version(doc)
        (out / "check.json").write_text(json.dumps(_slim(doc), indent=1) + "\n")
    else:
        row.note += f" check exit {rc}: {err[-200:]}"
    progress(f"{row.release}: probe --set seed (13 cases, each hang aborted)")
    rc, doc, err = _triage(["probe", "--url", srv.url, "--set", "seed", "--allow-hang", "--format", "json",
                            "--db", db], 900)
    if doc:
        (out / "seed.json").write_text(json.dumps(_slim(doc), indent=1) + "\n")
        outcomes = doc.get("outcomes", [])
        row.cases = len(outcomes)
        row.hung = [o["probe"] for o in outcomes if o.get("outcome") in ("livelock", "stuck-waiting", "slow")]
        row.livelock = [o["probe"] for o in outcomes if o.get("outcome") == "livelock"]
        row.returned = [o["probe"] for o in outcomes if o.get("outcome") == "ok"]
        recs = [o["recovery"] for o in outcomes if o.get("recovery")]
        row.recovered = all(r.get("recovered") for r in recs) if recs else None
        times = [r["recovered_after_abort_s"] for r in recs if r.get("recovered_after_abort_s") is not None]
        row.max_recovery_s = max(times) if times else None
    else:
        row.note += f" probe exit {rc}: {err[-200:]}"
    progress(f"{row.release}: watch {WATCH_S:.0f} s over a held [SHORT, LONG] t=max_model_len request")
    watch = subprocess.Popen([sys.executable, "-m", "triage", "watch", "--url", srv.url, "--duration", str(WATCH_S),
                              "--format", "json", "--db", db], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    time.sleep(2.0)
    hold = hold_hang(srv.url, HOLD_S, HANG_PAGE_AT_S)
    row.after_hold_ok = hold["after_status"] == 200
    page = hold.pop("hang_page", None)
    if page:
        (out / "metrics-hang.txt").write_text(vllm_families(page))
        eng = next(iter(parse_metrics(page).engines.values()), None)
        if eng is not None:
            hold["hang_gauges"] = {"running": eng.num_requests_running, "waiting": eng.num_requests_waiting,
                                   "kv_cache_usage_perc": eng.kv_cache_usage_perc,
                                   "request_success_total": eng.request_success_total,
                                   "prompt_tokens_total": eng.prompt_tokens_total}
    wout, _ = watch.communicate(timeout=WATCH_S + 60)
    try:
        wdoc = json.loads(wout)
    except ValueError:
        wdoc = {}
    summary = wdoc.get("summary") or {}
    row.watch_errors = summary.get("errors")
    row.watch_alerts = [str(a.get("kind")) for a in summary.get("alerts", [])]
    (out / "watch.json").write_text(json.dumps({"hold": hold, "summary": {k: summary.get(k) for k in
                                                ("ticks", "errors", "alerts")},
                                                "events": wdoc.get("events")}, indent=1) + "\n")
    after = _metrics_page(srv.url)
    (out / "metrics-after.txt").write_text(vllm_families(after))


def _post_mortem(row: ReleaseRow, out: Path, db: str) -> None:
    rc, doc, err = _triage(["logs", str(out / "server.log"), "--no-save", "--format", "json", "--db", db], 120)
    if not doc:
        row.note += f" logs exit {rc}: {err[-200:]}"
        return
    doc["source"] = "server.log"  # the recording beside it (the run read it in the .partial folder)
    (out / "logs.json").write_text(json.dumps(_slim(doc), indent=1) + "\n")
    row.log_version = (doc.get("config") or {}).get("vllm_version")
    row.log_stats_lines = ((doc.get("summary") or {}).get("stats") or {}).get("lines")
    row.log_findings = {f["check"]: f["status"] for f in doc.get("findings", [])}


def _config_value(doc: dict[str, Any], key: str) -> Any:
    v = (doc.get("config") or {}).get(key)
    return v.get("value") if isinstance(v, dict) else v


def _find_version(doc: dict[str, Any]) -> str | None:
    for f in doc.get("findings", []):
        v = (f.get("evidence") or {}).get("vllm_version")
        if isinstance(v, str):
            return v
    return None


def _slim(doc: dict[str, Any]) -> dict[str, Any]:
    """A CLI JSON document without run ids and with each finding's check, status, title and short evidence."""
    keep = {k: v for k, v in doc.items() if k not in ("run_id", "findings")}
    keep["findings"] = [{"check": f.get("check"), "status": f.get("status"), "title": f.get("title"),
                         "evidence": {k: v for k, v in (f.get("evidence") or {}).items()
                                      if k in ("vllm_version", "outcome", "time_to_verdict_s", "recovery",
                                               "cases", "workaround_ok", "window", "max_model_len")}}
                        for f in doc.get("findings", [])]
    return keep


def _cell(names: list[str]) -> str:
    return str(len(names))


def table(rows: list[ReleaseRow]) -> str:
    """The markdown table: release | hung / returned | recovered | gauges present | readers OK."""
    head = ("| release | seed cases hung (livelock verdicts) / returned | recovered after abort | watch alert "
            "| gauges present | log post-mortem | readers OK |\n|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        if not r.served:
            lines.append(f"| {r.release} | not served: {r.note} | - | - | - | - | - |")
            continue
        rec = ("yes" if r.recovered else "NO" if r.recovered is False else "no abort needed")
        if r.max_recovery_s is not None:
            rec += f" (max {r.max_recovery_s} s)"
        gauges = ", ".join(g.removeprefix("vllm:") for g in r.gauges)
        bad = [k for k, ok in r.readers.items() if not ok]
        readers = "all (" + ", ".join(r.readers) + ")" if not bad else "NOT: " + ", ".join(bad)
        watch = ", ".join(r.watch_alerts) or "none"
        post = ", ".join(f"{c.removeprefix('log-')} {st.upper()}" for c, st in r.log_findings.items()
                         if st in ("fail", "warn")) or "pass"
        lines.append(f"| {r.release} | {len(r.hung)} hung ({len(r.livelock)}) / {len(r.returned)} returned "
                     f"(of {r.cases}) | {rec} "
                     f"| {watch} | {gauges} | {post} | {readers} |")
    return "\n".join(lines)


def _release_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) if x.isdigit() else 0 for x in v.split("."))


def run_matrix(releases: list[str], out_root: Path, progress: Progress, hold: Hold) -> list[ReleaseRow]:
    """Every release in turn (``run_release``), the table of every release recorded so far rewritten after each;
    ``hold`` sends the watched hang (``_exercise``)."""
    rows = []
    out_root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lab-matrix-") as tmp:
        db = str(Path(tmp) / "matrix.db")
        for release in releases:
            progress(f"== {release}")
            rows.append(run_release(release, out_root, progress, db, hold))
            done = out_root / "matrix.json"
            prior = json.loads(done.read_text()) if done.exists() else {}
            prior.update({r.release: asdict(r) for r in rows})
            done.write_text(json.dumps(prior, indent=1, sort_keys=True) + "\n")
            known = set(ReleaseRow.__dataclass_fields__)
            every = [ReleaseRow(**{k: v for k, v in d.items() if k in known})
                     for _, d in sorted(prior.items(), key=lambda kv: _release_key(kv[0]))]
            (out_root / "table.md").write_text(table(every) + "\n")
            progress(table(rows[-1:]))
    return rows
