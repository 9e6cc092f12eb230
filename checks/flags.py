"""Flags: removed/renamed and unknown options, guide myths, runner/convert, settings known to OOM or to blind triage.

Wording, refs and fixes come from the catalogue (triage/catalogue/startup.py).
"""

from __future__ import annotations

from typing import Optional

from checks import features
from checks._util import ev
from triage.catalogue import get as get_record
from triage.catalogue.records import REMOTE_CODE_NOT_NEEDED
from triage.catalogue.identity import identify, identity_keys, release_has_task, serve_flags
from triage.catalogue.pooling_support import (
    convert_runner_fix,
    predates,
    runner_auto_ignores_convert,
    support_of,
    upgrade_fix,
)
from triage.catalogue.pooling_support import table as support_table
from triage.catalogue.startup import (
    GENERATE_RUNNER,
    KV_DTYPE_MISMATCH,
    LOG_STATS_DISABLED,
    REMOVED_FLAG,
    SHARED_GPU_MEMORY,
    STARTUP_OOM,
)
from triage.vllm import flags as vflags
from triage.vllm import knowledge
from triage.config import EffectiveConfig
from triage.findings import Finding, Status
from triage.vllm.defaults import GiB

CHECK_ID = "flags"


def _history(u: dict) -> str:
    """'--log-level (added in 0.30.0)': the option with what the releases read say of it (or argparse's own error)."""
    if u.get("argparse_error"):
        return f"{u['option']} ({u['argparse_error']})"
    if u.get("added_in"):
        return f"{u['option']} (added in {u['added_in']})"
    if u.get("removed_in"):
        return f"{u['option']} (removed in {u['removed_in']})"
    return str(u["option"])


def _against(checked: dict, certain: bool) -> str:
    if certain or not checked:
        return ""
    return f" [checked against {checked.get('release')}: not the deployment's known release]"


def _refuses_kv_dtype_mismatch(release: str) -> bool:
    """The release's own start-up refusals include the float KV-dtype check (0.33+), read from its source."""
    return any("is incompatible with" in t and "kv_cache_dtype" in t for t in knowledge.release(release).refusals)


def _kv_dtype(cfg: EffectiveConfig) -> list[Finding]:
    kv, dtype = cfg.get("kv_cache_dtype"), cfg.get("dtype")
    dtype = str(dtype).removeprefix("torch.") if dtype else None
    if kv not in ("float16", "bfloat16") or dtype not in ("float16", "bfloat16", "float32") or kv == dtype:
        return []
    res = knowledge.for_version(cfg.get("vllm_version"))
    refuses = _refuses_kv_dtype_mismatch(res.release)
    if refuses:
        title = f"--kv-cache-dtype {kv} with a {dtype} model: vllm serve {res.release} refuses to start"
    else:
        title = f"--kv-cache-dtype {kv} with a {dtype} model: vLLM {res.release} starts and returns wrong vectors"
    if not res.exact:
        title += f" [judged on {res.release}: {res.reason}]"
    return [Finding.of(
        KV_DTYPE_MISMATCH,
        "flags-kv-cache-dtype",
        Status.FAIL if res.exact else Status.WARN,
        title,
        {**ev(cfg, "kv_cache_dtype", "dtype", "vllm_version"), "checked_against": res.to_dict(),
         "refused_at_start_in_release": refuses},
        cfg={"dtype": dtype},
    )]


def _not_vllm_commands(cfg: EffectiveConfig) -> list[Finding]:
    """A word on the line that is not a vLLM command (a guide's myth)."""
    out: list[Finding] = []
    for m in cfg.get("cmdline_myths") or []:
        out.append(
            Finding(
                "flags-unknown-command",
                Status.FAIL,
                f"'{m['token']}' is not a vLLM command",
                {"token": m["token"], "source": "cmdline"},
                m["why"],
            )
        )
    return out


