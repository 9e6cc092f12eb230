"""Findings from the tracebacks and the client error lines of a log or a paste (pure: no I/O).

A traceback is matched against the crash records' signatures (triage.catalogue.crashes: exception, message, the
vLLM frames or code lines); a match on a release outside the record's range is said as such, never as the record.
A client error line is matched by the error rules (triage.logs.classify: ``client-*``) and its quoted vLLM body is
read (triage.logs.client_errors). A traceback no record knows is still said: its exception and innermost vLLM frame.
"""

from __future__ import annotations

from typing import Any, Optional
from collections.abc import Mapping, Sequence

from triage.catalogue import get, parse_version
from triage.catalogue.crashes import CUT_TRACEBACK_FRAMES, SIGNATURES, Signature
from triage.findings import Finding, Status
from triage.logs.client_causes import MORE_CLIENT_RULES, cosine_finding, more_client_finding
from triage.logs.client_errors import read as read_client_error
from triage.logs.hits import CLIENT_TEXT_HINTS, ErrorHits
from triage.logs.support_findings import dated_release, pooling_on_generator
from triage.logs.tracebacks import Trace

CHECK = "log-traceback"
CLIENT_CHECK = "log-client-error"
CLIENT_RULES = ("client-rerank-unsupported", "client-field-required", "client-no-attribute", "client-model-not-found",
                "client-encoding-format-null", "client-rerank-field-null", "client-task-unsupported",
                *MORE_CLIENT_RULES, "client-quoted-body")
# exceptions that only carry another one: the engine's death seen from the API server, a client library's wrapper
_CARRIERS = ("EngineDeadError", "EngineGenerateError", "BadRequestError", "MilvusException", "APIError",
             "InternalServerError", "NotFoundError", "APIStatusError", "SystemExit", "KeyboardInterrupt")


def _where(t: Trace) -> str:
    inner = t.innermost_vllm
    return f" in vllm/{inner.vllm_module} {inner.func}" if inner is not None else ""


def _matches(sig: Signature, t: Trace) -> bool:
    if t.exc_name not in sig.exceptions:
        return False
    m = sig.message.search(t.exc_msg)
    if m is None:
        return False
    cls = m.groupdict().get("cls") or "Transformers"  # NO_VLLM_IMPL_RE names no loader class: the fallback's own words
    if sig.record == "transformers-fallback-cannot-pool" and not cls.startswith("Transformers"):
        return False
    if not sig.functions and not sig.codes:
        return True
    funcs = {f.func for f in t.frames if f.vllm_module}
    return bool(funcs & set(sig.functions)) or any(rx.search(c) for rx in sig.codes for c in t.codes())


def _evidence(t: Trace) -> dict[str, Any]:
    return {"traceback": t.to_dict(), "lines": [{"line": n, "text": s} for n, s in t.text[-12:]], "source": "log"}


def _record_finding(sig: Signature, t: Trace, config: Mapping[str, Any]) -> Finding:
    rec = get(sig.record)
    ev = _evidence(t)
    what = f"{t.exception_text()[:160]}{_where(t)}"
    version = config.get("vllm_version")
    if version and rec.affects(version) is False:
        ev["version"] = rec.version_note(version)
        return Finding.of(rec, CHECK, Status.UNKNOWN,
                          f"{what}: the signature of '{rec.title}', but vLLM {version} is outside its releases "
                          f"({rec.affected_text}): another bug with the same symptom", ev, failure_mode="")
    if version:
        ev["version"] = rec.version_note(version)
    if not sig.proven:
        return Finding.of(rec, CHECK, Status.WARN,
                          f"{what}: one of '{rec.title}' or another CUDA fault; to tell: {rec.experiment}", ev,
                          cfg=config)
    if sig.record == "generate-runner":  # a start-up failure, not the record's symptom (requests rejected): the
        # differential must not weigh it as one (the record's refs and fix stay)
        return Finding.of(rec, CHECK, Status.FAIL, f"{rec.title} — the traceback: {what}", ev, cfg=config,
                          failure_mode="")
    return Finding.of(rec, CHECK, Status.FAIL, f"{rec.title} — the traceback: {what}", ev, cfg=config)


