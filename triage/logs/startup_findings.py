"""Findings from a log's start-up: refusals (removed flags, max_model_len, shared GPU, OOM), silent
overrides (pooling, dtype), a generator where an embedder was meant, and whether the server ever started.

Pure: reads what `triage.logs.startup_events.StartupEvents` collected. Every title's subject, fix and refs come
from the catalogue record (triage/catalogue/startup.py); the patterns live in triage/vllm/logformats.py.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from triage.catalogue.startup import (
    DTYPE,
    GENERATE_RUNNER,
    LOG_STATS_DISABLED,
    MATRYOSHKA,
    MAX_MODEL_LEN,
    POOLING_OVERRIDES,
    KV_DTYPE_MISMATCH,
    MRV2_POOLING,
    REMOVED_FLAG,
    SHARED_GPU_MEMORY,
    STARTUP_OOM,
)
from triage.catalogue.identity import identify, identity_keys
from triage.catalogue.records import BAD_ARGUMENTS
from triage.catalogue.rerank import RERANK_LONG_DOCUMENT
from triage.catalogue.features import CHUNKED_PROCESSING, ENCODER_PREFIX_CACHING
from triage.catalogue.refusal_clues import STARTUP_ERROR
from triage.catalogue.symptoms import REJECTED, STARTUP_REFUSAL
from triage.findings import Finding, Status
from triage.logs.hits import ErrorHits
from triage.logs.startup_events import StartupEvents
from triage.vllm import flags as vflags
from triage.vllm import logformats as lf


def _lines(hit: ErrorHits) -> list[dict[str, Any]]:
    return [{"line": n, "text": t} for n, t in hit.lines]


def _ev(hit: ErrorHits, **more: Any) -> dict[str, Any]:
    return {"count": hit.count, "lines": _lines(hit), "source": "log", **more}


def _removed_from_lines(hit: ErrorHits) -> tuple[list[dict[str, Any]], list[str]]:
    """(removed options/fields with what replaces them, unrecognized options vLLM never had)."""
    removed: list[dict[str, Any]] = []
    unknown: list[str] = []
    for _n, text in hit.lines:
        m = lf.UNRECOGNIZED_ARGS_RE.search(text)
        if m:
            for opt in re.findall(r"(?<!\S)(--?[\w\-.]+)", m["args"]):
                name = vflags.normalize_option(opt.split("=", 1)[0])
                r = vflags.replacement(name)
                if r is not None:
                    removed.append({"option": name, "use": r.use, "refs": list(r.refs)})
                else:
                    unknown.append(opt)
        m = lf.REMOVED_PARAMETER_RE.search(text)
        if m:
            removed.append({"option": f"field {m['field']}", "use": m["use"], "refs": []})
    return removed, unknown


def _removed_flag(hit: ErrorHits, hint: Optional[ErrorHits], config: dict[str, Any]) -> Finding:
    removed, unknown = _removed_from_lines(hit)
    names = [r["option"] for r in removed] + unknown
    ev = _ev(hit, removed=removed, unrecognized=unknown)
    if hint is not None:
        ev["hint"] = _lines(hint)
    # an option a later release added and a still later one removed, on a release nobody stated: the same refusal is
    # an old release that never had it (a guide for main) or a new one that dropped it (an old guide) — ask, never guess
    young: list[dict[str, Any]] = []
    for r in removed if not config.get("vllm_version") and hint is None else []:
        rep = vflags.replacement(r["option"]) if r["option"].startswith("--") else None
        if rep is not None and rep.added_in:
            r.update(added_in=rep.added_in, added_refs=list(rep.added_refs))
            young.append(r)
    title = f"The server did not start: {', '.join(names) or hit.groups['matched']} ({REMOVED_FLAG.title})"
    if young:
        title = (f"The server did not start: {', '.join(names)} refused — one of: a release before "
                 f"{', '.join(sorted({r['added_in'] for r in young}))} that never had "
                 f"{', '.join(r['option'] for r in young)} (it came with "
                 f"{', '.join(x for r in young for x in r.get('added_refs', []))}), "
                 "or a later release that removed it; "
                 "run `vllm --version` (or read the image tag's release) to tell")
    return Finding.of(
        REMOVED_FLAG,
        check="log-removed-flag",
        status=Status.UNKNOWN if young else Status.FAIL,
        title=title,
        evidence=ev,
        cfg={"removed": removed, **identity_keys(config)} if removed else None,
        # asked, not a verdict (UNKNOWN): the fix still says what to do on each side of the question
        fix=REMOVED_FLAG.fix({"removed": removed, **identity_keys(config)}) if young else None,
    )


def _bad_arguments(hit: ErrorHits) -> Finding:
    return Finding.of(
        BAD_ARGUMENTS,
        check="log-bad-arguments",
        status=Status.FAIL,
        title=f"The server did not start: vllm serve refused its arguments ({hit.groups.get('why', '')[:160]})",
        evidence=_ev(hit),
    )


def _generate_runner(ev: StartupEvents, config: dict[str, Any]) -> Finding:
    n, text = ev.tasks_line or (None, "")
    title = f"Served as a generator: Supported tasks {ev.supported_tasks} has no 'embed'"
    if "Defaulting to '" in text:  # 0.7 … 0.9: --task auto resolved to one task (vllm/config.py _resolve_task)
        title = (f"Served as a generator: no --task given, vLLM resolved the task to {ev.supported_tasks[0]!r} "
                 "('This model supports multiple tasks: … Defaulting to …')")
    # the 0.7 … 0.9 line names what the server runs, not what the model is: with nothing naming the model its fix is
    # only a menu by identity, asked about (UNKNOWN), never a verdict
    unsure = "Defaulting to '" in text and identify(config).kind == "unknown"
    return Finding.of(
        GENERATE_RUNNER,
        check="log-generate-runner",
        status=Status.UNKNOWN if unsure else Status.FAIL,
        title=title if not unsure else title + ": one of an embedder, a reranker or a classifier served wrong (its "
        "config.json architectures and its card tell which)",
        evidence={"supported_tasks": ev.supported_tasks, "lines": [{"line": n, "text": text}], "source": "log"},
        # that line is the 0.7 … 0.9 task resolution: the fix is spelled --task (no --runner there)
        cfg=config,  # the fix is chosen for what the model is (issue 42): a reranker gets its score head
    )


def _max_model_len(hit: ErrorHits, config: dict[str, Any]) -> Finding:
    g = {k: (v[:-2] if k == "derived" and v.endswith(".0") else v) for k, v in hit.groups.items()}
    refused = "asked" in g
    if refused:
        title = (
            f"The server did not start: max_model_len {g['asked']} is above the model's {g['key']} {g['derived']}"
        )
        fix = MAX_MODEL_LEN.fix({"asked_max_model_len": g["asked"], "derived_max_model_len": g["derived"],
                                 "derived_key": g["key"]})
    else:
        title = f"The engine lowered max_model_len from {g.get('old')} to {g.get('new')}"
        fix = MAX_MODEL_LEN.fix({"derived_max_model_len": g.get("new")})
    return Finding.of(
        MAX_MODEL_LEN,
        check="log-max-model-len",
        status=Status.FAIL if refused else Status.WARN,
        title=title,
        evidence=_ev(hit, **{k: v for k, v in g.items() if k != "matched"}, max_model_len=config.get("max_model_len")),
        fix=fix,
    )


def _max_context(hit: ErrorHits, config: dict[str, Any]) -> Finding:
    n, mml = hit.groups.get("n"), config.get("max_model_len")
    pc = config.get("pooler_config")
    chunked = isinstance(pc, dict) and pc.get("enable_chunked_processing") is True
    if chunked and str(n) != str(mml):  # issue 29: the limit is max_embed_len, the inputs above mml were chunked
        return Finding.of(CHUNKED_PROCESSING, "log-max-context-length", Status.WARN,
                          f"{hit.count} request(s) refused: longer than max_embed_len {n} (chunked processing; "
                          f"max_model_len {mml})", _ev(hit, max_embed_len=n, max_model_len=mml, symptoms=[REJECTED]),
                          cfg={"max_embed_len": n})
    if _rerank_request(hit, config):  # a query+document pair: the reranker's own fix, never an embedder's
        return Finding.of(RERANK_LONG_DOCUMENT, "log-max-context-length", Status.WARN,
                          f"{hit.count} rerank/score request(s) refused: a query+document pair longer than "
                          f"max_model_len {n}", _ev(hit, max_model_len=n, identity="reranker", symptoms=[REJECTED]),
                          cfg={"max_model_len": _int(n)})
    return Finding.of(MAX_MODEL_LEN, "log-max-context-length", Status.WARN,
                      f"{hit.count} request(s) refused: longer than max_model_len {n}",
                      _ev(hit, max_model_len=n, symptoms=[REJECTED]),  # a request-time 400: never a start-up refusal
                      cfg={"derived_max_model_len": mml})


def _rerank_request(hit: ErrorHits, config: dict[str, Any]) -> bool:
    """The refused request was a rerank/score call: the model is a reranker, or the refusal's own line says so."""
    return identify(config).kind == "reranker" or any(lf.RERANK_REQUEST_RE.search(t) for _n, t in hit.lines)