def _removed_and_unknown(cfg: EffectiveConfig) -> list[Finding]:
    """Options the release's parser removed, renamed or never had (judged against the deployment's release)."""
    out: list[Finding] = []
    removed = cfg.get("cmdline_removed_flags") or []
    checked = cfg.get("cmdline_checked_against") or {}
    if removed:
        certain = all(r.get("certain", True) for r in removed)
        out.append(
            Finding.of(
                REMOVED_FLAG,
                "flags-removed",
                # judged against another release than the deployment's (unknown): an older one still takes the
                # option, so the verdict waits for the release (a started server on an old release is no refusal)
                Status.FAIL if certain else Status.UNKNOWN,
                "Removed or renamed: " + ", ".join(_history(r) for r in removed) + _against(checked, certain)
                + ("" if certain else "; on an older release it is still accepted: run `vllm --version` (or read "
                   "the log's 'vLLM API server version') to tell"),
                {"removed": removed, "source": "cmdline", "checked_against": checked},
                cfg={"removed": removed, **identity_keys(cfg)},
            )
        )
    gone = {r["option"] for r in removed}
    unknown = cfg.get("cmdline_unknown_flags") or []
    rest = [u for u in unknown if u["option"] not in gone]
    if rest:
        certain = all(u.get("certain", True) for u in rest)
        if cfg.get("engine_served"):  # the server started and ran requests: the line pasted is not the one it ran
            out.append(Finding(
                "flags-unknown", Status.UNKNOWN,
                "The pasted command line has " + ", ".join(_history(u) for u in rest) + ", yet the server started "
                "and ran requests (a traceback from the engine's request execution): the line pasted is not the one "
                "it ran (cut or edited)",
                {"options": rest, "source": "cmdline", "checked_against": checked},
                "Paste the command exactly as it ran (or the start-up log's non-default args) to have its flags "
                "checked."))
            return out
        rel = checked.get("release") or (rest[0].get("release") if rest else None)
        out.append(
            Finding(
                "flags-unknown",
                Status.FAIL if certain else Status.WARN,
                (f"{_wrapper(cfg)}: vLLM {rel or ''}'s engine arguments have no option ".replace("  ", " ")
                 if _wrapper(cfg)
                 else f"vllm serve {rel or ''} refuses ".replace("  ", " ")
                 if any(u.get("argparse_error") for u in rest)
                 else f"vllm serve {rel or ''} has no option ".replace("  ", " "))
                + ", ".join(_history(u) for u in rest) + _against(checked, certain),
                {"options": rest, "source": "cmdline", "checked_against": checked},
                " ".join(u["why"] for u in rest),
                explanation="vllm serve exits at start with 'unrecognized arguments' on any option its parser lacks "
                "(and with argparse's own error on an ambiguous prefix or a value it cannot take)."
                if certain else "Judged against another release's parser: " + str(checked.get("reason", "")),
            )
        )
    return out


POOLING_TASKS = ("embed", "embedding", "score", "classify", "reward")  # --task values of releases before 0.13


def _pooling_task(cfg: EffectiveConfig) -> bool:
    """--task embed/score/… (a release that still has --task, or a config file's `task: embed`): the pooling runner,
    not a generator, whatever the architecture. A removed --task is the removed-flag finding's: its fix names what
    replaces it (--runner pooling, and --convert embed for a causal LM), so no 'served for generation' warning."""
    removed = {r.get("option") for r in cfg.get("cmdline_removed_flags") or [] if isinstance(r, dict)}
    return cfg.get("task") in POOLING_TASKS or "--task" in removed


def _pooling_architecture(cfg: EffectiveConfig) -> bool:
    """A decoder whose checkpoint names a pooling architecture (Gemma2Model for bge-multilingual-gemma2,
    MistralModel for e5-mistral): vLLM serves it for pooling without --runner, so no 'generator' warning."""
    fam = identify(cfg).family
    return fam is not None and fam.pooling_default


def _st_pooling(cfg: EffectiveConfig) -> bool:
    """The checkpoint ships a sentence-transformers Pooling module (Qwen3-Embedding): vLLM >= 0.10.2 picks the
    pooling runner from it without --runner (families.toml: st_pooling)."""
    fam = identify(cfg).family
    return fam is not None and fam.st_pooling


