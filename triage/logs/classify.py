"""The log post-mortem's classifier: what a record's message asks of the pass (msg_class) and which error rule
reads it (error_of, count_error). Pure in the message, from bounded memos.

Its own module, apart from the pass that sinks every line (triage.logs.analyze.LogPass) and the driver that feeds
it (triage.logs.driver): the chunked scan (triage.logs.chunks) classifies records through the same function.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from triage.logs.episodes import EVIDENCE_LINES
from triage.logs.hits import CLIENT_TEXT_HINTS, ErrorHits, first_match, marked
from triage.logs.memo import Memo
from triage.logs.startup_plan import has_any_marker, message_plan
from triage.logs.stats import stats_values
from triage.logs.tracebacks import is_trace_line
from triage.vllm import logformats as lf

_ERROR_RULES: tuple[tuple[str, tuple[Any, ...]], ...] = (
    ("log-kv-cache-too-small", (lf.KV_TOO_SMALL_RE,)),
    ("log-unsupported-head-dim", lf.HEAD_DIM_RES),
    ("log-oom", lf.OOM_RES),
    ("log-engine-dead", lf.ENGINE_DEAD_RES),
    ("signal", lf.SIGNAL_RES),  # not a finding alone: context for log-engine-dead
    ("log-architecture-unsupported", lf.ARCH_UNSUPPORTED_RES),
    # a client's error text (issue 42; triage/logs/crash_findings.py client_findings reads the hits)
    ("log-task-unsupported", (lf.TASK_UNSUPPORTED_RE,)),
    ("log-embedding-mode-off", (lf.EMBEDDING_MODE_OFF_RE,)),
    ("log-pooling-call-on-generator", lf.POOLING_ONLY_CALL_RES),  # before the wrapper's refusal: vLLM's own words
    ("client-rerank-unsupported", (lf.RERANK_API_UNSUPPORTED_RE,)),
    ("client-field-required", (lf.FIELD_REQUIRED_RE,)),
    ("client-pooling-generate-attr", (lf.POOLING_CLASS_GENERATE_ATTR_RE,)),
    ("client-no-attribute", (lf.NO_ATTRIBUTE_RE,)),
    ("client-vllm-module-attr", (lf.VLLM_MODULE_NO_ATTRIBUTE_RE,)),
    ("client-engine-args-kwarg", (lf.ENGINE_ARGS_KWARG_RE,)),
    ("client-model-not-found", (lf.MODEL_NOT_FOUND_RE,)),
    ("client-encoding-format-null", (lf.ENCODING_FORMAT_NULL_RE,)),
    ("client-rerank-field-null", lf.RERANK_FIELD_NULL_RES),
    ("client-task-unsupported", (lf.WRAPPER_TASK_UNSUPPORTED_RE,)),
    ("client-embeddings-unsupported", (lf.EMBEDDINGS_API_UNSUPPORTED_RE,)),
    ("client-route-not-found", (lf.ROUTE_NOT_FOUND_RE,)),
    ("client-gateway-error", lf.GATEWAY_OWN_ERROR_RES),
    ("client-gateway-named", lf.GATEWAY_NAMED_RES),
    ("client-message-not-found", (lf.MESSAGE_NOT_FOUND_RE,)),
    ("client-rerank-usage-total", (lf.RERANK_USAGE_TOTAL_ONLY_RE,)),
    ("client-token-accounting", lf.TOKEN_ACCOUNTING_RES),
    ("client-cosine", (lf.COSINE_STATED_RE,)),
    ("client-plugin-named", lf.PLUGIN_NAMED_RES),
    ("client-repeat-words", lf.REPEAT_WORDS_RES),
    ("client-reference-named", (lf.REFERENCE_NAMED_RE,)),
    ("client-result-none", lf.CLIENT_RESULT_NONE_RES),
    ("client-store-dimension", lf.VECTOR_DIM_MISMATCH_RES),
    ("client-unknown-engine-arg", (lf.UNKNOWN_ENGINE_ARG_RE,)),
    ("client-http-upgrade", (lf.HTTP_UPGRADE_UNSUPPORTED_RE,)),
    ("client-base64-unsupported", (lf.BASE64_UNSUPPORTED_RE,)),
    ("client-token-id-oov", lf.TOKEN_ID_OUT_OF_VOCAB_RES),
    ("client-rerank-v1-path", (lf.RERANK_V1_PATH_RE,)),
    ("client-quoted-body", lf.CLIENT_WRAPPER_RES),
)
_ERROR_HINTS = ("memory", "Engine", "head", "KV cache", "oom", "Killed", "rror", "signal", "API", "ield required",
                "attribute", "Exception", "body: {", "does not", "mbeddings API", "Not Found", "NoneType",
                "dimension", "dim mismatch", "schema dim", "engine argument", "upgrade request",
                "keyword argument", "srcSelectDimSize", "index out of range", "top_n", "max_tokens_per_doc",
                "ForCausalLM', ", "only supported for", "not supported by this model", *CLIENT_TEXT_HINTS)
_ERROR_HINT_RE = re.compile("|".join(map(re.escape, _ERROR_HINTS)))
# the same test as `_ERROR_HINT_RE.search(msg)`, as one `or` chain of substring tests (several times cheaper)
_has_error_hint = eval("lambda msg: " + " or ".join(f"{h!r} in msg" for h in _ERROR_HINTS))  # noqa: S307


# what a record's message asks for (msg_class): its stats, an access key, the start-up tail only, nothing, or the
# start-up reader and the error rules (FULL)
STATS, ACCESS, TAIL, NONE, FULL, REQUEST, LONG_STEP = range(7)
_CLASSES = Memo()


def msg_class(msg: str, stats_memo: Memo) -> tuple[Any, ...]:
    """(kind, access key, len >= 12, a start-up marker, a 'server is up' phrase, an error hint, a traceback line):
    pure in the message,
    from a bounded memo. The order of the tests is the per-record reading's: stats, access, start-up, errors."""
    cls = _CLASSES.get(msg)
    if cls is not None:
        return cls
    cls = None
    if "throughput:" in msg:
        vals = stats_memo.get(msg)
        if vals is None:
            vals = stats_values(msg)
            stats_memo.put(msg, vals)
        if vals:
            cls = (STATS, None, True, False, False, False, False)
    if cls is None and '" ' in msg and "HTTP/" in msg:
        m = lf.ACCESS_RE.search(msg)
        if m:
            cls = (ACCESS, (m["method"], m["path"].split("?")[0][:120], m["status"]), True, False, False, False, False)
    if cls is None and "equest" in msg:  # request-lifecycle lines (--enable-log-requests; issue 21)
        m = lf.REQUEST_ADDED_RE.match(msg) or lf.REQUEST_ABORTED_RE.match(msg)
        if m:
            event = ("added" if m.re is lf.REQUEST_ADDED_RE else "aborted", m["id"])
            cls = (REQUEST, event, True, False, False, False, False)
    if cls is None and "shared memory broadcast" in msg:  # the engine computing a long step (issue 21)
        m = lf.SHM_LONG_WAIT_RE.search(msg)
        if m:
            cls = (LONG_STEP, int(m["s"]), True, False, False, False, False)
    if cls is None:
        long = len(msg) >= 12
        marked = has_any_marker(msg)
        startish = "Starting vLLM" in msg or "startup complete" in msg
        hint = bool(_has_error_hint(msg))
        kind = TAIL if long else NONE
        if marked or startish or hint:
            # a marker alone is not enough: FULL only when a start-up pattern or an error rule does read the message
            # (otherwise reader.feed keeps it in the tail, as TAIL does, and the error rules find nothing)
            if hint and error_of(msg) is not None:
                kind = FULL
            elif long:
                plan = message_plan(msg)
                if plan.started or plan.tasks_in or plan.event is not None or plan.config is not None:
                    kind = FULL
        trace = is_trace_line(msg)  # a traceback line (issue 42): the pass's traceback reader takes it
        if trace:
            kind = FULL
        cls = (kind, None, long, marked, startish, hint, trace)
    _CLASSES.put(msg, cls)
    return cls


