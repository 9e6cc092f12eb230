"""The one target type: what to triage (URL, model, the client's truncation, command line, log, answers).

The CLI, the dashboard, the checklist engine and the probe runner all take a ``Target``. The
client's ``truncate_prompt_tokens`` is a typed ``Truncation`` parsed once, here (``Truncation.parse``):
a number of tokens, ``max_model_len`` (the client sends -1), ``none`` (the client sends none) or
``unknown`` (not stated). The API key lives only in memory: it is not part of the target's identity
(``compare=False``), never in its repr, and the store has no field for it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from triage.secret_docs import drop_secret_documents

TruncationKind = Literal["tokens", "max_model_len", "none", "unknown"]

_NONE_WORDS = ("none", "no", "off")
_MAX_WORDS = ("-1", "max_model_len", "max-model-len")
_UNKNOWN_WORDS = ("", "unknown", "?", "not stated")


MAX_TOKENS = 2**31 - 1  # vLLM holds token counts as int32; a larger truncation is a typo, not a value


@dataclass(frozen=True)
class Truncation:
    """The client's truncate_prompt_tokens, typed: ``tokens`` (with ``tokens``), max_model_len, none, unknown."""

    kind: TruncationKind = "unknown"
    tokens: int | None = None

    @classmethod
    def parse(cls, value: Any) -> Truncation:
        """Any spelling a user or a stored row gives: 256, "256", -1, "max_model_len", "none", None/"" (unknown).

        Raises ValueError for anything else (0, -2, "abc"): a message a user can act on."""
        if isinstance(value, Truncation):
            return value
        if value is None:
            return UNKNOWN
        if isinstance(value, bool):
            raise ValueError(f"{value!r} is not a truncation")
        text = str(value).strip().lower()
        if text in _UNKNOWN_WORDS:
            return UNKNOWN
        if text in _NONE_WORDS:
            return NO_TRUNCATION
        if text in _MAX_WORDS:
            return MAX_MODEL_LEN
        try:
            n = int(text)
        except ValueError:
            raise ValueError(f"truncate_prompt_tokens takes a whole number, -1 or none, not {value!r}") from None
        if n < 1:
            raise ValueError(f"{n}: truncate_prompt_tokens is a positive integer, -1 or none")
        if n > MAX_TOKENS:
            raise ValueError(f"{text[:24]}: truncate_prompt_tokens is at most {MAX_TOKENS} (no model is longer)")
        return cls("tokens", n)

    @property
    def known(self) -> bool:
        return self.kind != "unknown"

    def request_value(self) -> int | None:
        """What the client puts in the request body: N, -1, or nothing (none and unknown)."""
        if self.kind == "tokens":
            return self.tokens
        return -1 if self.kind == "max_model_len" else None

    def config_value(self) -> int | str | None:
        """The effective config's value (a fact stated by the user): N, -1, "none"; None when unknown."""
        if self.kind == "none":
            return "none"
        return self.request_value()

    def effective(self, max_model_len: int | None) -> int | None:
        """How many tokens the server keeps: N, max_model_len for -1; None for none/unknown."""
        if self.kind == "max_model_len":
            return max_model_len
        return self.tokens if self.kind == "tokens" else None

    def __str__(self) -> str:
        return {"tokens": str(self.tokens), "max_model_len": "-1 (max_model_len)", "none": "none",
                "unknown": "not stated"}[self.kind]


UNKNOWN = Truncation("unknown")
NO_TRUNCATION = Truncation("none")
MAX_MODEL_LEN = Truncation("max_model_len")


@dataclass(frozen=True)
class Target:
    """What to triage; every face builds one and every engine path reads it."""

    url: str | None = None
    model: str | None = None
    truncation: Truncation = UNKNOWN
    cmdline: str | None = None  # a command line, or a deployment file (triage/sources/deploy.py)
    cmdline_file: str | None = None  # the name of the file it came from (deployment facts cite it)
    deploy_target: str | None = None  # which vLLM container / model spec / service of a deployment file
    log_text: str | None = field(default=None, repr=False)
    model_path: str | None = None  # the model's directory readable here (the vectors probes read its files)
    # kubectl's view of the pod (triage/sources/kube.py): (file name, text) of describe / get -o yaml / logs
    kube: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    label: str | None = None
    answers: dict[str, Any] | None = field(default=None, compare=False)  # typed by triage.answers
    api_key: str | None = field(default=None, repr=False, compare=False)  # memory only, never stored
    verify_tls: bool = True
    timeout_s: float = 10.0
    target_id: int | None = None  # the saved target this is (dashboard), when known

    def __post_init__(self) -> None:
        if not isinstance(self.truncation, Truncation):  # accept any spelling once, keep the typed value
            object.__setattr__(self, "truncation", Truncation.parse(self.truncation))
        if self.url:
            object.__setattr__(self, "url", self.url.strip().rstrip("/"))
        # a Kubernetes Secret in a pasted or uploaded file is never read or kept (issue 43): triage.secret_docs
        if self.cmdline:
            object.__setattr__(self, "cmdline", drop_secret_documents(self.cmdline)[0])
        if self.kube:
            object.__setattr__(self, "kube", tuple((n, drop_secret_documents(t)[0]) for n, t in self.kube))

    @property
    def secrets(self) -> tuple[str, ...]:
        """Exact strings every write redacts besides the patterns."""
        return (self.api_key,) if self.api_key else ()

    def with_(self, **changes: Any) -> Target:
        return replace(self, **changes)

    def describe(self) -> dict[str, Any]:
        """The target as run metadata: no API key, only whether one was given."""
        out = {"url": self.url, "model": self.model, "truncate_prompt_tokens": self.truncation.config_value(),
               "truncation": self.truncation.kind, "api_key_given": bool(self.api_key),
               "verify_tls": self.verify_tls, "timeout_s": self.timeout_s, "has_cmdline": bool(self.cmdline),
               "has_log": bool(self.log_text), "answers": dict(self.answers or {})}
        # a deployment file's name and the target picked in it, only when there is one
        out.update({k: v for k, v in (("cmdline_file", self.cmdline_file), ("deploy_target", self.deploy_target),
                                      ("kube_files", [name for name, _ in self.kube])) if v})
        return out
