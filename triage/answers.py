"""The user's answers to the checklist's questions: accepted keys, their value forms, and their facts.

An answer is a fact with provenance ``user`` / ``stated by user``. It is parsed here, once, for the
CLI (``--answer KEY=VALUE``) and the dashboard (the Checklist page's inputs) alike. The keys are the
effective config's canonical keys (triage.config); an answer is weaker than anything a server, log,
process or command line says, and a disagreement with those is shown as a ``config-conflict``
finding (triage.config.merge), never dropped silently.

The list of common GPUs serves the dashboard's GPU picker; a card with one memory size also gives
its memory when only its name is stated, so the batch-budget tier (triage.vllm.defaults) applies
to a stated GPU exactly as to an NVML reading.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from triage.catalogue.versions import fmt, parse_version
from triage.sources import Fact
from triage.target import Truncation

SOURCE = "user"
STATED = "stated by user"
GiB = 1 << 30


class AnswerError(ValueError):
    """An answer with an unknown key or a malformed value; its text names the accepted keys/forms."""


@dataclass(frozen=True)
class Card:
    """A GPU a user can pick: its name as NVML reports it and the memory sizes it ships with (GiB)."""

    name: str
    memory_gib: tuple[int, ...]
    backend: str = "cuda"


# Names as nvidia-smi / NVML (or amd-smi) print them. Memory in GiB as sold; NVML reports a little
# less than the nominal size on some cards, which is why the tier comparison uses the stated size.
COMMON_GPUS: tuple[Card, ...] = (
    Card("NVIDIA GeForce RTX 3060", (12,)),
    Card("NVIDIA GeForce RTX 3080", (10, 12)),
    Card("NVIDIA GeForce RTX 3080 Ti", (12,)),
    Card("NVIDIA GeForce RTX 3090", (24,)),
    Card("NVIDIA GeForce RTX 4070 Ti", (12,)),
    Card("NVIDIA GeForce RTX 4080", (16,)),
    Card("NVIDIA GeForce RTX 4090", (24,)),
    Card("NVIDIA GeForce RTX 5090", (32,)),
    Card("NVIDIA RTX A6000", (48,)),
    Card("NVIDIA RTX 6000 Ada Generation", (48,)),
    Card("NVIDIA T4", (16,)),
    Card("NVIDIA A10G", (24,)),
    Card("NVIDIA L4", (24,)),
    Card("NVIDIA L40S", (48,)),
    Card("NVIDIA A100-PCIE-40GB", (40,)),
    Card("NVIDIA A100-SXM4-80GB", (80,)),
    Card("NVIDIA H100 PCIe", (80,)),
    Card("NVIDIA H100 80GB HBM3", (80,)),
    Card("NVIDIA H100 NVL", (94,)),
    Card("NVIDIA H200", (141,)),
    Card("NVIDIA B200", (180,)),
    Card("AMD Instinct MI250X", (128,), "rocm"),
    Card("AMD Instinct MI300X", (192,), "rocm"),
)
MEMORY_SIZES_GIB: tuple[int, ...] = tuple(sorted({g for c in COMMON_GPUS for g in c.memory_gib}))


def card(name: str | None) -> Card | None:
    """The common card a stated name means (case and an 'NVIDIA '/'GeForce ' prefix do not matter)."""
    if not name:
        return None
    want = _norm_gpu(name)
    for c in COMMON_GPUS:
        if _norm_gpu(c.name) == want:
            return c
    return None


def _norm_gpu(name: str) -> str:
    s = re.sub(r"\s+", " ", name.strip().lower())
    for prefix in ("nvidia ", "geforce ", "amd "):
        s = s.removeprefix(prefix)
    return s


# -- value forms -------------------------------------------------------------------------------

_UNITS = {
    "": 1, "b": 1,
    "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3, "t": 1000**4, "tb": 1000**4,
    "ki": 1 << 10, "kib": 1 << 10, "mi": 1 << 20, "mib": 1 << 20, "gi": 1 << 30, "gib": 1 << 30,
    "ti": 1 << 40, "tib": 1 << 40,
}  # fmt: skip
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]i?b?|b)?\s*$", re.IGNORECASE)


def parse_bytes(text: Any) -> int:
    """'12GiB', '12 GiB', '24 GB', '12884901888', '12288MiB' -> bytes. GB is 10^9, GiB is 2^30."""
    if isinstance(text, bool):
        raise ValueError("a size, not a boolean")
    if isinstance(text, int):
        if text <= 0 or text > MAX_INT:
            raise ValueError("a size must be positive and at most int64")
        return text
    m = _SIZE.match(str(text))
    if not m:
        raise ValueError(f"{text!r} is not a size")
    n = float(m.group(1)) * _UNITS[(m.group(2) or "").lower()]
    if n <= 0:
        raise ValueError("a size must be positive")
    if not math.isfinite(n) or n > MAX_INT:
        raise ValueError(f"{str(text)[:24]}… is too large a size (at most {MAX_INT} bytes)")
    return int(round(n))


def _int(text: Any) -> int:
    if isinstance(text, bool):
        raise ValueError("an integer, not a boolean")
    if isinstance(text, int):
        v = text
    else:
        s = str(text).strip().replace("_", "").replace(",", "")
        if not re.fullmatch(r"-?\d+", s):
            raise ValueError(f"{text!r} is not an integer")
        if len(s.lstrip("-")) > 19:  # past int64: no count or size vLLM holds (and int() of 5,000 digits raises)
            raise ValueError(f"{s[:24]}… is too large a number")
        v = int(s)
    if abs(v) > MAX_INT:
        raise ValueError(f"{v} is too large a number (at most {MAX_INT})")
    return v


def _positive(text: Any) -> int:
    v = _int(text)
    if v <= 0:
        raise ValueError(f"{v} is not a positive integer")
    return v


MAX_INT = 2**63 - 1  # every count and size of a vLLM config fits int64 (a database column too)

_TRUE = ("true", "yes", "on", "1", "enabled")
_FALSE = ("false", "no", "off", "0", "disabled")


def _bool(text: Any) -> bool:
    if isinstance(text, bool):
        return text
    s = str(text).strip().lower()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    raise ValueError(f"{text!r} is not true/false")


def _version(text: Any) -> str:
    v = parse_version(text)
    if v is None:
        raise ValueError(f"{text!r} is not a version")
    return fmt(v)


def _device(text: Any) -> str:
    s = str(text).strip().lower()
    s = {"gpu": "cuda", "nvidia": "cuda", "amd": "rocm", "hip": "rocm"}.get(s, s)
    if s not in ("cuda", "rocm", "cpu", "xpu", "tpu"):
        raise ValueError(f"{text!r} is not a device")
    return s


def _runner(text: Any) -> str:
    s = str(text).strip().lower()
    if s not in ("pooling", "generate", "draft", "auto"):
        raise ValueError(f"{text!r} is not a runner")
    return s


def _truncate(text: Any) -> int | str:
    t = Truncation.parse(text)  # the one parser (triage.target); the answer is its config value
    value = t.config_value()
    if value is None:
        raise ValueError("empty")
    return value


def _text(text: Any) -> str:
    s = str(text).strip()
    if not s:
        raise ValueError("empty")
    return s


def _pooling(text: Any) -> str:
    s = str(text).strip().upper()
    if s not in ("LAST", "MEAN", "CLS", "ALL", "STEP"):
        raise ValueError(f"{text!r} is not a pooling type")
    return s


@dataclass(frozen=True)
class AnswerKey:
    """One answerable key: how its value is parsed and the forms it accepts (said in errors and help)."""

    key: str
    parse: Callable[[Any], Any]
    forms: str
    kind: str  # the dashboard's input: version | gpu | bytes | int | bool | choice | text
    choices: tuple[str, ...] = ()


KEYS: dict[str, AnswerKey] = {
    k.key: k
    for k in (
        AnswerKey("vllm_version", _version, "a release, e.g. 0.28.0 or v0.31.0", "version"),
        AnswerKey("device", _device, "cuda, rocm or cpu", "choice", ("cuda", "rocm", "cpu")),
        AnswerKey("gpu_name", _text, "the card's name, e.g. 'NVIDIA GeForce RTX 3080 Ti'", "gpu"),
        AnswerKey("gpu_memory_total_bytes", parse_bytes, "bytes or a size: 12884901888, 12GiB, 24 GB, 12288MiB",
                  "bytes"),
        AnswerKey("gpu_count", _positive, "a positive integer", "int"),
        AnswerKey("max_num_batched_tokens", _positive, "a positive integer, e.g. 2048", "int"),
        AnswerKey("max_model_len", _positive, "a positive integer, e.g. 2048", "int"),
        AnswerKey("enable_chunked_prefill", _bool, "true or false (yes/no, on/off)", "bool"),
        AnswerKey("enable_prefix_caching", _bool, "true or false (yes/no, on/off)", "bool"),
        AnswerKey("runner", _runner, "pooling or generate", "choice", ("pooling", "generate")),
        AnswerKey("pooling_type", _pooling, "LAST, MEAN or CLS", "choice", ("LAST", "MEAN", "CLS")),
        AnswerKey("truncate_prompt_tokens", _truncate, "a positive integer, -1 or none", "int"),
        AnswerKey("tensor_parallel_size", _positive, "a positive integer", "int"),
        AnswerKey("model", _text, "the model path, e.g. Qwen/Qwen3-Embedding-4B", "text"),
    )
}  # fmt: skip


def accepted() -> str:
    """'vllm_version (a release, e.g. 0.28.0), device (cuda, rocm or cpu), …' for error messages."""
    return "; ".join(f"{k.key} ({k.forms})" for k in KEYS.values())


def parse_value(key: str, value: Any) -> Any:
    """The typed value of one answer; AnswerError names the accepted keys or the key's forms."""
    spec = KEYS.get(key.strip())
    if spec is None:
        raise AnswerError(f"unknown answer key {key!r}; accepted keys: {accepted()}")
    try:
        return spec.parse(value)
    except (ValueError, TypeError) as e:
        raise AnswerError(f"{spec.key}={value!r} is malformed ({e}); {spec.key} takes {spec.forms}") from None