def traceback_findings(traces: Sequence[Trace], config: Mapping[str, Any], known: bool = False,
                       ) -> tuple[list[Finding], Optional[Trace]]:
    """The findings of the tracebacks (one per record matched, or one for the innermost unknown exception unless
    ``known``: another reader named the failure already) and the traceback that names an engine failure's cause
    (None: no traceback beyond the failure itself)."""
    out: list[Finding] = []
    seen: set[str] = set()
    cause: Optional[Trace] = None
    for t in traces:
        for link in t.chain():
            for sig in SIGNATURES:
                if sig.record not in seen and _matches(sig, link):
                    seen.add(sig.record)
                    if sig.reader == "pooling-on-generator":
                        out.append(pooling_on_generator(link, config, _evidence(link)))
                        cause = cause or link
                        continue
                    if sig.record == "generate-runner" and isinstance(config, dict):
                        config["base_weights_no_head"] = True  # the other findings' fixes: an embedder's task
                    out.append(_record_finding(sig, link, config))
                    cause = cause or link
    if not out and traces and (dated := dated_release(traces, config, _evidence(traces[-1]))) is not None:
        out.append(dated)  # the release cannot serve the model for pooling, whatever the exception
        cause = cause or traces[-1]
    if not out and not known and (cut := _cut_traceback_finding(traces, config)) is not None:
        out.append(cut)
        cause = cut_trace(traces)
    v0 = _v0_engine_finding(traces, config) if not out else None
    if v0 is not None:
        out.append(v0)
    own = [t for t in traces if t.exc_type and t.exc_name not in _CARRIERS and not _client_line(t)]
    if cause is None and own:
        cause = own[-1]
        if not out and not known:
            out.append(Finding(CHECK, Status.UNKNOWN,
                               f"Traceback: {cause.exception_text()[:200]}{_where(cause)} — no crash record matches "
                               "it", _evidence(cause),
                               fix="Read the innermost vLLM frame and the exception above; search vLLM's issues for "
                                   "the exception with that function."))
    return out, cause


def cut_trace(traces: Sequence[Trace]) -> Optional[Trace]:
    """The last traceback cut before its exception whose innermost vLLM frame the catalogue reads (None: none)."""
    for t in reversed(traces):
        inner = t.innermost_vllm
        if not t.exc_type and inner is not None and (inner.vllm_module, inner.func) in CUT_TRACEBACK_FRAMES:
            return t
    return None


def _cut_traceback_finding(traces: Sequence[Trace], config: Mapping[str, Any]) -> Optional[Finding]:
    """A traceback without its exception line ending in a frame where one check raises nearly always: "one of"
    that check's record or the frame's other causes, and the exception line (or the record's experiment) to tell."""
    t = cut_trace(traces)
    if t is None:
        return None
    inner = t.innermost_vllm
    assert inner is not None
    mode, others = CUT_TRACEBACK_FRAMES[(inner.vllm_module, inner.func)]
    rec = get(mode)
    return Finding.of(rec, CHECK, Status.WARN,
                      f"A traceback cut before its exception, ending in vllm/{inner.vllm_module} {inner.func} — one "
                      f"of: {rec.title}, or {others}; to tell: the exception line under the traceback, or "
                      f"{rec.experiment.strip()}", {**_evidence(t), "symptoms": []}, cfg=config)


_V0_MODULE = "engine/multiprocessing/engine.py"  # MQLLMEngine: the V0 engine's process (0.6 … 0.10)