def served_pooling(cfg: EffectiveConfig) -> str:
    """The evidence that this server did serve a pooling model (issue 42: no 'served for generation' warning on a
    healthy embedder): its `Supported tasks` list a pooling task, its access log shows 2xx answers on a pooling
    endpoint, or the started server's log states a pooling --task. '' when the evidence leaves it open."""
    tasks = cfg.get("supported_tasks")
    if isinstance(tasks, list) and set(tasks) & {"embed", "classify", "score", "token_embed", "reward"}:
        return f"Supported tasks {tasks}"
    ok = cfg.get("pooling_requests_ok")
    if isinstance(ok, dict) and ok:
        return "2xx answers on " + ", ".join(f"{p} ({n})" for p, n in sorted(ok.items()))
    refused = cfg.get("pooling_refusals")
    if isinstance(refused, dict) and refused:  # only the pooling path words these: the server serves pooling
        return "the server answered " + ", ".join(sorted(refused))
    task = cfg.fact("task")
    if task is not None and task.source == "log" and task.value in POOLING_TASKS:
        return f"the log's non-default args: task {task.value!r}"
    return ""


def _runner(cfg: EffectiveConfig) -> list[Finding]:
    """How the model is served: a generator where embeddings are asked for, or a pooling runner set wrong."""
    out: list[Finding] = []
    runner, convert, enc = cfg.get("runner"), cfg.get("convert"), cfg.get("encoder_only")
    if (too_old := _predates_support(cfg)) is not None:
        return [too_old]
    if enc is None and identify(cfg).style == "llm":  # an LLM reranker's family says causal LM (mxbai: Qwen2)
        enc = False
    tasks = cfg.get("supported_tasks")
    # a classify deployment (a reranker: the score API runs on classify) is not a generator (issue 25)
    # a 0.7 … 0.9 'Defaulting to' line names the task, not the model: with nothing naming the model no verdict
    unsure = bool(cfg.get("task_resolution_line")) and identify(cfg).kind == "unknown"
    # a wrapper that picks vLLM's task itself (ms-swift --task_type): no --runner on its line is no verdict
    wrapped = any(w.sets_task and w.name == _wrapper(cfg) for w in vflags.LAUNCHERS.values())
    # a causal model on a stated command line with nothing that makes it a pooling server
    no_runner = enc is False and cfg.stated_args is not None and runner is None and not _pooling_task(cfg) \
        and not served_pooling(cfg) and not _pooling_architecture(cfg)
    if isinstance(tasks, list) and "embed" not in tasks and "classify" not in tasks and not unsure:
        out.append(
            Finding.of(
                GENERATE_RUNNER,
                "flags-runner",
                Status.FAIL,
                f"The server runs as a generator: Supported tasks {tasks} has no 'embed'",
                ev(cfg, "supported_tasks", "runner", "convert", "model"),
                cfg=cfg,
            )
        )
    elif wrapped and runner is None:
        pass
    elif enc is False and runner is None and convert not in (None, "auto", "none") and not served_pooling(cfg) \
            and not _pooling_architecture(cfg) and not _st_pooling(cfg):  # those resolve auto to pooling anyway
        out.extend(_convert_without_runner(cfg, str(convert)))
    elif no_runner and _st_pooling(cfg) and not release_has_task(cfg):
        if cfg.get("vllm_version") is None:  # >= 0.10.2 reads its sentence-transformers config; 0.7 … 0.10.1 do not
            out.append(
                Finding.of(
                    GENERATE_RUNNER,
                    "flags-runner",
                    Status.UNKNOWN,
                    f"No --runner: {identify(cfg).name} is served for pooling by vLLM >= 0.10.2 (its sentence-"
                    "transformers Pooling config picks the runner), for generation by 0.7 … 0.10.1: which release? "
                    "(run `vllm --version`, or read `Supported tasks` in the start-up log to tell)",
                    ev(cfg, "model", "runner", "vllm_version"),
                    cfg=cfg,
                )
            )
    elif no_runner:
        out.append(
            Finding.of(
                GENERATE_RUNNER,
                "flags-runner",
                Status.WARN,
                # 0.7 … 0.10.1 spell the pooling task --task (vllm/config.py: 'Defaulting to 'generate'')
                f"No --task for a causal model: vLLM {cfg.get('vllm_version')} resolves it to the generate task"
                if release_has_task(cfg) else "No --runner for a causal model: vLLM serves it for generation",
                ev(cfg, "model", "runner", "convert"),
                cfg=cfg,
            )
        )
    elif runner not in (None, "pooling") and runner != "auto":
        out.append(
            Finding.of(
                GENERATE_RUNNER,
                "flags-runner",
                Status.FAIL,
                f"--runner {runner}: /v1/embeddings needs the pooling runner",
                ev(cfg, "runner", "convert"),
                cfg=cfg,
            )
        )
    elif runner == "pooling" and enc is False and convert in ("none",):
        out.append(
            Finding(
                "flags-runner",
                Status.WARN,
                "--convert none on a causal LM served for pooling",
                ev(cfg, "runner", "convert"),
                f"Serve {identify(cfg).name} for scores, not embeddings: " + serve_flags(identify(cfg))
                if identify(cfg).scoring else "Use --convert embed.",
            )
        )
    return out


