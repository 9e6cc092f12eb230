"""The traceback reader and the crash records it names, on tracebacks as posted in public reports
(tests/fixtures/public/README.md: source links)."""
from __future__ import annotations

import time
from pathlib import Path

from triage.logs import analyze_log
from triage.logs.tracebacks import read_text

PUBLIC = Path(__file__).resolve().parents[1] / "fixtures" / "public"


def _text(name: str) -> str:
    return (PUBLIC / name).read_text(encoding="utf-8")


def _bad(name_or_text: str) -> list:
    source = _text(name_or_text) if name_or_text.endswith(".txt") else name_or_text
    return [f for f in analyze_log(source if "\n" in source else source + "\n").findings
            if f.status.value in ("fail", "warn", "unknown")]


def test_classifier_traceback_frames_and_exception() -> None:
    """vllm#30107: the prefixed traceback (`ERROR … [core.py:842]`), the exception, the innermost vLLM frame."""
    traces = read_text(_text("vllm-30107-classifier-traceback.txt"))
    first = traces[0]
    assert first.exc_type == "ValueError"
    assert "no module or parameter named 'classifier'" in first.exc_msg
    assert first.process == "EngineCore_DP0"
    inner = first.innermost_vllm
    assert inner is not None and inner.vllm_module == "model_executor/models/utils.py" and inner.func == "_load_module"
    # the second traceback (the EngineCore process) is cut by the index before its exception: kept, no exception
    assert len(traces) == 2 and traces[1].exc_type == "" and traces[1].innermost_vllm.func == "run_engine_core"


def test_classifier_traceback_names_unsupported_architecture() -> None:
    """The Transformers fallback that cannot pool: FAIL with 'no flag fixes it', never --convert or overrides."""
    found = [f for f in _bad("vllm-30107-classifier-traceback.txt") if f.check == "log-traceback"]
    assert [f.failure_mode for f in found] == ["transformers-fallback-cannot-pool"]
    f = found[0]
    assert f.status.value == "fail" and "utils.py _load_module" in f.title
    assert "None by flag" in f.fix and "--convert" not in f.fix and "--hf-overrides" not in f.fix
    assert "vllm#30107" in f.refs
    # no "never started, cause not recognised" beside the named cause
    assert not any(x.check == "log-server-start" for x in _bad("vllm-30107-classifier-traceback.txt"))


def test_keyerror_fragment_names_chunked_prefill() -> None:
    """gpustack#2793: the fragment holds only the code line and `KeyError: None` (no File line): the code line is the
    signature; the fix is the 0.10.1.x one."""
    found = [f for f in _bad("gpustack-2793-keyerror.txt") if f.check == "log-traceback"]
    assert [f.failure_mode for f in found] == ["pooling-chunked-prefill-keyerror"]
    assert found[0].status.value == "fail"
    assert "--no-enable-chunked-prefill" in found[0].fix and "0.10.2" in found[0].fix


def test_keyerror_with_the_start_of_the_log_names_the_release() -> None:
    """The start of the same log (vLLM 0.10.1.1) before the fragment: the release is judged against the range."""
    text = _text("gpustack-2793-start.txt") + _text("gpustack-2793-keyerror.txt")
    f = next(f for f in _bad(text) if f.check == "log-traceback")
    assert f.failure_mode == "pooling-chunked-prefill-keyerror"
    assert "(affected: >= 0.10.1, < 0.10.2)" in f.evidence["version"]


def test_keyerror_on_a_fixed_release_is_not_the_record() -> None:
    """The same signature on a release outside 0.10.1.x is said as another bug with that symptom (UNKNOWN): the
    start-up line edited to 0.31.0 (a test double of a log: no public report shows the fixed release crashing)."""
    start = _text("gpustack-2793-start.txt").replace("version 0.10.1.1", "version 0.31.0")
    f = next(f for f in _bad(start + _text("gpustack-2793-keyerror.txt")) if f.check == "log-traceback")
    assert f.status.value == "unknown" and "outside its releases" in f.title and not f.failure_mode


def test_cuda_fault_is_one_of_with_the_experiment() -> None:
    """vllm#48214's CUBLAS fault: the pooling race among other CUDA faults, with the run that tells them apart."""
    f = next(f for f in _bad("vllm-48214-cublas.txt") if f.check == "log-traceback")
    assert f.failure_mode == "pooling-chunked-prefill-race" and f.status.value == "warn"
    assert "one of" in f.title and "--enforce-eager" in f.title


