"""Verdicts on the guide's deployment claims, from /metrics pages and responses recorded on real servers."""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.findings import Status
from triage.probes import conformance_deploy as cd

from .recorded import DIRS, page, reply

QWEN = DIRS[:2]


@pytest.mark.parametrize("server", DIRS)
def test_kv_sizing_from_cache_config_info(server: str) -> None:
    f = cd.kv_sizing(page(server, "metrics-idle").cache, 256)
    assert f.status == Status.PASS
    assert f.evidence["verdict"] == ("not applicable" if "minilm" in server else "refuted")


def test_kv_sizing_unknown_without_metrics() -> None:
    assert cd.kv_sizing({}, 256).status == Status.UNKNOWN


def test_batch_flag_indirect_when_server_info_is_off() -> None:
    srv = QWEN[1]
    f = cd.batch_flag(reply(srv, "embed-list"), 2, reply(srv, "server-info"))
    assert f.status == Status.PASS and "indirect" in f.title


def test_remote_code_refuted_for_native_qwen3(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"architectures": ["Qwen3ForCausalLM"]}')
    f = cd.remote_code(reply(QWEN[1], "models"), cd.read_model_config(str(tmp_path)), True)
    assert f.status == Status.PASS and f.evidence["verdict"] == "refuted"
    assert cd.remote_code(reply(QWEN[1], "models"), None, True).status == Status.UNKNOWN
    assert cd.read_model_config(str(tmp_path / "missing")) is None
