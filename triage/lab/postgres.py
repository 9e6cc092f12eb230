"""``lab postgres up|down|status``: a throw-away PostgreSQL cluster (Debian package) on 127.0.0.1.

PostgreSQL refuses to run as root, and sessions and CI run as root: the cluster lives in a temp dir
owned by the package's ``postgres`` user and its tools run through ``runuser`` (directly when we are
not root). Trust authentication for user ``triage`` on loopback only; stopped by the postmaster's
PID (SIGINT = fast shutdown), then the dir is removed.
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from triage.lab import daemons
from triage.lab.errors import LabError
from triage.lab.server import HOST, free_port

KIND = "postgres"

USER = "triage"
OS_USER = "postgres"


@dataclass
class LabPostgres(daemons.Daemon):
    started_at: float = 0.0
    kind: ClassVar[str] = KIND

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{USER}@{HOST}:{self.port}/{database}"


def bindir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    exe = shutil.which("initdb")
    if exe:
        return Path(exe).parent
    raise LabError("PostgreSQL not found: install Debian's postgresql package (apt-get install -y postgresql)")


def _as_pg(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", OS_USER, "--", *cmd] if os.geteuid() == 0 else cmd


def _run(cmd: list[str], timeout: float = 120.0) -> None:
    p = subprocess.run(_as_pg(cmd), capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise LabError(f"{' '.join(cmd[:2])} failed ({p.returncode}): {(p.stderr or p.stdout).strip()[-800:]}")


def status() -> list[LabPostgres]:
    return daemons.running(KIND, LabPostgres)


def _ready(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        try:
            s.connect((HOST, port))
        except OSError:
            return False
    return True


def up(timeout_s: float = 60.0) -> LabPostgres:
    """initdb a fresh cluster in a temp dir and start it on a free loopback port; returns when it accepts."""
    bins = bindir()
    d = Path(tempfile.mkdtemp(prefix="triage-postgres-"))
    if os.geteuid() == 0:
        pw = pwd.getpwnam(OS_USER)
        os.chown(d, pw.pw_uid, pw.pw_gid)
    data = d / "data"
    port = free_port()
    try:
        _run([str(bins / "initdb"), "-D", str(data), "-A", "trust", "-U", USER, "-E", "UTF8", "--no-sync"])
        opts = f"-p {port} -k {d} -c listen_addresses={HOST} -c fsync=off -c max_connections=200"
        _run([str(bins / "pg_ctl"), "-D", str(data), "-o", opts, "-l", str(d / "postgres.log"), "-w",
              "-t", str(int(timeout_s)), "start"], timeout=timeout_s + 10)
        pid = int((data / "postmaster.pid").read_text().splitlines()[0])
    except BaseException:
        _kill_dir(d)
        raise
    pg = LabPostgres(pid=pid, port=port, dir=str(d), started_at=time.time())
    daemons.save(KIND, pg.name, pg)
    t0 = time.time()
    while not _ready(port):
        if time.time() - t0 > timeout_s:
            _stop(pg)
            raise LabError(f"postgres did not accept connections within {timeout_s:.0f} s; log {d / 'postgres.log'}")
        time.sleep(0.2)
    return pg


def _kill_dir(d: Path) -> None:
    pidfile = d / "data" / "postmaster.pid"
    if pidfile.exists():
        try:
            os.kill(int(pidfile.read_text().splitlines()[0]), signal.SIGINT)
        except (ValueError, IndexError, ProcessLookupError):
            pass
        time.sleep(1.0)
    shutil.rmtree(d, ignore_errors=True)


def _stop(pg: LabPostgres, grace_s: float = 15.0) -> None:
    daemons.stop(KIND, pg, signal.SIGINT, grace_s)  # SIGINT: fast shutdown (roll back, disconnect, exit)


def down(which: str | int | None = None) -> list[LabPostgres]:
    """Stop lab PostgreSQL clusters by PID or port (all when None/'all'); returns those stopped."""
    return daemons.down(status(), which, lambda pg: (str(pg.pid), str(pg.port), pg.name, pg.url()), _stop)


def create_database(pg: LabPostgres, name: str) -> str:
    """A fresh database in the cluster (tests give each store its own); returns its URL."""
    import psycopg

    with psycopg.connect(f"host={HOST} port={pg.port} user={USER} dbname=postgres", autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        c.execute(f'CREATE DATABASE "{name}"')
    return pg.url(name)
