"""Start-up, configuration and throughput failure modes of embedding servers (issue 14), one record each.

Facts: vLLM 0.31.0/0.32.0 wheels (paths in each record's refs), lab servers (recordings under
tests/fixtures/real/startup/ and tests/fixtures/nvml/), and the vLLM issue threads in `refs`.
Where a verdict needs a value from the config, the fix is a function of it (`fix_for`); every
finding that reports one of these modes reads title, refs and fix from here. The records are data
(triage/catalogue/data/startup.toml); this module keeps their fix functions and clue readers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Optional

from triage.catalogue.identity import identify, release_has_task, serve_edit, serve_fix, serve_flags
from triage.catalogue.load import load
from triage.catalogue.model import ConfigLike, Edit
from triage.catalogue.refusal_clues import (
    REJECT_CONTEXT_LENGTH,
    SERVER_MAX_MODEL_LEN,
    context_length_of,
)
from triage.catalogue.symptoms import (
    Case,
    Weight,
)
from triage.catalogue.vectors import DIMENSIONS_NOT_MATRYOSHKA


def _task_use(cfg: Any, use: str) -> str:
    """What replaces --task for this model: a reranker's or classifier's own flags, never --convert embed."""
    who = identify(cfg)
    return serve_flags(who) + f" ({who.name} is a {who.kind})" if who.scoring else use


def _removed_flag_fix(cfg: ConfigLike) -> str:
    """One line per removed or renamed option seen (cfg["removed"]: [{"option", "use"}])."""
    seen = cfg.get("removed") or []
    if not seen:
        who = identify(cfg)
        task = (f"--task score -> {serve_flags(who)}" if who.scoring else
                "--task embed -> --runner pooling (plus --convert embed for a causal LM)")
        return (
            f"Replace removed options: {task}; "
            "--override-pooler-config -> --pooler-config; the pooler/request field normalize -> use_activation."
        )
    return "; ".join(_one_removed_fix(cfg, r) for r in seen) + "."


def _one_removed_fix(cfg: ConfigLike, r: Mapping[str, Any]) -> str:
    """What replaces one removed option; for one a later release added (``added_in``) on an unknown release, both
    sides: upgrade past its addition, or its replacement where the release dropped it."""
    use = _task_use(cfg, r["use"]) if r["option"] == "--task" else r["use"]
    if not r.get("added_in"):
        return f"{r['option']} -> {use}"
    return (f"run `vllm --version` first. On a release before {r['added_in']} (which added {r['option']}): upgrade "
            f"to {r['added_in']} or later, or drop {r['option']} and follow that release's own docs; on a release "
            f"that removed it: {r['option']} -> {use}")


def _removed_edits(cfg: Mapping[str, Any]) -> list[Edit]:
    """Each removed option dropped by its name, and what replaces it, spelled by the deployment's release."""
    from triage.vllm import knowledge  # noqa: PLC0415 - lazy: the per-release knowledge reads the catalogue's versions

    rel = knowledge.release(knowledge.for_version(cfg.get("vllm_version")).release)
    serve: dict[str, Any] = {}
    for r in cfg.get("cmdline_removed_flags") or cfg.get("removed") or []:
        if isinstance(r, dict) and str(r.get("option", "")).startswith("--"):
            serve[f"!{r['option']}"] = None  # an option vLLM no longer has: dropped by its name
            use = str(r.get("use") or "")
            if r["option"] == "--task" and identify(cfg).scoring:  # a reranker's own task, never the embedder's
                serve.update(serve_edit(identify(cfg)))
                continue
            for opt, val in re.findall(r"(--[a-z][\w-]*)(?:[ =]([^\s,;()]+))?", use):
                spec = rel.lookup(opt)
                if spec is not None:
                    serve[spec.dest] = rel.sets(opt) if spec.kind != "value" else (val or True)
    return [Edit(serve=serve, why="options this vLLM has")] if serve else []