def _predates_support(cfg: EffectiveConfig) -> Optional[Finding]:
    """The stated release is older than the first one serving the model's family for pooling (the support table:
    families.toml pooling_since): no runner or task flag of it helps, the fix is an upgrade."""
    who = identify(cfg)
    sup = support_of(who)
    version = cfg.get("vllm_version")
    if sup is None or predates(version, sup) is not True:
        return None
    return Finding.of(
        get_record("architecture-unsupported"), "flags-runner", Status.FAIL,
        f"vLLM {version} predates pooling support for {sup.family or who.name}: it is served for pooling from "
        f"{sup.since} ({sup.ref}: {sup.what})", ev(cfg, "model", "vllm_version", "runner", "convert", "task"),
        fix=upgrade_fix(who, sup, version))


def _convert_without_runner(cfg: EffectiveConfig, convert: str) -> list[Finding]:
    """--convert X and no --runner on a causal LM: before vllm#42935 `--runner auto` resolves the architecture to
    generate whatever --convert says (ModelConfig._get_runner_type), so the converted model never gets its pooler
    config and the engine fails at start; from its release an explicit --convert resolves auto to pooling."""
    row = support_table()["runner_auto_convert"]
    old = runner_auto_ignores_convert(cfg.get("vllm_version"))
    if old is False:
        return []
    fix = convert_runner_fix(str(cfg.get("model") or ""), convert)
    what = (f"--convert {convert} without --runner pooling: vLLM {{}}resolves `--runner auto` to generate for a causal "
            f"LM regardless of --convert (ModelConfig._get_runner_type, before {row['ref']}), so the converted model "
            "gets no pooler config: the engine fails at start or serves no pooling task")
    if old is None:
        return [Finding.of(
            GENERATE_RUNNER, "flags-runner", Status.UNKNOWN,
            what.format("") + f" — on releases {row['since']} … before {row['fixed_in']}; from {row['fixed_in']} it "
            "serves for pooling: run `vllm --version` to tell", ev(cfg, "runner", "convert", "model", "vllm_version"),
            fix=fix)]
    return [Finding.of(GENERATE_RUNNER, "flags-runner", Status.FAIL, what.format(f"{cfg.get('vllm_version')} "),
                       ev(cfg, "runner", "convert", "model", "vllm_version"), fix=fix)]


def _trust_remote_code(cfg: EffectiveConfig) -> list[Finding]:
    """--trust-remote-code where vLLM registers the model's architecture itself (named by its family, issue 42)."""
    who = identify(cfg)
    fam = who.family
    if cfg.get("trust_remote_code") is not True or fam is None or not fam.native:
        return []
    return [
        Finding.of(
            REMOTE_CODE_NOT_NEEDED,
            "flags-trust-remote-code",
            Status.PASS,  # harmless to serving (issue 42: never the cause a thread names): a note, not an alarm
            f"--trust-remote-code is not needed for {fam.name} (harmless to serving; it only lets the hub run code)",
            ev(cfg, "trust_remote_code", "model"),
            fix=REMOTE_CODE_NOT_NEEDED.fix(cfg),  # a note that still says what to drop (Finding.of: none for PASS)
        )
    ]


