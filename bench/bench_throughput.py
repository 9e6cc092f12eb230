"""The throughput probe beside `vllm bench serve` on the same real lab server, interleaved rounds, median ratios.

After a warm-up step (not counted), each of --rounds rounds runs, for each concurrency C (default 16, 64),
`vllm bench serve --backend openai-embeddings --endpoint /v1/embeddings --dataset-name random
--random-input-len 32 --max-concurrency C --metric-percentiles 50,90,99` (from the lab venv, the local model as
--model and --tokenizer, no hub) and then the probe's sweep at C (`triage.probes.throughput.run` with concurrency
(C,): its step, then the client's own ceiling against a trivial local server answering the server's own answer), so
the two alternate (bench, probe, bench, probe, ...) and a box that gets busier mid-run shows as spread, not as a
wrong ratio; each bench run is sized to last about as long as the probe's step (--window-s). Per pair it prints both
sides in bench's units (req/s, tok/s, p50/p90/p99 latency in ms, errors), their ratio (probe / bench), each client's
CPU per request and the server's under each, the client's ceiling ("client ceiling ~N req/s: figures above 0.8·N
are the client's") and the load average at that moment; per C the median of the ratios, their spread, the bench
figures' own spread and the ceiling over the server's figure; last the load average before and after.

    PYTHONPATH=. python bench/bench_throughput.py [--vllm 0.31.0] [--profile defaults] [--c 16 64] [--rounds 3]
        [--extra "ARGS"]                # extra `vllm serve` args (a configuration of its own: "--max-num-seqs 200")
        [--url URL --model-path PATH]   # an already running server instead of a lab one
        [--echo]                        # both clients against triage.load_echo (a test double of the fastest server)
        [--pin | --no-pin]              # the server on CPU 0, both clients on CPU 1 (the others, on a larger box);
                                        # the default for a lab server on 2+ CPUs

Why the two differ on a small box (read in vLLM 0.31.0's vllm/benchmarks/serve.py and lib/endpoint_request_func.py):
both send one ~32-token input per POST /v1/embeddings (the printed tokens/request are the server's own usage counts),
keep C in flight (bench: every request queued at once behind a semaphore of C; probe: C workers in a closed loop),
count successful requests only and divide by the wall time from the first send to the last answer (ramp-up and
tail included on both sides; bench adds one untimed test request first, the probe one untimed /tokenize). What
differs is the client's own CPU per request: bench's aiohttp client decodes every answer's JSON (the whole vector)
and builds a result object per request, ~5x what the probe's keep-alive socket client spends. Client and server
share the box's cores, so what a client spends the server does not get: the probe reads above bench by about the
ratio of the box's CPU per request under each (the last column of the table). --pin takes that out: the server's
processes on one CPU, both clients on another, so neither client's cost reaches the server, and the ratio says
whether the two measure the same thing.

--echo replaces the vLLM server by a test double that costs next to nothing per request: ``triage.load_echo``
answering a recorded real 0.31.0 answer (tests/fixtures/real/0.31.0-tiny-qwen3-livelock/embed-single.json) to every
request, one process, not pinned. A real vLLM server on this box is far slower than either client, so only there do
the two clients' own ceilings show: each side's figure is what that client can send (the probe's should not stay
below bench's however fast the server), and the probe's ceiling line is measured the same way.

Exit 0 when the median ratio at each C >= 16 lies within ±20 % (--tolerance) and the median client ceiling at each
C is at least twice the server's figure there (the higher of the two sides' median rates), else 1. A lab server it
started is stopped by PID at the end. Run it alone on the box (`flock /tmp/heavy.lock ...`): it starts a real server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from triage.http import ProbeClient  # noqa: E402
from triage.findings import Finding  # noqa: E402
from triage.lab import down, up  # noqa: E402
from triage.lab.paths import venv_dir  # noqa: E402
from triage.probes import throughput  # noqa: E402
from triage.probes.context import ProbeContext  # noqa: E402
from triage.probes.runner import MonitorConfig  # noqa: E402


def bench(vllm_bin: Path, url: str, model: str, model_path: str, c: int, prompts: int, out_dir: Path,
          seed: int) -> dict[str, Any]:
    """One `vllm bench serve` run: its result file's scalars, rc and wall time (imports included), and its own and
    the server's CPU per request over its measured run (sampled when it says the main run starts and when it prints
    the result: its imports and the server idling meanwhile are not counted)."""
    name = f"bench-c{c}-{seed}.json"
    cmd = [str(vllm_bin), "bench", "serve", "--backend", "openai-embeddings", "--base-url", url,
           "--endpoint", "/v1/embeddings", "--model", model_path, "--served-model-name", model,
           "--tokenizer", model_path, "--dataset-name", "random", "--random-input-len", "32",
           "--num-prompts", str(prompts), "--max-concurrency", str(c), "--save-result", "--result-dir", str(out_dir),
           "--result-filename", name, "--disable-tqdm", "--seed", str(seed),
           "--percentile-metrics", "e2el", "--metric-percentiles", "50,90,99"]
    env = dict(os.environ, VLLM_TARGET_DEVICE="cpu", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               VLLM_NO_USAGE_STATS="1", DO_NOT_TRACK="1")
    env.pop("VIRTUAL_ENV", None)
    t0 = time.time()
    # its own CPU over the measured run: sampled when it says the main run starts and when it prints the result
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**env, "PYTHONUNBUFFERED": "1"})
    ps = psutil.Process(proc.pid)
    marks: dict[str, float] = {}
    server: dict[str, float | None] = {}
    out: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        out.append(line)
        for key, text in (("start", "Starting main benchmark run"), ("end", "Serving Benchmark Result")):
            if text in line and key not in marks:
                server[key] = server_cpu(url)
                try:
                    t = ps.cpu_times()
                    marks[key] = t.user + t.system
                except psutil.Error:
                    pass
    rc = proc.wait(timeout=900)
    res = out_dir / name
    if rc != 0 or not res.exists():
        sys.exit(f"vllm bench serve failed (exit {rc}): {' '.join(cmd)}\n{''.join(out)[-5000:]}")
    scalars = {k: v for k, v in json.loads(res.read_text()).items() if not isinstance(v, list)}
    cpu = marks["end"] - marks["start"] if len(marks) == 2 else None
    per_request = round(1000 * cpu / scalars["completed"], 3) if cpu is not None and scalars.get("completed") else None
    done = scalars.get("completed") or 0
    return {"rc": rc, "wall_s": round(time.time() - t0, 1), "client_cpu_ms_per_request": per_request,
            "server_cpu_ms_per_request": per_request_ms(server.get("start"), server.get("end"), done), **scalars}


async def probe(url: str, model: str, c: int, with_ceiling: bool = True) -> dict[str, Any]:
    """The probe's sweep at C, as the CLI runs it: its row, with the client's ceiling (``client_ceiling``) measured
    after it."""
    async with ProbeClient(url) as pc:
        models = (await pc.models()).body
        mml = next((d.get("max_model_len") for d in models.get("data", []) if d.get("id") == model), None) or 256
        ctx = ProbeContext(pc, model, mml, await pc.version(), MonitorConfig())
        row: dict[str, Any] = {}
        async for x in throughput.run(ctx, concurrency=(c,), with_ceiling=with_ceiling):
            if isinstance(x, Finding):
                row = dict(x.evidence["rows"][0])
                if "client_ceiling" in x.evidence:
                    row["client_ceiling"] = x.evidence["client_ceiling"]
        return row


def server_cpu(url: str) -> float | None:
    """CPU seconds the server's processes (the one listening on the URL's port and its children) used so far."""
    from triage.sources.process import listening_process, tree_cpu_seconds

    api = listening_process(int(url.rsplit(":", 1)[1].split("/")[0]))
    if api is None:
        return None
    return tree_cpu_seconds(api)


def tokens_per_request(b: dict[str, Any]) -> float | None:
    """The prompt tokens the server counted per request under `vllm bench serve` (its usage.prompt_tokens sum)."""
    return round(b["total_input_tokens"] / b["completed"], 1) if b.get("completed") and "total_input_tokens" in b \
        else None


def pin_tree(pid: int, cpus: set[int]) -> int:
    """Every thread of the process ``pid`` and of its descendants onto ``cpus`` (Linux affinity is per thread;
    threads started later inherit their creator's); the number of threads pinned."""
    n = 0
    root = psutil.Process(pid)
    for p in [root, *root.children(recursive=True)]:
        try:
            for t in p.threads():
                try:
                    os.sched_setaffinity(t.id, cpus)
                    n += 1
                except OSError:  # a thread that ended meanwhile
                    pass
        except psutil.Error:
            pass
    return n


def per_request_ms(before: float | None, after: float | None, n: int) -> float | None:
    return round(1000 * (after - before) / n, 2) if before is not None and after is not None and n else None


def spread(values: list[float]) -> str:
    lo, hi = min(values), max(values)
    mid = statistics.median(values)
    return f"{lo:.2f}-{hi:.2f} (±{100 * (hi - lo) / 2 / mid:.0f} % of the median)" if mid else "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vllm", default="0.31.0")
    ap.add_argument("--model", default="tiny-qwen3")
    ap.add_argument("--profile", default="defaults")
    ap.add_argument("--extra", default="",
                    help="extra `vllm serve` args for the lab server, one string ('--max-num-seqs 200')")
    ap.add_argument("--port", type=int, help="the lab server's port (default: a free one)")
    ap.add_argument("--c", type=int, nargs="+", default=[16, 64])
    ap.add_argument("--rounds", "--pairs", type=int, default=3, dest="rounds")
    ap.add_argument("--window-s", type=float, default=3.5,
                    help="bench's prompts: the last probe rate at this C times this (about the probe step's length)")
    ap.add_argument("--warmup-c", type=int, default=16, help="the C of the warm-up probe step (not counted)")
    ap.add_argument("--tolerance", type=float, default=0.2)
    ap.add_argument("--url", help="a running server (else a lab server is started and stopped)")
    ap.add_argument("--model-path", help="with --url: the served model's local path (bench's --tokenizer)")
    ap.add_argument("--echo", action="store_true",
                    help="both clients against triage.load_echo answering a recorded answer (no vLLM server)")
    ap.add_argument("--pin", action=argparse.BooleanOptionalAction, default=None,
                    help="the server's processes on CPU 0, this process and vllm bench serve on the other CPUs "
                         "(the default for a lab server on a box of 2+ CPUs: a deployed server has its own cores, "
                         "so neither client's CPU is taken from it; --no-pin shares them)")
    ap.add_argument("--json", metavar="PATH", help="also write every figure to PATH")
    ap.add_argument("--from-json", metavar="PATH", help="print the table of a run saved with --json, run nothing")
    a = ap.parse_args()
    if a.from_json:
        saved = json.loads(Path(a.from_json).read_text())
        return 0 if table({int(c): p for c, p in saved["figures"].items()}, a.tolerance) else 1
    vllm_bin = venv_dir(a.vllm) / "bin" / "vllm"
    load0 = os.getloadavg()
    srv = None
    echo: subprocess.Popen[bytes] | None = None
    if a.echo:
        from triage.lab.models import model_path as lab_model_path

        echo = start_echo()
        url, model, model_path = f"http://127.0.0.1:{echo.port}", "tiny-qwen3", str(lab_model_path(a.model))
        a.pin = False
        print(f"echo server (test double of the fastest server): {url} (pid {echo.pid})", flush=True)
    elif a.url:
        if not a.model_path:
            sys.exit("--url needs --model-path (the local model: bench's --tokenizer, no hub)")
        url, model_path = a.url, a.model_path
        model = asyncio.run(_first_model(url))
    else:
        srv = up(a.vllm, a.model, a.profile, port=a.port, extra_args=a.extra.split(), timeout_s=600,
                 name=f"bench-throughput-{a.vllm}-{os.getpid()}")
        url, model, model_path = srv.url, srv.served_model, srv.model_path
        print(f"lab server vllm {a.vllm} {a.model} profile {a.profile} {a.extra}: {url} (pid {srv.pid}, "
              f"ready in {srv.ready_s} s)", flush=True)
    print(f"load average before: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}; {os.cpu_count()} CPUs", flush=True)
    if a.pin is None:
        a.pin = not a.url and (os.cpu_count() or 1) >= 2
    figures: dict[int, list[dict[str, Any]]] = {c: [] for c in a.c}
    try:
        if a.pin:
            from triage.sources.process import listening_process

            api = listening_process(int(url.rsplit(":", 1)[1].split("/")[0]))
            if api is None:
                sys.exit(f"--pin: no local process listens at {url}")
            clients = set(range(1, os.cpu_count() or 2))
            n = pin_tree(api.pid, {0})
            os.sched_setaffinity(0, clients)  # this thread: the probe, and vllm bench serve started from it, inherit
            print(f"pinned: server (pid {api.pid}, {n} threads) on CPU 0; clients on CPUs {sorted(clients)}",
                  flush=True)
        # a fresh server's first seconds are slower (first batches, caches): neither side pays them
        w = asyncio.run(probe(url, model, a.warmup_c or 16, with_ceiling=False))
        rate0 = w["requests_per_s"] or 50.0
        print(f"warm-up (not counted): probe at C={a.warmup_c or 16} {rate0} req/s", flush=True)
        rates = {c: rate0 for c in a.c}  # the first bench's size; then the last probe rate at this C
        with tempfile.TemporaryDirectory() as d:
            for i in range(a.rounds):
                for c in a.c:
                    # bench sized to run about as long as the probe's step (its last rate x --window-s)
                    prompts = max(100, round(rates[c] * a.window_s))
                    load_b = os.getloadavg()[0]
                    b = bench(vllm_bin, url, model, model_path, c, prompts, Path(d), seed=i)
                    b["load_average"] = load_b
                    s1 = server_cpu(url)
                    load_p = os.getloadavg()[0]
                    row = asyncio.run(probe(url, model, c))
                    s2 = server_cpu(url)
                    row["load_average"] = load_p
                    rates[c] = row["requests_per_s"] or rates[c]
                    # the server's CPU per request under each client (the probe's window includes its set-up calls
                    # and its ceiling's): near figures say the two sent the same work
                    row["server_cpu_ms_per_request"] = per_request_ms(s1, s2, row["requests"])
                    ratio = row["requests_per_s"] / b["request_throughput"]
                    figures[c].append({"round": i + 1, "bench": b, "probe": row, "ratio": ratio})
                    print(pair_text(c, i + 1, b, row, ratio), flush=True)
    finally:
        if srv is not None:
            down(srv.pid)
        if echo is not None:
            echo.terminate()
            echo.wait(10)
    load1 = os.getloadavg()
    if a.json:
        Path(a.json).write_text(json.dumps({"load_before": load0, "load_after": load1,
                                            "figures": {str(c): p for c, p in figures.items()}}, indent=1))
    ok = table(figures, a.tolerance)
    print(f"load average after: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    if a.echo:  # each side is its client's own ceiling: no server to agree on
        print("echo server: each figure is that client's own ceiling (probe / bench = their ratio); no done-when")
        return 0
    print("OK" if ok else f"FAIL: a median ratio at C >= 16 outside ±{a.tolerance:.0%}, or a client ceiling under "
          "twice the server's figure")
    return 0 if ok else 1


def _ms(v: Any) -> str:
    return f"{v:.1f}" if isinstance(v, (int, float)) else "-"


def pair_text(c: int, i: int, b: dict[str, Any], row: dict[str, Any], ratio: float) -> str:
    """One pair, both sides in bench's units, the client's ceiling and the load average at each side's start."""
    ceil = row.get("client_ceiling") or {}
    return (
        f"C={c:<3} round {i}: ratio {ratio:.2f}\n"
        f"  bench {b['request_throughput']:7.1f} req/s {b.get('total_token_throughput', 0):8.1f} tok/s  p50/p90/p99 "
        f"{_ms(b.get('p50_e2el_ms'))}/{_ms(b.get('p90_e2el_ms'))}/{_ms(b.get('p99_e2el_ms'))} ms  errors "
        f"{b.get('failed', 0)}  ({b['completed']} in {b['duration']:.1f} s; {tokens_per_request(b)} tokens/request; "
        f"client {b['client_cpu_ms_per_request']} ms CPU/request; server {b['server_cpu_ms_per_request']} ms "
        f"CPU/request; load average {b.get('load_average', 0):.2f})\n"
        f"  probe {row['requests_per_s']:7.1f} req/s {row['tokens_per_s'] or 0:8.1f} tok/s  p50/p90/p99 "
        f"{_ms(1000 * row['p50_s'])}/{_ms(1000 * row['p90_s'])}/{_ms(1000 * row['p99_s'])} ms  errors "
        f"{row.get('errors', 0)}  ({row['ok']} in {row['elapsed_s']:.1f} s; {row.get('mean_input_tokens')} "
        f"tokens/request; {row.get('processes', 1)} process(es); client {row.get('client_cpu_ms_per_request')} ms "
        f"CPU/request, {row.get('client_cpu_percent')} % CPU, {row.get('client_busy_percent')} % busy; server "
        f"{row['server_cpu_ms_per_request']} ms CPU/request: API server {row.get('api_server_cpu_percent')} %, "
        f"engine {row.get('engine_cpu_percent')} %; load average {row.get('load_average', 0):.2f})\n"
        f"  {ceil.get('note', 'client ceiling not measured')}"
        + (f"; echo server {ceil['echo_server_cpu_percent']} % CPU" if "echo_server_cpu_percent" in ceil else "")
    )


def box_cpu_ms(side: dict[str, Any]) -> float | None:
    """CPU per request on the box under one client: the server's plus the client's own."""
    srv, cli = side.get("server_cpu_ms_per_request"), side.get("client_cpu_ms_per_request")
    return srv + cli if srv is not None and cli is not None else None


def table(figures: dict[int, list[dict[str, Any]]], tolerance: float) -> bool:
    """Per C: the median ratio, its spread, the bench figures' spread, the median client ceiling over the server's
    figure (the higher median rate of the two sides); then what the box spent per request under each client
    (server + client CPU). True when every median at C >= 16 lies within the tolerance and every ceiling is at least
    twice the server's figure."""
    ok = True
    print()
    print("C    median ratio  ratios' spread                  bench req/s spread               "
          "client ceiling / server   box CPU ms/request bench / probe")
    for c, pairs in figures.items():
        if not pairs:
            continue
        ratios = [p["ratio"] for p in pairs]
        med = statistics.median(ratios)
        within = abs(med - 1) <= tolerance
        if c >= 16 and not within:
            ok = False
        server = max(statistics.median(p["bench"]["request_throughput"] for p in pairs),
                     statistics.median(p["probe"]["requests_per_s"] for p in pairs))
        ceils = [(p["probe"].get("client_ceiling") or {}).get("requests_per_s") for p in pairs]
        ceils = [x for x in ceils if x]
        ceil = statistics.median(ceils) if ceils else None
        high = ceil is not None and ceil >= 2 * server
        ok = ok and high
        ceil_text = f"{ceil:.0f} / {server:.0f} = {ceil / server:.1f}x" if ceil else "not measured"
        costs = [(box_cpu_ms(p["bench"]), box_cpu_ms(p["probe"])) for p in pairs]
        costs = [(b, q) for b, q in costs if b and q]
        cost = (f"{statistics.median(b for b, _q in costs):.2f} / {statistics.median(q for _b, q in costs):.2f}"
                if costs else "-")
        print(f"{c:<4} {med:>12.2f}  {spread(ratios):<31} "
              f"{spread([p['bench']['request_throughput'] for p in pairs]):<32} {ceil_text:<25} {cost}"
              f"{'' if within else '  OUTSIDE ±' + format(tolerance, '.0%')}{'' if high else '  CEILING UNDER 2x'}")
    return ok


class _Echo(subprocess.Popen):  # type: ignore[type-arg]
    port: int


def start_echo() -> _Echo:
    """triage.load_echo answering the recorded 0.31.0 answer, started here (stopped by PID by the caller)."""
    rec = Path(__file__).resolve().parents[1] / "tests/fixtures/real/0.31.0-tiny-qwen3-livelock/embed-single.json"
    body = json.dumps(json.loads(rec.read_text())["body"], separators=(",", ":")).encode()
    p = _Echo([sys.executable, "-m", "triage.load_echo"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
              cwd=Path(__file__).resolve().parents[1])
    assert p.stdin is not None and p.stdout is not None
    p.stdin.write(body)
    p.stdin.close()
    p.port = int(p.stdout.readline())
    return p


async def _first_model(url: str) -> str:
    async with ProbeClient(url) as pc:
        return (await pc.models()).body["data"][0]["id"]


if __name__ == "__main__":
    sys.exit(main())
