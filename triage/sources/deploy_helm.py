"""The vLLM production-stack Helm chart's values rendered to the command line its template writes.

Read from vllm-project/production-stack ``helm/templates/deployment-vllm-multi.yaml`` and
``helm/templates/_helpers.tpl`` (commit a6c01db0, 2026-08; the keys below are the same in the 2025
versions, which lack ``runner``/``convert``/``modelRevision``): for each ``servingEngineSpec.modelSpec[]``
entry that is not ``enabled: false`` nor a Ray spec, the container ``vllm`` runs
``vllm serve MODELURL --host 0.0.0.0 --port PORT`` then, inside ``with .vllmConfig`` (nothing when the map
is absent or empty): ``enableChunkedPrefill`` (only when the key is there) as
``--enable-chunked-prefill``/``--no-enable-chunked-prefill``; ``enablePrefixCaching`` truthy as
``--enable-prefix-caching``, else ``--no-enable-prefix-caching``; ``maxModelLen``, ``dtype``,
``tensorParallelSize``, ``maxNumSeqs``, ``gpuMemoryUtilization``, ``maxLoras``, ``runner``, ``convert`` as
options when the key is there; ``extraArgs`` appended as given. The image is ``repository:tag``;
``env`` is appended to the container's env; ``servingEngineSpec.vllmApiKey`` becomes ``VLLM_API_KEY``;
``requestGPU`` asks for ``requestGPUType`` (default ``nvidia.com/gpu``) unless ``resources`` is given.
Truthiness is Go template's: ``enableChunkedPrefill: "false"`` (a string) is true, as the chart renders it.
"""

from __future__ import annotations

from typing import Any

import yaml

from triage.sources.deploy import (
    GPU_PRODUCT_LABEL,
    GPU_RESOURCE,
    Deployment,
    DeployTarget,
    Origin,
    Pointer,
    _env_list,
    _int,
    get,
    line_of,
)

# vllmConfig key -> the option the template writes (value options, in the template's order)
VALUE_KEYS = (("maxModelLen", "--max-model-len"), ("dtype", "--dtype"),
              ("tensorParallelSize", "--tensor-parallel-size"), ("maxNumSeqs", "--max-num-seqs"),
              ("gpuMemoryUtilization", "--gpu_memory_utilization"), ("maxLoras", "--max_loras"),
              ("runner", "--runner"), ("convert", "--convert"))
# config key (triage's) -> the chart key that sets it (what a fix patch sets)
CHART_KEY = {"enable_chunked_prefill": "enableChunkedPrefill", "enable_prefix_caching": "enablePrefixCaching",
             "max_model_len": "maxModelLen", "dtype": "dtype", "tensor_parallel_size": "tensorParallelSize",
             "max_num_seqs": "maxNumSeqs", "gpu_memory_utilization": "gpuMemoryUtilization", "runner": "runner",
             "convert": "convert"}


def truthy(v: Any) -> bool:
    """Go template truth: false, 0, nil, "" and empty collections are false; everything else true."""
    return not (v is None or v is False or v == 0 or v == "" or (isinstance(v, (list, dict)) and not v))


def go_str(v: Any) -> str:
    """A value as ``| quote`` prints it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return "" if v is None else str(v)


def render(spec: dict[str, Any], engine: dict[str, Any], node: yaml.Node | None,
           at: Pointer) -> tuple[list[str], list[int | None]]:
    """The container's command, as the template writes it, with the line of the value each token came from."""
    argv: list[str] = []
    lines: list[int | None] = []

    def put(tokens: list[str], *path: Any) -> None:
        argv.extend(tokens)
        lines.extend([line_of(node, (*at, *path))] * len(tokens))

    exe = "/opt/venv/bin/vllm" if spec.get("repository") == "lmcache/vllm-openai" else "vllm"
    put([exe, "serve"], "repository")
    put([go_str(spec.get("modelURL"))], "modelURL")
    put(["--host", "0.0.0.0", "--port", go_str(engine.get("containerPort") or "8000")], "modelURL")
    if truthy(spec.get("enableLoRA")):
        put(["--enable-lora"], "enableLoRA")
    if truthy(spec.get("enableTool")):
        put(["--enable-auto-tool-choice"], "enableTool")
    if truthy(spec.get("toolCallParser")):
        put(["--tool-call-parser", go_str(spec["toolCallParser"])], "toolCallParser")
    vc = spec.get("vllmConfig")
    if truthy(vc) and isinstance(vc, dict):
        if "enableChunkedPrefill" in vc:
            put(["--enable-chunked-prefill" if truthy(vc["enableChunkedPrefill"]) else "--no-enable-chunked-prefill"],
                "vllmConfig", "enableChunkedPrefill")
        put(["--enable-prefix-caching" if truthy(vc.get("enablePrefixCaching")) else "--no-enable-prefix-caching"],
            "vllmConfig", *(("enablePrefixCaching",) if "enablePrefixCaching" in vc else ()))
        for key, opt in VALUE_KEYS:
            if key in vc:
                put([opt, go_str(vc[key])], "vllmConfig", key)
        if truthy(vc.get("extraArgs")) and isinstance(vc["extraArgs"], list):
            for i, a in enumerate(vc["extraArgs"]):
                put([go_str(a)], "vllmConfig", "extraArgs", i)
    if truthy(spec.get("modelRevision")):
        put(["--revision", go_str(spec["modelRevision"])], "modelRevision")
    lm = spec.get("lmcacheConfig")
    if isinstance(lm, dict) and truthy(lm.get("enabled")):
        role = lm.get("kvRole") or "kv_both"
        v0 = isinstance(vc, dict) and go_str(vc.get("v0")) == "1"
        conn = "LMCacheConnector" if v0 and "enablePD" not in lm else "LMCacheConnectorV1"
        put(["--kv-transfer-config", f'{{"kv_connector":"{conn}","kv_role":"{role}"}}'], "lmcacheConfig")
    if truthy(spec.get("chatTemplate")):
        put(["--chat-template", f"/templates/{spec['chatTemplate']}"], "chatTemplate")
    return argv, lines


