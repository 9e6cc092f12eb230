"""Findings that read the pooling-support table (issue 42: releases 0.3 … 0.21 still deployed).

vLLM's own refusal of a pooling task ('does not support the 'embedding' task. Supported tasks: {'generate'}'), an
embeddings request that reached the V0 generation runner (PoolingParams has no ``seed``), a traceback whose frames
date a release older than the first one serving the model for pooling, and a model class of the pooling adapter
driven by the generate path. Each names the release that added the support (triage/catalogue/pooling_support.py,
the families' ``pooling_since``) and says "upgrade" only where the release is known or dated to be older.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional

from triage.catalogue import get
from triage.catalogue.identity import ModelIdentity, identify
from triage.catalogue.pooling_support import (
    Support,
    adapter_fix,
    convert_runner_fix,
    no_adapter_fix,
    offline_pooling_fix,
    vendor_fix,
    frame_release,
    predates,
    runner_auto_ignores_convert,
    start_with_task_fix,
    support_of,
    table,
    task_or_upgrade_fix,
    upgrade_fix,
    vendor_build,
)
from triage.findings import Finding, Status
from triage.logs.hits import ErrorHits
from triage.logs.tracebacks import Trace
from triage.vllm import logformats as lf

POOLING_TASKS = ("embedding", "embed", "reward", "classify", "score", "pooling", "encode")


def _who(config: Mapping[str, Any], model: str = "") -> ModelIdentity:
    cfg = dict(config)
    if model and not cfg.get("model"):
        cfg["model"] = model
    return identify(cfg)


def task_refused(hit: ErrorHits, ev: dict[str, Any], config: Mapping[str, Any]) -> Optional[Finding]:
    """vLLM's start-up refusal of a pooling task for an architecture it serves only for generation."""
    task, tasks = hit.groups.get("task", ""), hit.groups.get("tasks", "")
    said = hit.groups.get("who", "")
    if task not in POOLING_TASKS or "generate" not in tasks:
        return None
    model = "" if said.lower() in ("this model", "model") else said
    who = _who(config, model)
    rec = get("architecture-unsupported")
    version = config.get("vllm_version")
    sup = support_of(who)
    ev = {**ev, "symptoms": []}  # vLLM's own refusal: the cause, not a symptom for the differential to weigh
    where = f"vLLM {version}" if version else "this vLLM release"
    if sup is not None and predates(version, sup) is not False:
        title = (f"{where} refuses the '{task}' task for {sup.family or who.name}: Supported tasks {{{tasks}}} — the "
                 f"release predates {sup.ref} ({sup.since}), which added {sup.what}")
        return Finding.of(rec, "log-task-unsupported", Status.FAIL, title, ev,
                          fix=upgrade_fix(who, sup, version))
    row = table()["causal_adapter"]
    if predates(version, Support(row["since"], row["ref"], row["what"])) is False:  # the adapter is there: not age
        title = (f"{where} refuses the '{task}' task: it gives this architecture no pooling task (Supported tasks "
                 f"{{{tasks}}}) although its pooling adapter ({row['ref']}) converts causal LMs: a model class it "
                 "cannot convert")
        return Finding.of(rec, "log-task-unsupported", Status.WARN, title, ev, fix=no_adapter_fix())
    title = (f"{where} refuses the '{task}' task: it serves this architecture only for generation (Supported tasks "
             f"{{{tasks}}}); before {row['since']} a causal LM is a pooling model only where its class has a pooler "
             f"({row['task_ref']}, {row['task_since']}), from {row['since']} {row['ref']} converts any")
    return Finding.of(rec, "log-task-unsupported", Status.FAIL, title, ev, fix=adapter_fix(who.model or model))