def _int(v: Any) -> Optional[int]:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _groups_ev(hit: ErrorHits) -> dict[str, Any]:
    """A hit's lines with what its pattern matched, by group name."""
    return _ev(hit, **{k: v for k, v in hit.groups.items() if k != "matched"})


def _pooling_overrides(hit: ErrorHits, config: dict[str, Any]) -> Finding:
    asked = config.get("non_default_args") if isinstance(config.get("non_default_args"), dict) else {}
    texts = " ".join(t for _n, t in hit.lines)
    overridden = [
        k
        for k, words in (("enable_chunked_prefill", "chunked prefill"), ("enable_prefix_caching", "prefix caching"))
        if asked.get(k) is True and words in texts and config.get(k) is not True
    ]
    keys = ("enable_chunked_prefill", "enable_prefix_caching", "max_num_batched_tokens")
    effective = {k: config.get(k) for k in keys}
    return Finding.of(
        POOLING_OVERRIDES,
        check="log-pooling-overrides",
        status=Status.WARN if overridden else Status.PASS,
        title=(
            f"The engine overrode what was asked: {', '.join(overridden)} off"
            if overridden
            else f"The engine changed pooling settings on its own ({hit.count} line(s)): see the effective config"
        ),
        evidence=_ev(hit, asked={k: asked.get(k) for k in effective if k in asked}, effective=effective),
        fix=POOLING_OVERRIDES.fix(),  # a pass too: what the engine changed is worth knowing
        explanation=POOLING_OVERRIDES.mechanism,
    )