def _v0_engine_finding(traces: Sequence[Trace], config: Mapping[str, Any]) -> Optional[Finding]:
    """A traceback through the V0 engine: WARN on a release that serves pooling on V1 (0.10+), a question when no
    release is stated (on 0.8/0.9 V0 is the normal path for pooling), nothing on an older stated release."""
    t = next((t for t in traces if any(f.vllm_module == _V0_MODULE for f in t.frames)), None)
    if t is None:
        return None
    rec = get("v0-engine-forced")
    version = parse_version(config.get("vllm_version"))
    low = parse_version("0.10.0")
    if version is not None and low is not None and version < low:
        return None
    ev = {**_evidence(t), "symptoms": []}
    if version is None:
        return Finding.of(rec, CHECK, Status.UNKNOWN,
                          f"A traceback through the V0 engine (MQLLMEngine{_where(t)}): on vLLM 0.10+ that is "
                          "VLLM_USE_V1=0 (or a fallback) and the likely cause; on 0.8/0.9 it is the normal path: run "
                          "`env | grep VLLM_USE_V1` and `vllm --version` to tell", ev, cfg=config)
    return Finding.of(rec, CHECK, Status.WARN,
                      f"{rec.title}: vLLM {config.get('vllm_version')} failed in MQLLMEngine{_where(t)} — one of: "
                      "VLLM_USE_V1=0 in the environment, or a fallback the log's 'Falling back to V0' names; run "
                      "`env | grep VLLM_USE_V1` to tell", ev, cfg=config)


def _client_line(t: Trace) -> bool:
    return t.exc_type.split(".", 1)[0] in ("litellm", "openai", "pymilvus", "httpx", "requests")


def client_findings(errors: Mapping[str, ErrorHits], config: Mapping[str, Any],
                    traces: Sequence[Trace] = ()) -> list[Finding]:
    """The client error lines: a record where the error rules name one, the quoted vLLM body always; ``traces``:
    the paste's tracebacks, whose frames may name the wrapper that raised a line."""
    out: list[Finding] = []
    context = " ".join(f.file for t in traces for f in t.frames)[:20_000]
    named = errors.get("client-gateway-named")
    product = {"kubeai": "KubeAI", "aibrix": "AIBrix"}.get(named.groups.get("product", "").lower(), "") if named else ""
    if "client-message-not-found" in errors:
        product = product or "not-found"  # the relayed message of a FastChat-shaped body (see client_causes._gateway)
    for check in CLIENT_RULES:
        hit = errors.get(check)
        if hit is None or check in ("client-gateway-named", "client-message-not-found") and (
                "client-gateway-error" in errors or check == "client-gateway-named"):
            continue  # a product's name, a relayed 'Not Found': context for the gateway's error
        if check == "client-token-accounting" or (check == "client-rerank-usage-total"
                                                  and "client-token-accounting" not in errors):
            continue  # a total-only rerank usage is a finding only beside words about token accounting
        if check in ("client-plugin-named", "client-repeat-words", "client-reference-named"):
            continue  # context for a stated cosine (client_causes.cosine_finding)
        if check == "client-cosine":
            ctx = {k: {**errors[k].groups, "_text": " ".join(t for _n, t in errors[k].lines)}
                   for k in ("client-plugin-named", "client-repeat-words", "client-reference-named") if k in errors}
            lines = {"count": hit.count, "lines": [{"line": n, "text": s} for n, s in hit.lines], "source": "log"}
            if (f := cosine_finding(hit, lines, config, ctx)) is not None:
                out.append(f)
            continue
        text = hit.lines[0][1] if hit.lines else ""
        got = read_client_error(text)
        ev: dict[str, Any] = {"count": hit.count, "lines": [{"line": n, "text": s} for n, s in hit.lines],
                              "source": "log", **({"client_error": got.to_dict()} if got else {})}
        who = f"{got.library} " if got and got.library else ""
        said = f" ({who}quoting vLLM's {got.status or ''} body)".replace("  ", " ") if got else ""
        if check == "client-rerank-unsupported":
            rec = get("rerank-api-unsupported")
            out.append(Finding.of(rec, CLIENT_CHECK, Status.FAIL, rec.title + said, ev, cfg=config))
        elif check == "client-field-required" and hit.groups.get("field") == "model":
            rec = get("rerank-model-field-required")
            out.append(Finding.of(rec, CLIENT_CHECK, Status.FAIL, rec.title + said, ev, cfg=config))
        elif (more := more_client_finding(check, hit, got, ev, config, context, product)) is not None:
            out.append(more)
        elif check == "client-model-not-found":
            rec = get("model-name-not-served")
            name = hit.groups.get("model", "")
            leak = (f"; '___{name.rsplit('___', 1)[1]}' is RAGFlow's own factory suffix, not part of the served name"
                    if "___" in name else "")
            out.append(Finding.of(rec, CLIENT_CHECK, Status.FAIL, f"{rec.title}: `{name[:120]}`{leak}{said}", ev,
                                  cfg=config))
        elif check == "client-encoding-format-null":
            rec = get("litellm-encoding-format-null")
            # vLLM's own body names the field and the null: the cause itself, not a symptom for the differential
            # to weigh against every record that can reject a request
            out.append(Finding.of(rec, CLIENT_CHECK, Status.FAIL,
                                  f"{rec.title}: vLLM's 400 names encoding_format with input None{said}",
                                  {**ev, "symptoms": []}, cfg=config))
        elif check == "client-rerank-field-null":
            rec = get("rerank-api-contract")
            field = (hit.groups.get("field") or "top_n").replace("-", "_")  # a capture's words: 'top-n': null
            # pydantic's own 400 names the field with input None: proven; a client's words about it: likely
            status = Status.FAIL if "'loc'" in text or '"loc"' in text else Status.WARN
            out.append(Finding.of(rec, CLIENT_CHECK, status,
                                  f"A rerank request with {field} null: vLLM's rerank request types {field} as an "
                                  f"integer and answers 400{said}", {**ev, "symptoms": []},
                                  cfg={**config, "problem": "null-field", "field": field}))
        elif check == "client-task-unsupported":
            rec = get("wrapper-vllm-method-removed")
            task = hit.groups.get("task", "")
            out.append(Finding.of(rec, CLIENT_CHECK, Status.WARN,
                                  f"'does not support the '{task}' task' is a serving wrapper's refusal, not vLLM's: "
                                  "one of: the wrapper looks up a vLLM handler its vLLM release renamed "
                                  f"({rec.title}), "
                                  f"or the model is not served for {task}; to tell: the vLLM engine log's "
                                  "`Supported tasks` (or a request to vLLM's own port)", ev, cfg=config))
        elif got is not None:
            lib = f" ({got.library})" if got.library else ""
            out.append(Finding(CLIENT_CHECK, Status.UNKNOWN,
                               f"A client error{lib} quoting vLLM's {got.status or ''} body: "
                               f"'{got.message[:200]}'".replace("  ", " "), ev,
                               explanation="The body is vLLM's own answer; the findings beside this one read its "
                                           "message where a known failure mode words it."))
    return out