def pooling_on_generator(t: Trace, config: Mapping[str, Any], ev: dict[str, Any]) -> Finding:
    """An embeddings request's PoolingParams read as sampling parameters: the model runs as a text generator."""
    rec = get("generate-runner")
    who = _who(config)
    sup = support_of(who)
    version = config.get("vllm_version")
    title = ("An embeddings request reached the generation model runner (SamplingMetadata reads "
             "`sampling_params.seed`; the request's PoolingParams has none): the server runs the model as a text "
             "generator")
    if sup is not None and predates(version, sup) is not False:
        title += (f" — {sup.family or who.name} is served for pooling from vLLM {sup.since} ({sup.ref}); this V0 "
                  "release" + (f" ({version})" if version else "") + " has no embedding model for its architecture")
        fix = upgrade_fix(who, sup, version)
    else:
        title += "; this V0 release serves the architecture as a generator only"
        fix = adapter_fix(who.model)
    return Finding.of(rec, "log-traceback", Status.FAIL, title, {**ev, "symptoms": []}, fix=fix, failure_mode="")


def _model_of(traces: Sequence[Trace], config: Mapping[str, Any]) -> str:
    model = str(config.get("model") or "")
    if model:
        return model
    for t in traces:
        for c in t.codes():
            m = lf.LLM_CALL_CODE_RE.search(c)
            if m:
                return m["model"]
    return ""


def dated_release(traces: Sequence[Trace], config: Mapping[str, Any], ev: dict[str, Any]) -> Optional[Finding]:
    """A traceback from a release (stated, or dated by its frames) older than the first one serving the model for
    pooling: whatever its exception, that release cannot serve it."""
    model = _model_of(traces, config)
    who = _who(config, model)
    sup = support_of(who)
    if sup is None:
        return None
    version = config.get("vllm_version")
    frames = [(f.vllm_module or "", f.func) for t in traces for f in t.frames if f.vllm_module]
    dated = frame_release(frames)
    if version:
        if predates(version, sup) is not True:
            return None
        when = f"vLLM {version}"
    elif dated is not None and predates(dated[0], sup) is not False:
        when = f"this release (its frames: {dated[1]})"
    else:
        return None
    rec = get("architecture-unsupported")
    title = (f"{sup.family or who.name} is served for pooling from vLLM {sup.since} ({sup.ref}: {sup.what}); "
             f"{when} predates it, so no flag of it serves the model for embedding")
    return Finding.of(rec, "log-traceback", Status.FAIL, title, {**ev, "symptoms": []},
                      fix=upgrade_fix(ModelIdentity(who.kind, who.family, who.style, model=model or who.model), sup,
                                      version))


def generate_attr(hit: ErrorHits, ev: dict[str, Any], config: Mapping[str, Any]) -> Finding:
    """A pooling adapter's class (XForEmbedding …) asked for a generator's attribute: the generate path drives it."""
    cls, attr = hit.groups.get("cls", ""), hit.groups.get("attr", "")
    convert = "classify" if "Classification" in cls else "embed"
    version = config.get("vllm_version")
    vendor = vendor_build(version)
    row = table()["runner_auto_convert"]
    old = runner_auto_ignores_convert(version)
    rec = get("generate-runner")
    why = [f"--convert {convert} without --runner pooling on a release before {row['ref']} ({row['since']} … "
           f"{row['fixed_in']}: `--runner auto` resolves a causal LM to generate despite --convert)"] \
        if old is not False else []
    if vendor is not None:
        why.append(f"a bug of {vendor[0]} (vLLM {version}, {vendor[1]}), not of upstream vLLM")
    else:
        why.append("a vendor or patched build's own bug (the version string's +label names it)")
    title = (f"'{cls}' object has no attribute '{attr}': the generate path drives a model converted for pooling — "
             f"one of: {'; or '.join(why)}; to tell: start it again with --runner pooling --convert {convert}")
    return Finding.of(rec, "log-client-error", Status.WARN, title, {**ev, "symptoms": []},
                      fix=convert_runner_fix("", convert) + vendor_fix(vendor))


