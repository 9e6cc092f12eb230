"""The effective configuration: one value per canonical key, each carrying where it came from.

Merge order (strongest first): server (what is running now), log (what the engine resolved at
start-up), process (the running server's own command line, read from /proc on its host: what was
asked, before vLLM resolved it), cmdline (what the user says they ran), kube (what kubectl showed of the pod: its
image, memory limit, liveness probe), nvml (this machine's GPUs), user (stated by the
person triaging), then vLLM's default rules for values nobody stated. Disagreements between
sources are kept as conflicts (the engine reports them as `config-conflict` findings).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterable

from triage.answers import STATED, facts as answer_facts
from triage.sources import Fact, SourceResult
from triage.target import Truncation
from triage.vllm import defaults
from triage.catalogue.versions import parse_version

PRIORITY = ("server", "log", "process", "cmdline", "kube", "nvml", "user", "default-rule")

# keys whose disagreement between sources is worth a finding
CONFLICT_KEYS = (
    "vllm_version",
    "max_model_len",
    "max_num_batched_tokens",
    "enable_chunked_prefill",
    "enable_prefix_caching",
    "runner",
    "convert",
    "pooling_type",
    "dtype",
    "device",
    "gpu_memory_utilization",
    "tensor_parallel_size",
    "data_parallel_size",
    "model",
)


@dataclass(frozen=True)
class Conflict:
    key: str
    chosen: Fact
    others: tuple[Fact, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "chosen": self.chosen.to_dict(), "others": [o.to_dict() for o in self.others]}


@dataclass
class EffectiveConfig:
    values: dict[str, Fact] = field(default_factory=dict)
    conflicts: list[Conflict] = field(default_factory=list)
    stated_args: set[str] | None = None  # keys the user set explicitly, when a cmdline/log tells us
    sources: dict[str, str] = field(default_factory=dict)  # source -> "ok" or why it gave nothing

    def get(self, key: str, default: Any = None) -> Any:
        f = self.values.get(key)
        return default if f is None else f.value

    def fact(self, key: str) -> Fact | None:
        return self.values.get(key)

    def has(self, key: str) -> bool:
        return key in self.values

    def set(self, fact: Fact) -> None:
        self.values[fact.key] = fact

    def evidence(self, *keys: str) -> dict[str, Any]:
        """{key: {"value", "source", "detail"}} for the keys present, {key: None} for the missing."""
        return {k: (self.values[k].to_dict() if k in self.values else None) for k in keys}

    def to_dict(self) -> dict[str, Any]:
        return {k: f.to_dict() for k, f in sorted(self.values.items())}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EffectiveConfig:
        """From {key: value} or {key: {"value", "source", "detail"}} (a table row in tests, a stored run)."""
        cfg = cls()
        for k, v in d.items():
            if isinstance(v, dict) and "value" in v and "source" in v:
                cfg.values[k] = Fact(k, v["value"], v["source"], v.get("detail", ""))
            else:
                cfg.values[k] = Fact(k, v, "user", "given")
        return cfg


def _same(a: Any, b: Any, key: str = "") -> bool:
    if key == "gpu_memory_total_bytes" and isinstance(a, int) and isinstance(b, int) and a > 0 and b > 0:
        return abs(a - b) / max(a, b) < 0.1  # NVML reports a little less than the size a card is sold as
    if key == "gpu_name" and isinstance(a, str) and isinstance(b, str):
        x, y = a.strip().lower(), b.strip().lower()
        return x in y or y in x  # 'RTX 3080 Ti' is 'NVIDIA GeForce RTX 3080 Ti'
    if isinstance(a, str) and isinstance(b, str):
        if key == "vllm_version":
            return parse_version(a) == parse_version(b)
        return a.strip().lower().replace("torch.", "") == b.strip().lower().replace("torch.", "")
    return bool(a == b)


def merge(
    results: Iterable[SourceResult], user: dict[str, Any] | None = None, answers: dict[str, Any] | None = None
) -> EffectiveConfig:
    """Merge source facts by PRIORITY, record conflicts, then fill unstated values by vLLM's default rules.

    ``user``: what the target states (its truncation, model); ``answers``: the user's answers to the
    checklist's questions, already typed by triage.answers. Both are facts ``user`` / ``stated by user``.
    Stronger evidence overrides an answer, and every answer it overrides with another value is kept as a
    conflict (any key, not only CONFLICT_KEYS), so the override is always visible.
    """
    results = list(results)
    cfg = EffectiveConfig()
    by_key: dict[str, list[Fact]] = {}
    stated: set[str] | None = None
    for r in results:
        cfg.sources[r.source] = "ok" if r.unavailable is None else r.unavailable
        for f in r.facts.values():
            by_key.setdefault(f.key, []).append(f)
        if r.stated_args is not None:
            stated = (stated or set()) | r.stated_args
    for f in answer_facts(answers or {}):
        by_key.setdefault(f.key, []).append(f)
    for k, v in (user or {}).items():
        if v is not None:
            by_key.setdefault(k, []).append(Fact(k, v, "user", STATED))
    for key, facts in by_key.items():
        facts.sort(key=lambda f: PRIORITY.index(f.source) if f.source in PRIORITY else len(PRIORITY))
        chosen = facts[0]
        cfg.values[key] = chosen
        overridden = chosen.source != "user" and any(f.source == "user" for f in facts)
        if key in CONFLICT_KEYS or overridden:
            others = tuple(
                f
                for f in facts[1:]
                if not _same(f.value, chosen.value, key) and (key in CONFLICT_KEYS or f.source == "user")
            )
            if others and not _explained(key, chosen, others):
                cfg.conflicts.append(Conflict(key, chosen, others))
    cfg.stated_args = stated
    apply_default_rules(cfg)
    return cfg


def _explained(key: str, chosen: Fact, others: tuple[Fact, ...]) -> bool:
    """Differences vLLM itself causes are not conflicts (e.g. it turns chunked prefill off for BERT)."""
    if key == "model" and any(
        isinstance(o.value, str)
        and isinstance(chosen.value, str)
        and (o.value.endswith(chosen.value) or chosen.value.endswith(o.value))
        for o in others
    ):
        return True
    if key == "enable_chunked_prefill" and "without KVCache" in chosen.detail:
        return True
    return False


def _rule(cfg: EffectiveConfig, key: str, value: Any, detail: str) -> None:
    cfg.values[key] = Fact(key, value, "default-rule", detail)


def _unstated(cfg: EffectiveConfig, key: str) -> bool:
    """True when we know the user did not set `key` (a command line or the log's non-default args says so)."""
    return cfg.stated_args is not None and key not in cfg.stated_args and key not in cfg.values


def _capability(v: Any) -> tuple[int, int] | None:
    """'12.1' / (12, 1) / [12, 1] -> (12, 1)."""
    if isinstance(v, (list, tuple)) and len(v) == 2:
        return int(v[0]), int(v[1])
    if isinstance(v, str) and "." in v:
        a, _, b = v.partition(".")
        if a.isdigit() and b.isdigit():
            return int(a), int(b)
    return None


def apply_default_rules(cfg: EffectiveConfig) -> None:
    """Fill what vLLM would have chosen, only where we know the value was left to vLLM."""
    if not cfg.has("device") and cfg.get("local_gpu_backend") and cfg.get("gpu_count"):
        # nvml facts are merged only when the GPUs are the server host's (engine decides)
        cfg.values["device"] = Fact(
            "device",
            cfg.get("local_gpu_backend"),
            "nvml",
            f"{cfg.get('gpu_name')} visible on the server host; assumed used by vLLM",
        )
    runner = defaults.runner_default(cfg.get("convert"))
    if not cfg.has("runner") and runner is not None:
        _rule(cfg, "runner", runner.value, runner.detail)
    encoder_only = defaults.is_encoder_only(cfg.get("model"), cfg.get("architecture"))
    if encoder_only is not None and not cfg.has("encoder_only"):
        why = (
            f"architecture {cfg.get('architecture')}" if cfg.get("architecture") else f"model name {cfg.get('model')!r}"
        )
        _rule(cfg, "encoder_only", encoder_only, why)
    pooling = defaults.pooling_type_default(runner=cfg.get("runner"), encoder_only=encoder_only,
                                            convert=cfg.get("convert"))
    if not cfg.has("pooling_type") and pooling is not None:
        _rule(cfg, "pooling_type", pooling.value, pooling.detail)
    ecp = cfg.fact("enable_chunked_prefill")
    off = defaults.chunked_prefill_asked_off(encoder_only, ecp.source) if ecp is not None else None
    if off is not None and ecp is not None and ecp.value is True and ecp.source in ("process", "cmdline"):
        _rule(cfg, "enable_chunked_prefill", off.value, off.detail)
    if cfg.get("runner") == "pooling":
        release = cfg.get("vllm_version")
        for key, fn in (("enable_chunked_prefill", defaults.chunked_prefill_default),
                        ("enable_prefix_caching", defaults.prefix_caching_default)):
            rule = fn(encoder_only=encoder_only, pooling_type=cfg.get("pooling_type"), release=release)
            if rule is not None and _unstated(cfg, key):
                _rule(cfg, key, rule.value, rule.detail)
    if _unstated(cfg, "max_num_batched_tokens"):
        tp = int(cfg.get("tensor_parallel_size") or 1) * int(cfg.get("pipeline_parallel_size") or 1)
        rule = defaults.max_num_batched_tokens_default(
            device=cfg.get("device"),
            gpu_name=cfg.get("gpu_name"),
            gpu_memory_total_bytes=cfg.get("gpu_memory_total_bytes"),
            world_size=tp,
            release=cfg.get("vllm_version"),
            capability=_capability(cfg.get("gpu_compute_capability")),
        )
        if rule is not None:
            value, detail = int(rule.value), rule.detail  # type: ignore[call-overload]
            gm = cfg.fact("gpu_memory_total_bytes")
            if gm is not None and cfg.get("device") in ("cuda", "rocm"):
                # which tier, and from whose GPU: an NVML reading or a stated GPU go through the same rule
                gn = cfg.fact("gpu_name")
                who = f"{gn.value}, " if gn is not None else ""
                detail = f"{detail} [GPU {who}{gm.value / defaults.GiB:.0f} GiB: {gm.source}, {gm.detail}]"
            perf = defaults.budget_for_performance_mode(value, cfg.get("performance_mode"))
            if perf.detail:
                value, detail = int(perf.value), f"{detail}; {perf.detail}"  # type: ignore[call-overload]
            mml = cfg.get("max_model_len")
            if cfg.get("enable_chunked_prefill") is False and isinstance(mml, int):
                r2 = defaults.budget_with_chunked_prefill_off(mml, value)
                value, detail = int(r2.value), f"{detail}; {r2.detail}"  # type: ignore[call-overload]
            _rule(cfg, "max_num_batched_tokens", value, detail)
    try:
        truncation = Truncation.parse(cfg.get("truncate_prompt_tokens"))  # the one parser (triage.target)
    except ValueError:
        truncation = Truncation()  # a value vLLM itself rejects: no effective truncation to derive
    mml = cfg.get("max_model_len")
    sent = truncation.request_value() if truncation.kind in ("tokens", "max_model_len") else None
    eff = defaults.truncate_effective(sent, mml if isinstance(mml, int) else None)
    if eff is not None and truncation.kind == "max_model_len":
        _rule(cfg, "truncate_effective", eff.value, eff.detail)
    elif eff is not None:
        cfg.values["truncate_effective"] = Fact(
            "truncate_effective", eff.value, cfg.values["truncate_prompt_tokens"].source, eff.detail)