def _dtype(hit: ErrorHits) -> Finding:
    g = hit.groups
    matched = g.get("matched", "")
    if matched.startswith("Bfloat16"):
        status, title = Status.FAIL, "The server did not start: this GPU has no bfloat16 (compute capability < 8.0)"
    elif "Falling back" in matched:
        status, title = Status.WARN, "Weights fell back to float16 (no bfloat16 on this device)"
    else:
        status, title = Status.WARN, f"dtype: {matched}"
    return Finding.of(DTYPE, "log-dtype", status, title, _groups_ev(hit))


def _reranker(config: dict[str, Any], ev: StartupEvents) -> list[Finding]:
    """A reranker served without its overrides, or with --convert classify and no score head: checks/rerank.py's
    one rule over the log's start-up config (problems only; the template question needs the command line)."""
    from checks.rerank import check_facts

    facts = {k: {"value": v, "source": "log", "detail": "start-up log"} for k, v in config.items() if v is not None}
    if ev.supported_tasks is not None:
        facts["supported_tasks"] = {"value": ev.supported_tasks, "source": "log", "detail": "Supported tasks"}
    found = check_facts(facts)
    return [f for f in found if f.status == Status.FAIL]


# check id, title from the matched groups, record, the config its fix reads (0.33's refusals, issue 20)
_REFUSALS = (
    ("log-kv-cache-dtype", lambda g: f"kv_cache_dtype {g.get('kv')} differs from the model's dtype {g.get('dtype')}",
     KV_DTYPE_MISMATCH, lambda g: {"dtype": g.get("dtype")}),
    ("log-mrv2-pooling",
     lambda g: f"Model Runner V2 refuses the pooling task {g.get('selected') or g.get('tasks2')}",
     MRV2_POOLING, lambda g: {"supported": g.get("supported")}),
    ("log-encoder-prefix-caching",
     lambda g: "prefix caching on an encoder-only model (HybridKVCacheCoordinator requires at least "
     f"{g.get('groups')})",
     ENCODER_PREFIX_CACHING, lambda g: {}),
)
# the event kinds that end a start (their lines are the log's start-up error, the differential's `startup.error`)
REFUSAL_EVENTS = ("log-removed-flag", "log-bad-arguments", "log-max-model-len", "log-gpu-memory-shared", "log-dtype",
                  *(c for c, *_ in _REFUSALS))


