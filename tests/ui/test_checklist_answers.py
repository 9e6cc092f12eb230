"""Checklist page: answering an unknown step's question re-runs the walk with the answers (real engine, temp DB).

The target is the #55427 report's deployment pasted as a command line, at a URL where nothing listens (a
server behind a gateway: no /proc, no NVML), so the budget is unknown until the GPU is stated.
"""
from __future__ import annotations

from ui import services
from ui.components import session
from ui_apptest import no_exception, page
from triage.lab.server import free_port

SEED_CMD = ("docker run --gpus all -p 8094:8000 vllm/vllm-openai:v0.28.0 Qwen/Qwen3-Embedding-4B "
            "--runner pooling --convert embed --max-model-len 2048")
GPU = "NVIDIA GeForce RTX 3080 Ti"


def _livelock_heading(at) -> str:  # type: ignore[no-untyped-def]
    """The livelock finding's card label (its step's heading shows the step's worst, WARN here)."""
    return next(e.label for e in at.expander if "pooling-livelock-risk" in e.label)


def _walk(use_services, temp_db):  # type: ignore[no-untyped-def]
    svc = use_services(services.Services(temp_db))
    at = page("checklist", timeout=60)
    at.session_state[session.TARGET_KEY] = services.Target(
        url=f"http://127.0.0.1:{free_port()}", model="Qwen/Qwen3-Embedding-4B", truncation=2048, cmdline=SEED_CMD)
    at.run()
    at.button(key="checklist.run").click().run()
    no_exception(at)
    return svc, at


def test_gpu_answer_turns_unknown_into_fail(use_services, temp_db):  # type: ignore[no-untyped-def]
    svc, at = _walk(use_services, temp_db)
    assert "UNKNOWN" in _livelock_heading(at)
    at.selectbox(key="checklist.answer.gpu-memory.gpu.card").set_value(GPU).run()
    assert at.selectbox(key="checklist.answer.gpu-memory.gpu.mem").value == "12 GiB"  # its only size
    at.button(key="checklist.answer.gpu-memory.go").click().run()
    no_exception(at)
    assert "FAIL" in _livelock_heading(at)
    t = at.session_state[session.TARGET_KEY]
    assert t.answers == {"gpu_name": GPU, "gpu_memory_total_bytes": 12 << 30}  # kept with the target
    run = svc.store.get_run(at.session_state[session.OPEN_RUN_KEY], with_samples=False)
    assert run.meta["answers"]["gpu_name"] == GPU  # and stored with the run
    assert any("stated by user" in m.value for m in at.caption)
    rows = [r for d in at.dataframe for r in d.value.to_dict("records")]
    assert any(r["source"].startswith("user: stated by user") for r in rows)


def test_budget_answer_and_forget(use_services, temp_db):  # type: ignore[no-untyped-def]
    _, at = _walk(use_services, temp_db)
    at.number_input(key="checklist.answer.truncation.max_num_batched_tokens").set_value(4096).run()
    at.button(key="checklist.answer.truncation.go").click().run()
    no_exception(at)
    assert "WARN" in _livelock_heading(at)  # budget 4096 > max_model_len 2048: under load only
    at.button(key="checklist.forget").click().run()
    no_exception(at)
    assert "UNKNOWN" in _livelock_heading(at)
    assert not at.session_state[session.TARGET_KEY].answers


def test_malformed_answer_is_a_message(use_services, temp_db):  # type: ignore[no-untyped-def]
    _, at = _walk(use_services, temp_db)
    at.selectbox(key="checklist.answer.gpu-memory.gpu.card").set_value("Other…").run()
    at.text_input(key="checklist.answer.gpu-memory.gpu.name").set_value("   ").run()
    # never disabled (a disabled button swallows the click that commits a typed field): it says what is missing
    go = at.button(key="checklist.answer.gpu-memory.go")
    assert not go.disabled
    go.click().run()
    no_exception(at)
    assert any("Nothing answered yet" in w.value for w in at.warning)


def _picker_app() -> None:
    import streamlit as st

    from triage.answers import COMMON_GPUS, MEMORY_SIZES_GIB
    from ui.components import gpu_picker

    st.session_state["got"] = gpu_picker.show("p", COMMON_GPUS, MEMORY_SIZES_GIB)


def test_gpu_picker_returns_name_and_bytes():  # type: ignore[no-untyped-def]
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_picker_app).run()
    assert at.session_state["got"] == (None, None)
    at.selectbox(key="p.card").set_value("NVIDIA A100-SXM4-80GB").run()
    assert at.session_state["got"] == ("NVIDIA A100-SXM4-80GB", 80 << 30)
    at.selectbox(key="p.card").set_value("Other…").run()
    at.text_input(key="p.name").set_value("NVIDIA L20").run()
    at.selectbox(key="p.mem").set_value("48 GiB").run()
    assert at.session_state["got"] == ("NVIDIA L20", 48 << 30)