def parse_answer(text: str) -> tuple[str, Any]:
    """'KEY=VALUE' -> (key, typed value)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise AnswerError(f"an answer is KEY=VALUE, not {text!r}; accepted keys: {accepted()}")
    return key.strip(), parse_value(key, value.strip().strip("\"'"))


def parse_answers(items: Iterable[str] | Mapping[str, Any] | None) -> dict[str, Any]:
    """Many answers ('KEY=VALUE' strings, or a {key: value} mapping from the dashboard) -> {key: typed}.

    A later answer for the same key replaces an earlier one; an empty value in a mapping is no answer.
    """
    out: dict[str, Any] = {}
    if items is None:
        return out
    if isinstance(items, Mapping):
        for k, v in items.items():
            if v is None or (isinstance(v, str) and not v.strip()):
                continue
            out[k.strip()] = parse_value(k, v)
        return out
    for text in items:
        k, v = parse_answer(text)
        out[k] = v
    return out


def facts(answers: Mapping[str, Any]) -> list[Fact]:
    """The facts answers state, plus what a stated common GPU implies (its backend, its only memory size).

    Implied facts say so in their detail and are added only where the user did not answer that key.
    """
    out = [Fact(k, v, SOURCE, STATED) for k, v in answers.items() if v is not None]
    c = card(answers.get("gpu_name"))
    if c is not None:
        if "device" not in answers:
            out.append(Fact("device", c.backend, SOURCE, f"{STATED}: implied by the GPU {c.name}"))
        if "gpu_memory_total_bytes" not in answers and len(c.memory_gib) == 1:
            out.append(
                Fact("gpu_memory_total_bytes", c.memory_gib[0] * GiB, SOURCE,
                     f"{STATED}: the {c.name} has {c.memory_gib[0]} GiB")
            )  # fmt: skip
    elif answers.get("gpu_name") and "device" not in answers:
        name = str(answers["gpu_name"]).lower()
        backend = "rocm" if any(w in name for w in ("amd", "instinct", "radeon", "mi2", "mi3")) else "cuda"
        out.append(Fact("device", backend, SOURCE, f"{STATED}: implied by the GPU {answers['gpu_name']}"))
    return out


def to_json(answers: Mapping[str, Any]) -> dict[str, Any]:
    """Answers as stored with a run (plain JSON values)."""
    return {k: answers[k] for k in sorted(answers)}