def startup_error(ev: StartupEvents) -> str:
    """The lines a start-up ended with: every refusal event's lines, else the tail's error lines ('' for none)."""
    lines = [t for c in REFUSAL_EVENTS if c in ev.hits for _n, t in ev.hits[c].lines
             if c != "log-dtype" or lf.BF16_REFUSED_RE.search(t)]  # a float16 fallback is no refusal
    if not lines and ev.started is None:
        lines = [t for _n, t in ev.last_lines if _ERROR_LINE_RE.search(t)]
    return "\n".join(lines)


_ERROR_LINE_RE = re.compile(r"\b(ERROR|CRITICAL)\b|Traceback|Error:|error:")


def with_facts(f: Finding, facts: dict[str, Any]) -> Finding:
    """The finding with ``facts`` merged into its evidence's "facts" (what the differential's clues read)."""
    if facts:
        f.evidence["facts"] = {**(f.evidence.get("facts") or {}), **facts}
    return f


def startup_findings(config: dict[str, Any], ev: StartupEvents) -> list[Finding]:
    """Findings from the start-up events of one log (order: refusals first, then overrides)."""
    out: list[Finding] = []
    hits = ev.hits
    if ev.tasks_line is not None and "Defaulting to '" in ev.tasks_line[1]:
        config["task_resolution_line"] = True  # a 0.7 … 0.9 server: every fix spells the task --task
    if "log-removed-flag" in hits:
        out.append(_removed_flag(hits["log-removed-flag"], hits.get("hint"), config))
    elif "log-bad-arguments" in hits:
        out.append(_bad_arguments(hits["log-bad-arguments"]))
    # classify is a reranker's task (vLLM's score API runs on it), not a generator (issue 25)
    if ev.supported_tasks is not None and "embed" not in ev.supported_tasks and "classify" not in ev.supported_tasks:
        f = _generate_runner(ev, config)
        if f.status != Status.UNKNOWN:  # an unknown identity's menu is the flags check's question, not a symptom
            out.append(f)
    out.extend(_reranker(config, ev))
    if "log-max-model-len" in hits:
        out.append(_max_model_len(hits["log-max-model-len"], config))
    if "log-max-context" in hits:
        out.append(_max_context(hits["log-max-context"], config))
    if "log-gpu-memory-shared" in hits:
        h = hits["log-gpu-memory-shared"]
        g = h.groups
        out.append(
            Finding.of(
                SHARED_GPU_MEMORY,
                "log-gpu-memory-shared",
                Status.FAIL,
                f"The server did not start: {g.get('free')} of {g.get('total')} GiB free on {g.get('dev')}, "
                f"gpu_memory_utilization {g.get('util')} wants {g.get('want')} GiB",
                _groups_ev(h),
                cfg={"free_gib": g.get("free"), "total_gib": g.get("total")},
            )
        )
    for check, title, mode, cfg in _REFUSALS:  # start-up refusals read from the release's own words
        if check in hits:
            g = hits[check].groups
            out.append(Finding.of(mode, check, Status.FAIL, "The server did not start: " + title(g),
                                  _groups_ev(hits[check]), cfg=cfg(g)))
    if "log-matryoshka" in hits:
        h = hits["log-matryoshka"]
        out.append(Finding.of(MATRYOSHKA, "log-matryoshka", Status.WARN,
                              f"{h.count} request(s) with `dimensions` refused: {_dimensions_why(h.groups)}",
                              _groups_ev(h), cfg={**config, "dimensions_refusal": _dimensions_kind(h.groups)}))
    if "log-pooling-overrides" in hits:
        f = _pooling_overrides(hits["log-pooling-overrides"], config)
        if f.status != Status.PASS:  # an override of nothing asked for only shows in the effective config
            out.append(f)
    if "log-dtype" in hits:
        out.append(_dtype(hits["log-dtype"]))
    err = startup_error(ev)
    for f in out:
        if f.status == Status.FAIL and f.title.startswith("The server did not start"):
            with_facts(f, {STARTUP_ERROR: err})
            f.evidence["symptoms"] = [STARTUP_REFUSAL]  # a refusal at start-up rejected no request
        elif f.check == "log-pooling-overrides":
            with_facts(f, {"chunked_prefill_overridden": "enable_chunked_prefill" in f.title})
    return out