def test_unknown_exception_is_said_with_its_frame() -> None:
    """A traceback no record knows: UNKNOWN, its exception and innermost vLLM frame, no record named. The text is
    vllm#30107's traceback with its message replaced (a test double: the reader, not a report, is under test)."""
    text = _text("vllm-30107-classifier-traceback.txt").replace(
        "ValueError: There is no module or parameter named 'classifier' in TransformersForSequenceClassification",
        "ValueError: something else")
    f = next(f for f in _bad(text) if f.check == "log-traceback")
    assert f.status.value == "unknown"
    assert "ValueError: something else in vllm/model_executor/models/utils.py" in f.title


def test_engine_dead_names_the_tracebacks_cause() -> None:
    """'EngineCore failed to start' after a traceback: the engine-dead finding names the traceback's exception. The
    failure line is vLLM's own text (vllm/v1/engine/core.py, 0.31.0 wheel) added after vllm#30107's cut paste."""
    text = _text("vllm-30107-classifier-traceback.txt") + (
        "\n(EngineCore_DP0 pid=10543) ERROR 12-05 04:21:00 [core.py:850] EngineCore failed to start.\n")
    dead = next(f for f in _bad(text) if f.check == "log-engine-dead")
    assert "root cause: log-traceback" in dead.title


def test_reading_a_paste_stays_fast() -> None:
    """A pasted traceback is read in well under a second (the verdict budget is 1 s)."""
    text = _text("vllm-30107-classifier-traceback.txt") * 200
    t0 = time.perf_counter()
    analyze_log(text)
    assert time.perf_counter() - t0 < 1.0


# -- a traceback cut before its exception (gpustack#2790 as the public index stores it) ---------------------------
_CUT_INIT_DEVICE = """\
(EngineCore_0 pid=2691)   File "/usr/local/lib/python3.11/dist-packages/vllm/executor/uniproc_executor.py", line 48, in _init_executor
(EngineCore_0 pid=2691)     self.collective_rpc("init_device")
(EngineCore_0 pid=2691)   File "/usr/local/lib/python3.11/dist-packages/vllm/worker/worker_base.py", line 603, in init_device
(EngineCore_0 pid=2691)     self.worker.init_device()  # type: ignore
(EngineCore_0 pid=2691)   File "/usr/local/lib/python3.11/dist-packages/vllm/v1/worker/gpu_worker.py", line 179, in init_device
"""  # noqa: E501 - the lines as posted


def test_a_cut_traceback_in_init_device_is_one_of_the_shared_gpu_or_the_device() -> None:
    from triage.catalogue import get

    got = [f for f in analyze_log(_CUT_INIT_DEVICE).findings if f.check == "log-traceback"]
    assert [(f.failure_mode, f.status.value) for f in got] == [("gpu-memory-shared", "warn")]
    assert "one of" in got[0].title and get("gpu-memory-shared").title in got[0].title
    assert "--gpu-memory-utilization" in got[0].fix


def test_a_cut_traceback_elsewhere_names_nothing() -> None:
    text = _CUT_INIT_DEVICE.replace("v1/worker/gpu_worker.py", "v1/worker/other.py")
    assert not [f for f in analyze_log(text).findings if f.check == "log-traceback" and f.status.value != "unknown"]


_LIST = ("'OlmoForCausalLM', 'Olmo2ForCausalLM', 'OlmoeForCausalLM', 'OPTForCausalLM', 'OrionForCausalLM', "
         "'PersimmonForCausalLM', 'PhiForCausalLM', 'Phi3ForCausalLM', 'Phi3SmallForCausalLM', 'PhiMoEForCausalLM', "
         "'Qwen2ForCausalLM', 'Qwen2MoeForCausalLM', 'RWForCausalLM', 'BartModel'")


def test_the_registry_refusal_names_the_architecture() -> None:
    text = (f"ValueError: Model architectures ['NomicBertModel'] are not supported for now. Supported architectures: "
            f"[{_LIST}]\n")
    got = [f for f in analyze_log(text).findings if f.check == "log-architecture-unsupported"]
    assert [(f.failure_mode, f.status.value) for f in got] == [("architecture-unsupported", "fail")]
    assert "NomicBertModel" in got[0].title and "upgrade" in got[0].fix.lower()


def test_the_registry_list_alone_is_a_likely_refusal() -> None:
    """The list without the line that names the architecture (vllm#12054 as the public index cut it): WARN."""
    got = [f for f in analyze_log(f"ausalLM', {_LIST}\n").findings if f.check == "log-architecture-unsupported"]
    assert [f.status.value for f in got] == ["warn"]


def test_a_few_quoted_class_names_are_no_registry_list() -> None:
    text = "we tried 'Qwen2ForCausalLM', 'Qwen3ForCausalLM' and 'BertModel'\n"
    assert not [f for f in analyze_log(text).findings if f.check == "log-architecture-unsupported"]
