"""``lab up/down/status``: real ``vllm serve`` processes on 127.0.0.1, tracked by PID in state files.

Each server runs in its own process session (so SIGTERM to the group stops the API server,
EngineCore and Worker together); a state file per server records PID, port, version, model,
profile and log path. ``ensure`` reuses a healthy matching server, which is how test fixtures
share one server per configuration and how a developer keeps one running between test runs.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from collections.abc import Callable

from triage.http import status_of
from triage.lab.errors import LabError
from triage.lab.install import is_installed
from triage.lab.models import RERANKER_NAMES, model_path
from triage.lab.paths import logs_dir, state_dir, venv_dir
from triage.lab.profiles import CONVERT_EMBED, PROFILES, base_args

HOST = "127.0.0.1"
# A session token (the test suite sets it): servers started under it are kept for reuse by ``release`` instead of
# stopped, marked with the token in their state file; whoever set it stops them (``keepers``) when it ends.
KEEP_ENV = "VLLM_TRIAGE_LAB_KEEP"


@dataclass
class LabServer:
    name: str
    pid: int
    port: int
    version: str
    model: str
    profile: str
    model_path: str
    log_path: str
    args: list[str] = field(default_factory=list)
    started_at: float = 0.0
    ready_s: float | None = None
    kept: str = ""  # the $VLLM_TRIAGE_LAB_KEEP session that keeps it for reuse ('' = its starter stops it)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def served_model(self) -> str:
        return self.model_path  # vLLM's model id is the path given to `vllm serve`

    def alive(self) -> bool:
        return _pid_alive(self.pid)

    def healthy(self, timeout: float = 2.0) -> bool:
        return status_of(f"{self.url}/health", timeout) == 200

    def log_text(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")
        except OSError:
            return ""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child still answers kill(0); treat it as gone
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((HOST, port))
        except OSError:
            return True
    return False


def _state_file(name: str) -> Path:
    return state_dir() / f"{name}.json"


def _save(srv: LabServer) -> None:
    """Written whole by rename: a reader in another process (status) never sees half a record."""
    path = _state_file(srv.name)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(asdict(srv), indent=2))
    os.replace(tmp, path)


def log_path_of(url: str, given: str | None = None) -> Path | None:
    """The server log of the lab server at ``url`` (``given`` wins): what the capture scripts tail."""
    if given:
        return Path(given)
    return next((Path(s.log_path) for s in status() if s.url.rstrip("/") == url.rstrip("/")), None)


def status() -> list[LabServer]:
    """Servers recorded by the lab; state files of dead processes are removed."""
    out = []
    for f in sorted(state_dir().glob("*.json")):
        try:
            srv = LabServer(**json.loads(f.read_text()))
        except FileNotFoundError:  # another process removed it after the glob (a dead server, a stop)
            continue
        except (ValueError, TypeError):  # not a record: skipped, not removed (a partial write was one, before _save
            continue                      # wrote by rename)
        if srv.alive():
            out.append(srv)
        else:
            f.unlink(missing_ok=True)
    return out


def _kill_group(pid: int, grace_s: float = 10.0) -> None:
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.time() + grace_s
    while time.time() < deadline:
        if not _pid_alive(pid):
            break
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.2)
    try:
        os.killpg(pid, signal.SIGKILL)  # whatever is left of the group (EngineCore, Worker)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def build_command(version: str, model: str, profile: str, port: int, extra_args: list[str]) -> tuple[list[str], str]:
    if profile not in PROFILES:
        raise LabError(f"unknown profile '{profile}' (choose from {', '.join(PROFILES)})")
    prof = PROFILES[profile]
    mpath = str(model_path(model, version))
    args, _ = base_args(version)
    if model != "minilm" and model not in RERANKER_NAMES:  # rerankers: the profile says how they are served
        args += CONVERT_EMBED
    args += prof.args
    # extra args come last; vLLM's argparse keeps the last value of a repeated flag
    args += extra_args
    cmd = [str(venv_dir(version) / "bin" / "vllm"), "serve", mpath, "--host", HOST, "--port", str(port)] + args
    return cmd, mpath


def up(version: str, model: str = "tiny-qwen3", profile: str = "defaults", port: int | None = None,
       extra_args: list[str] | None = None, env: dict[str, str] | None = None, timeout_s: float = 240.0,
       progress: Callable[[str], None] = lambda _: None, name: str | None = None) -> LabServer:
    """Start `vllm serve` and wait for /health 200; on any failure nothing is left running."""
    if not is_installed(version):
        raise LabError(f"vllm {version} is not installed in the lab (no venv at {venv_dir(version)}): "
                       f"run `python -m triage lab install --vllm {version}`")
    if port is None:
        port = free_port()
    elif port_in_use(port):
        raise LabError(f"port {port} on {HOST} is already in use: choose another with --port, "
                       f"or stop what holds it (`python -m triage lab status`)")
    cmd, mpath = build_command(version, model, profile, port, list(extra_args or []))
    name = name or f"vllm-{version}-{model}-{profile}-{port}"
    log_path = logs_dir() / f"{name}.log"
    full_env = dict(os.environ)
    full_env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VLLM_TARGET_DEVICE": "cpu",
                     "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1", "PYTHONUNBUFFERED": "1"})
    full_env.pop("VIRTUAL_ENV", None)
    full_env.update(base_args(version)[1])
    full_env.update(env or {})
    progress(f"starting: {' '.join(cmd)}")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=full_env, start_new_session=True, cwd=str(logs_dir()))
    srv = LabServer(name=name, pid=proc.pid, port=port, version=version, model=model, profile=profile,
                    model_path=mpath, log_path=str(log_path), args=cmd[2:], started_at=time.time(),
                    kept=os.environ.get(KEEP_ENV, ""))
    _save(srv)
    t0 = time.time()
    try:
        while True:
            if proc.poll() is not None:
                tail = "\n".join(srv.log_text().splitlines()[-20:])
                raise LabError(f"vllm {version} exited with code {proc.returncode} during start-up. "
                               f"Log {log_path}:\n{tail}")
            if srv.healthy(timeout=1.0):
                break
            if time.time() - t0 > timeout_s:
                raise LabError(f"vllm {version} did not answer /health within {timeout_s:.0f} s; "
                               f"stopped it. Log: {log_path}")
            time.sleep(1.0)
    except BaseException:
        _kill_group(proc.pid)
        _state_file(name).unlink(missing_ok=True)
        raise
    srv.ready_s = round(time.time() - t0, 1)
    _save(srv)
    progress(f"ready in {srv.ready_s} s: {srv.url} (pid {srv.pid}, log {log_path})")
    return srv


def down(target: str | int | None = None) -> list[LabServer]:
    """Stop servers by name, PID or port (all when target is None or 'all'); returns those stopped."""
    stopped = []
    for srv in status():
        t = str(target) if target is not None else "all"
        if t in ("all", srv.name, str(srv.pid), str(srv.port)):
            _kill_group(srv.pid)
            _state_file(srv.name).unlink(missing_ok=True)
            stopped.append(srv)
    return stopped


def release(srv: LabServer) -> None:
    """The caller that started ``srv`` is done with it: stop it, unless it was started under a keeping session
    ($VLLM_TRIAGE_LAB_KEEP, the test suite's one server per configuration), which stops it at its own end."""
    if not srv.kept:
        down(srv.pid)


def kept_by(token: str) -> list[LabServer]:
    """The running servers kept for reuse by the session ``token``."""
    return [s for s in status() if token and s.kept == token]


def ensure(version: str, model: str = "tiny-qwen3", profile: str = "defaults",
           extra_args: list[str] | None = None, env: dict[str, str] | None = None) -> tuple[LabServer, bool]:
    """A healthy server of this exact configuration: reuse one (False) or start one (True = caller stops it).

    The configuration is the command it runs, not the profile's name: a lab twin asking for ``defaults`` plus the
    options a test's profile gives reuses that test's server (one shared server per configuration)."""
    extra = list(extra_args or [])
    mine = os.environ.get(KEEP_ENV, "")
    for srv in status():
        if (srv.version, srv.model) != (version, model):
            continue
        if srv.kept and srv.kept != mine:  # another keeping session's (a parallel test lane's): its tests hang it
            continue
        if srv.args == build_command(version, model, profile, srv.port, extra)[0][2:] and srv.healthy():
            return srv, False
    return up(version, model, profile, extra_args=extra, env=env), True