def _tasks_weight(tasks: Any) -> Optional[Weight]:
    """The server's supported tasks: a generator lists no pooling task."""
    if not isinstance(tasks, (list, tuple)):
        return None
    if "embed" in tasks or "classify" in tasks:
        return Weight("against", f"the server supports {list(tasks)}", "log", decisive=True)
    return Weight("for", f"the server supports only {list(tasks)}", "log", decisive=True)


def _context_is_max_model_len(case: Case, m: object = None) -> Optional[Weight]:
    """The 400's N against max_model_len: N == max_model_len is this record; a larger N is a max_embed_len."""
    n = case.fact(REJECT_CONTEXT_LENGTH) or context_length_of(case.fact("reject.message"))
    mml = case.fact(SERVER_MAX_MODEL_LEN) or case.get("max_model_len")
    if n is None or not isinstance(mml, int):
        return None
    if n == mml:
        return Weight("for", f"refused above max_model_len {mml}", "api", decisive=True)
    return Weight("against", f"refused above {n} tokens, not max_model_len {mml}", "api", decisive=True)


def _kv_dtype_weight(kv: Any, dtype: Any) -> Optional[Weight]:
    dtype = str(dtype).removeprefix("torch.") if dtype else None
    if kv is None or dtype is None:
        return None
    if kv in ("float16", "bfloat16") and dtype in ("float16", "bfloat16") and kv != dtype:
        return Weight("for", f"kv_cache_dtype {kv} with a {dtype} model", "config")
    return Weight("against", f"kv_cache_dtype {kv} with a {dtype} model", "config", decisive=kv in ("auto", dtype))


def _supported_tasks(case: Case) -> Optional[Weight]:
    return _tasks_weight(case.get("supported_tasks"))


def _kv_dtype_differs(case: Case) -> Optional[Weight]:
    return _kv_dtype_weight(case.get("kv_cache_dtype"), case.get("dtype"))


def _generate_edits(cfg: Mapping[str, Any]) -> list[Edit]:
    who = identify(cfg)
    return [Edit(serve=serve_edit(who, release_has_task(cfg)),
                 why=f"the {who.kind}'s own task" if who.scoring else "the embed task")]


def _generate_fix(cfg: ConfigLike) -> str:
    """The pooling runner for what the model is (issue 42): a reranker gets its score head, an embedder embed; an
    embedder on a release nothing states (a pasted traceback) gets both spellings of the task, by release."""
    who = identify(cfg)
    if who.kind == "embedder" and not cfg.get("vllm_version") and not cfg.get("task_resolution_line"):
        model = str(cfg.get("model") or "") or "MODEL"
        return (f"Serve it as an embedder, as its release spells the pooling task: vLLM >= 0.10.2 vllm serve {model} "
                f"--runner pooling --convert embed; 0.7 … 0.10.1 vllm serve {model} --task embed (without it a "
                "causal checkpoint such as Qwen3-Embedding resolves to generate). `vllm --version` tells which.")
    return serve_fix(who, str(cfg.get("model") or ""), release_has_task(cfg))


def _log_stats_edits(cfg: Mapping[str, Any]) -> list[Edit]:
    return [Edit(serve={"disable_log_stats": None}, why="engine stats back in the log")]


def _max_len_fix(cfg: ConfigLike) -> str:
    derived = cfg.get("derived_max_model_len")
    asked = cfg.get("asked_max_model_len")
    cap = f" (at most {derived}, the model's {cfg.get('derived_key') or 'max_position_embeddings'})" if derived else ""
    head = f"Lower --max-model-len {asked}" if asked else "Lower --max-model-len"
    return (
        f"{head} to what the model supports{cap}; VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 only for models whose "
        "position encoding really extends (RoPE scaling), never to silence the check. Clients without truncation "
        "get 400 'maximum context length' for longer inputs: send truncate_prompt_tokens (<= max_model_len - 1 "
        "on vLLM < 0.32.0, vllm#55427) or split documents."
    )


# Mode 4 (`dimensions` refused without Matryoshka, vllm#16331) is the record the vectors catalogue already
# has (issue 13): one record per failure, so the start-up log's verdict reads that one.
MATRYOSHKA = DIMENSIONS_NOT_MATRYOSHKA