def startup_oom(oom: Finding, config: dict[str, Any]) -> Finding:
    """An OOM before the server listened: the start-up profile step (budget x activations)."""
    return Finding.of(
        STARTUP_OOM,
        check="log-startup-oom",
        status=Status.FAIL,
        title=f"The server did not start: {STARTUP_OOM.title}",
        evidence={**oom.evidence, **{k: config.get(k) for k in ("max_num_batched_tokens", "max_model_len")},
                  "symptoms": [STARTUP_REFUSAL]},
        cfg=config,
    )


def stats_disabled(config: dict[str, Any], stats_lines: int) -> Finding:
    return Finding.of(
        LOG_STATS_DISABLED,
        check="log-stats-disabled",
        status=Status.WARN,
        title=f"--disable-log-stats: {stats_lines} engine stats lines, stalls and throughput cannot be judged "
        "from this log",
        evidence={"disable_log_stats": True, "stats_lines": stats_lines, "source": "log (non-default args)"},
    )


def never_started(ev: StartupEvents) -> Finding:
    """The log ends before the API server listened and no known cause was found in it."""
    tail = [{"line": n, "text": t} for n, t in ev.last_lines]
    failed = any(_ERROR_LINE_RE.search(t) for _n, t in ev.last_lines)
    return with_facts(Finding(
        check="log-server-start",
        status=Status.FAIL if failed else Status.UNKNOWN,
        title="The server never started: the log ends with an error before it listened, cause not recognised"
        if failed
        else "The log ends before the server started listening (still starting, or the log was cut)",
        evidence={"last_lines": tail, "source": "log"},
        fix="Read the last ERROR / Traceback lines above for the cause; paste the whole start-up log (from the "
        "first line to the exit) so the known causes can be matched."
        if failed
        else "Paste the log up to 'Starting vLLM server on …' or the exit, or wait for the start-up to finish.",
    ), {STARTUP_ERROR: startup_error(ev)} if failed else {})


def _dimensions_kind(g: dict[str, Any]) -> str:
    """Which of vLLM's `dimensions` refusals a line words (logformats.toml MATRYOSHKA_RE): 'any-model' (before 0.8.4
    /v1/embeddings took no `dimensions` for any model; /pooling never does), 'size' (a Matryoshka model given a size
    it does not list), 'not-matryoshka'."""
    if g.get("old"):
        return "any-model"
    if g.get("mds") or g.get("mds2") or g.get("range") or g.get("range0"):
        return "size"
    return "not-matryoshka"


def _dimensions_why(g: dict[str, Any]) -> str:
    kind = _dimensions_kind(g)
    if kind == "any-model":
        return ("'dimensions is currently not supported' — vLLM's /v1/embeddings before 0.8.4 took no "
                "`dimensions` for any model, and /pooling takes it in no release; the client sends a field this "
                "server does not take, vLLM is healthy")
    if kind == "size":
        if g.get("range") or g.get("range0"):
            return f"a size outside the model's range {g.get('range') or '(>= 1)'}"
        return (f"the model is Matryoshka but lists only the sizes {g.get('mds') or g.get('mds2')}; the client asked "
                "another")
    return "the model does not declare Matryoshka support"