def _oom_risks(cfg: EffectiveConfig) -> list[Finding]:
    """Settings known to OOM at start or leave nothing for activations."""
    out: list[Finding] = []
    budget = cfg.get("max_num_batched_tokens")
    total = cfg.get("gpu_memory_total_bytes")
    if (
        isinstance(budget, int)
        and budget >= 24576
        and cfg.get("device") != "cpu"
        and (total is None or total < 24 * GiB)
    ):
        out.append(
            Finding.of(
                STARTUP_OOM,
                "flags-oom-risk",
                Status.WARN,
                f"--max-num-batched-tokens {budget} is known to OOM at start on small GPUs",
                ev(cfg, "max_num_batched_tokens", "gpu_memory_total_bytes"),
                cfg=cfg,
            )
        )
    util = cfg.get("gpu_memory_utilization")
    # a risk at start only: a paste showing the engine ran requests (it started with this share) disproves it here
    if isinstance(util, (int, float)) and util > 0.95 and cfg.get("device") != "cpu" and not cfg.get("engine_served"):
        out.append(
            Finding.of(  # a share of the whole card: another process's memory refuses the start
                SHARED_GPU_MEMORY,
                "flags-oom-risk",
                Status.WARN,
                f"--gpu-memory-utilization {util} leaves almost nothing for activations and other processes",
                ev(cfg, "gpu_memory_utilization"),
                cfg=cfg,
            )
        )
    return out


def _log_stats(cfg: EffectiveConfig) -> list[Finding]:
    """--disable-log-stats: the log post-mortem goes blind."""
    out: list[Finding] = []
    if cfg.get("disable_log_stats") is True:
        out.append(
            Finding.of(
                LOG_STATS_DISABLED,
                "flags-log-stats",
                Status.WARN,
                "--disable-log-stats: the server log will have no engine stats lines",
                ev(cfg, "disable_log_stats"),
            )
        )
    return out


def _wrapper(cfg: EffectiveConfig) -> str:
    """The launcher that wraps vLLM on the command line (KServe huggingfaceserver, Ray Serve, GPUStack, issue 42),
    '' for `vllm serve`, docker or a deployment file."""
    launcher = str(cfg.get("launcher") or "")
    name = launcher.split(":", 1)[0]
    return name if any(w.name == name for w in vflags.LAUNCHERS.values()) else ""


def _nothing_found(cfg: EffectiveConfig) -> list[Finding]:
    """The check's own finding when no rule found anything: PASS on a given command line, else UNKNOWN."""
    out: list[Finding] = []
    title = "Flags look right" if cfg.stated_args is not None else "No command line given: flags not checked"
    wrapper = next((w for w in vflags.LAUNCHERS.values() if w.name == _wrapper(cfg)), None)
    if cfg.stated_args is not None and wrapper is not None:
        title = f"{wrapper.name}: flags mapped onto vLLM's engine arguments; they look right"
    if cfg.stated_args is not None and wrapper is not None and not wrapper.passes_rest:
        # a launcher line that holds no vLLM option: nothing here to judge, neither right nor wrong (issue 42)
        out.append(Finding(CHECK_ID, Status.UNKNOWN, f"A {wrapper.name} command line, not vllm serve: {wrapper.maps}",
                           ev(cfg, "runner", "convert"),
                           f"Its flags are {wrapper.name}'s, not vLLM's: give the engine arguments it passes to vLLM "
                           "(its log's vLLM config line) to check vLLM's options."))
        return out
    out.append(
        Finding(
            CHECK_ID,
            Status.PASS if cfg.stated_args is not None else Status.UNKNOWN,
            title,
            ev(cfg, "runner", "convert", "max_num_batched_tokens"),
            "" if cfg.stated_args is not None
            else "Give the vllm serve command line (or the deployment file) the server was started with.",
        )
    )
    return out


RULES = (_not_vllm_commands, _removed_and_unknown, _runner, _trust_remote_code, _oom_risks, _kv_dtype, features.check,
          _log_stats)  # in the order the findings are shown (features: issue 29, prefix caching on an encoder, …)


def check(cfg: EffectiveConfig) -> list[Finding]:
    """Every flag rule in order; one PASS/UNKNOWN finding when none found anything."""
    out = [f for rule in RULES for f in rule(cfg)]
    return out or _nothing_found(cfg)