def embedding_mode_off(hit: ErrorHits, ev: dict[str, Any], config: Mapping[str, Any]) -> Optional[Finding]:
    """'embedding_mode is False' (0.4.3 … 0.6.3) for a model that is an embedder (or a reward/score model): the
    release loaded it as a generator, so /v1/embeddings fails; a generator's own start-up says it too (no finding)."""
    who = _who(config)
    if who.kind == "unknown":
        return None
    row = table()["embedding_mode"]
    sup = support_of(who)
    version = config.get("vllm_version") or f"{row['since']} … before {row['until']}"
    rec = get("generate-runner")
    title = (f"vLLM (its 'embedding_mode is False' line: {row['since']} … before {row['until']}) loaded {who.name} "
             "as a text generator: /v1/embeddings will not work on this server")
    if sup is not None and predates(config.get("vllm_version") or row["since"], sup) is True:
        title += f"; it is served for pooling from {sup.since} ({sup.ref})"
        fix = upgrade_fix(who, sup, config.get("vllm_version"))
    else:
        fix = adapter_fix(who.model)
    return Finding.of(rec, "log-embedding-mode-off", Status.WARN, title, {**ev, "symptoms": [], "release": version},
                      fix=fix)


def pooler_missing(cls: str, ev: dict[str, Any], config: Mapping[str, Any]) -> Finding:
    """'XForCausalLM' object has no attribute 'pooler' for an embedder: the release gives that class no pooler
    (before the family's pooling support, or before the pooling adapter converts it)."""
    who = _who(config)
    sup = support_of(who)
    version = config.get("vllm_version")
    said = f"'{cls}' object has no attribute 'pooler': {who.name} reached the pooling path on a generator's class"
    old = predates(version, sup) if sup is not None and sup.family else None
    ev = {**ev, "symptoms": []}
    if sup is not None and old is True:
        return Finding.of(get("architecture-unsupported"), "log-client-error", Status.FAIL,
                          f"{said} — it is served for pooling from vLLM {sup.since} ({sup.ref}); vLLM {version} "
                          "predates it", ev, fix=upgrade_fix(who, sup, version))
    if old is False:  # the release serves it for pooling: it was started without the pooling task
        return Finding.of(get("generate-runner"), "log-client-error", Status.FAIL,
                          f"{said}: vLLM {version} serves it for pooling, but it was started as a generator",
                          ev, fix=start_with_task_fix(who.model))
    since = f"{sup.since} ({sup.ref})" if sup is not None and sup.family else "the pooling adapter's release"
    return Finding.of(get("generate-runner"), "log-client-error", Status.WARN,
                      f"{said} — one of: it was started without the pooling task, or the release predates {since}; "
                      "to tell: `vllm --version`", ev, fix=task_or_upgrade_fix(who, sup))


def pooling_call_on_generator(hit: ErrorHits, ev: dict[str, Any], config: Mapping[str, Any]) -> Finding:
    """vLLM refusing a pooling call (LLM.encode(), the Embedding API) on a model loaded as a text generator."""
    g = hit.groups
    era = "runner" if g.get("api") or (g.get("flag") or "").startswith("runner") else (
        "task" if (g.get("flag") or "").startswith("task") else "embedding_mode" if g.get("xmodel") else "runner")
    when = {"runner": ">= 0.10.2", "task": "0.6.4 … 0.10.1", "embedding_mode": "0.4.3 … 0.6.3"}[era]
    who = _who(config)
    call = f"LLM.{g['call']}()" if g.get("call") else f"the {g.get('api')} API"
    sup = support_of(who)
    rec = get("generate-runner")
    title = (f"{call} refused: vLLM (its wording: {when}) loaded {who.name} as a text generator, not a pooling "
             "model")
    fix = offline_pooling_fix(who, era, g.get("convert") or "embed")
    if sup is not None and sup.family and predates(config.get("vllm_version") or (
            "0.4.3" if era == "embedding_mode" else None), sup) is True:
        title += f"; it is served for pooling from vLLM {sup.since} ({sup.ref})"
        fix = upgrade_fix(who, sup, config.get("vllm_version"))
    return Finding.of(rec, "log-pooling-call-on-generator", Status.FAIL, title, {**ev, "symptoms": []}, fix=fix)
