"""Releases 0.7 … 0.10.1 (issue 42): the task-resolution line and a base checkpoint loaded by the generator.

Lines: the 'Defaulting to' line as posted in a public 0.9 log (vllm PR #19260, comment of 2025-06-13, kept in
tests/world/cases/vllm-19260-qwen3-reranker-defaulting-generate); vLLM's own format (vllm/config.py _resolve_task,
0.7-0.9: 'This model supports multiple tasks: %s. Defaulting to %r.'). The loader's message is
vllm/model_executor/models/utils.py AutoWeightsLoader._load_module ('There is no module or parameter named %r in %s'),
as vllm#21614 (0.10.0) states it for Qwen3ForCausalLM.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RERANKER_LOG = ROOT / "tests/world/cases/vllm-19260-qwen3-reranker-defaulting-generate/log_1.txt"


def _logs(path: Path) -> list[dict]:
    out = subprocess.run([sys.executable, "-m", "triage", "logs", str(path), "--format", "json", "--no-save"],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    return json.loads(out.stdout)["findings"]


def test_defaulting_line_names_the_generator_and_the_old_spelling_of_the_task():
    f = next(x for x in _logs(RERANKER_LOG) if x["check"] == "log-generate-runner")
    assert f["status"] == "fail" and "Defaulting to" in f["title"]
    assert "--task score" in f["fix"] and "--runner" not in f["fix"] and "--convert" not in f["fix"]


def test_base_checkpoint_in_a_causal_lm_is_an_embedder_served_for_generation(tmp_path):
    p = tmp_path / "tb.log"
    p.write_text(
        "ERROR 07-24 21:30:33 [core.py:632] EngineCore failed to start.\n"
        "ERROR 07-24 21:30:33 [core.py:632] Traceback (most recent call last):\n"
        'ERROR 07-24 21:30:33 [core.py:632]   File "/x/vllm/model_executor/models/utils.py", line 277, '
        "in _load_module\n"
        "ERROR 07-24 21:30:33 [core.py:632]     raise ValueError(msg)\n"
        "ERROR 07-24 21:30:33 [core.py:632] ValueError: There is no module or parameter named 'layers' in "
        "Qwen3ForCausalLM\n")
    f = next(x for x in _logs(p) if x["check"] == "log-traceback")
    assert f["status"] == "fail" and "generator" in f["title"]
    assert "--convert classify" not in f["fix"] and "embed" in f["fix"]


def test_transformers_fallback_is_not_read_as_a_base_checkpoint():
    from triage.vllm import logformats as lf

    msg = "There is no module or parameter named 'classifier' in TransformersForSequenceClassification"
    assert lf.GENERATOR_LOADS_BASE_RE.search(msg) is None
    assert lf.GENERATOR_LOADS_BASE_RE.search("no module or parameter named 'layers' in Qwen3ForEmbedding") is None