def is_client_check(check: str) -> bool:
    return check in CLIENT_RULES



def pasted_findings(text: str, config: Mapping[str, Any]) -> list[Finding]:
    """The traceback and client-error findings of a pasted text (``check --log-file``: the checklist reads the
    start-up lines itself), from the same readers as the log pass; lines without a hint are skipped unread."""
    from triage.logs.classify import count_error, error_of  # noqa: PLC0415 - classify imports the pass's readers
    from triage.logs.lines import Clock, frame  # noqa: PLC0415
    from triage.logs.tracebacks import Tracebacks, is_trace_line  # noqa: PLC0415

    reader = Tracebacks()
    errors: dict[str, ErrorHits] = {}
    clock = Clock(None)
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not _hinted(raw):
            continue
        for rec in frame(raw, lineno, clock):
            if is_trace_line(rec.msg):
                reader.feed(lineno, rec.msg, rec.process)
            got = error_of(rec.msg)
            if got is not None and got[0] in CLIENT_RULES:
                count_error(got, lineno, rec.raw, rec.ts, errors)
    traces = reader.done()
    crashes, _cause = traceback_findings(traces, config)
    return [*crashes, *client_findings(errors, config, traces)]


_HINTS = ('File "', "Traceback", "rror", "xception", "num_scheduled_tokens", "does not support", "ield required",
          "has no attribute", "body: {", "does not exist", "encoding_format", "mbeddings API", "Not Found",
          "NoneType", "dimension", "dim mismatch", "schema dim", "engine argument", "upgrade request",
          "keyword argument", "top_n", "srcSelectDimSize", "index out of range", "located it at",
          "Supported tasks", "sampling_params.seed", "LLM(", "embedding_mode", "only supported for",
          "not supported by this model", "max_tokens_per_doc", *CLIENT_TEXT_HINTS)


def _hinted(raw: str) -> bool:
    return any(h in raw for h in _HINTS)