def _shared_gpu_fix(cfg: ConfigLike) -> str:
    free, total = cfg.get("free_gib"), cfg.get("total_gib")
    try:
        share = max(0.05, float(free) / float(total) - 0.02)  # leave a little for the CUDA context
        fits = f" ({float(free):.1f} of {float(total):.1f} GiB free: at most about {share:.2f})"
    except (TypeError, ValueError, ZeroDivisionError):
        fits = ""
    return (
        f"Lower --gpu-memory-utilization to the share of TOTAL memory this server may take{fits}, or free the "
        "memory other processes hold (nvidia-smi lists them), or give the server its own GPU "
        "(CUDA_VISIBLE_DEVICES). The value is a share of the whole card, not of what is free."
    )


def _throughput_fix(cfg: ConfigLike) -> str:
    cause = cfg.get("cause")
    if cause == "client":
        return (
            "Nothing to change on the server yet: the measuring client ran out of CPU before the server did, so this "
            "mode is neither shown nor ruled out. Measure again with the client on a host (or cores) of its own, "
            "or beside `vllm bench serve --backend openai-embeddings` run from there."
        )
    if cause == "budget":
        return (
            "Raise --max-num-seqs / --max-num-batched-tokens to cover the batch sizes clients send (the engine is "
            "saturated while requests queue), or add replicas."
        )
    return (
        "The API server process (tokenization, JSON) saturates one core before the engine: start more API "
        "server processes with --api-server-count N (vLLM >= 0.31 has it), send lists of inputs per request "
        "instead of one input per request, and use encoding_format base64 to shrink responses."
    )


def _startup_oom_fix(cfg: ConfigLike) -> str:
    budget, mml = cfg.get("max_num_batched_tokens"), cfg.get("max_model_len")
    b = f" {budget}" if budget else ""
    m = f" {mml}" if mml else ""
    return (
        f"The start-up profile runs one step of max_num_batched_tokens{b} tokens (max_model_len{m}): lower "
        "--max-num-batched-tokens (the default for the card is enough; 24576/65536 OOMed a 12 GiB card in "
        "vllm#55427) or --max-model-len, or lower --gpu-memory-utilization so activations fit beside the KV "
        "cache. Raising the budget is not a fix for vllm#55427: truncate to max_model_len - 1 or upgrade."
    )


def _kv_dtype_fix(cfg: ConfigLike) -> str:
    dtype = cfg.get("dtype")
    keep = f" or --kv-cache-dtype {dtype}" if dtype in ("float16", "bfloat16") else ""
    return (f"Use --kv-cache-dtype auto{keep} (the model's own dtype), or drop the option; a float KV cache in "
            "another dtype than the weights gives wrong vectors before vLLM 0.33 and a refused start from 0.33.")


def _mrv2_fix(cfg: ConfigLike) -> str:
    supported = cfg.get("supported")
    also = f"; or serve a task the V2 runner supports ({supported})" if supported else ""
    return ("Start the server with VLLM_USE_V2_MODEL_RUNNER=0 (docker run --env VLLM_USE_V2_MODEL_RUNNER=0 …, or "
            f"`export VLLM_USE_V2_MODEL_RUNNER=0` before vllm serve) to use the V1 model runner{also}.")


def _remote_code_fix(cfg: ConfigLike) -> str:
    """Drop --trust-remote-code: the model's family is served by vLLM's own code (its serve flags said)."""
    who = identify(cfg)
    name = who.family.name if who.family is not None else "this model"
    return (f"Drop it: {name} is served by vLLM's own code (vllm serve {who.model or 'MODEL'} "
            f"{serve_flags(who)}); the flag only lets the hub run code on the host.")


RECORDS = load(__name__)  # triage/catalogue/data/startup.toml
__getattr__, __dir__ = RECORDS.exports(globals())

# Modes 1-3 and 5-10 of issue 14; mode 4 is MATRYOSHKA above (registered by the vectors catalogue).
STARTUP_MODES = RECORDS.modes()
