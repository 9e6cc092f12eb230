"""`vllm serve` options judged against one release's own parser, and the guide myths.

Which options a release accepts, their spellings (``--no-X``; from 0.33 ``--disable-X``/``--enable-X``)
and what each spelling sets come from that release's code (triage/vllm/knowledge, read by its own
``make_arg_parser``). What replaces a dropped option is not in any parser: that part is kept here
(REPLACEMENTS), with the refs. vLLM's FlexibleArgumentParser also accepts ``--flag_name``
(underscores), ``--flag=value``, dotted keys into JSON options (``--hf-overrides.is_matryoshka true``)
and ``-O3`` / ``-O.mode``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from triage.vllm import knowledge
from triage.vllm.knowledge import Option, Resolution, normalize_option

__all__ = ["MYTH_FLAGS", "MYTH_COMMANDS", "LAUNCHERS", "Launcher",
           "OptionVerdict", "judge", "normalize_option", "replacement",
           "pooler_field_verdict"]

# Flags people copy from guides that no vLLM release has, with what to use instead.
MYTH_FLAGS: dict[str, str] = {
    "--embedding-batch-size": "vLLM has no such flag: batching is --max-num-batched-tokens (tokens per step) "
    "and --max-num-seqs (requests per step).",
}

# Entry points from guides that are not vLLM commands.
MYTH_COMMANDS: dict[str, str] = {
    "vllm-entrypoint": "no such command: start the server with `vllm serve MODEL …` (the image's entrypoint is "
    "already `vllm serve`).",
    "api_server": "`vllm-entrypoint api_server` is not a vLLM command: use `vllm serve MODEL …`.",
}


@dataclass(frozen=True)
class Launcher:
    """A wrapper that starts vLLM's engine from its own command line instead of `vllm serve` (issue 42): its name, how
    its options map onto vLLM's, the options that are its own (taking a value, or flags), the ones that name the model.
    Its own options are never judged against `vllm serve`'s parser; with ``passes_rest`` the others are vLLM's engine
    arguments (read as vLLM reads them), without it the line holds no vLLM option at all."""

    name: str
    maps: str
    own_value: frozenset[str] = frozenset()
    own_flag: frozenset[str] = frozenset()
    model_from: tuple[str, ...] = ()
    passes_rest: bool = True
    # a wrapper whose vLLM options carry its own prefix (ms-swift's --vllm_gpu_memory_utilization,
    # LLaMA-Factory's --vllm_gpu_util): only those are vLLM's, mapped by ``prefixed`` (the wrapper's spelling after
    # the prefix -> vLLM's option; a value of true/false for a vLLM flag sets it or its --no- form); every other
    # option of the line is the wrapper's own
    vllm_prefix: str = ""
    prefixed: tuple[tuple[str, str], ...] = ()
    prefixed_flags: frozenset[str] = frozenset()
    # the wrapper picks vLLM's task itself (ms-swift's --task_type, LLaMA-Factory's stage): no runner rule applies
    sets_task: bool = False


def _opts(*names: str) -> frozenset[str]:
    return frozenset(n.replace("_", "-") for n in names)


# KServe's huggingfaceserver (python/huggingfaceserver/huggingfaceserver/__main__.py, kserve/model_server.py): its
# own parser plus vLLM's AsyncEngineArgs.add_cli_args, so an option it does not define is vLLM's engine argument.
# Ray Serve LLM (`serve run|deploy CONFIG`): the vLLM options live in the config's engine_kwargs, not on this line.
LAUNCHERS: dict[str, Launcher] = {
    "huggingfaceserver": Launcher(
        "KServe huggingfaceserver",
        "its own options (--model_dir, --model_id, --model_name, --backend, --task, …) are KServe's; the others are "
        "mapped onto vLLM's engine arguments (AsyncEngineArgs), spelled with '_' or '-'",
        own_value=_opts("--model_dir", "--model_id", "--model_revision", "--tokenizer_revision", "--model_name",
                        "--backend", "--task", "--max_length", "--tensor_input_names", "--predictor_host",
                        "--predictor_protocol", "--predictor_use_ssl", "--predictor_request_timeout_seconds",
                        "--http_port", "--grpc_port", "--workers", "--max_threads", "--max_asyncio_workers",
                        "--log_config_file", "--access_log_format", "--configure_logging",
                        "--grpc_max_send_message_length", "--grpc_max_receive_message_length"),
        own_flag=_opts("--disable_lower_case", "--disable_special_tokens", "--return_token_type_ids",
                       "--return_probabilities", "--return_raw_logits", "--enable_docs_url", "--enable_latency_logging",
                       "--enable_grpc"),
        model_from=("--model-dir", "--model-id"),
    ),
    "serve": Launcher("Ray Serve (LLM)", "the vLLM engine arguments are the config's engine_kwargs, not this line's",
                      passes_rest=False),
    "gpustack": Launcher("GPUStack", "GPUStack builds each model instance's `vllm serve` line itself (its worker log "
                         "prints it: 'arguments: [vllm serve …]')", passes_rest=False),
    # Xinference (xinference/deploy/cmdline.py `launch`): its own options pick the model and the engine; the engine's
    # keyword arguments are Xinference's model kwargs, not a vllm serve line
    # ms-swift (modelscope/ms-swift swift/llm/argument/infer_args.py VllmArguments): `swift infer|deploy|rollout|…
    # --infer_backend vllm` builds vLLM's engine in-process; its --vllm_* options are vLLM's engine arguments under
    # ms-swift's names, the rest are ms-swift's own (--max_new_tokens, --temperature, --val_dataset, --task_type, …)
    "swift": Launcher(
        "ms-swift",
        "`swift infer/deploy/rollout … --infer_backend vllm` runs vLLM inside ms-swift: its --vllm_* options map "
        "onto vLLM's engine arguments (--vllm_gpu_memory_utilization is --gpu-memory-utilization), the others are "
        "ms-swift's own, not vLLM's; for a pooling task (--task_type embedding/seq_cls/reranker) ms-swift needs "
        "vLLM's async engine (--vllm_use_async_engine true)",
        model_from=("--model",),
        vllm_prefix="--vllm-",
        prefixed=tuple((o, o) for o in (
            "--gpu-memory-utilization", "--tensor-parallel-size", "--pipeline-parallel-size",
            "--data-parallel-size", "--max-num-seqs", "--max-model-len", "--limit-mm-per-prompt", "--max-lora-rank",
            "--quantization", "--reasoning-parser", "--mm-processor-cache-gb", "--speculative-config")),
        prefixed_flags=_opts("--enforce-eager", "--enable-prefix-caching", "--disable-custom-all-reduce",
                             "--enable-expert-parallel", "--disable-cascade-attn", "--enable-lora"),
        sets_task=True,
    ),
    # LLaMA-Factory (src/llamafactory/hparams/model_args.py VllmArguments): `llamafactory-cli api|chat|webchat|eval
    # … --infer_backend vllm`; its vLLM options are --vllm_maxlen, --vllm_gpu_util, --vllm_enforce_eager, …
    "llamafactory-cli": Launcher(
        "LLaMA-Factory",
        "`llamafactory-cli … --infer_backend vllm` runs vLLM inside LLaMA-Factory: --vllm_maxlen is "
        "--max-model-len, --vllm_gpu_util is --gpu-memory-utilization, --vllm_enforce_eager is --enforce-eager; "
        "its other options (--model_name_or_path, --template, …) are LLaMA-Factory's own",
        model_from=("--model-name-or-path",),
        vllm_prefix="--vllm-",
        prefixed=(("--maxlen", "--max-model-len"), ("--gpu-util", "--gpu-memory-utilization"),
                  ("--max-lora-rank", "--max-lora-rank")),
        prefixed_flags=_opts("--enforce-eager"),
        sets_task=True,
    ),
    # FastChat's vLLM worker (fastchat/serve/vllm_worker.py): its own options plus AsyncEngineArgs.add_cli_args
    "fastchat.serve.vllm_worker": Launcher(
        "FastChat vllm_worker",
        "its own options (--model-path, --model-names, --controller-address, --worker-address, --conv-template, "
        "--limit-worker-concurrency, --no-register, --num-gpus) are FastChat's, the others vLLM's engine arguments; "
        "the vllm_worker serves chat/completions only: FastChat's /v1/embeddings needs a model_worker",
        own_value=_opts("--host", "--port", "--worker-address", "--controller-address", "--model-names",
                        "--limit-worker-concurrency", "--num-gpus", "--conv-template", "--ssl-keyfile",
                        "--ssl-certfile"),
        own_flag=_opts("--no-register", "--ssl"),
        model_from=("--model-path",),
    ),
    # TRL's `trl vllm-serve` (trl/scripts/vllm_serve.py ScriptArguments): a generation server for GRPO rollouts whose
    # own dataclass options (--model, --tensor_parallel_size, --enable_prefix_caching True, …) build vLLM's LLM
    "trl": Launcher("TRL vllm-serve", "`trl vllm-serve` is TRL's rollout server: its options are TRL's dataclass "
                    "fields (booleans take a value), passed to vLLM's LLM(...) by TRL, not a vllm serve line",
                    passes_rest=False),
    "xinference": Launcher("Xinference", "its options (--model-name, --model-type, --model-engine, --endpoint, "
                           "--n-gpu, …) are Xinference's, not vLLM's: Xinference starts vLLM's engine in-process "
                           "(its vllm model backend calls vLLM's Python API), so this line is not judged as vllm serve",
                           passes_rest=False),
}
# servers that are not vLLM at all: a line of theirs holds no vLLM option (named, never judged as vllm serve)
for _cmd, _name in (("sglang.launch_server", "SGLang"), ("text-embeddings-router", "Text Embeddings Inference (TEI)"),
                    ("infinity_emb", "Infinity"), ("lmdeploy", "LMDeploy"), ("text-generation-launcher", "TGI")):
    LAUNCHERS[_cmd] = Launcher(_name, f"{_name} is another inference server, not vLLM: its options are its own",
                               passes_rest=False)


@dataclass(frozen=True)
class Replacement:
    """What to use instead of an option (or a JSON field) a release dropped; which releases lack it is data."""

    use: str
    refs: tuple[str, ...] = ()
    deprecated_in: str | None = None
    seen: str | None = None
    # the release that first had the option (before the releases triage/vllm/knowledge reads): an "unrecognized
    # arguments" for it on an unknown release is either too new a guide on an old release or an old guide on a new one
    added_in: str | None = None
    added_refs: tuple[str, ...] = ()


REPLACEMENTS: dict[str, Replacement] = {
    "--task": Replacement("--runner pooling (and --convert embed for a causal LM such as Qwen3-Embedding)",
                          ("vllm#21470", "vllm#35603", "vllm#53467"), "0.10.1",
                          "0.31.0 lab server: 'vllm: error: unrecognized arguments: --task embed' plus a Hint line "
                          "(tests/fixtures/real/startup/0.31.0-task-embed)",
                          added_in="0.6.4", added_refs=("vllm#9424",)),
    "--override-pooler-config": Replacement("--pooler-config (same JSON)", ("vllm#25181",), None,
                                            "0.31.0 lab server: unrecognized arguments "
                                            "(tests/fixtures/real/startup/0.31.0-override-pooler-config)"),
    "--disable-log-requests": Replacement("nothing: request logging is off unless --enable-log-requests"),
}
# JSON fields of an option (or a request) that a release refuses, with what to use instead.
FIELD_REPLACEMENTS: dict[tuple[str, str], Replacement] = {
    ("--pooler-config", "normalize"): Replacement("use_activation", ("vllm#32243",)),
    ("--pooler-config", "task"): Replacement("--runner pooling / --convert embed", ("vllm#21470",)),
    ("/v1/embeddings", "normalize"): Replacement("use_activation", ("vllm#32243",), None,
                                                 "400 on 0.31.0 and 0.32.0 lab servers "
                                                 "(tests/fixtures/real/*/error-normalize.json)"),
}


def replacement(option: str) -> Replacement | None:
    return REPLACEMENTS.get(normalize_option(option))


@dataclass(frozen=True)
class OptionVerdict:
    """One option of a command line against the resolved release."""

    option: str
    spec: Option | None  # the release's option, None when its parser has no such spelling
    resolution: Resolution
    added_in: str | None = None
    removed_in: str | None = None
    accepted_by: tuple[str, ...] = ()  # releases whose parser accepts the spelling
    replacement: Replacement | None = None
    myth: str | None = None
    sets: Any = None  # for flags: what the spelling stores (the release's own answer)

    @property
    def accepted(self) -> bool:
        return self.spec is not None

    @property
    def certain(self) -> bool:
        """The verdict is the deployment's own release's: an unknown option would stop `vllm serve`."""
        return self.resolution.exact

    def why(self) -> str:
        r = self.resolution.release
        opt = self.option
        if self.myth:
            base = self.myth
        elif self.replacement and self.removed_in:
            base = (f"{opt} was removed in vLLM {self.removed_in}"
                    + (f" (deprecated in {self.replacement.deprecated_in})" if self.replacement.deprecated_in else "")
                    + f": use {self.replacement.use}.")
        elif self.replacement:
            base = f"{opt} is not an option of vllm serve {r}: use {self.replacement.use}."
        else:
            base = f"vllm serve {r} has no option {opt}."
        history = []
        if self.added_in and not self.myth:
            history.append(f"{opt} was added in vLLM {self.added_in}")
        if self.removed_in and not self.replacement and not self.myth:
            history.append(f"{opt} was removed in vLLM {self.removed_in}")
        if not self.accepted_by and not self.myth:
            known = knowledge.releases()
            history.append(f"no release read ({known[0]} … {known[-1]}) has it")
        tail = (" " + "; ".join(history) + ".") if history else ""
        if self.certain:
            return f"{base}{tail} Checked against vllm serve {r}'s own parser: it would exit at start with " \
                   f"'unrecognized arguments'."
        return (f"{base}{tail} Checked against vllm serve {r}, not the deployment's own release "
                f"({self.resolution.reason}).")


def judge(option: str, resolution: Resolution) -> OptionVerdict:
    """Does the resolved release accept this spelling, and what does its history say."""
    rel = knowledge.release(resolution.release)
    opt = normalize_option(option)
    spec = rel.lookup(opt)
    if spec is not None:
        return OptionVerdict(opt, spec, resolution, sets=rel.sets(opt))
    has, _ = knowledge.history(opt)
    return OptionVerdict(
        opt, None, resolution,
        added_in=knowledge.added_in(opt) if has else None,
        removed_in=knowledge.removed_in(opt) if has else None,
        accepted_by=tuple(has),
        replacement=replacement(opt),
        myth=MYTH_FLAGS.get(opt),
    )


def pooler_field_verdict(field_name: str, value: object, resolution: Resolution) -> dict[str, Any] | None:
    """A ``--pooler-config`` field the resolved release refuses (its own message), else None."""
    rel = knowledge.release(resolution.release)
    refusal = rel.pooler_refusal(field_name, value)
    fields = rel.pooler_fields
    rep = FIELD_REPLACEMENTS.get(("--pooler-config", field_name))
    if refusal is None and (not fields or field_name in fields):
        return None
    why = refusal or f"PoolerConfig of vLLM {resolution.release} has no field {field_name!r}"
    return {
        "option": f"--pooler-config {field_name}",
        "value": value,
        "use": f"--pooler-config {rep.use}" if rep else "see vLLM's PoolerConfig",
        "refs": list(rep.refs) if rep else [],
        "why": f"{why} (read from {rel.snap['pooler_config'].get('file')} of vLLM {resolution.release})",
        "certain": resolution.exact,
    }