# a substring every match of each pattern contains (None: always run it), in _ERROR_RULES order; a line without a
# pattern's marker cannot match it, so its regex is skipped (tests/logs/test_fast_paths.py checks the table)
_ERROR_MARKERS: dict[str, tuple[Optional[str], ...]] = {
    "log-kv-cache-too-small": ("max seq len",),
    "log-unsupported-head-dim": ("head_dim=", "head dim size", "head_size", "head_dim to be", "ead size", "head_size"),
    "log-oom": ("OutOfMemoryError", "out of memory", "out of memory", None, "Cannot allocate memory",
                "Available memory", None),
    "log-engine-dead": ("EngineCore encountered", "EngineCore encountered", "died unexpectedly", "EngineDeadError",
                        "EngineCore failed", "initialization failed"),
    "signal": ("received signal",),
    "log-architecture-unsupported": ("are not supported", "ForCausalLM', "),
    "log-task-unsupported": ("Supported tasks",),
    "log-embedding-mode-off": ("embedding_mode is False",),
    "log-pooling-call-on-generator": ("is only supported for", "is not supported by this model"),
    "client-rerank-unsupported": ("does not support",),
    "client-field-required": ("ield required",),
    "client-pooling-generate-attr": ("has no attribute",),
    "client-no-attribute": ("has no attribute",),
    "client-vllm-module-attr": ("has no attribute",),
    "client-engine-args-kwarg": ("unexpected keyword argument",),
    "client-model-not-found": ("does not exist",),
    "client-encoding-format-null": ("encoding_format",),
    "client-rerank-field-null": ("body", None, None),
    "client-task-unsupported": ("does not support the",),
    "client-embeddings-unsupported": ("Embeddings API",),
    "client-route-not-found": ("Not Found",),
    "client-gateway-error": ("page not found", "request body", "upstream", "<center>", "no Route matched",
                             "does not support parameters", "Invalid model name", "Model with name", "ode"),
    "client-gateway-named": ("kubeai", "KubeAI", "aibrix", "AIBrix"),
    "client-message-not-found": ("Not Found",),
    "client-rerank-usage-total": ("total_tokens",),
    "client-token-accounting": ("_token", "oken", "token"),
    "client-cosine": (None,),
    "client-plugin-named": (None, None),
    "client-repeat-words": (None, None),
    "client-reference-named": (None,),
    "client-result-none": ("NoneType", "NoneType"),
    "client-store-dimension": ("schema dim", "dim mismatch", "dimensions, not", "dimension error",
                               "collection dimensionality", "ismatch", "number of dimensions"),
    "client-unknown-engine-arg": ("Unknown engine argument",),
    "client-http-upgrade": ("Unsupported upgrade request",),
    "client-base64-unsupported": ("base64 encoding is not",),
    "client-token-id-oov": ("srcSelectDimSize", "index out of range in self"),
    "client-rerank-v1-path": ("we have located it at",),
    "client-quoted-body": ("OpenAIException", "Error code: ", "MilvusException", "body: {", "status_code: "),
}
_ERROR_RULES_MARKED = marked(_ERROR_RULES, _ERROR_MARKERS)


_ERRORS = Memo()  # message -> (check, groups) or None


def error_of(msg: str) -> Optional[tuple[str, dict[str, str]]]:
    """(check, groups) of the first error rule that matches the message (one kind per line), from a bounded memo."""
    got = _ERRORS.get(msg, False)
    if got is not False:
        return got  # type: ignore[return-value]
    got = first_match(_ERROR_RULES_MARKED, msg)
    _ERRORS.put(msg, got)
    return got


def count_error(
    got: Optional[tuple[str, dict[str, str]]], lineno: int, raw: str, ts: Optional[float], errors: dict[str, ErrorHits]
) -> None:
    if got is None:
        return
    check, groups = got
    hit = errors.get(check)
    if hit is None:
        hit = errors[check] = ErrorHits(check, first_ts=ts, groups=dict(groups))
    hit.count += 1
    if len(hit.lines) < EVIDENCE_LINES:
        hit.lines.append((lineno, raw[:500]))
