"""``lab prometheus up|down|status``: a real Prometheus (Debian package) scraping lab servers on 127.0.0.1.

One config file and one storage dir per instance, in a temp dir; a state file in the lab dir records
PID, port and dir so ``down`` stops it by PID and removes the dir. Tests and the fleet bench use it
the way an SRE's Prometheus would be used: through its HTTP API only.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar
from urllib.parse import urlsplit

from triage.http import status_of
from triage.lab import daemons
from triage.lab.errors import LabError
from triage.lab.server import HOST, free_port

KIND = "prometheus"

SCRAPE_INTERVAL_S = 2.0
JOB = "vllm"


@dataclass
class LabPrometheus(daemons.Daemon):
    scrape: list[str] = field(default_factory=list)
    rule_files: list[str] = field(default_factory=list)
    started_at: float = 0.0
    kind: ClassVar[str] = KIND

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"


def binary(name: str = "prometheus") -> str:
    path = shutil.which(name)
    if not path:
        raise LabError(f"`{name}` not found: install Debian's prometheus package (apt-get install -y prometheus)")
    return path


def _fmt_s(s: float) -> str:
    return f"{int(s * 1000)}ms" if s < 1 or s != int(s) else f"{int(s)}s"


def config_text(scrape: Sequence[str], interval_s: float = SCRAPE_INTERVAL_S,
                rule_files: Sequence[str] = (), job: str = JOB) -> str:
    """prometheus.yml scraping each URL's /metrics (a URL with a path scrapes that path)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for u in scrape:
        p = urlsplit(u if "://" in u else f"http://{u}")
        path = p.path if p.path not in ("", "/") else "/metrics"
        groups.setdefault((p.scheme or "http", path), []).append(p.netloc)
    jobs = [{"job_name": job if i == 0 else f"{job}-{i}", "scheme": scheme, "metrics_path": path,
             "static_configs": [{"targets": targets}]} for i, ((scheme, path), targets) in enumerate(groups.items())]
    cfg = {"global": {"scrape_interval": _fmt_s(interval_s), "evaluation_interval": _fmt_s(interval_s)},
           "rule_files": list(rule_files), "scrape_configs": jobs}
    return json.dumps(cfg, indent=2)  # JSON is YAML


def status() -> list[LabPrometheus]:
    return daemons.running(KIND, LabPrometheus)


def up(scrape: Sequence[str] = (), *, interval_s: float = SCRAPE_INTERVAL_S, rule_files: Sequence[str] = (),
       storage_dir: str | None = None, retention: str = "30d", timeout_s: float = 60.0) -> LabPrometheus:
    """Start Prometheus on a free 127.0.0.1 port and wait for /-/ready; nothing is left running on failure.

    ``storage_dir`` serves an existing TSDB (the fleet bench's backfilled blocks) instead of a fresh one.
    """
    exe = binary()
    d = Path(tempfile.mkdtemp(prefix="triage-prometheus-"))
    rules = []
    for i, r in enumerate(rule_files):  # copied so the instance does not depend on the caller's file
        dst = d / f"rules-{i}.yml"
        shutil.copyfile(r, dst)
        rules.append(str(dst))
    (d / "prometheus.yml").write_text(config_text(scrape, interval_s, rules))
    data = Path(storage_dir) if storage_dir else d / "data"
    port = free_port()
    cmd = [exe, f"--config.file={d / 'prometheus.yml'}", f"--storage.tsdb.path={data}",
           f"--web.listen-address={HOST}:{port}", f"--storage.tsdb.retention.time={retention}",
           "--web.enable-lifecycle", "--query.lookback-delta=1m"]
    with open(d / "prometheus.log", "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, cwd=str(d))
    srv = LabPrometheus(pid=proc.pid, port=port, dir=str(d), scrape=list(scrape), rule_files=rules,
                        started_at=time.time())
    daemons.save(KIND, srv.name, srv)
    def ready() -> bool:
        return status_of(f"{srv.url}/-/ready", 1.0) == 200

    daemons.wait_ready_or_stop(proc, ready, [d / "prometheus.log"], "prometheus", timeout_s, lambda: _stop(srv))
    return srv


def _stop(p: LabPrometheus, grace_s: float = 10.0) -> None:
    daemons.stop(KIND, p, grace_s=grace_s)


def down(which: str | int | None = None) -> list[LabPrometheus]:
    """Stop lab Prometheus instances by PID, port or URL (all when None/'all'); returns those stopped."""
    return daemons.down(status(), which, lambda p: (str(p.pid), str(p.port), p.url, p.name), _stop)
