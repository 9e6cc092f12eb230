"""The server's start-up log (pasted text or a file) as an evidence source.

Parsing lives in one place (`triage.logs.extract_startup_config`, patterns in
`triage/vllm/logformats.py`); this adapter turns its canonical keys into facts with source 'log'.
"""

from __future__ import annotations


from triage.logs import extract_startup_config
from triage.logs.crash_findings import pasted_findings
from triage.logs.model_files import model_files_finding
from triage.sources import RawCapture, SourceResult
from triage.vllm import logformats as lf

SOURCE = "log"


POOLING_PATHS = ("/v1/embeddings", "/embeddings", "/pooling", "/v1/rerank", "/rerank", "/v2/rerank", "/score",
                 "/v1/score", "/classify")
MAX_SCAN = 4_000_000  # characters of a paste scanned for access lines


def pooling_answers(text: str) -> dict[str, int]:
    """2xx answers per pooling endpoint in the access log (`"POST /v1/embeddings HTTP/1.1" 200 OK`): the server did
    serve embeddings/scores, whatever a flag rule would say about its runner (issue 42); {} when none."""
    out: dict[str, int] = {}
    if "HTTP/" not in text:
        return out
    for line in text[:MAX_SCAN].splitlines():
        if '" 2' not in line:
            continue
        m = lf.ACCESS_RE.search(line)
        if m and m["status"].startswith("2") and m["path"].split("?", 1)[0] in POOLING_PATHS:
            path = m["path"].split("?", 1)[0]
            out[path] = out.get(path, 0) + 1
    return out


# Refusals only vLLM's pooling path words (its pooling parameters' and pooling serving's own checks): a server that
# answers them serves a pooling model, whatever a flag rule says about its runner (issue 42).
POOLING_REFUSALS = (("the Matryoshka refusal of `dimensions`", lf.MATRYOSHKA_RE),
                    ("the length refusal 'for embedding generation'", lf.POOLING_LENGTH_REFUSAL_RE))


def pooling_refusals(text: str) -> dict[str, int]:
    """How many of each pooling-only refusal the paste quotes; {} when none."""
    head = text[:MAX_SCAN]
    out = {what: sum(len(r.findall(head)) for r in (rx if isinstance(rx, tuple) else (rx,)))
           for what, rx in POOLING_REFUSALS}
    return {k: n for k, n in out.items() if n}


# the engine's per-step entry points (V0 worker.py / model_runner.py, V1 gpu_model_runner.py, 0.4 … 0.32): a traceback
# through one of them ran a request, so the server had started with the command it was given
_STEP_FUNCS = frozenset({"execute_model", "_execute_model", "step", "engine_step"})


def served_requests(text: str) -> bool:
    """Does the paste hold a traceback through the engine's request execution (a vLLM frame in execute_model)?"""
    if "execute_model" not in text:
        return False
    for line in text[:MAX_SCAN].splitlines():
        if "execute_model" in line and "vllm" in line:
            m = lf.TRACEBACK_FRAME_RE.search(line)
            if m and m["func"] in _STEP_FUNCS and lf.VLLM_FRAME_FILE_RE.search(m["file"].replace("\\", "/")):
                return True
    return False


def build_version(text: str) -> str:
    """The version string with its local build label (collect_env's `vLLM Version : 0.13.0+faa43dbf.nv26.01`, the API
    server's version line): the label names a vendor's build (NGC) that the bare release number hides; '' when none."""
    if "+" not in text:
        return ""
    for rx in (lf.COLLECT_ENV_VERSION_RE, lf.API_SERVER_VERSION_RE):
        for m in rx.finditer(text[:MAX_SCAN]) if rx is lf.API_SERVER_VERSION_RE else (
                rx.search(line.strip()) for line in text[:200_000].splitlines() if "vLLM Version" in line):
            if m is not None and "+" in m["v"]:
                return m["v"]
    return ""


def collect(text: str) -> SourceResult:
    """Facts from a start-up log; `stated_args` = the keys of its `non-default args` dict."""
    res = SourceResult(SOURCE)
    res.captures.append(RawCapture("log", "start-up log", text[:2_000_000]))
    try:
        prov = extract_startup_config(text, with_provenance=True)
        # a traceback or a client error in the paste reaches the reader that knows it (issue 42), whatever the command
        res.findings.extend(pasted_findings(text, {k: p.get("value") for k, p in prov.items()}))
        if (files := model_files_finding(text)) is not None:  # a listing of the model directory (issue 42)
            res.findings.append(files)
    except Exception as e:  # a parser bug must not sink the run: the log becomes 'unavailable'
        res.unavailable = f"log parser failed: {type(e).__name__}: {e}"
        return res
    if served_requests(text):
        res.add("engine_served", True, "the paste: a traceback from the engine's request execution (execute_model): "
                "the server had started and took requests")
    build = build_version(text)
    if build:
        res.add("vllm_build", build, "the paste: the version string with a build label")
    refused = pooling_refusals(text)
    if refused:
        res.add("pooling_refusals", refused, "the paste: refusals only vLLM's pooling path gives")
    if not prov:
        res.unavailable = "no vLLM start-up lines found in the log"
        return res
    for key, p in prov.items():
        res.add(key, p.get("value"), str(p.get("detail", "")))
    served = pooling_answers(text)
    if served:
        res.add("pooling_requests_ok", served, "the access log: 2xx answers on the pooling endpoints")
    nda = prov.get("non_default_args", {}).get("value")
    if isinstance(nda, dict):
        stated = {("model" if k == "model_tag" else k) for k in nda}
        res.stated_args = stated
        if "api_key" in nda or any("api_key" in str(k) for k in nda):
            res.add("api_key_required", True, "non-default args api_key")
    return res