def read(docs: list[tuple[Any, yaml.Node]], file: str) -> Deployment:
    targets: list[DeployTarget] = []
    skipped: list[str] = []
    for di, (d, node) in enumerate(docs):
        engine = d.get("servingEngineSpec") if isinstance(d, dict) else None
        if not isinstance(engine, dict):
            continue
        if "enableEngine" in engine and not truthy(engine.get("enableEngine")):
            skipped.append(f"servingEngineSpec.enableEngine is {engine.get('enableEngine')!r}: no engine rendered")
            continue
        for i, spec in enumerate(engine.get("modelSpec") or []):
            if not isinstance(spec, dict):
                continue
            name = spec.get("name") or f"#{i}"
            if spec.get("enabled") is False:
                skipped.append(f"modelSpec {name}: enabled: false (the chart renders nothing for it)")
                continue
            if isinstance(spec.get("raySpec"), dict) and truthy(spec["raySpec"].get("enabled")):
                skipped.append(f"modelSpec {name}: raySpec (a RayCluster, not read here)")
                continue
            at = ("servingEngineSpec", "modelSpec", i)
            argv, lines = render(spec, engine, node, at)
            env, env_lines = _env_list(spec.get("env"), node, (*at, "env"))
            if truthy(engine.get("vllmApiKey")):
                env["VLLM_API_KEY"] = "(from a secret)"
                env_lines["VLLM_API_KEY"] = line_of(node, ("servingEngineSpec", "vllmApiKey"))
            gpu_type = spec.get("requestGPUType") or GPU_RESOURCE
            res = spec.get("resources")
            if truthy(res):
                gpus = _int(get(res, "limits", GPU_RESOURCE) or get(res, "requests", GPU_RESOURCE))
                gpu_at: Pointer = (*at, "resources")
            else:
                gpus = _int(spec.get("requestGPU")) if gpu_type == GPU_RESOURCE else None
                gpu_at = (*at, "requestGPU")
            product = _product(spec)
            repo, tag = spec.get("repository"), spec.get("tag")
            targets.append(DeployTarget(
                name=f"modelSpec {name}", shape="helm-values", argv=tuple(argv), lines=tuple(lines),
                origin=Origin(file, di + 1, line_of(node, at)), pointer=at,
                picked=f"production-stack values: servingEngineSpec.modelSpec[{i}] ({name}), container vllm",
                image=f"{repo}:{tag}" if repo and tag is not None else None,
                image_line=line_of(node, (*at, "tag")), env=env, env_lines=env_lines,
                gpu_count=gpus, gpu_line=line_of(node, gpu_at) if gpus is not None else None,
                gpu_product=product[1] if product else None,
                gpu_product_line=line_of(node, (*at, *product[0])) if product else None,
                command_len=len(argv), argv_field="chart",
                liveness=engine.get("livenessProbe") if isinstance(engine.get("livenessProbe"), dict) else None,
                liveness_line=line_of(node, ("servingEngineSpec", "livenessProbe"))
                if isinstance(engine.get("livenessProbe"), dict) else None))
    return Deployment(file, "helm-values", tuple(targets), tuple(skipped))


def _product(spec: dict[str, Any]) -> tuple[Pointer, str] | None:
    """``nodeSelectorTerms`` (the chart's own key) asking for one GPU product by GPU Feature Discovery's label."""
    terms = spec.get("nodeSelectorTerms")
    for ti, t in enumerate(terms if isinstance(terms, list) else []):
        for ei, e in enumerate(get(t, "matchExpressions") or []):
            if isinstance(e, dict) and e.get("key") == GPU_PRODUCT_LABEL and len(e.get("values") or []) == 1:
                return ("nodeSelectorTerms", ti, "matchExpressions", ei), str(e["values"][0])
    return None
