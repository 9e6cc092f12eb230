"""A real nginx (Debian package) as the reverse proxy in front of a lab server: what many deployments put between
their clients and vLLM. ``up(upstream, read_timeout_s)`` starts one on a free 127.0.0.1 port (its own prefix, config,
pid and temp dirs in a temp folder, in the foreground of its own session), ``down`` stops it by PID. The facts file
says what it shows: with ``proxy_read_timeout 5s`` in front of a livelocked 0.31.0, clients get nginx's 504 after 5 s.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from triage.http import status_of
from triage.lab import daemons
from triage.lab.errors import LabError
from triage.lab.server import HOST, free_port

KIND = "nginx"


@dataclass
class LabNginx(daemons.Daemon):
    upstream: str = ""
    read_timeout_s: float = 60.0
    kind: ClassVar[str] = KIND

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"


def binary() -> str:
    path = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if not path:
        raise LabError("`nginx` not found: install Debian's nginx package (apt-get install -y nginx)")
    return path


def config_text(upstream: str, port: int, prefix: Path, read_timeout_s: float) -> str:
    """One server block proxying everything to ``upstream`` (a base URL), as a deployment guide writes it."""
    t = f"{read_timeout_s:g}s"
    return f"""daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/tmp/body;
    proxy_temp_path {prefix}/tmp/proxy;
    fastcgi_temp_path {prefix}/tmp/fastcgi;
    uwsgi_temp_path {prefix}/tmp/uwsgi;
    scgi_temp_path {prefix}/tmp/scgi;
    client_max_body_size 64m;
    server {{
        listen {HOST}:{port};
        location / {{
            proxy_pass {upstream.rstrip('/')};
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_read_timeout {t};
            proxy_send_timeout {t};
        }}
    }}
}}
"""


def status() -> list[LabNginx]:
    return daemons.running(KIND, LabNginx)


def up(upstream: str, read_timeout_s: float = 60.0, timeout_s: float = 30.0) -> LabNginx:
    """Start nginx proxying to ``upstream`` and wait until it answers; nothing is left running on failure."""
    exe = binary()
    d = Path(tempfile.mkdtemp(prefix="triage-nginx-"))
    (d / "tmp").mkdir()
    port = free_port()
    conf = d / "nginx.conf"
    conf.write_text(config_text(upstream, port, d, read_timeout_s))
    with open(d / "stderr.log", "w") as log:
        proc = subprocess.Popen([exe, "-p", str(d), "-c", str(conf), "-e", str(d / "error.log")], stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                                cwd=str(d))
    srv = LabNginx(pid=proc.pid, port=port, dir=str(d), upstream=upstream, read_timeout_s=read_timeout_s)
    daemons.save(KIND, srv.name, srv)
    def answers() -> bool:
        return status_of(f"{srv.url}/health", 1.0) is not None  # any answer: nginx is up (its upstream may not be)

    daemons.wait_ready_or_stop(proc, answers, [d / "stderr.log", d / "error.log"], "nginx", timeout_s,
                               lambda: _stop(srv), 0.2)
    return srv


def _stop(n: LabNginx, grace_s: float = 10.0) -> None:
    daemons.stop(KIND, n, grace_s=grace_s)


def down(which: str | int | None = None) -> list[LabNginx]:
    """Stop lab nginx instances by PID, port or URL (all when None/'all'); returns those stopped."""
    return daemons.down(status(), which, lambda n: (str(n.pid), str(n.port), n.url, n.name), _stop)
