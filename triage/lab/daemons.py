"""State files and PID stops shared by the lab's non-vLLM daemons (Prometheus, PostgreSQL).

One JSON file per running daemon under ``<lab dir>/<kind>/``; a file whose process is gone is
removed when listed. Stopping is by PID only: a signal, a bounded wait, then SIGKILL.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from triage.lab.paths import lab_dir
from triage.lab.server import _pid_alive

T = TypeVar("T")


@dataclass
class Daemon:
    """What a lab daemon's state file holds first: its PID, port and directory; ``kind`` (the subclass's)
    names its state folder and, with the port, the daemon."""

    pid: int
    port: int
    dir: str
    kind: ClassVar[str] = ""

    @property
    def name(self) -> str:
        return f"{self.kind}-{self.port}"

    def alive(self) -> bool:
        return _pid_alive(self.pid)


def state_dir(kind: str) -> Path:
    d = lab_dir() / kind
    d.mkdir(parents=True, exist_ok=True)
    return d


def save(kind: str, name: str, obj: Any) -> None:
    (state_dir(kind) / f"{name}.json").write_text(json.dumps(asdict(obj), indent=2))


def forget(kind: str, name: str) -> None:
    (state_dir(kind) / f"{name}.json").unlink(missing_ok=True)


def running(kind: str, cls: type[T]) -> list[T]:
    """The daemons of this kind whose process is alive (stale state files are removed)."""
    out = []
    for f in sorted(state_dir(kind).glob("*.json")):
        try:
            d = cls(**json.loads(f.read_text()))
        except (ValueError, TypeError):
            f.unlink(missing_ok=True)
            continue
        if _pid_alive(d.pid):  # type: ignore[attr-defined]
            out.append(d)
        else:
            f.unlink(missing_ok=True)
    return out


def stop_pid(pid: int, sig: int = signal.SIGTERM, grace_s: float = 10.0) -> None:
    """Signal ``pid``, wait up to ``grace_s`` for it to exit (reaping it if it is our child), then SIGKILL."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return
    deadline = time.time() + grace_s
    while time.time() < deadline and _pid_alive(pid):
        _reap(pid)
        time.sleep(0.1)
    if _pid_alive(pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        time.sleep(0.2)
    _reap(pid)


def stop(kind: str, d: Any, sig: int = signal.SIGTERM, grace_s: float = 10.0) -> None:
    """Stop one daemon (``stop_pid`` on its ``pid``), forget its state file and remove its ``dir``."""
    stop_pid(d.pid, sig, grace_s)
    forget(kind, d.name)
    shutil.rmtree(d.dir, ignore_errors=True)


def down(daemons: Iterable[T], which: str | int | None, keys: Callable[[T], tuple[str, ...]],
         stop_one: Callable[[T], None]) -> list[T]:
    """Stop, through ``stop_one``, the daemons that ``which`` names by one of their ``keys`` (all when
    None/'all'); returns those stopped."""
    w = str(which) if which is not None else "all"
    stopped = []
    for d in daemons:
        if w == "all" or w in keys(d):
            stop_one(d)
            stopped.append(d)
    return stopped


def wait_ready(proc: Any, ready: Callable[[], bool], log_tail: Callable[[], str], what: str, timeout_s: float,
               interval_s: float = 0.3) -> None:
    """Wait until ``ready()`` (a probe that swallows its own connection errors) is true; a LabError with the log's
    tail when the process exits first, or when ``timeout_s`` passes. The caller stops the daemon on any error."""
    from triage.lab.errors import LabError

    t0 = time.time()
    while True:
        if proc.poll() is not None:
            raise LabError(f"{what} exited with code {proc.returncode} at start:\n{log_tail()}")
        if ready():
            return
        if time.time() - t0 > timeout_s:
            raise LabError(f"{what} was not ready within {timeout_s:.0f} s; {log_tail()[-500:]}")
        time.sleep(interval_s)


def wait_ready_or_stop(proc: Any, ready: Callable[[], bool], logs: list[Path], what: str, timeout_s: float,
                       stop: Callable[[], None], interval_s: float = 0.3) -> None:
    """``wait_ready`` for a daemon just started: its error shows the last 15 lines of ``logs`` (those that exist,
    read in order); on any error (a LabError, Ctrl-C) ``stop()`` the daemon, then raise it again."""
    def tail() -> str:
        return "\n".join("".join(p.read_text(errors="replace") for p in logs if p.exists()).splitlines()[-15:])

    try:
        wait_ready(proc, ready, tail, what, timeout_s, interval_s)
    except BaseException:
        stop()
        raise


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
